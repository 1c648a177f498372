package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// Helpers shared by the Streamable HTTP tests. Every test serves over real
// HTTP on 127.0.0.1 (httptest).

const rawInitBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// toolServer returns a server with the tools the tests use:
//   - echo: returns its arguments as text;
//   - progress: sends n progress notifications (n from the arguments), then
//     returns "done";
//   - notify-first: sends one log notification before its result;
//   - sample: asks the client to sample, and returns the model's text;
//   - block: waits for release (or for its context to end), then returns.
func toolServer(t testing.TB, release <-chan struct{}, tweaks ...func(*mcp.ServerOptions)) *mcp.Server {
	opts := &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapability{}}}
	for _, f := range tweaks {
		f(opts)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1"}, opts)
	obj := json.RawMessage(`{"type":"object"}`)
	add := func(name string, h mcp.ToolHandler) {
		if err := s.AddTool(&mcp.Tool{Name: name, InputSchema: obj}, h); err != nil {
			t.Fatal(err)
		}
	}
	add("echo", func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(p.Arguments)}}}, nil
	})
	add("progress", func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		var in struct{ N int }
		_ = json.Unmarshal(p.Arguments, &in)
		tok, ok := p.Meta.ProgressToken()
		if !ok {
			return nil, fmt.Errorf("no progress token")
		}
		for i := 1; i <= in.N; i++ {
			if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i)}); err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	add("notify-first", func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		if err := ss.Notify(ctx, mcp.NotificationMessage, &mcp.LoggingMessageNotificationParams{Level: mcp.LoggingLevelInfo, Data: json.RawMessage(`"working"`)}); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "after notification"}}}, nil
	})
	add("sample", func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		res, err := ss.CreateMessage(ctx, &mcp.CreateMessageRequestParams{
			Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: "hello?"}}}},
			MaxTokens: 10,
		})
		if err != nil {
			return nil, err
		}
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "model said: " + text}}}, nil
	})
	add("block", func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		select {
		case <-release:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	return s
}

// serve starts a handler for s on 127.0.0.1.
func serve(t testing.TB, s *mcp.Server, opts *Options) (*Handler, *httptest.Server) {
	t.Helper()
	h := NewHandler(func(*http.Request) *mcp.Server { return s }, opts)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	return h, ts
}

// rawResponse is an HTTP answer read whole.
type rawResponse struct {
	status int
	header http.Header
	body   string
	err    error
}

// rawDo sends one request. POSTs get the Accept and Content-Type a
// conforming client sends unless hdr overrides them (an empty value
// removes a header).
func rawDo(t testing.TB, method, url string, hdr map[string]string, body string) rawResponse {
	t.Helper()
	r, err := rawTry(method, url, hdr, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// rawAsync sends a request on another goroutine; a failure is reported in
// the answer's err.
func rawAsync(method, url string, hdr map[string]string, body string) <-chan rawResponse {
	ch := make(chan rawResponse, 1)
	go func() {
		r, err := rawTry(method, url, hdr, body)
		r.err = err
		ch <- r
	}()
	return ch
}

func rawTry(method, url string, hdr map[string]string, body string) (rawResponse, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return rawResponse{}, err
	}
	switch method {
	case http.MethodPost:
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
	case http.MethodGet:
		req.Header.Set("Accept", "text/event-stream")
	}
	for k, v := range hdr {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rawResponse{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return rawResponse{}, err
	}
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: string(b)}, nil
}

// rawInit initializes a session by hand at version and returns its id.
func rawInit(t testing.TB, url, version string) string {
	t.Helper()
	r := rawDo(t, http.MethodPost, url, nil, fmt.Sprintf(rawInitBody, version))
	if r.status != http.StatusOK {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	sid := r.header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	r = rawDo(t, http.MethodPost, url, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", r.status, r.body)
	}
	return sid
}

// sseMessages parses an SSE body into events (data and id).
func sseEvents(t testing.TB, body string) []sseEvent {
	t.Helper()
	r := newSSEReader(strings.NewReader(body), 0)
	var out []sseEvent
	for {
		ev, err := r.next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("SSE body: %v", err)
		}
		out = append(out, ev)
	}
}

// decodeResponse decodes one JSON-RPC response.
func decodeResponse(t testing.TB, data string) *jsonrpc.Response {
	t.Helper()
	m, err := jsonrpc.Decode([]byte(data))
	if err != nil {
		t.Fatalf("decode %q: %v", data, err)
	}
	r, ok := m.(*jsonrpc.Response)
	if !ok {
		t.Fatalf("%q is not a response", data)
	}
	return r
}

// eventually polls cond until it holds, failing after a generous bound.
// Tests assert outcomes, never durations.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// headerRecorder wraps a handler and records the requests' headers.
type headerRecorder struct {
	h  http.Handler
	mu sync.Mutex
	rs []recorded
}

type recorded struct {
	method string
	header http.Header
	body   string
}

func (hr *headerRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
	}
	hr.mu.Lock()
	hr.rs = append(hr.rs, recorded{method: r.Method, header: r.Header.Clone(), body: string(body)})
	hr.mu.Unlock()
	hr.h.ServeHTTP(w, r)
}

func (hr *headerRecorder) requests() []recorded {
	hr.mu.Lock()
	defer hr.mu.Unlock()
	return append([]recorded(nil), hr.rs...)
}
