package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// TestMemoryTaskInput checks the memory store's input exchange.
func TestMemoryTaskInput(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryTaskStore(nil)
	task, err := s.Create(ctx, "o", nil)
	if err != nil {
		t.Fatal(err)
	}
	id := task.TaskID
	if _, err := s.RequestInput(ctx, "o", id, InputRequests{"a": RootsInput(), "b": RootsInput()}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "o", id); got.Status != TaskStatusInputRequired {
		t.Fatalf("status %s", got.Status)
	}
	if _, err := s.PendingInput(ctx, "other", id); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("another owner: %v", err)
	}
	done := make(chan InputResponses)
	go func() {
		r, err := s.AwaitInput(ctx, "o", id, []string{"a", "b"})
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	if err := s.ProvideInput(ctx, "o", id, InputResponses{"a": json.RawMessage(`{"roots":[]}`), "zzz": json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.PendingInput(ctx, "o", id); len(p) != 1 || p["b"].Method() != MethodRootsList {
		t.Fatalf("pending after a partial answer: %v", p)
	}
	if err := s.ProvideInput(ctx, "o", id, InputResponses{"b": json.RawMessage(`{"roots":[]}`)}); err != nil {
		t.Fatal(err)
	}
	if r := <-done; len(r) != 2 || r["zzz"] != nil {
		t.Fatalf("AwaitInput %v", r)
	}
	if got, _ := s.Get(ctx, "o", id); got.Status != TaskStatusWorking {
		t.Fatalf("status after all answers %s", got.Status)
	}
	// A task cancelled while it waits ends the wait.
	if _, err := s.RequestInput(ctx, "o", id, InputRequests{"c": RootsInput()}); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { _, err := s.AwaitInput(ctx, "o", id, []string{"c"}); errc <- err }()
	if _, err := s.Finish(ctx, "o", id, TaskStatusCancelled, "", TaskOutcome{}); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrTaskTerminal) {
		t.Fatalf("wait on a cancelled task: %v", err)
	}
	if _, err := s.RequestInput(ctx, "o", id, InputRequests{"d": RootsInput()}); !errors.Is(err, ErrTaskTerminal) {
		t.Fatalf("input on a terminal task: %v", err)
	}
}

// TestBeginTaskThenReturn: a handler that begins a task and returns at
// once still answers the call with the task, however the goroutines are
// scheduled (it had answered the result itself, leaving the task behind,
// when the call's goroutine saw the handler done before the task begun).
func TestBeginTaskThenReturn(t *testing.T) {
	tasks := NewTasks(nil)
	s := NewServer(&Implementation{Name: "x", Version: "1"}, &ServerOptions{ReceivingMiddleware: []Middleware{tasks.Middleware()}})
	if err := s.AddTool(&Tool{Name: "quick", Execution: &ToolExecution{TaskSupport: TaskSupportOptional}}, func(ctx context.Context, _ *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		if err := BeginTask(ctx); err != nil {
			return nil, err
		}
		return &CallToolResult{Content: []Content{&TextContent{Text: "done"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	caps := &ClientCapabilities{Extensions: map[string]json.RawMessage{TasksExtensionID: json.RawMessage("{}")}}
	for i := range 200 {
		ss := s.modern().ss
		ctx := &modernContext{Context: context.Background(), ss: ss,
			req: modernRequest{meta: RequestMeta{ProtocolVersion: ProtocolVersion20260728, ClientCapabilities: caps}}}
		res, err := ss.receive(ctx, MethodToolsCall, json.RawMessage(`{"name":"quick"}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := res.(*ExtensionCreateTaskResult); !ok {
			t.Fatalf("call %d answered %T, want the task", i, res)
		}
	}
}

// TestExtTaskOwnerOption: with TaskOptions.Owner set, the extension's
// tasks belong to its answer (extOwner had called itself forever instead,
// overflowing the stack on the first task-augmented request), and
// tasks/get for another owner's task is not found.
func TestExtTaskOwnerOption(t *testing.T) {
	for _, tc := range []struct {
		name          string
		owner, getter string
		found         bool
	}{
		{"same owner", "alice", "alice", true},
		{"another owner", "alice", "bob", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type key struct{}
			tasks := NewTasks(&TaskOptions{Owner: func(ctx context.Context) string { s, _ := ctx.Value(key{}).(string); return s }})
			s := NewServer(&Implementation{Name: "x", Version: "1"}, &ServerOptions{ReceivingMiddleware: []Middleware{tasks.Middleware()}})
			if err := s.AddTool(&Tool{Name: "quick", Execution: &ToolExecution{TaskSupport: TaskSupportOptional}}, func(ctx context.Context, _ *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
				if err := BeginTask(ctx); err != nil {
					return nil, err
				}
				return &CallToolResult{Content: []Content{&TextContent{Text: "done"}}}, nil
			}); err != nil {
				t.Fatal(err)
			}
			caps := &ClientCapabilities{Extensions: map[string]json.RawMessage{TasksExtensionID: json.RawMessage("{}")}}
			call := func(who, method string, params json.RawMessage) (any, error) {
				ss := s.modern().ss
				ctx := &modernContext{Context: context.WithValue(context.Background(), key{}, who), ss: ss,
					req: modernRequest{meta: RequestMeta{ProtocolVersion: ProtocolVersion20260728, ClientCapabilities: caps}}}
				return ss.receive(ctx, method, params)
			}
			res, err := call(tc.owner, MethodToolsCall, json.RawMessage(`{"name":"quick"}`))
			if err != nil {
				t.Fatal(err)
			}
			created, ok := res.(*ExtensionCreateTaskResult)
			if !ok {
				t.Fatalf("call answered %T, want the task", res)
			}
			b, _ := json.Marshal(created)
			var task struct {
				TaskID string `json:"taskId"`
			}
			if err := json.Unmarshal(b, &task); err != nil || task.TaskID == "" {
				t.Fatalf("created %s: %v", b, err)
			}
			_, err = call(tc.getter, MethodTasksGet, json.RawMessage(`{"taskId":"`+task.TaskID+`"}`))
			if (err == nil) != tc.found {
				t.Fatalf("tasks/get by %s: %v, want found=%v", tc.getter, err, tc.found)
			}
		})
	}
}
