package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// TestMRTRRetry checks the multi round-trip loop: the handlers answer the
// input requests, the retry echoes requestState exactly under a new id,
// a result without resultType is final, and the rounds are bounded.
func TestMRTRRetry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	rounds := 0
	f := &eraFakeServer{answer: func(r eraFakeRequest) (int, any) {
		if r.Method == MethodServerDiscover {
			return 200, modernDiscover
		}
		var name string
		_ = json.Unmarshal(r.Params["name"], &name)
		mu.Lock()
		defer mu.Unlock()
		switch name {
		case "forever":
			return 200, map[string]any{"resultType": "input_required", "requestState": "s"}
		case "plain":
			return 200, map[string]any{"content": []any{}} // no resultType: complete
		}
		if _, ok := r.Params["inputResponses"]; !ok {
			rounds++
			return 200, map[string]any{"resultType": "input_required", "requestState": "opaque+/=",
				"inputRequests": map[string]any{
					"ask":   map[string]any{"method": MethodElicitationCreate, "params": map[string]any{"message": "ok?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}},
					"roots": map[string]any{"method": MethodRootsList, "params": map[string]any{}},
				}}
		}
		return 200, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "done"}}}
	}}
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		EraPolicy:      EraPolicyAuto,
		MaxInputRounds: 3,
		Roots:          []*Root{{URI: "file:///r"}},
		ElicitationHandler: func(context.Context, *ClientSession, ElicitRequestParams) (*ElicitResult, error) {
			return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{}}, nil
		},
	})
	cs, err := c.Connect(ctx, f.transport(t))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != "done" {
		t.Errorf("result %q", got)
	}
	reqs := f.requests()
	first, retry := reqs[1], reqs[2]
	if first.ID == retry.ID {
		t.Errorf("the retry reuses id %s", first.ID)
	}
	if got := string(retry.Params["requestState"]); got != `"opaque+/="` {
		t.Errorf("requestState %s", got)
	}
	var resp map[string]json.RawMessage
	_ = json.Unmarshal(retry.Params["inputResponses"], &resp)
	if !strings.Contains(string(resp["ask"]), `"accept"`) || !strings.Contains(string(resp["roots"]), "file:///r") {
		t.Errorf("inputResponses %s", retry.Params["inputResponses"])
	}
	if _, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "plain"}); err != nil {
		t.Errorf("a result without resultType: %v", err)
	}
	n := len(f.requests())
	_, err = cs.CallTool(ctx, &CallToolRequestParams{Name: "forever"})
	if !errors.Is(err, ErrTooManyInputRounds) {
		t.Errorf("endless input_required: %v", err)
	}
	if got := len(f.requests()) - n; got != 4 {
		t.Errorf("endless input_required made %d requests, want 1 + MaxInputRounds", got)
	}
}

// TestStdioProbeIsOptIn checks that by default a stdio client never sends
// a request before initialize (a legacy server may exit on one), and that
// the opt-in probe reports a server that did.
func TestStdioProbeIsOptIn(t *testing.T) {
	for _, tt := range []struct {
		name    string
		server  func(context.Context, jsonrpc.Stream)
		policy  EraPolicy
		wantErr error
		era     Era
	}{
		{"default against a fragile legacy server", fragileLegacyServer, EraPolicyDefault, nil, EraLegacy},
		{"auto against a fragile legacy server", fragileLegacyServer, EraPolicyAuto, ErrProbeKilledServer, 0},
		{"auto against a silent legacy server", silentLegacyServer, EraPolicyAuto, nil, EraLegacy},
		{"auto against a modern server", modernStdioServer, EraPolicyAuto, nil, EraModern},
		{"default against a modern server", modernStdioServer, EraPolicyDefault, nil, EraLegacy},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ct, st := InMemoryTransports()
			ss, err := st.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			go tt.server(ctx, ss)
			cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{EraPolicy: tt.policy, ProbeTimeout: 100 * time.Millisecond}).Connect(ctx, ct)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Connect: %v, want %v", err, tt.wantErr)
			}
			if err == nil {
				if cs.Era() != tt.era {
					t.Errorf("era %v, want %v", cs.Era(), tt.era)
				}
				cs.Close()
			}
		})
	}
}

// silentLegacyServer answers initialize and ignores every other request,
// as some legacy servers do before initialize: the probe times out.
func silentLegacyServer(ctx context.Context, s jsonrpc.Stream) {
	defer s.Close()
	for {
		m, err := s.Read(ctx)
		if err != nil {
			return
		}
		if req, ok := m.(*jsonrpc.Request); ok && req.Method == MethodInitialize {
			b, _ := json.Marshal(legacyInit)
			_ = s.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: b})
		}
	}
}

// modernStdioServer answers server/discover and initialize (a dual-era
// server: the client's policy decides).
func modernStdioServer(ctx context.Context, s jsonrpc.Stream) {
	defer s.Close()
	for {
		m, err := s.Read(ctx)
		if err != nil {
			return
		}
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.IsNotification() {
			continue
		}
		var res any = map[string]any{"resultType": "complete"}
		switch req.Method {
		case MethodServerDiscover:
			res = modernDiscover
		case MethodInitialize:
			res = legacyInit
		}
		b, _ := json.Marshal(res)
		_ = s.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: b})
	}
}

// fragileLegacyServer answers initialize and exits on any other request
// that comes first, as some legacy stdio servers do.
func fragileLegacyServer(ctx context.Context, s jsonrpc.Stream) {
	defer s.Close()
	for {
		m, err := s.Read(ctx)
		if err != nil {
			return
		}
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.IsNotification() {
			continue
		}
		if req.Method != MethodInitialize {
			return
		}
		b, _ := json.Marshal(legacyInit)
		_ = s.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: b})
	}
}
