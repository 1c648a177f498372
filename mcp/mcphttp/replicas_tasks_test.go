package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// taskReplicaServer is replicaServer with 2025-11-25 tasks on a task
// store shared by every replica of the test (as store/redis.TaskStore is
// by real ones): "quick" finishes at once, "slow" runs until cancelled.
func taskReplicaServer(store mcp.TaskStore) func(*testing.T, *atomic.Int64) *mcp.Server {
	return func(t *testing.T, inits *atomic.Int64) *mcp.Server {
		tasks := mcp.NewTasks(&mcp.TaskOptions{Store: store, List: true, Cancel: true})
		s := toolServer(t, nil, func(o *mcp.ServerOptions) {
			o.ReceivingMiddleware = append(o.ReceivingMiddleware, tasks.Middleware())
			o.InitializedHandler = func(context.Context, *mcp.ServerSession) { inits.Add(1) }
		})
		add := func(name string, h mcp.ToolHandler) {
			if err := s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`), Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}}, h); err != nil {
				t.Fatal(err)
			}
		}
		add("quick", func(context.Context, *mcp.ServerSession, *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "quick done"}}}, nil
		})
		add("slow", func(ctx context.Context, _ *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		return s
	}
}

// replicaRPC posts one request of session sid to url and returns its
// response.
func replicaRPC(t *testing.T, url, sid string, id int, method, params string) *jsonrpc.Response {
	t.Helper()
	r := rawDo(t, http.MethodPost, url, sessionHeaders(sid), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	if r.status != http.StatusOK {
		t.Fatalf("%s: %d %s", method, r.status, r.body)
	}
	if r.header.Get("Content-Type") == "application/json" {
		return decodeResponse(t, r.body)
	}
	for _, ev := range sseEvents(t, r.body) {
		if len(ev.data) > 0 {
			if m, err := jsonrpc.Decode(ev.data); err == nil {
				if resp, ok := m.(*jsonrpc.Response); ok {
					return resp
				}
			}
		}
	}
	t.Fatalf("%s: no response in %q", method, r.body)
	return nil
}

// TestReplicasTasks: a 2025-11-25 task created in a session through one
// replica is the session's through every replica: tasks/get, tasks/result,
// tasks/list and tasks/cancel through another find it (each replica's
// copy of the session is a ServerSession of its own, and tasks were owned
// by a random id per ServerSession: "task not found" elsewhere). Another
// session, even on the same replica, still sees none of them.
func TestReplicasTasks(t *testing.T) {
	store := &sharedStore{}
	reps := startReplicasWith(t, 2, store, taskReplicaServer(mcp.NewMemoryTaskStore(nil)))
	sid := initShared(t, reps[0].url)
	create := func(id int, tool string) string {
		t.Helper()
		resp := replicaRPC(t, reps[0].url, sid, id, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":{},"task":{}}`, tool))
		if resp.Error != nil {
			t.Fatalf("task-augmented %s: %v", tool, resp.Error)
		}
		var res mcp.CreateTaskResult
		if err := json.Unmarshal(resp.Result, &res); err != nil || res.Task.TaskID == "" {
			t.Fatalf("task-augmented %s: %s (%v)", tool, resp.Result, err)
		}
		return res.Task.TaskID
	}
	quick, slow := create(2, "quick"), create(3, "slow")
	other := reps[1].url

	tests := []struct {
		name, method, params string
		check                func(t *testing.T, result json.RawMessage)
	}{
		{"get", "tasks/get", fmt.Sprintf(`{"taskId":%q}`, slow), func(t *testing.T, res json.RawMessage) {
			var r mcp.GetTaskResult
			if err := json.Unmarshal(res, &r); err != nil || r.TaskID != slow || r.Status != mcp.TaskStatusWorking {
				t.Errorf("tasks/get: %s (%v)", res, err)
			}
		}},
		{"result", "tasks/result", fmt.Sprintf(`{"taskId":%q}`, quick), func(t *testing.T, res json.RawMessage) {
			var r mcp.CallToolResult
			if err := json.Unmarshal(res, &r); err != nil || len(r.Content) != 1 || r.Content[0].(*mcp.TextContent).Text != "quick done" {
				t.Errorf("tasks/result: %s (%v)", res, err)
			}
		}},
		{"list", "tasks/list", `{}`, func(t *testing.T, res json.RawMessage) {
			var r mcp.ListTasksResult
			if err := json.Unmarshal(res, &r); err != nil || len(r.Tasks) != 2 {
				t.Errorf("tasks/list: %s (%v); want both tasks", res, err)
			}
		}},
		{"cancel", "tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, slow), func(t *testing.T, res json.RawMessage) {
			var r mcp.CancelTaskResult
			if err := json.Unmarshal(res, &r); err != nil || r.TaskID != slow || r.Status != mcp.TaskStatusCancelled {
				t.Errorf("tasks/cancel: %s (%v)", res, err)
			}
		}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := replicaRPC(t, other, sid, 10+i, tc.method, tc.params)
			if resp.Error != nil {
				t.Fatalf("%s through the other replica: %v", tc.method, resp.Error)
			}
			tc.check(t, resp.Result)
		})
	}

	// Another session sees none of them, on either replica.
	sid2 := initShared(t, reps[0].url)
	for _, url := range []string{reps[0].url, other} {
		resp := replicaRPC(t, url, sid2, 20, "tasks/get", fmt.Sprintf(`{"taskId":%q}`, quick))
		if resp.Error == nil {
			t.Errorf("another session read the task: %s", resp.Result)
		}
		resp = replicaRPC(t, url, sid2, 21, "tasks/list", `{}`)
		var r mcp.ListTasksResult
		if resp.Error != nil || json.Unmarshal(resp.Result, &r) != nil || len(r.Tasks) != 0 {
			t.Errorf("another session's tasks/list: %v %s", resp.Error, resp.Result)
		}
	}
}
