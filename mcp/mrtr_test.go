package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/jsonschema"
	"github.com/mcpstack/mcpstack/seal"
)

// allCaps declares elicitation, sampling and roots.
var allCaps = &ClientCapabilities{Elicitation: &ElicitationCapability{}, Sampling: &SamplingCapability{}, Roots: &RootsCapability{}}

// modernReq is one 2026-07-28 request to a test server, served as the
// modern leg serves it, and its answer as the client reads it.
type modernReq struct {
	method    string
	params    map[string]any
	caps      *ClientCapabilities
	principal string
}

// wire is an answer as a client decodes it: a result or an error.
type wire struct {
	Result map[string]any
	Err    *jsonrpc.Error
}

func (w wire) resultType() string {
	s, _ := w.Result["resultType"].(string)
	if s == "" && w.Result != nil {
		return "complete"
	}
	return s
}

func (w wire) state() string { s, _ := w.Result["requestState"].(string); return s }

func (w wire) inputKeys() []string {
	m, _ := w.Result["inputRequests"].(map[string]any)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return sortedStrings(out)
}

func sortedStrings(s []string) []string { sort.Strings(s); return s }

func (w wire) text() string {
	if c, ok := w.Result["content"].([]any); ok && len(c) > 0 {
		t, _ := c[0].(map[string]any)["text"].(string)
		return t
	}
	if m, ok := w.Result["messages"].([]any); ok && len(m) > 0 {
		t, _ := m[0].(map[string]any)["content"].(map[string]any)["text"].(string)
		return t
	}
	if c, ok := w.Result["contents"].([]any); ok && len(c) > 0 {
		t, _ := c[0].(map[string]any)["text"].(string)
		return t
	}
	return ""
}

// serveModern serves r on s as a 2026-07-28 request.
func serveModern(t *testing.T, s *Server, r modernReq) wire {
	t.Helper()
	ss := &ServerSession{server: s}
	raw, err := json.Marshal(r.params)
	if err != nil {
		t.Fatal(err)
	}
	caps := r.caps
	if caps == nil {
		caps = allCaps
	}
	var ctx context.Context = &modernContext{Context: WithPrincipal(context.Background(), r.principal), ss: ss,
		req: modernRequest{meta: RequestMeta{ProtocolVersion: ProtocolVersion20260728, ClientCapabilities: caps}}}
	var res any
	switch r.method {
	case MethodToolsCall:
		res, err = ss.callTool(ctx, r.method, raw)
	case MethodPromptsGet:
		res, err = ss.getPrompt(ctx, r.method, raw)
	case MethodResourcesRead:
		res, err = ss.readResource(ctx, r.method, raw)
	default:
		t.Fatalf("method %s", r.method)
	}
	if err != nil {
		je := modernError(err)
		if je == jsonrpc.ErrInternal && !errors.Is(err, jsonrpc.ErrInternal) {
			t.Fatalf("%s answered a non-protocol error: %v", r.method, err)
		}
		return wire{Err: je}
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var w wire
	if err := json.Unmarshal(b, &w.Result); err != nil {
		t.Fatal(err)
	}
	return w
}

func accept(content map[string]any) map[string]any {
	return map[string]any{"action": "accept", "content": content}
}

var samplingAnswer = map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "m", "stopReason": "endTurn"}
var rootsAnswer = map[string]any{"roots": []any{map[string]any{"uri": "file:///r", "name": "R"}}}

func nameForm(msg string) *ElicitRequestFormParams {
	return &ElicitRequestFormParams{Message: msg, RequestedSchema: RequestedSchema{
		Properties: map[string]PrimitiveSchemaDefinition{"name": &StringSchema{}}, Required: []string{"name"}}}
}

// mrtrServer is a server with the tools, prompt and resource the MRTR
// tests use; calls counts the runs of the tools' handlers.
func mrtrServer(t *testing.T, opts *ServerOptions) (*Server, *atomic.Int32) {
	t.Helper()
	s := NewServer(&Implementation{Name: "mrtr", Version: "1"}, opts)
	var calls atomic.Int32
	add := func(name string, h ToolHandler) {
		if err := s.AddTool(&Tool{Name: name}, func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
			calls.Add(1)
			return h(ctx, ss, p)
		}); err != nil {
			t.Fatal(err)
		}
	}
	// greet asks one named question with Ask.
	add("greet", func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		in, err := ss.Ask(ctx, InputRequests{"user_name": ElicitInput(nameForm("What is your name?"))})
		if err != nil {
			return nil, err
		}
		return textResult("Hello, " + in.Elicit("user_name").Content["name"].(string) + "!"), nil
	})
	// single asks with ServerSession.Elicit, twice: two rounds.
	add("two_steps", func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		first, err := ss.Elicit(ctx, nameForm("Step 1"))
		if err != nil {
			return nil, err
		}
		second, err := ss.Elicit(ctx, nameForm("Step 2"))
		if err != nil {
			return nil, err
		}
		return textResult(first.Content["name"].(string) + "+" + second.Content["name"].(string)), nil
	})
	// all three kinds at once.
	add("all", func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		in, err := ss.Ask(ctx, InputRequests{
			"user_name":    ElicitInput(nameForm("Name?")),
			"greeting":     SamplingInput(&CreateMessageRequestParams{Messages: []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "Greet"}}}}, MaxTokens: 50}),
			"client_roots": RootsInput(),
		})
		if err != nil {
			return nil, err
		}
		return textResult(in.Elicit("user_name").Content["name"].(string) + "/" + in.Sampling("greeting").Model + "/" + in.Roots("client_roots").Roots[0].URI), nil
	})
	// remembers a value computed in the first round.
	var minted atomic.Int32
	add("remember", func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		id, err := Remember(ctx, "order", func() (int32, error) { return minted.Add(1), nil })
		if err != nil {
			return nil, err
		}
		if _, err := ss.Elicit(ctx, nameForm("Confirm order?")); err != nil {
			return nil, err
		}
		return textResult("order " + strconv.Itoa(int(id)) + " round " + strconv.Itoa(RequestRound(ctx))), nil
	})
	// swallows the ask's error and returns a result of its own.
	add("swallow", func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		if _, err := ss.ListRoots(ctx); err != nil {
			return toolError("no roots: %v", err), nil
		}
		return textResult("roots"), nil
	})
	// asks for elicitation only if the client can answer it.
	add("capabilities", func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		reqs := InputRequests{}
		for k, r := range map[string]InputRequest{"e": ElicitInput(nameForm("?")), "s": SamplingInput(&CreateMessageRequestParams{MaxTokens: 1})} {
			if ss.CanAsk(ctx, r) {
				reqs[k] = r
			}
		}
		if _, err := ss.Ask(ctx, reqs); err != nil {
			return nil, err
		}
		return textResult("done"), nil
	})
	// asks without checking: refused when the client cannot answer.
	add("needs_elicitation", func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		if _, err := ss.Elicit(ctx, nameForm("?")); err != nil {
			return nil, err
		}
		return textResult("done"), nil
	})
	if err := s.AddPrompt(&Prompt{Name: "ctx_prompt"}, func(ctx context.Context, ss *ServerSession, _ *GetPromptRequestParams) (*GetPromptResult, error) {
		res, err := ss.Elicit(ctx, nameForm("Context?"))
		if err != nil {
			return nil, err
		}
		return &GetPromptResult{Messages: []PromptMessage{{Role: RoleUser, Content: &TextContent{Text: "ctx " + res.Content["name"].(string)}}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResource(&Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, ss *ServerSession, p *ReadResourceRequestParams) (*ReadResourceResult, error) {
		roots, err := ss.ListRoots(ctx)
		if err != nil {
			return nil, err
		}
		return &ReadResourceResult{Contents: []ResourceContents{&TextResourceContents{URI: p.URI, Text: roots.Roots[0].URI}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return s, &calls
}

func textResult(s string) *CallToolResult {
	return &CallToolResult{Content: []Content{&TextContent{Text: s}}}
}

func mrtrCall(name string, extra map[string]any) map[string]any {
	p := map[string]any{"name": name, "arguments": map[string]any{}}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// TestMRTRRounds walks the rounds of the multi round-trip request flows
// the revision describes (basic/patterns/mrtr): each step is a request,
// built from the previous answer, and what its answer must be.
func TestMRTRRounds(t *testing.T) {
	type step struct {
		req      func(prev wire) modernReq
		wantType string   // "complete", "input_required", or "" for an error
		wantKeys []string // of inputRequests
		wantText string
		wantCode int64
	}
	tool := func(name string, responses map[string]any, withState bool) func(wire) modernReq {
		return func(prev wire) modernReq {
			extra := map[string]any{}
			if responses != nil {
				extra["inputResponses"] = responses
			}
			if withState && prev.state() != "" {
				extra["requestState"] = prev.state()
			}
			return modernReq{method: MethodToolsCall, params: mrtrCall(name, extra)}
		}
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"named ask", []step{
			{tool("greet", nil, false), "input_required", []string{"user_name"}, "", 0},
			{tool("greet", map[string]any{"user_name": accept(map[string]any{"name": "Alice"})}, true), "complete", nil, "Hello, Alice!", 0},
		}},
		{"answer without requestState counts by key", []step{
			{tool("greet", map[string]any{"user_name": accept(map[string]any{"name": "Bob"}), "unknown_extra_key": accept(map[string]any{"x": "y"})}, false), "complete", nil, "Hello, Bob!", 0},
		}},
		{"missing response: asked again", []step{
			{tool("greet", nil, false), "input_required", []string{"user_name"}, "", 0},
			{tool("greet", map[string]any{"wrong_key": accept(map[string]any{"name": "x"})}, true), "input_required", []string{"user_name"}, "", 0},
			{tool("greet", map[string]any{"user_name": accept(map[string]any{"name": "Carol"})}, true), "complete", nil, "Hello, Carol!", 0},
		}},
		{"two rounds of single asks", []step{
			{tool("two_steps", nil, false), "input_required", []string{"elicitation-1"}, "", 0},
			{tool("two_steps", map[string]any{"elicitation-1": accept(map[string]any{"name": "a"})}, true), "input_required", []string{"elicitation-2"}, "", 0},
			{tool("two_steps", map[string]any{"elicitation-2": accept(map[string]any{"name": "b"})}, true), "complete", nil, "a+b", 0},
		}},
		{"three kinds at once", []step{
			{tool("all", nil, false), "input_required", []string{"client_roots", "greeting", "user_name"}, "", 0},
			{tool("all", map[string]any{"user_name": accept(map[string]any{"name": "A"}), "greeting": samplingAnswer}, true), "input_required", []string{"client_roots"}, "", 0},
			{tool("all", map[string]any{"client_roots": rootsAnswer}, true), "complete", nil, "A/m/file:///r", 0},
		}},
		{"a response of the wrong shape", []step{
			{tool("greet", nil, false), "input_required", []string{"user_name"}, "", 0},
			{tool("greet", map[string]any{"user_name": map[string]any{"action": "maybe"}}, true), "", nil, "", jsonrpc.CodeInvalidParams},
		}},
		{"an accepted form without its required field", []step{
			{tool("greet", map[string]any{"user_name": map[string]any{"action": "accept"}}, false), "", nil, "", jsonrpc.CodeInvalidParams},
		}},
		{"a number for a response", []step{
			{tool("greet", map[string]any{"user_name": 12345}, false), "", nil, "", jsonrpc.CodeInvalidParams},
		}},
		{"null inputResponses", []step{
			{func(wire) modernReq {
				return modernReq{method: MethodToolsCall, params: mrtrCall("greet", map[string]any{"inputResponses": nil})}
			}, "", nil, "", jsonrpc.CodeInvalidParams},
		}},
		{"tampered requestState", []step{
			{tool("greet", nil, false), "input_required", []string{"user_name"}, "", 0},
			{func(prev wire) modernReq {
				return modernReq{method: MethodToolsCall, params: mrtrCall("greet", map[string]any{"requestState": prev.state() + "-TAMPERED", "inputResponses": map[string]any{"user_name": accept(map[string]any{"name": "x"})}})}
			}, "", nil, "", jsonrpc.CodeInvalidParams},
		}},
		{"requestState of another tool", []step{
			{tool("two_steps", nil, false), "input_required", []string{"elicitation-1"}, "", 0},
			{tool("greet", map[string]any{"user_name": accept(map[string]any{"name": "x"})}, true), "", nil, "", jsonrpc.CodeInvalidParams},
		}},
		{"requestState with other arguments", []step{
			{tool("greet", nil, false), "input_required", []string{"user_name"}, "", 0},
			{func(prev wire) modernReq {
				p := mrtrCall("greet", map[string]any{"requestState": prev.state()})
				p["arguments"] = map[string]any{"x": 1}
				return modernReq{method: MethodToolsCall, params: p}
			}, "", nil, "", jsonrpc.CodeInvalidParams},
		}},
		{"requestState of another principal", []step{
			{func(wire) modernReq {
				return modernReq{method: MethodToolsCall, params: mrtrCall("greet", nil), principal: "alice"}
			}, "input_required", []string{"user_name"}, "", 0},
			{func(prev wire) modernReq {
				return modernReq{method: MethodToolsCall, params: mrtrCall("greet", map[string]any{"requestState": prev.state()}), principal: "mallory"}
			}, "", nil, "", jsonrpc.CodeInvalidParams},
		}},
		{"the handler swallows the ask's error", []step{
			{tool("swallow", nil, false), "input_required", []string{"roots-1"}, "", 0},
			{tool("swallow", map[string]any{"roots-1": rootsAnswer}, true), "complete", nil, "roots", 0},
		}},
		{"only what the client declared", []step{
			{func(wire) modernReq {
				return modernReq{method: MethodToolsCall, params: mrtrCall("capabilities", nil), caps: &ClientCapabilities{Sampling: &SamplingCapability{}}}
			}, "input_required", []string{"s"}, "", 0},
		}},
		{"an undeclared capability", []step{
			{func(wire) modernReq {
				return modernReq{method: MethodToolsCall, params: mrtrCall("needs_elicitation", nil), caps: &ClientCapabilities{Sampling: &SamplingCapability{}}}
			}, "", nil, "", CodeMissingRequiredClientCapability},
		}},
		{"prompts/get", []step{
			{func(wire) modernReq {
				return modernReq{method: MethodPromptsGet, params: map[string]any{"name": "ctx_prompt"}}
			}, "input_required", []string{"elicitation-1"}, "", 0},
			{func(prev wire) modernReq {
				return modernReq{method: MethodPromptsGet, params: map[string]any{"name": "ctx_prompt", "requestState": prev.state(), "inputResponses": map[string]any{"elicitation-1": accept(map[string]any{"name": "c"})}}}
			}, "complete", nil, "ctx c", 0},
		}},
		{"resources/read", []step{
			{func(wire) modernReq {
				return modernReq{method: MethodResourcesRead, params: map[string]any{"uri": "test://r"}}
			}, "input_required", []string{"roots-1"}, "", 0},
			{func(prev wire) modernReq {
				return modernReq{method: MethodResourcesRead, params: map[string]any{"uri": "test://r", "requestState": prev.state(), "inputResponses": map[string]any{"roots-1": rootsAnswer}}}
			}, "complete", nil, "file:///r", 0},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := mrtrServer(t, nil)
			var prev wire
			for i, st := range c.steps {
				got := serveModern(t, s, st.req(prev))
				switch {
				case st.wantType == "":
					if got.Err == nil || got.Err.Code != st.wantCode {
						t.Fatalf("step %d: got %+v, want error %d", i+1, got, st.wantCode)
					}
					continue
				case got.Err != nil:
					t.Fatalf("step %d: error %v", i+1, got.Err)
				case got.resultType() != st.wantType:
					t.Fatalf("step %d: resultType %q, want %q (%v)", i+1, got.resultType(), st.wantType, got.Result)
				}
				if st.wantType == "input_required" {
					if keys := got.inputKeys(); strings.Join(keys, ",") != strings.Join(st.wantKeys, ",") {
						t.Fatalf("step %d: inputRequests %v, want %v", i+1, keys, st.wantKeys)
					}
					if got.state() == "" {
						t.Fatalf("step %d: no requestState", i+1)
					}
					if got.state() == prev.state() {
						t.Fatalf("step %d: the requestState did not change", i+1)
					}
				}
				if st.wantText != "" && got.text() != st.wantText {
					t.Fatalf("step %d: text %q, want %q", i+1, got.text(), st.wantText)
				}
				prev = got
			}
		})
	}
}

// TestRemember: a value computed in the first round is the one the last
// round sees, and RequestRound counts the rounds.
func TestRemember(t *testing.T) {
	s, _ := mrtrServer(t, nil)
	r1 := serveModern(t, s, modernReq{method: MethodToolsCall, params: mrtrCall("remember", nil)})
	r2 := serveModern(t, s, modernReq{method: MethodToolsCall, params: mrtrCall("remember", map[string]any{
		"requestState": r1.state(), "inputResponses": map[string]any{"elicitation-1": accept(map[string]any{"name": "yes"})}})})
	if r2.text() != "order 1 round 2" {
		t.Fatalf("got %q (%v), want the order minted in round 1, in round 2", r2.text(), r2)
	}
}

// TestRequestStateExpiry: a retry after RequestStateTTL is refused.
func TestRequestStateExpiry(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ring, err := seal.NewRing([][]byte{seal.GenerateSecret()}, &seal.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := mrtrServer(t, &ServerOptions{StateSealer: ring, RequestStateTTL: time.Minute})
	r1 := serveModern(t, s, modernReq{method: MethodToolsCall, params: mrtrCall("greet", nil)})
	now = now.Add(time.Minute)
	r2 := serveModern(t, s, modernReq{method: MethodToolsCall, params: mrtrCall("greet", map[string]any{
		"requestState": r1.state(), "inputResponses": map[string]any{"user_name": accept(map[string]any{"name": "late"})}})})
	if r2.Err == nil || r2.Err.Code != jsonrpc.CodeInvalidParams || !strings.Contains(r2.Err.Message, "expired") {
		t.Fatalf("got %+v, want -32602 saying the state expired", r2)
	}
}

// TestRequestStateAcrossReplicas: a server holding the same ring takes
// the retry (the state is self-contained); one with another key refuses
// it.
func TestRequestStateAcrossReplicas(t *testing.T) {
	secret := seal.GenerateSecret()
	ring := func(secrets ...[]byte) *seal.Ring {
		r, err := seal.NewRing(secrets, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, _ := mrtrServer(t, &ServerOptions{StateSealer: ring(secret)})
	b, _ := mrtrServer(t, &ServerOptions{StateSealer: ring(seal.GenerateSecret(), secret)}) // rotated: old key still opens
	c, _ := mrtrServer(t, &ServerOptions{StateSealer: ring(seal.GenerateSecret())})
	r1 := serveModern(t, a, modernReq{method: MethodToolsCall, params: mrtrCall("two_steps", nil)})
	retry := modernReq{method: MethodToolsCall, params: mrtrCall("two_steps", map[string]any{
		"requestState": r1.state(), "inputResponses": map[string]any{"elicitation-1": accept(map[string]any{"name": "a"})}})}
	if got := serveModern(t, b, retry); got.resultType() != "input_required" || got.inputKeys()[0] != "elicitation-2" {
		t.Fatalf("replica with the key: %+v", got)
	}
	if got := serveModern(t, c, retry); got.Err == nil || got.Err.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("replica without the key: %+v", got)
	}
}

// TestRequestStateTooLarge: a handler whose state outgrows the ring's
// MaxSize gets an internal error, not an unbounded requestState.
func TestRequestStateTooLarge(t *testing.T) {
	ring, err := seal.NewRing([][]byte{seal.GenerateSecret()}, &seal.Options{MaxSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(&Implementation{Name: "x", Version: "1"}, &ServerOptions{StateSealer: ring})
	if err := s.AddTool(&Tool{Name: "big"}, func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		if _, err := Remember(ctx, "blob", func() (string, error) { return strings.Repeat("x", 1000), nil }); err != nil {
			return nil, err
		}
		_, err := ss.ListRoots(ctx)
		return nil, err
	}); err != nil {
		t.Fatal(err)
	}
	got := serveModern(t, s, modernReq{method: MethodToolsCall, params: mrtrCall("big", nil)})
	if got.Err == nil || got.Err.Code != jsonrpc.CodeInternalError {
		t.Fatalf("got %+v, want -32603", got)
	}
}

// TestAskCapabilityError: the refusal of an undeclared capability matches
// ErrCapabilityNotDeclared and carries -32021 with requiredCapabilities.
func TestAskCapabilityError(t *testing.T) {
	s, _ := mrtrServer(t, nil)
	got := serveModern(t, s, modernReq{method: MethodToolsCall, params: mrtrCall("needs_elicitation", nil), caps: &ClientCapabilities{}})
	if got.Err == nil || got.Err.Code != CodeMissingRequiredClientCapability {
		t.Fatalf("got %+v", got)
	}
	var data MissingRequiredClientCapabilityData
	if err := json.Unmarshal(got.Err.Data, &data); err != nil || data.RequiredCapabilities.Elicitation == nil {
		t.Fatalf("data %s: %v", got.Err.Data, err)
	}
	r := &inputRound{}
	_, err := r.askOne(context.Background(), ElicitInput(nameForm("?")))
	if !errors.Is(err, ErrCapabilityNotDeclared) {
		t.Fatalf("%v does not match ErrCapabilityNotDeclared", err)
	}
}

// TestAskLegacy: in a 2025-11-25 session the same handler's asks are
// requests to the client, answered on the spot, and Remember just
// computes.
func TestAskLegacy(t *testing.T) {
	s, calls := mrtrServer(t, nil)
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		Roots: []*Root{{URI: "file:///r", Name: "R"}},
		ElicitationHandler: func(_ context.Context, _ *ClientSession, p ElicitRequestParams) (*ElicitResult, error) {
			return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "Dana"}}, nil
		},
		CreateMessageHandler: func(context.Context, *ClientSession, *CreateMessageRequestParams) (*CreateMessageResult, error) {
			return &CreateMessageResult{Role: RoleAssistant, Content: []Content{&TextContent{Text: "hi"}}, Model: "m"}, nil
		},
	})
	_, cs := connectPair(t, s, c)
	for _, tc := range []struct{ tool, want string }{
		{"greet", "Hello, Dana!"},
		{"two_steps", "Dana+Dana"},
		{"all", "Dana/m/file:///r"},
		{"remember", "order 1 round 0"},
	} {
		calls.Store(0)
		res, err := cs.CallTool(context.Background(), &CallToolRequestParams{Name: tc.tool})
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		if got := res.Content[0].(*TextContent).Text; got != tc.want {
			t.Errorf("%s: %q, want %q", tc.tool, got, tc.want)
		}
		if calls.Load() != 1 {
			t.Errorf("%s: the handler ran %d times; in a session it runs once", tc.tool, calls.Load())
		}
	}
}

// countingContext counts the Value lookups that reach it.
type countingContext struct {
	context.Context
	n int
}

func (c *countingContext) Value(key any) any { c.n++; return c.Context.Value(key) }

// TestLegacyRequestIsNotModern: on a session's request the checks of the
// modern leg (in callTool, getPrompt, readResource and Tasks.Middleware)
// stop at the session's context: a lookup reaching jsonrpc's request
// context makes it build a cancelable context, two allocations per
// tools/call (BenchmarkStreamableHandlerCallTool).
func TestLegacyRequestIsNotModern(t *testing.T) {
	parent := &countingContext{Context: context.Background()}
	ctx := &sessionContext{Context: parent}
	if modernFromContext(ctx) != nil || EraFromContext(ctx) != EraLegacy {
		t.Fatal("a session's request looks modern")
	}
	if parent.n != 0 {
		t.Fatalf("%d lookups reached the request's context", parent.n)
	}
}

// TestCheckElicitAnswer: an accepted form's content must match its schema
// (defaults applied); a declined one's content is dropped; other answers
// pass.
func TestCheckElicitAnswer(t *testing.T) {
	form := ElicitInput(&ElicitRequestFormParams{Message: "m", RequestedSchema: RequestedSchema{
		Properties: map[string]PrimitiveSchemaDefinition{"name": &StringSchema{}, "n": &NumberSchema{Default: new(3.0)}},
		Required:   []string{"name"}}})
	cases := []struct {
		name string
		req  InputRequest
		res  ClientResult
		ok   bool
	}{
		{"accepted", form, &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "a"}}, true},
		{"accepted without a required field", form, &ElicitResult{Action: ElicitActionAccept}, false},
		{"accepted with a wrong type", form, &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": 1.0}}, false},
		{"declined with content", form, &ElicitResult{Action: ElicitActionDecline, Content: map[string]any{"x": "y"}}, true},
		{"URL mode", ElicitInput(&ElicitRequestURLParams{URL: "https://x.example/", Message: "m"}), &ElicitResult{Action: ElicitActionAccept}, true},
		{"roots", RootsInput(), &ListRootsResult{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkElicitAnswer(&c.req, c.res, jsonschema.Limits{})
			if (err == nil) != c.ok {
				t.Fatalf("checkElicitAnswer = %v, want ok=%v", err, c.ok)
			}
			if er, ok := c.res.(*ElicitResult); ok && err == nil {
				if er.Action != ElicitActionAccept && er.Content != nil {
					t.Errorf("declined content kept: %v", er.Content)
				}
				if c.name == "accepted" && er.Content["n"] != 3.0 {
					t.Errorf("default not applied: %v", er.Content)
				}
			}
		})
	}
}
