package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// extServer is a server with the tasks extension and tools that become
// tasks; cancelled counts the handlers whose context ended by cancellation.
func extServer(t *testing.T) (*Server, *atomic.Int32) {
	t.Helper()
	var cancelled atomic.Int32
	tasks := NewTasks(nil)
	s := NewServer(&Implementation{Name: "ext", Version: "1"}, &ServerOptions{ReceivingMiddleware: []Middleware{tasks.Middleware()}})
	add := func(name string, support TaskSupport, h ToolHandler) {
		if err := s.AddTool(&Tool{Name: name, Execution: &ToolExecution{TaskSupport: support}}, h); err != nil {
			t.Fatal(err)
		}
	}
	add("sync", TaskSupportForbidden, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
		return textResult("sync"), nil
	})
	add("job", TaskSupportOptional, func(ctx context.Context, _ *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
		if err := BeginTask(ctx); err != nil {
			return nil, err
		}
		switch string(p.Arguments) {
		case `{"do":"wait"}`:
			<-ctx.Done()
			cancelled.Add(1)
			return nil, ctx.Err()
		case `{"do":"tool error"}`:
			return toolError("it failed"), nil
		case `{"do":"protocol error"}`:
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: bad")
		}
		return textResult("done"), nil
	})
	add("required", TaskSupportRequired, func(ctx context.Context, _ *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		return textResult("ran"), nil
	})
	add("ask", TaskSupportOptional, func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		if err := BeginTask(ctx); err != nil {
			return nil, err
		}
		in, err := ss.Ask(ctx, InputRequests{"a": ElicitInput(nameForm("A?")), "b": ElicitInput(nameForm("B?"))})
		if err != nil {
			return nil, err
		}
		return textResult(in.Elicit("a").Content["name"].(string) + in.Elicit("b").Content["name"].(string)), nil
	})
	add("compose", TaskSupportRequired, func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		res, err := ss.Elicit(ctx, nameForm("Name?")) // a round of the request
		if err != nil {
			return nil, err
		}
		if err := BeginTask(ctx); err != nil {
			return nil, err
		}
		return textResult("Hello, " + res.Content["name"].(string)), nil
	})
	return s, &cancelled
}

// extClient posts modern requests that declare the extension (or not).
type extClient struct {
	t    *testing.T
	url  string
	ext  bool
	user string
	id   int
}

func (c *extClient) do(method, name, params string) map[string]any {
	c.t.Helper()
	c.id++
	caps := `{"elicitation":{}}`
	if c.ext {
		caps = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	if params != "" {
		params += ","
	}
	r := modernPost(c.t, c.url, method, name, mrtrBody(c.id, method, params+meta), map[string][]string{"X-User": {c.user}})
	return r.last()
}

func result(m map[string]any) map[string]any { r, _ := m["result"].(map[string]any); return r }

func errorCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	n, _ := e["code"].(float64)
	return int(n)
}

// poll calls tasks/get until the task leaves working (or reaches want).
func (c *extClient) poll(id string, want string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := result(c.do(MethodTasksGet, id, `"taskId":"`+id+`"`))
		st, _ := res["status"].(string)
		if st == want || time.Now().After(deadline) {
			return res
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTasksExtension(t *testing.T) {
	s, cancelled := extServer(t)
	_, ts := serve(t, s, &StreamableHTTPOptions{Identity: func(r *http.Request) string { return r.Header.Get("X-User") }})
	with := &extClient{t: t, url: ts.URL, ext: true, user: "alice"}
	without := &extClient{t: t, url: ts.URL, ext: false, user: "alice"}

	t.Run("discover advertises the extension", func(t *testing.T) {
		caps, _ := result(with.do(MethodServerDiscover, "", ""))["capabilities"].(map[string]any)
		ext, _ := caps["extensions"].(map[string]any)
		if _, ok := ext[TasksExtensionID]; !ok || caps["tasks"] != nil {
			t.Fatalf("capabilities %v", caps)
		}
	})
	t.Run("without the extension", func(t *testing.T) {
		if r := result(without.do(MethodToolsCall, "job", `"name":"job","arguments":{}`)); r["resultType"] != "complete" || r["taskId"] != nil {
			t.Errorf("optional task support, no extension: %v", r)
		}
		m := without.do(MethodToolsCall, "required", `"name":"required","arguments":{}`)
		data, _ := m["error"].(map[string]any)["data"].(map[string]any)
		if errorCode(m) != CodeMissingRequiredClientCapability || !strings.Contains(toJSON(data), TasksExtensionID) {
			t.Errorf("required task support, no extension: %v", m)
		}
		for _, method := range []string{MethodTasksGet, MethodTasksUpdate, MethodTasksCancel} {
			if m := without.do(method, "x", `"taskId":"x","inputResponses":{}`); errorCode(m) != CodeMissingRequiredClientCapability {
				t.Errorf("%s: %v", method, m)
			}
		}
		if r := result(with.do(MethodToolsCall, "sync", `"name":"sync","arguments":{},"task":{"ttl":1000}`)); r["resultType"] != "complete" {
			t.Errorf("a legacy task param promoted a sync tool: %v", r)
		}
	})
	t.Run("a task completes with its result inlined", func(t *testing.T) {
		r := result(with.do(MethodToolsCall, "job", `"name":"job","arguments":{}`))
		id, _ := r["taskId"].(string)
		if r["resultType"] != "task" || id == "" || r["ttlMs"] == nil || r["task"] != nil || r["ttl"] != nil || r["requestState"] != nil {
			t.Fatalf("CreateTaskResult %v", r)
		}
		got := with.poll(id, "completed")
		if got["status"] != "completed" || !strings.Contains(toJSON(got["result"]), `"done"`) || got["resultType"] != "complete" {
			t.Fatalf("tasks/get %v", got)
		}
	})
	t.Run("a tool error completes, a protocol error fails", func(t *testing.T) {
		id := result(with.do(MethodToolsCall, "job", `"name":"job","arguments":{"do":"tool error"}`))["taskId"].(string)
		if got := with.poll(id, "completed"); got["status"] != "completed" || got["result"].(map[string]any)["isError"] != true {
			t.Errorf("tool error: %v", got)
		}
		id = result(with.do(MethodToolsCall, "job", `"name":"job","arguments":{"do":"protocol error"}`))["taskId"].(string)
		got := with.poll(id, "failed")
		if e, _ := got["error"].(map[string]any); got["status"] != "failed" || e["code"] != float64(jsonrpc.CodeInvalidParams) || got["result"] != nil {
			t.Errorf("protocol error: %v", got)
		}
	})
	t.Run("input through tasks/update, one key at a time", func(t *testing.T) {
		id := result(with.do(MethodToolsCall, "ask", `"name":"ask","arguments":{}`))["taskId"].(string)
		got := with.poll(id, "input_required")
		reqs, _ := got["inputRequests"].(map[string]any)
		if len(reqs) != 2 {
			for i := 0; i < 200 && len(reqs) != 2; i++ { // the second key may still be on its way
				time.Sleep(5 * time.Millisecond)
				reqs, _ = with.poll(id, "input_required")["inputRequests"].(map[string]any)
			}
		}
		if len(reqs) != 2 {
			t.Fatalf("tasks/get %v", got)
		}
		ack := result(with.do(MethodTasksUpdate, id, `"taskId":"`+id+`","inputResponses":{"a":{"action":"accept","content":{"name":"x"}},"unknown":{"ignored":true}}`))
		if ack["resultType"] != "complete" || ack["taskId"] != nil || ack["status"] != nil {
			t.Fatalf("ack %v", ack)
		}
		got = result(with.do(MethodTasksGet, id, `"taskId":"`+id+`"`))
		reqs, _ = got["inputRequests"].(map[string]any)
		if got["status"] != "input_required" || len(reqs) != 1 || reqs["b"] == nil {
			t.Fatalf("after a partial update: %v", got)
		}
		with.do(MethodTasksUpdate, id, `"taskId":"`+id+`","inputResponses":{"b":{"action":"accept","content":{"name":"y"}}}`)
		if got := with.poll(id, "completed"); !strings.Contains(toJSON(got["result"]), `"xy"`) {
			t.Fatalf("completed %v", got)
		}
	})
	t.Run("rounds, then a task", func(t *testing.T) {
		r1 := result(with.do(MethodToolsCall, "compose", `"name":"compose","arguments":{}`))
		if r1["resultType"] != "input_required" || r1["taskId"] != nil {
			t.Fatalf("round 1 %v", r1)
		}
		r2 := result(with.do(MethodToolsCall, "compose", `"name":"compose","arguments":{},"requestState":"`+r1["requestState"].(string)+
			`","inputResponses":{"elicitation-1":{"action":"accept","content":{"name":"Ada"}}}`))
		if r2["resultType"] != "task" || r2["requestState"] != nil {
			t.Fatalf("round 2 %v", r2)
		}
		if got := with.poll(r2["taskId"].(string), "completed"); !strings.Contains(toJSON(got["result"]), "Hello, Ada") {
			t.Fatalf("task %v", got)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		id := result(with.do(MethodToolsCall, "job", `"name":"job","arguments":{"do":"wait"}`))["taskId"].(string)
		for range 2 { // the second is on a terminal task: the same ack
			if ack := result(with.do(MethodTasksCancel, id, `"taskId":"`+id+`"`)); ack["resultType"] != "complete" || len(ack) > 2 {
				t.Fatalf("cancel ack %v", ack)
			}
		}
		if got := with.poll(id, "cancelled"); got["status"] != "cancelled" {
			t.Fatalf("after cancel %v", got)
		}
		for i := 0; i < 1000 && cancelled.Load() == 0; i++ {
			time.Sleep(5 * time.Millisecond)
		}
		if cancelled.Load() == 0 {
			t.Error("the handler's context did not end")
		}
		if m := with.do(MethodTasksCancel, "nope", `"taskId":"nope"`); errorCode(m) != jsonrpc.CodeInvalidParams {
			t.Errorf("unknown task: %v", m)
		}
		if m := with.do(MethodTasksGet, "nope", `"taskId":"nope"`); errorCode(m) != jsonrpc.CodeInvalidParams {
			t.Errorf("unknown task: %v", m)
		}
	})
	t.Run("another caller's task is not found", func(t *testing.T) {
		id := result(with.do(MethodToolsCall, "job", `"name":"job","arguments":{}`))["taskId"].(string)
		mallory := &extClient{t: t, url: ts.URL, ext: true, user: "mallory"}
		if m := mallory.do(MethodTasksGet, id, `"taskId":"`+id+`"`); errorCode(m) != jsonrpc.CodeInvalidParams {
			t.Errorf("mallory read alice's task: %v", m)
		}
	})
	t.Run("Mcp-Name must be the task id", func(t *testing.T) {
		with.id++
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
		r := modernPost(t, ts.URL, MethodTasksGet, "other", mrtrBody(with.id, MethodTasksGet, `"taskId":"x",`+meta), nil)
		if r.status != 400 || r.errCode() != CodeHeaderMismatch {
			t.Errorf("%d %v", r.status, r.last())
		}
	})
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

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
