package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTasksExtensionClient checks the client side of the tasks extension:
// the capability is declared, a task answer is polled with tasks/get,
// its inputRequests answered with tasks/update, and the completed
// result returned from CallTool; a caller who gives up cancels the task.
func TestTasksExtensionClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	updated := false
	f := &eraFakeServer{answer: func(r eraFakeRequest) (int, any) {
		mu.Lock()
		defer mu.Unlock()
		switch r.Method {
		case MethodServerDiscover:
			return 200, modernDiscover
		case MethodToolsCall:
			if !strings.Contains(string(r.Params["_meta"]), tasksExtensionID) {
				return 200, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "sync"}}}
			}
			return 200, map[string]any{"resultType": "task", "taskId": "t1", "status": "working", "ttlMs": 60000, "pollIntervalMs": 10}
		case MethodTasksGet:
			if strings.Contains(string(r.Params["taskId"]), "stuck") {
				return 200, map[string]any{"resultType": "complete", "taskId": "stuck", "status": "working"}
			}
			if !updated {
				return 200, map[string]any{"resultType": "complete", "taskId": "t1", "status": "input_required", "inputRequests": map[string]any{
					"ok": map[string]any{"method": MethodElicitationCreate, "params": map[string]any{"message": "go?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}},
				}}
			}
			return 200, map[string]any{"resultType": "complete", "taskId": "t1", "status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "async"}}}}
		case methodTasksUpdate:
			updated = strings.Contains(string(r.Params["inputResponses"]), `"accept"`)
			return 200, map[string]any{"resultType": "complete"}
		}
		return 200, map[string]any{"resultType": "complete"}
	}}
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		EraPolicy:      EraPolicyAuto,
		TasksExtension: true,
		ElicitationHandler: func(context.Context, *ClientSession, ElicitRequestParams) (*ElicitResult, error) {
			return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{}}, nil
		},
	})
	cs, err := c.Connect(ctx, f.transport(t))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "slow", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != "async" {
		t.Errorf("result %q", got)
	}
	want := []string{MethodServerDiscover, MethodToolsCall, MethodTasksGet, methodTasksUpdate, MethodTasksGet}
	if got := f.methods(); !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}

	// A caller who gives up cancels the task.
	stuck := &eraFakeServer{answer: func(r eraFakeRequest) (int, any) {
		if r.Method == MethodToolsCall {
			return 200, map[string]any{"resultType": "task", "taskId": "stuck", "status": "working", "pollIntervalMs": 10}
		}
		return f.answer(r)
	}}
	cs2, err := c.Connect(ctx, stuck.transport(t))
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	cctx, ccancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer ccancel()
	if _, err := cs2.CallTool(cctx, &CallToolRequestParams{Name: "slow"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	if ms := stuck.methods(); ms[len(ms)-1] != MethodTasksCancel {
		t.Errorf("no tasks/cancel after the caller gave up: %v", ms)
	}
}
