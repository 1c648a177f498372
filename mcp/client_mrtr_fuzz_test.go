package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// FuzzModernResult feeds whatever a modern server may answer to a
// tools/call (an InputRequiredResult with any members, a task, a cacheable
// result, garbage) through the client's result handling: the multi
// round-trip loop, the tasks extension and the cache. The call must end,
// with a result or an error, and never panic.
func FuzzModernResult(f *testing.F) {
	f.Add([]byte(`{"resultType":"input_required","requestState":"s","inputRequests":{"a":{"method":"roots/list","params":{}}}}`))
	f.Add([]byte(`{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}}}`))
	f.Add([]byte(`{"resultType":"input_required","inputRequests":{"a":{"method":"tools/call","params":{}}}}`))
	f.Add([]byte(`{"resultType":"task","taskId":"t","status":"completed","result":{"content":[]}}`))
	f.Add([]byte(`{"resultType":"complete","ttlMs":1000,"cacheScope":"public","content":[]}`))
	f.Add([]byte(`{"resultType":"input_required"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		srv := &eraFakeServer{answer: func(r eraFakeRequest) (int, any) {
			switch r.Method {
			case MethodServerDiscover:
				return 200, modernDiscover
			case MethodTasksGet:
				return 200, map[string]any{"taskId": "t", "status": "failed"}
			}
			return 200, json.RawMessage(data)
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
			EraPolicy: EraPolicyAuto, MaxInputRounds: 2, TasksExtension: true, TaskPollInterval: time.Millisecond,
			Roots: []*Root{{URI: "file:///r"}},
			ElicitationHandler: func(context.Context, *ClientSession, ElicitRequestParams) (*ElicitResult, error) {
				return &ElicitResult{Action: ElicitActionDecline}, nil
			},
		})
		cs, err := c.Connect(ctx, srv.transport(t))
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		_, _ = cs.CallTool(ctx, &CallToolRequestParams{Name: "x", Arguments: json.RawMessage(`{}`)})
		if ctx.Err() != nil {
			t.Fatalf("the call did not end: %s", data)
		}
	})
}
