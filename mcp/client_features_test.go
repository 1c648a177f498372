package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// peer is a scripted server: a jsonrpc.Conn on the far end of the
// in-memory transport that answers initialize and then the methods in
// answers, and records every message it receives.
type peer struct {
	conn *jsonrpc.Conn

	mu       sync.Mutex
	requests []*jsonrpc.Request // in arrival order, notifications included
	answers  map[string]func(json.RawMessage) (any, error)
}

func (p *peer) received(method string) []*jsonrpc.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*jsonrpc.Request
	for _, r := range p.requests {
		if r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

// connectPeer connects c to a scripted server whose initialize result
// declares caps.
func connectPeer(t *testing.T, c *Client, caps ServerCapabilities, answers map[string]func(json.RawMessage) (any, error)) (*peer, *ClientSession) {
	t.Helper()
	p := &peer{answers: answers}
	ct, st := InMemoryTransports()
	stream, err := st.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p.conn = jsonrpc.NewConn(stream, jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		p.mu.Lock()
		p.requests = append(p.requests, req)
		f := p.answers[req.Method]
		p.mu.Unlock()
		if req.Method == MethodInitialize {
			return &InitializeResult{ProtocolVersion: LatestProtocolVersion, Capabilities: caps, ServerInfo: Implementation{Name: "peer", Version: "1"}}, nil
		}
		if req.IsNotification() {
			return nil, nil
		}
		if f == nil {
			return nil, jsonrpc.ErrMethodNotFound
		}
		return f(req.Params)
	})})
	cs, err := c.Connect(context.Background(), ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); p.conn.Close() })
	return p, cs
}

func fixed(v any) func(json.RawMessage) (any, error) {
	return func(json.RawMessage) (any, error) { return v, nil }
}

func newTestClient(opts *ClientOptions) *Client {
	return NewClient(&Implementation{Name: "c", Version: "1"}, opts)
}

func TestClientMethods(t *testing.T) {
	ctx := context.Background()
	answers := map[string]func(json.RawMessage) (any, error){
		MethodResourcesList:          fixed(json.RawMessage(`{"resources":[{"uri":"file:///a","name":"a"}],"nextCursor":"n"}`)),
		MethodResourcesTemplatesList: fixed(json.RawMessage(`{"resourceTemplates":[{"uriTemplate":"file:///{x}","name":"x"}]}`)),
		MethodResourcesRead:          fixed(json.RawMessage(`{"contents":[{"uri":"file:///a","text":"hello"}]}`)),
		MethodResourcesSubscribe:     fixed(json.RawMessage(`{}`)),
		MethodResourcesUnsubscribe:   fixed(json.RawMessage(`{}`)),
		MethodPromptsList:            fixed(json.RawMessage(`{"prompts":[{"name":"p"}]}`)),
		MethodPromptsGet:             fixed(json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`)),
		MethodCompletionComplete:     fixed(json.RawMessage(`{"completion":{"values":["py","pyx"]}}`)),
		MethodLoggingSetLevel:        fixed(json.RawMessage(`{}`)),
	}
	p, cs := connectPeer(t, newTestClient(nil), ServerCapabilities{}, answers)
	tests := []struct {
		method     string
		call       func() (any, error)
		wantParams string
		check      func(any) bool
	}{
		{MethodResourcesList, func() (any, error) { return cs.ListResources(ctx, nil) }, `{}`,
			func(v any) bool {
				r := v.(*ListResourcesResult)
				return len(r.Resources) == 1 && r.Resources[0].URI == "file:///a" && r.NextCursor == "n"
			}},
		{MethodResourcesTemplatesList, func() (any, error) {
			return cs.ListResourceTemplates(ctx, &PaginatedRequestParams{Cursor: "c1"})
		}, `{"cursor":"c1"}`,
			func(v any) bool {
				return v.(*ListResourceTemplatesResult).ResourceTemplates[0].URITemplate == "file:///{x}"
			}},
		{MethodResourcesRead, func() (any, error) { return cs.ReadResource(ctx, &ReadResourceRequestParams{URI: "file:///a"}) }, `{"uri":"file:///a"}`,
			func(v any) bool {
				tc, ok := v.(*ReadResourceResult).Contents[0].(*TextResourceContents)
				return ok && tc.Text == "hello"
			}},
		{MethodResourcesSubscribe, func() (any, error) {
			return nil, cs.Subscribe(ctx, &SubscribeRequestParams{URI: "file:///a"})
		}, `{"uri":"file:///a"}`, nil},
		{MethodResourcesUnsubscribe, func() (any, error) {
			return nil, cs.Unsubscribe(ctx, &UnsubscribeRequestParams{URI: "file:///a"})
		}, `{"uri":"file:///a"}`, nil},
		{MethodPromptsList, func() (any, error) { return cs.ListPrompts(ctx, nil) }, `{}`,
			func(v any) bool { return v.(*ListPromptsResult).Prompts[0].Name == "p" }},
		{MethodPromptsGet, func() (any, error) {
			return cs.GetPrompt(ctx, &GetPromptRequestParams{Name: "p", Arguments: map[string]string{"a": "b"}})
		}, `{"name":"p","arguments":{"a":"b"}}`,
			func(v any) bool { return len(v.(*GetPromptResult).Messages) == 1 }},
		{MethodCompletionComplete, func() (any, error) {
			return cs.Complete(ctx, &CompleteRequestParams{Ref: &PromptReference{Name: "p"}, Argument: CompleteArgument{Name: "lang", Value: "py"}})
		}, `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"lang","value":"py"}}`,
			func(v any) bool {
				return reflect.DeepEqual(v.(*CompleteResult).Completion.Values, []string{"py", "pyx"})
			}},
		{MethodLoggingSetLevel, func() (any, error) { return nil, cs.SetLoggingLevel(ctx, LoggingLevelWarning) }, `{"level":"warning"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			v, err := tt.call()
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil && !tt.check(v) {
				t.Errorf("unexpected result %+v", v)
			}
			got := p.received(tt.method)
			if len(got) != 1 {
				t.Fatalf("server got %d %s requests, want 1", len(got), tt.method)
			}
			if !sameJSON(t, got[0].Params, tt.wantParams) {
				t.Errorf("params = %s, want %s", got[0].Params, tt.wantParams)
			}
		})
	}
}

func sameJSON(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatalf("%s: %v", want, err)
	}
	return reflect.DeepEqual(a, b)
}

// pager answers a list method with pages of names; cursor "page<i>" asks
// for page i.
func pager(key string, pages [][]string, item func(string) any) func(json.RawMessage) (any, error) {
	return func(raw json.RawMessage) (any, error) {
		var p PaginatedRequestParams
		_ = json.Unmarshal(raw, &p)
		i := 0
		if p.Cursor != "" {
			if _, err := fmt.Sscanf(p.Cursor, "page%d", &i); err != nil || i >= len(pages) {
				return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: bad cursor")
			}
		}
		items := []any{}
		for _, n := range pages[i] {
			items = append(items, item(n))
		}
		res := map[string]any{key: items}
		if i+1 < len(pages) {
			res["nextCursor"] = fmt.Sprintf("page%d", i+1)
		}
		return res, nil
	}
}

func TestIterators(t *testing.T) {
	ctx := context.Background()
	pages := [][]string{{"a", "b"}, {}, {"c"}}
	named := func(n string) any {
		return map[string]any{"name": n, "uri": "file:///" + n, "uriTemplate": "file:///" + n + "/{x}"}
	}
	tool := func(n string) any { return map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}} }
	_, cs := connectPeer(t, newTestClient(nil), ServerCapabilities{}, map[string]func(json.RawMessage) (any, error){
		MethodToolsList:              pager("tools", pages, tool),
		MethodResourcesList:          pager("resources", pages, named),
		MethodResourcesTemplatesList: pager("resourceTemplates", pages, named),
		MethodPromptsList:            pager("prompts", pages, named),
	})
	collect := func(seq func(func(string, error) bool)) ([]string, error) {
		var names []string
		var err error
		seq(func(n string, e error) bool {
			if e != nil {
				err = e
				return false
			}
			names = append(names, n)
			return true
		})
		return names, err
	}
	tests := []struct {
		name string
		seq  func(*PaginatedRequestParams) func(func(string, error) bool)
	}{
		{"tools", func(p *PaginatedRequestParams) func(func(string, error) bool) {
			return func(y func(string, error) bool) {
				for x, err := range cs.Tools(ctx, p) {
					if err != nil {
						y("", err)
						return
					}
					if !y(x.Name, nil) {
						return
					}
				}
			}
		}},
		{"resources", func(p *PaginatedRequestParams) func(func(string, error) bool) {
			return func(y func(string, error) bool) {
				for x, err := range cs.Resources(ctx, p) {
					if err != nil {
						y("", err)
						return
					}
					if !y(x.Name, nil) {
						return
					}
				}
			}
		}},
		{"templates", func(p *PaginatedRequestParams) func(func(string, error) bool) {
			return func(y func(string, error) bool) {
				for x, err := range cs.ResourceTemplates(ctx, p) {
					if err != nil {
						y("", err)
						return
					}
					if !y(x.Name, nil) {
						return
					}
				}
			}
		}},
		{"prompts", func(p *PaginatedRequestParams) func(func(string, error) bool) {
			return func(y func(string, error) bool) {
				for x, err := range cs.Prompts(ctx, p) {
					if err != nil {
						y("", err)
						return
					}
					if !y(x.Name, nil) {
						return
					}
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := collect(tt.seq(nil))
			if err != nil || !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
				t.Errorf("all pages: %v, %v", got, err)
			}
			got, err = collect(tt.seq(&PaginatedRequestParams{Cursor: "page2"}))
			if err != nil || !reflect.DeepEqual(got, []string{"c"}) {
				t.Errorf("from a cursor: %v, %v", got, err)
			}
			_, err = collect(tt.seq(&PaginatedRequestParams{Cursor: "bogus"}))
			if !errors.Is(err, jsonrpc.ErrInvalidParams) {
				t.Errorf("bad cursor: %v, want -32602", err)
			}
		})
	}
}

func TestIteratorStopsEarlyAndOnCursorLoop(t *testing.T) {
	ctx := context.Background()
	var calls int
	var mu sync.Mutex
	_, cs := connectPeer(t, newTestClient(nil), ServerCapabilities{}, map[string]func(json.RawMessage) (any, error){
		MethodPromptsList: func(json.RawMessage) (any, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			return json.RawMessage(`{"prompts":[{"name":"x"}],"nextCursor":"same"}`), nil
		},
	})
	n := 0
	var err error
	for _, e := range cs.Prompts(ctx, nil) {
		if e != nil {
			err = e
			break
		}
		n++
	}
	if !errors.Is(err, ErrCursorLoop) {
		t.Errorf("err = %v, want ErrCursorLoop", err)
	}
	if n != 2 {
		t.Errorf("got %d prompts before the loop was seen, want 2", n)
	}
	mu.Lock()
	calls = 0
	mu.Unlock()
	for range cs.Prompts(ctx, nil) {
		break
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 {
		t.Errorf("breaking after the first item made %d requests, want 1", calls)
	}
}

func TestClientNotificationHandlers(t *testing.T) {
	type event struct {
		kind string
		arg  string
	}
	events := make(chan event, 16)
	c := newTestClient(&ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, _ *ClientSession, p *ResourceUpdatedNotificationParams) {
			events <- event{"updated", p.URI}
		},
		ResourceListChangedHandler: func(context.Context, *ClientSession) { events <- event{"resources", ""} },
		PromptListChangedHandler:   func(context.Context, *ClientSession) { events <- event{"prompts", ""} },
		ToolListChangedHandler:     func(context.Context, *ClientSession) { events <- event{"tools", ""} },
		TaskStatusHandler: func(_ context.Context, _ *ClientSession, p *TaskStatusNotificationParams) {
			events <- event{"task", p.TaskID + "/" + string(p.Status)}
		},
		LoggingMessageHandler: func(_ context.Context, _ *ClientSession, p *LoggingMessageNotificationParams) {
			events <- event{"log", string(p.Level)}
		},
	})
	p, _ := connectPeer(t, c, ServerCapabilities{}, nil)
	ctx := context.Background()
	tests := []struct {
		method string
		params string
		want   event
	}{
		{NotificationResourcesUpdated, `{"uri":"file:///a/b"}`, event{"updated", "file:///a/b"}},
		{NotificationResourcesListChanged, ``, event{"resources", ""}},
		{NotificationPromptsListChanged, ``, event{"prompts", ""}},
		{NotificationToolsListChanged, ``, event{"tools", ""}},
		{NotificationTasksStatus, `{"taskId":"t1","status":"working","createdAt":"2025-01-01T00:00:00Z","lastUpdatedAt":"2025-01-01T00:00:00Z","ttl":null}`, event{"task", "t1/working"}},
		{NotificationMessage, `{"level":"error","data":"x"}`, event{"log", "error"}},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			var params any
			if tt.params != "" {
				params = json.RawMessage(tt.params)
			}
			if err := p.conn.Notify(ctx, tt.method, params); err != nil {
				t.Fatal(err)
			}
			if got := <-events; got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	// A malformed resource update (no uri) reaches no handler: the next
	// event is the one after it.
	p.conn.Notify(ctx, NotificationResourcesUpdated, json.RawMessage(`{}`))
	p.conn.Notify(ctx, NotificationPromptsListChanged, nil)
	if got := <-events; got.kind != "prompts" {
		t.Errorf("malformed update delivered: %+v", got)
	}
}

func TestRoots(t *testing.T) {
	ctx := context.Background()
	c := newTestClient(&ClientOptions{Roots: []*Root{{URI: "file:///home/a", Name: "a"}}})
	p, cs := connectPeer(t, c, ServerCapabilities{}, nil)
	if caps := p.received(MethodInitialize); len(caps) != 1 || !strings.Contains(string(caps[0].Params), `"roots":{"listChanged":true}`) {
		t.Fatalf("initialize does not declare roots.listChanged: %s", caps[0].Params)
	}
	list := func() []Root {
		t.Helper()
		var res ListRootsResult
		if err := p.conn.Call(ctx, MethodRootsList, nil, &res); err != nil {
			t.Fatal(err)
		}
		return res.Roots
	}
	if got := list(); len(got) != 1 || got[0].URI != "file:///home/a" || got[0].Name != "a" {
		t.Fatalf("roots/list = %+v", got)
	}
	changes := func() int { return len(p.received(NotificationRootsListChanged)) }

	if err := c.AddRoots(&Root{URI: "file:///home/b"}, &Root{URI: "file:///home/a", Name: "A"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a list_changed after AddRoots", func() bool { return changes() == 1 })
	if got := list(); len(got) != 2 || got[0].Name != "A" || got[1].URI != "file:///home/b" {
		t.Fatalf("after AddRoots: %+v", got)
	}
	c.RemoveRoots("file:///nowhere")
	c.RemoveRoots("file:///home/a")
	eventually(t, "one more list_changed after RemoveRoots", func() bool { return changes() == 2 })
	if got := list(); len(got) != 1 || got[0].URI != "file:///home/b" {
		t.Fatalf("after RemoveRoots: %+v", got)
	}
	// A list_changed is sent only for a change: the no-op removal above
	// sent none (the count is exactly 2).
	if n := changes(); n != 2 {
		t.Errorf("%d list_changed notifications, want 2", n)
	}

	bad := []string{"https://example.com/x", "file:///home/../etc", "file:///home/%2e%2e/etc", "file:///a?q=1", "file:///a#f", "relative/path", ""}
	for _, u := range bad {
		if err := c.AddRoots(&Root{URI: u}); !errors.Is(err, ErrInvalidRoot) {
			t.Errorf("AddRoots(%q) = %v, want ErrInvalidRoot", u, err)
		}
	}
	if got := list(); len(got) != 1 {
		t.Errorf("refused roots changed the list: %+v", got)
	}
	_ = cs
}

func TestRootsDisabled(t *testing.T) {
	c := newTestClient(&ClientOptions{DisableRoots: true})
	p, _ := connectPeer(t, c, ServerCapabilities{}, nil)
	if strings.Contains(string(p.received(MethodInitialize)[0].Params), `"roots"`) {
		t.Error("roots declared though disabled")
	}
	err := p.conn.Call(context.Background(), MethodRootsList, nil, nil)
	if !errors.Is(err, jsonrpc.ErrMethodNotFound) {
		t.Errorf("roots/list = %v, want -32601", err)
	}
}

func TestSamplingTools(t *testing.T) {
	ctx := context.Background()
	handler := func(_ context.Context, _ *ClientSession, p *CreateMessageRequestParams) (*CreateMessageResult, error) {
		if len(p.Tools) > 0 || p.SystemPrompt == "force" {
			return &CreateMessageResult{Role: RoleAssistant, Model: "m", StopReason: StopReasonToolUse,
				Content: []Content{&ToolUseContent{ID: "u1", Name: "weather", Input: json.RawMessage(`{"city":"Paris"}`)}}}, nil
		}
		return &CreateMessageResult{Role: RoleAssistant, Model: "m", Content: []Content{&TextContent{Text: "ok"}}}, nil
	}
	withTools := newTestClient(&ClientOptions{CreateMessageHandler: handler, Capabilities: &ClientCapabilities{Sampling: &SamplingCapability{Tools: &Capability{}}}})
	without := newTestClient(&ClientOptions{CreateMessageHandler: handler})
	pTools, _ := connectPeer(t, withTools, ServerCapabilities{}, nil)
	pPlain, _ := connectPeer(t, without, ServerCapabilities{}, nil)

	const tools = `"tools":[{"name":"weather","inputSchema":{"type":"object"}}]`
	user := `{"role":"user","content":{"type":"text","text":"weather?"}}`
	use := `{"role":"assistant","content":[{"type":"tool_use","id":"u1","name":"weather","input":{}}]}`
	result := `{"role":"user","content":[{"type":"tool_result","toolUseId":"u1","content":[{"type":"text","text":"sunny"}]}]}`
	mixed := `{"role":"user","content":[{"type":"tool_result","toolUseId":"u1","content":[]},{"type":"text","text":"and?"}]}`
	tests := []struct {
		name     string
		peer     *peer
		params   string
		wantCode int64 // 0: success
		wantUse  bool
	}{
		{"tools with sampling.tools", pTools, `{"maxTokens":10,"messages":[` + user + `],` + tools + `,"toolChoice":{"mode":"auto"}}`, 0, true},
		{"tools without sampling.tools", pPlain, `{"maxTokens":10,"messages":[` + user + `],` + tools + `}`, jsonrpc.CodeInvalidParams, false},
		{"toolChoice without sampling.tools", pPlain, `{"maxTokens":10,"messages":[` + user + `],"toolChoice":{"mode":"none"}}`, jsonrpc.CodeInvalidParams, false},
		{"plain without sampling.tools", pPlain, `{"maxTokens":10,"messages":[` + user + `]}`, 0, false},
		{"complete tool loop", pTools, `{"maxTokens":10,"messages":[` + user + `,` + use + `,` + result + `],` + tools + `}`, 0, true},
		{"tool_use unanswered", pTools, `{"maxTokens":10,"messages":[` + user + `,` + use + `,` + user + `],` + tools + `}`, jsonrpc.CodeInvalidParams, false},
		{"tool_result mixed with text", pTools, `{"maxTokens":10,"messages":[` + user + `,` + use + `,` + mixed + `],` + tools + `}`, jsonrpc.CodeInvalidParams, false},
		{"tool_result without tool_use", pTools, `{"maxTokens":10,"messages":[` + result + `],` + tools + `}`, jsonrpc.CodeInvalidParams, false},
		{"handler returns tool_use unasked", pTools, `{"maxTokens":10,"systemPrompt":"force","messages":[` + user + `]}`, jsonrpc.CodeInternalError, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res CreateMessageResult
			err := tt.peer.conn.Call(ctx, MethodSamplingCreateMessage, json.RawMessage(tt.params), &res)
			if tt.wantCode != 0 {
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != tt.wantCode {
					t.Fatalf("err = %v, want code %d", err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := hasContent(res.Content, ContentTypeToolUse); got != tt.wantUse {
				t.Errorf("tool_use in result = %v, want %v", got, tt.wantUse)
			}
		})
	}
}

func TestCheckToolLoop(t *testing.T) {
	text := func(r Role) SamplingMessage {
		return SamplingMessage{Role: r, Content: []Content{&TextContent{Text: "x"}}}
	}
	use := func(ids ...string) SamplingMessage {
		m := SamplingMessage{Role: RoleAssistant}
		for _, id := range ids {
			m.Content = append(m.Content, &ToolUseContent{ID: id, Name: "t"})
		}
		return m
	}
	res := func(ids ...string) SamplingMessage {
		m := SamplingMessage{Role: RoleUser}
		for _, id := range ids {
			m.Content = append(m.Content, &ToolResultContent{ToolUseID: id})
		}
		return m
	}
	tests := []struct {
		name    string
		msgs    []SamplingMessage
		wantMsg int // -1: valid
	}{
		{"empty", nil, -1},
		{"plain", []SamplingMessage{text(RoleUser), text(RoleAssistant)}, -1},
		{"parallel uses answered", []SamplingMessage{text(RoleUser), use("a", "b"), res("b", "a"), text(RoleAssistant)}, -1},
		{"one of two answered", []SamplingMessage{use("a", "b"), res("a")}, 1},
		{"answer for unknown id", []SamplingMessage{use("a"), res("a", "z")}, 1},
		{"use at the end is fine", []SamplingMessage{text(RoleUser), use("a")}, -1},
		{"use followed by text", []SamplingMessage{use("a"), text(RoleUser)}, 1},
		{"result with no use", []SamplingMessage{text(RoleUser), res("a")}, 1},
		{"result from assistant", []SamplingMessage{use("a"), {Role: RoleAssistant, Content: []Content{&ToolResultContent{ToolUseID: "a"}}}}, 1},
		{"use from user", []SamplingMessage{{Role: RoleUser, Content: []Content{&ToolUseContent{ID: "a", Name: "t"}}}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckToolLoop(tt.msgs)
			var tle *ToolLoopError
			switch {
			case tt.wantMsg < 0 && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.wantMsg >= 0 && (!errors.As(err, &tle) || tle.Message != tt.wantMsg):
				t.Errorf("err = %v, want a ToolLoopError at message %d", err, tt.wantMsg)
			}
		})
	}
}
