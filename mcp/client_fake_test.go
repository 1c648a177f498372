package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// eraFakeRequest is one request an eraFakeServer received.
type eraFakeRequest struct {
	Method string
	ID     jsonrpc.ID
	Params map[string]json.RawMessage
}

// eraFakeServer is a scripted server on an in-memory stream: answer
// decides each reply (a *jsonrpc.Error, or a result to encode; the status
// is ignored, for answer functions shared with the HTTP tests); every
// request is recorded.
type eraFakeServer struct {
	mu     sync.Mutex
	reqs   []eraFakeRequest
	answer func(r eraFakeRequest) (int, any)
	// after, if set, runs once a request was answered, with the stream:
	// a test pushes notifications with it.
	after func(r eraFakeRequest, s jsonrpc.Stream)
}

// transport returns the client's end of a new in-memory connection that
// f serves until the test ends. Connect with EraPolicyAuto (or a prior
// discover result) to make the session modern.
func (f *eraFakeServer) transport(t *testing.T) Transport {
	t.Helper()
	ct, st := InMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := st.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	go f.serve(ctx, s)
	return ct
}

func (f *eraFakeServer) serve(ctx context.Context, s jsonrpc.Stream) {
	defer s.Close()
	for {
		m, err := s.Read(ctx)
		if err != nil {
			return
		}
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			continue
		}
		r := eraFakeRequest{Method: req.Method, ID: req.ID}
		_ = json.Unmarshal(req.Params, &r.Params)
		f.mu.Lock()
		f.reqs = append(f.reqs, r)
		f.mu.Unlock()
		if req.IsNotification() {
			continue
		}
		go func() { // a slow answer must not hold up the next request
			_, body := f.answer(r)
			resp := &jsonrpc.Response{ID: req.ID}
			if je, ok := body.(*jsonrpc.Error); ok {
				resp.Error = je
			} else {
				resp.Result, _ = json.Marshal(body)
			}
			_ = s.Write(ctx, resp)
			if f.after != nil {
				f.after(r, s)
			}
		}()
	}
}

func (f *eraFakeServer) methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ms []string
	for _, r := range f.reqs {
		ms = append(ms, r.Method)
	}
	return ms
}

func (f *eraFakeServer) requests() []eraFakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

var modernDiscover = map[string]any{
	"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
	"supportedVersions": []string{ProtocolVersion20260728},
	"capabilities":      map[string]any{"tools": map[string]any{}},
	"_meta":             map[string]any{MetaKeyServerInfo: map[string]any{"name": "fake", "version": "9"}},
}

var legacyInit = map[string]any{
	"protocolVersion": ProtocolVersion20251125, "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "old", "version": "1"},
}
