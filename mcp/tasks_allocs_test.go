package mcp

import (
	"context"
	"encoding/json"
	"testing"
)

// TestTasksMiddlewareCallAllocs: Tasks.Middleware costs a tools/call of a
// tool that cannot run as a task no allocation, in either era (the
// example server installs it for every call).
func TestTasksMiddlewareCallAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("measures allocations")
	}
	measure := func(mws []Middleware, modern bool) float64 {
		s := NewServer(&Implementation{Name: "x", Version: "1"}, &ServerOptions{ReceivingMiddleware: mws})
		if err := s.AddTool(&Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
			return &CallToolResult{}, nil
		}); err != nil {
			t.Fatal(err)
		}
		ss := s.modern().ss
		params := json.RawMessage(`{"name":"echo","arguments":{}}`)
		name := "echo"
		return testing.AllocsPerRun(200, func() {
			var ctx context.Context = withServerSession(context.Background(), ss)
			if modern {
				ctx = &modernContext{Context: context.Background(), ss: ss, name: &name,
					req: modernRequest{meta: RequestMeta{ProtocolVersion: ProtocolVersion20260728}}}
			}
			if _, err := ss.receive(ctx, MethodToolsCall, params); err != nil {
				t.Fatal(err)
			}
		})
	}
	pass := func(next MethodHandler) MethodHandler { return next }
	for _, modern := range []bool{false, true} {
		without := measure([]Middleware{pass}, modern)
		with := measure([]Middleware{NewTasks(nil).Middleware()}, modern)
		if with > without {
			t.Errorf("modern=%v: a tools/call allocates %v times through Tasks.Middleware, %v without", modern, with, without)
		}
		t.Logf("modern=%v: allocations per tools/call: %v with Tasks.Middleware, %v without", modern, with, without)
	}
}

// FuzzPeekCallHead: where peekCallHead answers, it agrees with a full
// decoding of the params on the name and on the presence of a task.
func FuzzPeekCallHead(f *testing.F) {
	for _, s := range []string{`{"name":"echo","arguments":{}}`, ` {"task":{},"name":"slow"} `, `{"name":"a\"b"}`, `{"name":"x","name":"y"}`,
		`{"name":1}`, `{"task":null,"name":"t"}`, `{"arguments":{"name":"inner"},"name":"outer"}`, `{"name":"é"}`, `{}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		name, task, ok := peekCallHead(params)
		if !ok {
			return
		}
		var full map[string]json.RawMessage
		if err := json.Unmarshal(params, &full); err != nil {
			t.Fatalf("peeked %q in %q, which does not decode: %v", name, params, err)
		}
		var n string
		if err := json.Unmarshal(full["name"], &n); err != nil || n != string(name) {
			t.Fatalf("peeked name %q in %q, decoded %q (%v)", name, params, n, err)
		}
		if _, has := full["task"]; has != task {
			t.Fatalf("peeked task=%v in %q", task, params)
		}
	})
}
