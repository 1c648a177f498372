package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
)

// TestCallToolParamsPerCall checks that each tools/call gets parameters of
// its own, also when a receiving middleware calls the next handler twice
// with the same context, or once with a context of its own: the
// parameters, allocated with the request's context, are handed out once.
func TestCallToolParamsPerCall(t *testing.T) {
	type ctxKey struct{}
	for _, tc := range []struct {
		name  string
		mw    Middleware
		calls int // tool handler calls per tools/call
	}{
		{"none", nil, 1},
		{"twice, same context", func(next MethodHandler) MethodHandler {
			return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
				if method == MethodToolsCall {
					if _, err := next(ctx, method, params); err != nil {
						return nil, err
					}
				}
				return next(ctx, method, params)
			}
		}, 2},
		{"own context", func(next MethodHandler) MethodHandler {
			return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
				return next(context.WithValue(ctx, ctxKey{}, 1), method, params)
			}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts *ServerOptions
			if tc.mw != nil {
				opts = &ServerOptions{ReceivingMiddleware: []Middleware{tc.mw}}
			}
			s := NewServer(&Implementation{Name: "s", Version: "1"}, opts)
			var mu sync.Mutex
			var seen []*CallToolRequestParams
			err := s.AddTool(&Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
					mu.Lock()
					seen = append(seen, p)
					mu.Unlock()
					return &CallToolResult{Content: []Content{&TextContent{Text: string(p.Arguments)}}}, nil
				})
			if err != nil {
				t.Fatal(err)
			}
			_, cs := connectPair(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
			for _, args := range []string{`{"n":1}`, `{"n":2}`} {
				res, err := cs.CallTool(context.Background(), &CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(args)})
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Content[0].(*TextContent).Text; got != args {
					t.Errorf("echo = %s, want %s", got, args)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 2*tc.calls {
				t.Fatalf("tool handler called %d times, want %d", len(seen), 2*tc.calls)
			}
			for i := range seen {
				for j := range i {
					if seen[i] == seen[j] {
						t.Errorf("calls %d and %d share their parameters", j, i)
					}
				}
				if seen[i].Name != "echo" {
					t.Errorf("call %d: name %q", i, seen[i].Name)
				}
			}
		})
	}
}
