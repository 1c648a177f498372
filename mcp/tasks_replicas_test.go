package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestTaskCancelAcrossReplicas: two servers, each with its own Tasks (as
// two replicas), share one task store. A task started on A is cancelled
// through B: A's handler sees its context end (before, only the replica
// that ran the handler could stop it, so the handler ran on until its
// TTL), and both replicas report the task cancelled. Both eras: the
// 2025-11-25 tasks (params.task) and the 2026-07-28 extension
// (BeginTask).
func TestTaskCancelAcrossReplicas(t *testing.T) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			store := NewMemoryTaskStore(nil)
			stopped := make(chan struct{})
			replica := func() *Server {
				tasks := NewTasks(&TaskOptions{Store: store, Cancel: true, Owner: func(context.Context) string { return "alice" }})
				s := NewServer(&Implementation{Name: "x", Version: "1"}, &ServerOptions{ReceivingMiddleware: []Middleware{tasks.Middleware()}})
				if err := s.AddTool(&Tool{Name: "slow", Execution: &ToolExecution{TaskSupport: TaskSupportOptional}}, func(ctx context.Context, _ *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
					if err := BeginTask(ctx); err != nil {
						return nil, err
					}
					<-ctx.Done()
					close(stopped)
					return nil, ctx.Err()
				}); err != nil {
					t.Fatal(err)
				}
				return s
			}
			a, b := replica(), replica()
			call := func(s *Server, method string, params json.RawMessage) any {
				t.Helper()
				var res any
				var err error
				if era == "2026-07-28" {
					caps := &ClientCapabilities{Extensions: map[string]json.RawMessage{TasksExtensionID: json.RawMessage("{}")}}
					ss := s.modern().ss
					ctx := &modernContext{Context: context.Background(), ss: ss,
						req: modernRequest{meta: RequestMeta{ProtocolVersion: ProtocolVersion20260728, ClientCapabilities: caps}}}
					res, err = ss.receive(ctx, method, params)
				} else {
					ss := s.modern().ss // a session of the server, for its tools
					res, err = ss.receive(withServerSession(context.Background(), ss), method, params)
				}
				if err != nil {
					t.Fatalf("%s: %v", method, err)
				}
				return res
			}
			var id string
			switch res := call(a, MethodToolsCall, json.RawMessage(`{"name":"slow","task":{}}`)).(type) {
			case *ExtensionCreateTaskResult:
				id = res.TaskID
			case *CreateTaskResult:
				id = res.Task.TaskID
			default:
				t.Fatalf("tools/call answered %T", res)
			}
			call(b, MethodTasksCancel, json.RawMessage(`{"taskId":"`+id+`"}`))
			select {
			case <-stopped:
			case <-time.After(30 * time.Second):
				t.Fatal("the handler on A still runs after tasks/cancel on B")
			}
			for name, s := range map[string]*Server{"A": a, "B": b} {
				b, _ := json.Marshal(call(s, MethodTasksGet, json.RawMessage(`{"taskId":"`+id+`"}`)))
				var got struct {
					Status TaskStatus `json:"status"`
				}
				json.Unmarshal(b, &got)
				if got.Status != TaskStatusCancelled {
					t.Errorf("tasks/get on %s: %s", name, b)
				}
			}
		})
	}
}
