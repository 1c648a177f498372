package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// tasksConnect connects c to s over the named transport: "memory" (the
// in-memory transport) or "http" (Streamable HTTP on 127.0.0.1).
func tasksConnect(t *testing.T, kind string, s *Server, c *Client) *ClientSession {
	t.Helper()
	if kind == "memory" {
		_, cs := connectPair(t, s, c)
		return cs
	}
	return httpConnect(t, s, c)
}

var taskTransports = []string{"memory", "http"}

// taskTools is a server whose tools run as tasks:
//   - slow (optional): waits for gate, or for its context to end (then it
//     reports the task id on stopped);
//   - fails (optional): a result with isError;
//   - rpcerr (optional): a JSON-RPC error of code -32001;
//   - plain (no execution): returns "plain";
//   - must (required): returns "must";
//   - ask (optional): asks the client to sample, returns the model's text.
type taskTools struct {
	gate    chan struct{}
	stopped chan string
	server  *Server
	tasks   *Tasks
}

func newTaskTools(t *testing.T, opts *TaskOptions) *taskTools {
	tt := &taskTools{gate: make(chan struct{}), stopped: make(chan string, 4)}
	tt.tasks = NewTasks(opts)
	tt.server = NewServer(&Implementation{Name: "tasks", Version: "1"}, &ServerOptions{
		ReceivingMiddleware: []Middleware{tt.tasks.Middleware()},
		SendingMiddleware:   []Middleware{tt.tasks.SendingMiddleware()},
	})
	obj := json.RawMessage(`{"type":"object"}`)
	add := func(name string, support TaskSupport, h ToolHandler) {
		tool := &Tool{Name: name, InputSchema: obj}
		if support != "" {
			tool.Execution = &ToolExecution{TaskSupport: support}
		}
		if err := tt.server.AddTool(tool, h); err != nil {
			t.Fatal(err)
		}
	}
	text := func(s string) *CallToolResult { return &CallToolResult{Content: []Content{&TextContent{Text: s}}} }
	add("slow", TaskSupportOptional, func(ctx context.Context, _ *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		select {
		case <-tt.gate:
			return text("slow done"), nil
		case <-ctx.Done():
			id, _ := TaskIDFromContext(ctx)
			tt.stopped <- id
			return nil, ctx.Err()
		}
	})
	add("fails", TaskSupportOptional, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
		return toolError("it broke"), nil
	})
	add("rpcerr", TaskSupportOptional, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
		return nil, jsonrpc.NewError(-32001, "custom failure")
	})
	add("plain", "", func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
		return text("plain"), nil
	})
	add("must", TaskSupportRequired, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
		return text("must"), nil
	})
	add("ask", TaskSupportOptional, func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		res, err := ss.CreateMessage(ctx, &CreateMessageRequestParams{MaxTokens: 5, Messages: []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "?"}}}}})
		if err != nil {
			return nil, err
		}
		return text("model said " + res.Content[0].(*TextContent).Text), nil
	})
	return tt
}

func resultText(t *testing.T, r *CallToolResult) string {
	t.Helper()
	if r == nil || len(r.Content) == 0 {
		t.Fatalf("empty result %+v", r)
	}
	tc, ok := r.Content[0].(*TextContent)
	if !ok {
		t.Fatalf("content %T", r.Content[0])
	}
	return tc.Text
}

func wantCode(t *testing.T, err error, code int64) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != code {
		t.Fatalf("err = %v, want code %d", err, code)
	}
}

func TestToolTasks(t *testing.T) {
	for _, kind := range taskTransports {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			tt := newTaskTools(t, &TaskOptions{List: true, Cancel: true})
			statuses := make(chan TaskStatus, 32)
			cs := tasksConnect(t, kind, tt.server, newTestClient(&ClientOptions{
				TaskStatusHandler: func(_ context.Context, _ *ClientSession, p *TaskStatusNotificationParams) { statuses <- p.Status },
			}))
			caps := cs.InitializeResult().Capabilities.Tasks
			if caps == nil || caps.List == nil || caps.Cancel == nil || caps.Requests == nil || caps.Requests.Tools.Call == nil {
				t.Fatalf("tasks capability = %+v", caps)
			}
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}

			// A task runs in the background; tasks/result waits for it.
			ct, err := cs.CallToolAsTask(ctx, &CallToolRequestParams{Name: "slow"})
			if err != nil {
				t.Fatal(err)
			}
			id := ct.Task.TaskID
			if ct.Task.Status != TaskStatusWorking || ct.Task.TTL == nil {
				t.Errorf("created task = %+v", ct.Task)
			}
			if got, err := cs.GetTask(ctx, id); err != nil || got.Status != TaskStatusWorking {
				t.Fatalf("GetTask = %+v, %v", got, err)
			}
			close(tt.gate)
			payload, err := cs.TaskResult(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var res CallToolResult
			if err := payload.Decode(&res); err != nil {
				t.Fatal(err)
			}
			if got := resultText(t, &res); got != "slow done" {
				t.Errorf("result %q", got)
			}
			if rid, ok := res.Meta.RelatedTaskID(); !ok || rid != id {
				t.Errorf("result _meta = %v, want the related task %s", res.Meta, id)
			}
			if got, _ := cs.GetTask(ctx, id); got.Status != TaskStatusCompleted {
				t.Errorf("status after the result: %s", got.Status)
			}
			if s := <-statuses; s != TaskStatusCompleted {
				t.Errorf("status notification %s, want completed", s)
			}

			// CallToolTask does it all.
			r, err := cs.CallToolTask(ctx, &CallToolRequestParams{Name: "must"})
			if err != nil || resultText(t, r) != "must" {
				t.Fatalf("CallToolTask(must) = %+v, %v", r, err)
			}

			// A tool result with isError fails the task; the result is
			// still what tasks/result returns.
			ct, err = cs.CallToolAsTask(ctx, &CallToolRequestParams{Name: "fails"})
			if err != nil {
				t.Fatal(err)
			}
			r, err = cs.CallToolTask(ctx, &CallToolRequestParams{Name: "fails"})
			if err != nil || r.IsError == nil || !*r.IsError {
				t.Errorf("failing tool: %+v, %v", r, err)
			}
			if _, err := cs.TaskResult(ctx, ct.Task.TaskID); err != nil {
				t.Fatal(err)
			}
			if got, _ := cs.GetTask(ctx, ct.Task.TaskID); got.Status != TaskStatusFailed {
				t.Errorf("isError task status %s, want failed", got.Status)
			}

			// A JSON-RPC error is the task's outcome, returned as is.
			ct, err = cs.CallToolAsTask(ctx, &CallToolRequestParams{Name: "rpcerr"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = cs.TaskResult(ctx, ct.Task.TaskID)
			wantCode(t, err, -32001)
			if got, _ := cs.GetTask(ctx, ct.Task.TaskID); got.Status != TaskStatusFailed || got.StatusMessage != "custom failure" {
				t.Errorf("errored task = %+v", got)
			}

			// execution.taskSupport.
			if _, err := cs.CallToolAsTask(ctx, &CallToolRequestParams{Name: "plain"}); !errors.Is(err, ErrTasksNotSupported) {
				t.Errorf("CallToolAsTask(plain) = %v, want ErrTasksNotSupported before sending", err)
			}
			err = cs.Call(ctx, MethodToolsCall, json.RawMessage(`{"name":"plain","task":{}}`), nil)
			wantCode(t, err, jsonrpc.CodeMethodNotFound)
			_, err = cs.CallTool(ctx, &CallToolRequestParams{Name: "must"})
			wantCode(t, err, jsonrpc.CodeMethodNotFound)
			err = cs.Call(ctx, MethodToolsCall, json.RawMessage(`{"name":"slow","task":{"ttl":-1}}`), nil)
			wantCode(t, err, jsonrpc.CodeInvalidParams)
			if r, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "plain"}); err != nil || resultText(t, r) != "plain" {
				t.Errorf("plain call: %+v, %v", r, err)
			}

			// Unknown tasks.
			_, err = cs.GetTask(ctx, "no-such-task")
			wantCode(t, err, jsonrpc.CodeInvalidParams)
			_, err = cs.TaskResult(ctx, "no-such-task")
			wantCode(t, err, jsonrpc.CodeInvalidParams)
			_, err = cs.CancelTask(ctx, "no-such-task")
			wantCode(t, err, jsonrpc.CodeInvalidParams)

			// Listing: every task of this session, oldest first.
			var listed []string
			for task, err := range cs.Tasks(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				listed = append(listed, task.TaskID)
			}
			if len(listed) != 5 || listed[0] != id {
				t.Errorf("listed %d tasks (%v), want 5 starting with %s", len(listed), listed, id)
			}
			_, err = cs.ListTasks(ctx, &PaginatedRequestParams{Cursor: "garbage"})
			wantCode(t, err, jsonrpc.CodeInvalidParams)
		})
	}
}

func TestTaskCancel(t *testing.T) {
	for _, kind := range taskTransports {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			tt := newTaskTools(t, &TaskOptions{Cancel: true})
			cs := tasksConnect(t, kind, tt.server, newTestClient(nil))
			ct, err := cs.CallToolAsTask(ctx, &CallToolRequestParams{Name: "slow"})
			if err != nil {
				t.Fatal(err)
			}
			id := ct.Task.TaskID
			got, err := cs.CancelTask(ctx, id)
			if err != nil || got.Status != TaskStatusCancelled {
				t.Fatalf("CancelTask = %+v, %v", got, err)
			}
			if stopped := <-tt.stopped; stopped != id {
				t.Errorf("the handler of %q was stopped, want %q", stopped, id)
			}
			_, err = cs.CancelTask(ctx, id)
			wantCode(t, err, jsonrpc.CodeInvalidParams)
			_, err = cs.TaskResult(ctx, id)
			wantCode(t, err, jsonrpc.CodeInternalError)
			if got, _ := cs.GetTask(ctx, id); got.Status != TaskStatusCancelled {
				t.Errorf("status %s after cancel, want cancelled (it stays so)", got.Status)
			}
			// tasks/list was not declared.
			_, err = cs.ListTasks(ctx, nil)
			wantCode(t, err, jsonrpc.CodeMethodNotFound)
		})
	}
}

func TestTaskOwnership(t *testing.T) {
	for _, kind := range taskTransports {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			tt := newTaskTools(t, &TaskOptions{List: true, Cancel: true})
			close(tt.gate)
			alice := tasksConnect(t, kind, tt.server, newTestClient(nil))
			bob := tasksConnect(t, kind, tt.server, newTestClient(nil))
			r, err := alice.CallToolTask(ctx, &CallToolRequestParams{Name: "slow"})
			if err != nil || resultText(t, r) != "slow done" {
				t.Fatal(r, err)
			}
			id, _ := r.Meta.RelatedTaskID()
			if _, err := alice.GetTask(ctx, id); err != nil {
				t.Fatal(err)
			}
			for name, f := range map[string]func() error{
				"get":    func() error { _, err := bob.GetTask(ctx, id); return err },
				"result": func() error { _, err := bob.TaskResult(ctx, id); return err },
				"cancel": func() error { _, err := bob.CancelTask(ctx, id); return err },
			} {
				t.Run(name, func(t *testing.T) { wantCode(t, f(), jsonrpc.CodeInvalidParams) })
			}
			res, err := bob.ListTasks(ctx, nil)
			if err != nil || len(res.Tasks) != 0 {
				t.Errorf("bob lists %+v, %v; want none", res, err)
			}
		})
	}
}

func TestTaskOwnerHook(t *testing.T) {
	// With an Owner hook, two sessions of one identity share their tasks.
	ctx := context.Background()
	tt := newTaskTools(t, &TaskOptions{Owner: func(context.Context) string { return "carol" }})
	close(tt.gate)
	a := tasksConnect(t, "memory", tt.server, newTestClient(nil))
	b := tasksConnect(t, "memory", tt.server, newTestClient(nil))
	ct, err := a.CallToolAsTask(ctx, &CallToolRequestParams{Name: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.TaskResult(ctx, ct.Task.TaskID); err != nil {
		t.Errorf("same owner, other session: %v", err)
	}
}

func TestTaskNeedsInput(t *testing.T) {
	for _, kind := range taskTransports {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			tt := newTaskTools(t, nil)
			type seen struct {
				related string
				status  TaskStatus
			}
			got := make(chan seen, 1)
			c := newTestClient(&ClientOptions{CreateMessageHandler: func(ctx context.Context, cs *ClientSession, p *CreateMessageRequestParams) (*CreateMessageResult, error) {
				id, _ := p.Meta.RelatedTaskID()
				s := seen{related: id}
				if task, err := cs.GetTask(ctx, id); err == nil {
					s.status = task.Status
				}
				got <- s
				return &CreateMessageResult{Role: RoleAssistant, Model: "m", Content: []Content{&TextContent{Text: "42"}}}, nil
			}})
			cs := tasksConnect(t, kind, tt.server, c)
			ct, err := cs.CallToolAsTask(ctx, &CallToolRequestParams{Name: "ask"})
			if err != nil {
				t.Fatal(err)
			}
			payload, err := cs.TaskResult(ctx, ct.Task.TaskID)
			if err != nil {
				t.Fatal(err)
			}
			var res CallToolResult
			payload.Decode(&res)
			if s := resultText(t, &res); s != "model said 42" {
				t.Errorf("result %q", s)
			}
			s := <-got
			if s.related != ct.Task.TaskID || s.status != TaskStatusInputRequired {
				t.Errorf("during sampling: related task %q, status %q; want %q, input_required", s.related, s.status, ct.Task.TaskID)
			}
			if task, _ := cs.GetTask(ctx, ct.Task.TaskID); task.Status != TaskStatusCompleted {
				t.Errorf("final status %s", task.Status)
			}
		})
	}
}

// TestClientTasks runs sampling and elicitation as tasks on the client,
// requested by a server tool in the middle of its call.
func TestClientTasks(t *testing.T) {
	for _, kind := range taskTransports {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
			var mu sync.Mutex
			var declared *ClientTasksCapability
			s.AddTool(&Tool{Name: "delegate", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
				mu.Lock()
				declared = ss.InitializeParams().Capabilities.Tasks
				mu.Unlock()
				ct, err := ss.CreateMessageAsTask(ctx, &CreateMessageRequestParams{MaxTokens: 5, Messages: []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "?"}}}}})
				if err != nil {
					return nil, err
				}
				payload, err := ss.TaskResult(ctx, ct.Task.TaskID)
				if err != nil {
					return nil, err
				}
				var cm CreateMessageResult
				if err := payload.Decode(&cm); err != nil {
					return nil, err
				}
				et, err := ss.ElicitAsTask(ctx, &ElicitRequestFormParams{Message: "name?", RequestedSchema: RequestedSchema{Properties: map[string]PrimitiveSchemaDefinition{"name": &StringSchema{}}}})
				if err != nil {
					return nil, err
				}
				payload, err = ss.TaskResult(ctx, et.Task.TaskID)
				if err != nil {
					return nil, err
				}
				var er ElicitResult
				if err := payload.Decode(&er); err != nil {
					return nil, err
				}
				list, err := ss.ListTasks(ctx, nil)
				if err != nil {
					return nil, err
				}
				return &CallToolResult{Content: []Content{&TextContent{Text: cm.Content[0].(*TextContent).Text + " " + er.Content["name"].(string) + " " + string(rune('0'+len(list.Tasks)))}}}, nil
			})
			tasks := NewTasks(&TaskOptions{List: true, Cancel: true})
			c := newTestClient(&ClientOptions{
				ReceivingMiddleware: []Middleware{tasks.Middleware()},
				SendingMiddleware:   []Middleware{tasks.SendingMiddleware()},
				CreateMessageHandler: func(ctx context.Context, _ *ClientSession, p *CreateMessageRequestParams) (*CreateMessageResult, error) {
					if _, ok := TaskIDFromContext(ctx); !ok {
						return nil, errors.New("not running as a task")
					}
					return &CreateMessageResult{Role: RoleAssistant, Model: "m", Content: []Content{&TextContent{Text: "sampled"}}}, nil
				},
				ElicitationHandler: func(context.Context, *ClientSession, ElicitRequestParams) (*ElicitResult, error) {
					return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
				},
			})
			cs := tasksConnect(t, kind, s, c)
			r, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "delegate"})
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(t, r); got != "sampled Ada 2" {
				t.Errorf("result %q, want %q", got, "sampled Ada 2")
			}
			mu.Lock()
			defer mu.Unlock()
			if declared == nil || declared.List == nil || declared.Cancel == nil || declared.Requests == nil ||
				declared.Requests.Sampling == nil || declared.Requests.Elicitation == nil {
				t.Errorf("client tasks capability = %+v", declared)
			}
		})
	}
}

func TestServerRefusesUndeclaredClientTasks(t *testing.T) {
	ctx := context.Background()
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	errs := make(chan error, 2)
	s.AddTool(&Tool{Name: "try", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		_, err := ss.CreateMessageAsTask(ctx, &CreateMessageRequestParams{MaxTokens: 1})
		errs <- err
		_, err = ss.ElicitAsTask(ctx, &ElicitRequestFormParams{Message: "m"})
		errs <- err
		return &CallToolResult{}, nil
	})
	cs := tasksConnect(t, "memory", s, newTestClient(&ClientOptions{CreateMessageHandler: func(context.Context, *ClientSession, *CreateMessageRequestParams) (*CreateMessageResult, error) {
		return nil, errors.New("unreachable")
	}}))
	if _, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "try"}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; !errors.Is(err, ErrTasksNotSupported) {
			t.Errorf("err = %v, want ErrTasksNotSupported", err)
		}
	}
}

func TestTaskAugmentationIgnoredWhenNotDeclared(t *testing.T) {
	// A receiver that did not declare tasks for a request handles it
	// normally, ignoring params.task.
	ctx := context.Background()
	tt := newTaskTools(t, &TaskOptions{Requests: []string{MethodSamplingCreateMessage}})
	cs := tasksConnect(t, "memory", tt.server, newTestClient(nil))
	if caps := cs.InitializeResult().Capabilities.Tasks; caps == nil || caps.Requests != nil {
		t.Fatalf("server tasks capability = %+v, want no requests", caps)
	}
	var res CallToolResult
	if err := cs.Call(ctx, MethodToolsCall, json.RawMessage(`{"name":"plain","task":{}}`), &res); err != nil {
		t.Fatal(err)
	}
	if resultText(t, &res) != "plain" {
		t.Errorf("got %+v", res)
	}
	if _, err := cs.CallToolAsTask(ctx, &CallToolRequestParams{Name: "slow"}); !errors.Is(err, ErrTasksNotSupported) {
		t.Errorf("CallToolAsTask without the server's declaration: %v", err)
	}
}

func TestWithRelatedTask(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`},
		{`{}`, `{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`},
		{`{"a":1,"_meta":{"progressToken":7}}`, `{"a":1,"_meta":{"progressToken":7,"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`},
		{`{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"old"}}}`, `{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`},
	}
	for _, tt := range tests {
		got, err := withRelatedTask(json.RawMessage(tt.in), "t")
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(t, got, tt.want) {
			t.Errorf("%s: got %s, want %s", tt.in, got, tt.want)
		}
	}
	if _, err := withRelatedTask(json.RawMessage(`[1]`), "t"); err == nil {
		t.Error("an array accepted")
	}
}

// FuzzWithRelatedTask: for any JSON object, the related-task entry is set
// and every other member is kept.
func FuzzWithRelatedTask(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"_meta":{"x":[1,{"y":null}]}}`, `{"_meta":null}`, `{"content":[],"isError":true}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(in), &obj) != nil || obj == nil {
			return
		}
		if m, ok := obj["_meta"]; ok {
			var meta map[string]any
			if json.Unmarshal(m, &meta) != nil {
				return // a _meta that is not an object is refused
			}
		}
		out, err := withRelatedTask(json.RawMessage(in), "task-1")
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var got struct {
			Meta Meta `json:"_meta"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if id, ok := got.Meta.RelatedTaskID(); !ok || id != "task-1" {
			t.Fatalf("%s -> %s: related task %q", in, out, id)
		}
		var after map[string]json.RawMessage
		json.Unmarshal(out, &after)
		for k, v := range obj {
			if k != "_meta" && !sameJSON(t, after[k], string(v)) {
				t.Fatalf("%s -> %s: member %q changed", in, out, k)
			}
		}
	})
}
