package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// The multi round-trip requests and the tasks extension over the modern
// leg of the Streamable HTTP handler (the handlers' rounds are tested in
// package mcp).

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func toolError(s string) *mcp.CallToolResult {
	yes := true
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}, IsError: &yes}
}

func nameForm(msg string) *mcp.ElicitRequestFormParams {
	return &mcp.ElicitRequestFormParams{Message: msg, RequestedSchema: mcp.RequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": &mcp.StringSchema{}}, Required: []string{"name"}}}
}

// greetServer has one tool, greet, that asks the user's name.
func greetServer(t *testing.T) *mcp.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "mrtr", Version: "1"}, nil)
	if err := s.AddTool(&mcp.Tool{Name: "greet"}, func(ctx context.Context, ss *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		in, err := ss.Ask(ctx, mcp.InputRequests{"user_name": mcp.ElicitInput(nameForm("What is your name?"))})
		if err != nil {
			return nil, err
		}
		return textResult("Hello, " + in.Elicit("user_name").Content["name"].(string) + "!"), nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMRTROverHTTP runs the rounds over the Streamable HTTP modern leg:
// InputRequiredResult keeps its resultType, the retry (a new request id)
// completes, and the requestState is bound to the caller the handler's
// Identity names.
func TestMRTROverHTTP(t *testing.T) {
	s := greetServer(t)
	_, ts := serve(t, s, &Options{Identity: func(r *http.Request) string { return r.Header.Get("X-User") }})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	as := func(user string) map[string][]string { return map[string][]string{"X-User": {user}} }

	r1 := modernPost(t, ts.URL, mcp.MethodToolsCall, "greet", mrtrBody(1, mcp.MethodToolsCall, `"name":"greet",`+meta), as("alice"))
	res, _ := r1.last()["result"].(map[string]any)
	if r1.status != 200 || res["resultType"] != "input_required" || res["requestState"] == nil {
		t.Fatalf("round 1: %d %v", r1.status, r1.last())
	}
	state := res["requestState"].(string)
	retry := func(id int, user string) modernResp {
		return modernPost(t, ts.URL, mcp.MethodToolsCall, "greet", mrtrBody(id, mcp.MethodToolsCall, `"name":"greet","requestState":"`+state+
			`","inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}},`+meta), as(user))
	}
	r2 := retry(2, "alice")
	res, _ = r2.last()["result"].(map[string]any)
	if r2.status != 200 || res["resultType"] != "complete" || !strings.Contains(fmt.Sprint(res["content"]), "Hello, Alice!") {
		t.Fatalf("round 2: %d %v", r2.status, r2.last())
	}
	if r3 := retry(3, "mallory"); r3.errCode() != jsonrpc.CodeInvalidParams {
		t.Fatalf("another caller's retry: %d %v", r3.status, r3.last())
	}
	// Methods other than tools/call, prompts/get and resources/read never
	// answer InputRequiredResult (basic/patterns/mrtr, "Supported
	// Requests").
	for _, m := range []string{mcp.MethodToolsList} {
		r := modernPost(t, ts.URL, m, "", mrtrBody(4, m, meta), nil)
		if res, _ := r.last()["result"].(map[string]any); res["resultType"] != "complete" {
			t.Errorf("%s: %v", m, r.last())
		}
	}
}

func mrtrBody(id int, method, params string) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `","params":{` + params + `}}`
}

// extServer is a server with the tasks extension and tools that become
// tasks; cancelled counts the handlers whose context ended by cancellation.
func extServer(t *testing.T) (*mcp.Server, *atomic.Int32) {
	t.Helper()
	var cancelled atomic.Int32
	tasks := mcp.NewTasks(nil)
	s := mcp.NewServer(&mcp.Implementation{Name: "ext", Version: "1"}, &mcp.ServerOptions{ReceivingMiddleware: []mcp.Middleware{tasks.Middleware()}})
	add := func(name string, support mcp.TaskSupport, h mcp.ToolHandler) {
		if err := s.AddTool(&mcp.Tool{Name: name, Execution: &mcp.ToolExecution{TaskSupport: support}}, h); err != nil {
			t.Fatal(err)
		}
	}
	add("sync", mcp.TaskSupportForbidden, func(context.Context, *mcp.ServerSession, *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return textResult("sync"), nil
	})
	add("job", mcp.TaskSupportOptional, func(ctx context.Context, _ *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		if err := mcp.BeginTask(ctx); err != nil {
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
	add("required", mcp.TaskSupportRequired, func(ctx context.Context, _ *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return textResult("ran"), nil
	})
	add("ask", mcp.TaskSupportOptional, func(ctx context.Context, ss *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		if err := mcp.BeginTask(ctx); err != nil {
			return nil, err
		}
		in, err := ss.Ask(ctx, mcp.InputRequests{"a": mcp.ElicitInput(nameForm("A?")), "b": mcp.ElicitInput(nameForm("B?"))})
		if err != nil {
			return nil, err
		}
		return textResult(in.Elicit("a").Content["name"].(string) + in.Elicit("b").Content["name"].(string)), nil
	})
	add("compose", mcp.TaskSupportRequired, func(ctx context.Context, ss *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		res, err := ss.Elicit(ctx, nameForm("Name?")) // a round of the request
		if err != nil {
			return nil, err
		}
		if err := mcp.BeginTask(ctx); err != nil {
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
		res := result(c.do(mcp.MethodTasksGet, id, `"taskId":"`+id+`"`))
		st, _ := res["status"].(string)
		if st == want || time.Now().After(deadline) {
			return res
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTasksExtension(t *testing.T) {
	s, cancelled := extServer(t)
	_, ts := serve(t, s, &Options{Identity: func(r *http.Request) string { return r.Header.Get("X-User") }})
	with := &extClient{t: t, url: ts.URL, ext: true, user: "alice"}
	without := &extClient{t: t, url: ts.URL, ext: false, user: "alice"}

	t.Run("discover advertises the extension", func(t *testing.T) {
		caps, _ := result(with.do(mcp.MethodServerDiscover, "", ""))["capabilities"].(map[string]any)
		ext, _ := caps["extensions"].(map[string]any)
		if _, ok := ext[mcp.TasksExtensionID]; !ok || caps["tasks"] != nil {
			t.Fatalf("capabilities %v", caps)
		}
	})
	t.Run("without the extension", func(t *testing.T) {
		if r := result(without.do(mcp.MethodToolsCall, "job", `"name":"job","arguments":{}`)); r["resultType"] != "complete" || r["taskId"] != nil {
			t.Errorf("optional task support, no extension: %v", r)
		}
		m := without.do(mcp.MethodToolsCall, "required", `"name":"required","arguments":{}`)
		data, _ := m["error"].(map[string]any)["data"].(map[string]any)
		if errorCode(m) != mcp.CodeMissingRequiredClientCapability || !strings.Contains(toJSON(data), mcp.TasksExtensionID) {
			t.Errorf("required task support, no extension: %v", m)
		}
		for _, method := range []string{mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel} {
			if m := without.do(method, "x", `"taskId":"x","inputResponses":{}`); errorCode(m) != mcp.CodeMissingRequiredClientCapability {
				t.Errorf("%s: %v", method, m)
			}
		}
		if r := result(with.do(mcp.MethodToolsCall, "sync", `"name":"sync","arguments":{},"task":{"ttl":1000}`)); r["resultType"] != "complete" {
			t.Errorf("a legacy task param promoted a sync tool: %v", r)
		}
	})
	t.Run("a task completes with its result inlined", func(t *testing.T) {
		r := result(with.do(mcp.MethodToolsCall, "job", `"name":"job","arguments":{}`))
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
		id := result(with.do(mcp.MethodToolsCall, "job", `"name":"job","arguments":{"do":"tool error"}`))["taskId"].(string)
		if got := with.poll(id, "completed"); got["status"] != "completed" || got["result"].(map[string]any)["isError"] != true {
			t.Errorf("tool error: %v", got)
		}
		id = result(with.do(mcp.MethodToolsCall, "job", `"name":"job","arguments":{"do":"protocol error"}`))["taskId"].(string)
		got := with.poll(id, "failed")
		if e, _ := got["error"].(map[string]any); got["status"] != "failed" || e["code"] != float64(jsonrpc.CodeInvalidParams) || got["result"] != nil {
			t.Errorf("protocol error: %v", got)
		}
	})
	t.Run("input through tasks/update, one key at a time", func(t *testing.T) {
		id := result(with.do(mcp.MethodToolsCall, "ask", `"name":"ask","arguments":{}`))["taskId"].(string)
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
		ack := result(with.do(mcp.MethodTasksUpdate, id, `"taskId":"`+id+`","inputResponses":{"a":{"action":"accept","content":{"name":"x"}},"unknown":{"ignored":true}}`))
		if ack["resultType"] != "complete" || ack["taskId"] != nil || ack["status"] != nil {
			t.Fatalf("ack %v", ack)
		}
		got = result(with.do(mcp.MethodTasksGet, id, `"taskId":"`+id+`"`))
		reqs, _ = got["inputRequests"].(map[string]any)
		if got["status"] != "input_required" || len(reqs) != 1 || reqs["b"] == nil {
			t.Fatalf("after a partial update: %v", got)
		}
		with.do(mcp.MethodTasksUpdate, id, `"taskId":"`+id+`","inputResponses":{"b":{"action":"accept","content":{"name":"y"}}}`)
		if got := with.poll(id, "completed"); !strings.Contains(toJSON(got["result"]), `"xy"`) {
			t.Fatalf("completed %v", got)
		}
	})
	t.Run("rounds, then a task", func(t *testing.T) {
		r1 := result(with.do(mcp.MethodToolsCall, "compose", `"name":"compose","arguments":{}`))
		if r1["resultType"] != "input_required" || r1["taskId"] != nil {
			t.Fatalf("round 1 %v", r1)
		}
		r2 := result(with.do(mcp.MethodToolsCall, "compose", `"name":"compose","arguments":{},"requestState":"`+r1["requestState"].(string)+
			`","inputResponses":{"elicitation-1":{"action":"accept","content":{"name":"Ada"}}}`))
		if r2["resultType"] != "task" || r2["requestState"] != nil {
			t.Fatalf("round 2 %v", r2)
		}
		if got := with.poll(r2["taskId"].(string), "completed"); !strings.Contains(toJSON(got["result"]), "Hello, Ada") {
			t.Fatalf("task %v", got)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		id := result(with.do(mcp.MethodToolsCall, "job", `"name":"job","arguments":{"do":"wait"}`))["taskId"].(string)
		for range 2 { // the second is on a terminal task: the same ack
			if ack := result(with.do(mcp.MethodTasksCancel, id, `"taskId":"`+id+`"`)); ack["resultType"] != "complete" || len(ack) > 2 {
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
		if m := with.do(mcp.MethodTasksCancel, "nope", `"taskId":"nope"`); errorCode(m) != jsonrpc.CodeInvalidParams {
			t.Errorf("unknown task: %v", m)
		}
		if m := with.do(mcp.MethodTasksGet, "nope", `"taskId":"nope"`); errorCode(m) != jsonrpc.CodeInvalidParams {
			t.Errorf("unknown task: %v", m)
		}
	})
	t.Run("another caller's task is not found", func(t *testing.T) {
		id := result(with.do(mcp.MethodToolsCall, "job", `"name":"job","arguments":{}`))["taskId"].(string)
		mallory := &extClient{t: t, url: ts.URL, ext: true, user: "mallory"}
		if m := mallory.do(mcp.MethodTasksGet, id, `"taskId":"`+id+`"`); errorCode(m) != jsonrpc.CodeInvalidParams {
			t.Errorf("mallory read alice's task: %v", m)
		}
	})
	t.Run("Mcp-Name must be the task id", func(t *testing.T) {
		with.id++
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
		r := modernPost(t, ts.URL, mcp.MethodTasksGet, "other", mrtrBody(with.id, mcp.MethodTasksGet, `"taskId":"x",`+meta), nil)
		if r.status != 400 || r.errCode() != mcp.CodeHeaderMismatch {
			t.Errorf("%d %v", r.status, r.last())
		}
	})
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
