package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// transportCase connects a client to a server one way.
type transportCase struct {
	name    string
	connect func(t *testing.T, s *Server, c *Client) *ClientSession
}

// featureTransports are the two ways every feature is tested: the in-memory
// transport and Streamable HTTP on loopback.
var featureTransports = []transportCase{
	{"memory", func(t *testing.T, s *Server, c *Client) *ClientSession {
		_, cs := connectPair(t, s, c)
		return cs
	}},
	{"http", httpConnect},
}

func testClient(opts *ClientOptions) *Client {
	return NewClient(&Implementation{Name: "c", Version: "1"}, opts)
}

func testServer(opts *ServerOptions) *Server {
	return NewServer(&Implementation{Name: "s", Version: "1"}, opts)
}

func expectCode(t *testing.T, what string, err error, code int64) *jsonrpc.Error {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != code {
		t.Fatalf("%s: got %v, want code %d", what, err, code)
	}
	return je
}

func textOfContent(t *testing.T, c Content) string {
	t.Helper()
	tc, ok := c.(*TextContent)
	if !ok {
		t.Fatalf("content %#v is not text", c)
	}
	return tc.Text
}

func resourceServer(t *testing.T) *Server {
	t.Helper()
	s := testServer(nil)
	text := func(uri, body string) *ReadResourceResult {
		return &ReadResourceResult{Contents: []ResourceContents{&TextResourceContents{URI: uri, MIMEType: "text/plain", Text: body}}}
	}
	mustOK(t, s.AddResource(&Resource{URI: "test://static", Name: "static", MIMEType: "text/plain"},
		func(_ context.Context, _ *ServerSession, p *ReadResourceRequestParams) (*ReadResourceResult, error) {
			return text(p.URI, "static body"), nil
		}))
	mustOK(t, s.AddResourceTemplate(&ResourceTemplate{URITemplate: "test://items/{id}/data{?fields}", Name: "item"},
		func(_ context.Context, _ *ServerSession, p *ReadResourceRequestParams) (*ReadResourceResult, error) {
			vars, ok := MatchURITemplate("test://items/{id}/data{?fields}", p.URI)
			if !ok {
				return nil, errors.New("no match")
			}
			if vars["id"] == "missing" {
				return nil, ResourceNotFoundError(p.URI)
			}
			return text(p.URI, "item "+vars["id"]), nil
		}))
	return s
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestResources(t *testing.T) {
	for _, tc := range featureTransports {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := resourceServer(t)
			cs := tc.connect(t, s, testClient(nil))
			caps := cs.InitializeResult().Capabilities
			if caps.Resources == nil || !caps.Resources.Subscribe || !caps.Resources.ListChanged {
				t.Fatalf("resources capability = %+v", caps.Resources)
			}
			lr, err := cs.ListResources(ctx, nil)
			mustOK(t, err)
			if len(lr.Resources) != 1 || lr.Resources[0].URI != "test://static" {
				t.Fatalf("resources/list = %+v", lr)
			}
			lt, err := cs.ListResourceTemplates(ctx, nil)
			mustOK(t, err)
			if len(lt.ResourceTemplates) != 1 || lt.ResourceTemplates[0].Name != "item" {
				t.Fatalf("templates/list = %+v", lt)
			}
			reads := []struct {
				uri, want string
				code      int64
			}{
				{"test://static", "static body", 0},
				{"test://items/123/data", "item 123", 0},
				{"test://items/a%20b/data?fields=x,y", "item a b", 0},
				{"test://items/missing/data", "", CodeResourceNotFound},
				{"test://nothing", "", CodeResourceNotFound},
				{"test://items/1/other", "", CodeResourceNotFound},
			}
			for _, r := range reads {
				res, err := cs.ReadResource(ctx, &ReadResourceRequestParams{URI: r.uri})
				if r.code != 0 {
					je := expectCode(t, r.uri, err, r.code)
					var data struct{ URI string }
					if err := json.Unmarshal(je.Data, &data); err != nil || data.URI != r.uri {
						t.Errorf("%s: error data %s", r.uri, je.Data)
					}
					continue
				}
				mustOK(t, err)
				if got := res.Contents[0].(*TextResourceContents).Text; got != r.want {
					t.Errorf("%s: read %q, want %q", r.uri, got, r.want)
				}
			}
		})
	}
}

func TestResourceSubscriptions(t *testing.T) {
	for _, tc := range featureTransports {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := resourceServer(t)
			type seen struct {
				mu      sync.Mutex
				updated []string
				changed int
			}
			mk := func(sn *seen) *Client {
				return testClient(&ClientOptions{
					ResourceUpdatedHandler: func(_ context.Context, _ *ClientSession, p *ResourceUpdatedNotificationParams) {
						sn.mu.Lock()
						sn.updated = append(sn.updated, p.URI)
						sn.mu.Unlock()
					},
					ResourceListChangedHandler: func(context.Context, *ClientSession) {
						sn.mu.Lock()
						sn.changed++
						sn.mu.Unlock()
					},
				})
			}
			var a, b seen
			ca := tc.connect(t, s, mk(&a))
			cb := tc.connect(t, s, mk(&b))
			mustOK(t, ca.Subscribe(ctx, &SubscribeRequestParams{URI: "test://static"}))
			mustOK(t, s.ResourceUpdated(ctx, "test://static"))
			mustOK(t, s.ResourceUpdated(ctx, "test://other"))
			// a ping after the notifications: in order on memory; on HTTP
			// the standalone stream may lag, so wait.
			eventually(t, "a sees the update", func() bool {
				a.mu.Lock()
				defer a.mu.Unlock()
				return len(a.updated) == 1
			})
			mustOK(t, ca.Unsubscribe(ctx, &UnsubscribeRequestParams{URI: "test://static"}))
			mustOK(t, s.ResourceUpdated(ctx, "test://static"))
			// list_changed reaches both, after the update would have
			mustOK(t, s.AddResource(&Resource{URI: "test://new", Name: "new"}, func(context.Context, *ServerSession, *ReadResourceRequestParams) (*ReadResourceResult, error) {
				return &ReadResourceResult{}, nil
			}))
			eventually(t, "list_changed at both", func() bool {
				a.mu.Lock()
				defer a.mu.Unlock()
				b.mu.Lock()
				defer b.mu.Unlock()
				return a.changed == 1 && b.changed == 1
			})
			// the same stream carried the (absent) second update before list_changed
			a.mu.Lock()
			if !slices.Equal(a.updated, []string{"test://static"}) {
				t.Errorf("a saw updates %v", a.updated)
			}
			a.mu.Unlock()
			b.mu.Lock()
			if len(b.updated) != 0 {
				t.Errorf("b (not subscribed) saw updates %v", b.updated)
			}
			b.mu.Unlock()
			_ = cb
		})
	}
}

func TestResourceTemplateRefused(t *testing.T) {
	s := testServer(nil)
	if err := s.AddResourceTemplate(&ResourceTemplate{URITemplate: "test://{bad", Name: "x"}, func(context.Context, *ServerSession, *ReadResourceRequestParams) (*ReadResourceResult, error) {
		return nil, nil
	}); err == nil {
		t.Fatal("bad template accepted")
	}
	if err := s.AddResource(&Resource{URI: "test://x"}, func(context.Context, *ServerSession, *ReadResourceRequestParams) (*ReadResourceResult, error) {
		return nil, nil
	}); err == nil {
		t.Fatal("resource without a name accepted")
	}
}

func TestMatchURITemplate(t *testing.T) {
	tests := []struct {
		tmpl, uri string
		want      map[string]string
	}{
		{"test://template/{id}/data", "test://template/123/data", map[string]string{"id": "123"}},
		{"file:///{+path}", "file:///a/b/c.txt", map[string]string{"path": "a/b/c.txt"}},
		{"test://x{?q,lang}", "test://x?q=go&lang=en", map[string]string{"q": "go", "lang": "en"}},
		{"test://template/{id}/data", "test://template/1/2/data", nil},
		{"test://a/{id}", "test://b/1", nil},
		{"test://l{?list}", "test://l?list=a,b", map[string]string{"list": "a,b"}},
		{"test://l{?list*}", "test://l?list=a&list=b", map[string]string{"list": "a,b"}},
		{"test://p{/seg*}", "test://p/x/y", map[string]string{"seg": "x,y"}},
	}
	for _, tt := range tests {
		got, ok := MatchURITemplate(tt.tmpl, tt.uri)
		if ok != (tt.want != nil) {
			t.Errorf("%s ~ %s: ok=%v", tt.tmpl, tt.uri, ok)
			continue
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("%s ~ %s: %s=%q, want %q", tt.tmpl, tt.uri, k, got[k], v)
			}
		}
	}
}

func promptServer(t *testing.T, opts *ServerOptions) *Server {
	t.Helper()
	s := testServer(opts)
	yes := true
	mustOK(t, s.AddPrompt(&Prompt{Name: "greet", Description: "says hello", Arguments: []PromptArgument{{Name: "name", Required: &yes}, {Name: "style"}}},
		func(_ context.Context, _ *ServerSession, p *GetPromptRequestParams) (*GetPromptResult, error) {
			return &GetPromptResult{Messages: []PromptMessage{{Role: RoleUser, Content: &TextContent{Text: "Hello " + p.Arguments["name"] + p.Arguments["style"]}}}}, nil
		}))
	return s
}

func TestPrompts(t *testing.T) {
	for _, tc := range featureTransports {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := promptServer(t, nil)
			var mu sync.Mutex
			changed := 0
			cs := tc.connect(t, s, testClient(&ClientOptions{PromptListChangedHandler: func(context.Context, *ClientSession) {
				mu.Lock()
				changed++
				mu.Unlock()
			}}))
			if cs.InitializeResult().Capabilities.Prompts == nil {
				t.Fatal("prompts capability not advertised")
			}
			lp, err := cs.ListPrompts(ctx, nil)
			mustOK(t, err)
			if len(lp.Prompts) != 1 || lp.Prompts[0].Name != "greet" {
				t.Fatalf("prompts/list = %+v", lp)
			}
			gets := []struct {
				name string
				args map[string]string
				want string
				code int64
			}{
				{"greet", map[string]string{"name": "Ada"}, "Hello Ada", 0},
				{"greet", map[string]string{"name": "Ada", "style": "!"}, "Hello Ada!", 0},
				{"greet", map[string]string{"style": "!"}, "", jsonrpc.CodeInvalidParams},
				{"greet", nil, "", jsonrpc.CodeInvalidParams},
				{"nope", nil, "", jsonrpc.CodeInvalidParams},
			}
			for _, g := range gets {
				res, err := cs.GetPrompt(ctx, &GetPromptRequestParams{Name: g.name, Arguments: g.args})
				if g.code != 0 {
					expectCode(t, fmt.Sprint(g.name, g.args), err, g.code)
					continue
				}
				mustOK(t, err)
				if got := textOfContent(t, res.Messages[0].Content); got != g.want {
					t.Errorf("%v: %q, want %q", g.args, got, g.want)
				}
			}
			s.RemovePrompts("greet")
			eventually(t, "prompts list_changed", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return changed == 1
			})
		})
	}
}

func TestCompletion(t *testing.T) {
	values := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint("v", i)
		}
		return out
	}
	tests := []struct {
		name      string
		give      Completion
		wantN     int
		wantTotal int // -1: absent
		wantMore  int // -1 absent, 0 false, 1 true
	}{
		{"few", Completion{Values: values(3)}, 3, -1, -1},
		{"exactly 100", Completion{Values: values(100)}, 100, -1, -1},
		{"150 truncated", Completion{Values: values(150)}, 100, 150, 1},
		{"150 with a larger total", Completion{Values: values(150), Total: ptrTo(1000)}, 100, 1000, 1},
		{"none", Completion{}, 0, -1, -1},
	}
	for _, tc := range featureTransports {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var give Completion
			s := promptServer(t, &ServerOptions{CompletionHandler: func(_ context.Context, _ *ServerSession, p *CompleteRequestParams) (*CompleteResult, error) {
				if p.Argument.Name != "name" {
					return nil, errors.New("wrong argument")
				}
				return &CompleteResult{Completion: give}, nil
			}})
			cs := tc.connect(t, s, testClient(nil))
			if cs.InitializeResult().Capabilities.Completions == nil {
				t.Fatal("completions not advertised")
			}
			for _, tt := range tests {
				give = tt.give
				res, err := cs.Complete(ctx, &CompleteRequestParams{Ref: &PromptReference{Name: "greet"}, Argument: CompleteArgument{Name: "name", Value: "A"}})
				mustOK(t, err)
				c := res.Completion
				if len(c.Values) != tt.wantN {
					t.Errorf("%s: %d values", tt.name, len(c.Values))
				}
				if (c.Total == nil) != (tt.wantTotal < 0) || (c.Total != nil && *c.Total != tt.wantTotal) {
					t.Errorf("%s: total %v", tt.name, c.Total)
				}
				if (c.HasMore == nil) != (tt.wantMore < 0) || (c.HasMore != nil && *c.HasMore != (tt.wantMore == 1)) {
					t.Errorf("%s: hasMore %v", tt.name, c.HasMore)
				}
			}
			_, err := cs.Complete(ctx, &CompleteRequestParams{Ref: &PromptReference{Name: "nope"}, Argument: CompleteArgument{Name: "x"}})
			expectCode(t, "unknown prompt", err, jsonrpc.CodeInvalidParams)
		})
	}
	s := testServer(nil)
	_, cs := connectPair(t, s, testClient(nil))
	err := cs.Call(context.Background(), MethodCompletionComplete, &CompleteRequestParams{Ref: &PromptReference{Name: "p"}, Argument: CompleteArgument{Name: "x"}}, nil)
	expectCode(t, "no completion handler", err, jsonrpc.CodeMethodNotFound)
}

func ptrTo[T any](v T) *T { return &v }

func TestPagination(t *testing.T) {
	for _, tc := range featureTransports {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := testServer(&ServerOptions{PageSize: 2})
			for i := range 5 {
				mustOK(t, s.AddTool(&Tool{Name: fmt.Sprint("t", i), InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
					return &CallToolResult{}, nil
				}))
				mustOK(t, s.AddPrompt(&Prompt{Name: fmt.Sprint("p", i)}, func(context.Context, *ServerSession, *GetPromptRequestParams) (*GetPromptResult, error) {
					return &GetPromptResult{}, nil
				}))
			}
			cs := tc.connect(t, s, testClient(nil))
			var names []string
			var cursors []string
			cursor := ""
			for {
				res, err := cs.ListTools(ctx, &PaginatedRequestParams{Cursor: cursor})
				mustOK(t, err)
				if len(res.Tools) > 2 {
					t.Fatalf("page of %d", len(res.Tools))
				}
				for _, tl := range res.Tools {
					names = append(names, tl.Name)
				}
				if res.NextCursor == "" {
					break
				}
				cursor = res.NextCursor
				cursors = append(cursors, cursor)
			}
			if strings.Join(names, ",") != "t0,t1,t2,t3,t4" || len(cursors) != 2 {
				t.Fatalf("names %v cursors %v", names, cursors)
			}
			var prompts []string
			for p, err := range cs.Prompts(ctx, nil) {
				mustOK(t, err)
				prompts = append(prompts, p.Name)
			}
			if len(prompts) != 5 {
				t.Fatalf("prompts %v", prompts)
			}
			for _, bad := range []string{"!!", "bm90IGEgY3Vyc29y", cursors[0] + "x", encodeCursor("tools", 99), encodeCursor("tools", 0)} {
				_, err := cs.ListTools(ctx, &PaginatedRequestParams{Cursor: bad})
				expectCode(t, "cursor "+bad, err, jsonrpc.CodeInvalidParams)
			}
			_, err := cs.ListPrompts(ctx, &PaginatedRequestParams{Cursor: cursors[0]})
			expectCode(t, "tools cursor for prompts", err, jsonrpc.CodeInvalidParams)
		})
	}
}
