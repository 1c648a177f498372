package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// modernMeta is a valid modern _meta.
const modernMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// modernServer is a server with the features the modern-leg tests use.
func modernServer(t testing.TB) *Server {
	t.Helper()
	s := NewServer(&Implementation{Name: "modern-test", Version: "1.2.3"}, &ServerOptions{
		Capabilities: &ServerCapabilities{Logging: &LoggingCapability{}},
		CacheTTL:     1500 * time.Millisecond,
	})
	add := func(tool *Tool, h ToolHandler) {
		t.Helper()
		if tool.InputSchema == nil {
			tool.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		if err := s.AddTool(tool, h); err != nil {
			t.Fatal(err)
		}
	}
	text := func(s string) *CallToolResult { return &CallToolResult{Content: []Content{&TextContent{Text: s}}} }
	add(&Tool{Name: "zeta"}, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
		return text("zeta"), nil
	})
	add(&Tool{Name: "echo"}, func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
		return text(EraFromContext(ctx).String() + " " + ss.Era().String() + " " + string(p.Arguments)), nil
	})
	add(&Tool{Name: "hdr", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"count":{"type":"integer","x-mcp-header":"Count"},
		"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry"}}}}}`)},
		func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
			return text("ok"), nil
		})
	add(&Tool{Name: "needs_sampling"}, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
		return nil, &MissingClientCapabilityError{Required: ClientCapabilities{Sampling: &SamplingCapability{}}}
	})
	add(&Tool{Name: "chatty"}, func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
		if tok, ok := p.Meta.ProgressToken(); ok {
			if err := ss.NotifyProgress(ctx, &ProgressNotificationParams{ProgressToken: tok, Progress: 1}); err != nil {
				return nil, err
			}
		}
		if err := ss.Log(ctx, &LoggingMessageNotificationParams{Level: LoggingLevelInfo, Data: json.RawMessage(`"hello"`)}); err != nil {
			return nil, err
		}
		return text("done"), nil
	})
	if err := s.AddResource(&Resource{URI: "test://a", Name: "a"}, func(context.Context, *ServerSession, *ReadResourceRequestParams) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []ResourceContents{&TextResourceContents{URI: "test://a", Text: "A"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPrompt(&Prompt{Name: "p"}, func(context.Context, *ServerSession, *GetPromptRequestParams) (*GetPromptResult, error) {
		return &GetPromptResult{Messages: []PromptMessage{{Role: RoleUser, Content: &TextContent{Text: "hi"}}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// call is a modern request body.
func call(id int, method, params string) string {
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, id, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

// withMeta returns params (a JSON object without braces) plus _meta.
func withMeta(params string) string {
	if params == "" {
		return `{"_meta":` + modernMeta + `}`
	}
	return `{` + params + `,"_meta":` + modernMeta + `}`
}

// TestToolParamHeadersRefused checks that AddTool refuses x-mcp-header
// annotations that break the revision's constraints.
func TestToolParamHeadersRefused(t *testing.T) {
	for _, tc := range []struct{ name, schema string }{
		{"empty", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`},
		{"not a token", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"a b"}}}`},
		{"not a string", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":1}}}`},
		{"duplicate", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`},
		{"number", `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`},
		{"object", `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`},
		{"in items", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`},
		{"in anyOf", `{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`},
		{"in $defs", `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"A"}}}`},
		{"at the root", `{"type":"object","x-mcp-header":"A"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
			err := s.AddTool(&Tool{Name: "t", InputSchema: json.RawMessage(tc.schema)}, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
				return nil, nil
			})
			if err == nil {
				t.Fatal("AddTool accepted the tool")
			}
		})
	}
}

// TestModernResultEncoding checks appendModernResult's two paths against
// each other: the fast path for results that name no member it adds, the
// merge for those that do.
func TestModernResultEncoding(t *testing.T) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{CacheTTL: time.Second, CacheScope: CacheScopePublic})
	m := s.modern()
	for _, tc := range []struct {
		name, method string
		res          any
		want         string
	}{
		{"nil", "tools/call", nil, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`},
		{"empty", "tools/call", json.RawMessage(` {} `), `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`},
		{"members", "tools/call", json.RawMessage(`{"a":1}`), `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"a":1}`},
		{"cacheable", "tools/list", &ListToolsResult{}, `{"resultType":"complete","ttlMs":1000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"tools":[]}`},
		{"own ttl", "tools/list", &ListToolsResult{TTLMs: new(int64), CacheScope: CacheScopePrivate}, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"cacheScope":"private","resultType":"complete","tools":[],"ttlMs":0}`},
		{"own _meta", "tools/call", &CallToolResult{Meta: Meta{"k": "v"}}, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"k":"v"},"content":[],"resultType":"complete"}`},
		{"own resultType", "tools/call", json.RawMessage(`{"resultType":"input_required","_meta":null}`), `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"resultType":"input_required"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := m.appendModernResult([]byte("prefix:"), tc.res, tc.method)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimPrefix(string(b), "prefix:"); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	for _, bad := range []any{json.RawMessage(`[]`), json.RawMessage(`"x"`), 7} {
		if _, err := m.appendModernResult(nil, bad, "tools/call"); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestToolSchemaRefRules checks the revision's rules for tool schemas
// (SEP-2106; basic/index "$ref Resolution"): any 2020-12 keyword is
// accepted and kept as written, a $ref inside the schema resolves, and a
// $ref to a network URI is neither fetched nor ignored: the tool is
// refused.
func TestToolSchemaRefRules(t *testing.T) {
	h := func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
		return &CallToolResult{}, nil
	}
	for _, tc := range []struct {
		name, schema string
		ok           bool
	}{
		{"2020-12 keywords and local refs", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
			"$defs":{"addr":{"$anchor":"addr","type":"object","properties":{"city":{"type":"string"}}}},
			"properties":{"a":{"$ref":"#/$defs/addr"},"b":{"$ref":"#addr"},"c":{"type":"string"}},
			"allOf":[{"anyOf":[{"required":["a"]},{"required":["b"]}]}],
			"if":{"required":["c"]},"then":{"required":["a"]},"else":{"required":["b"]},
			"unevaluatedProperties":false,"dependentRequired":{"c":["a"]}}`, true},
		{"network ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/schema.json"}}}`, false},
		{"network ref in $defs", `{"type":"object","$defs":{"x":{"$ref":"http://127.0.0.1:1/s.json"}},"properties":{"a":{"$ref":"#/$defs/x"}}}`, false},
		{"dangling local ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
			err := s.AddTool(&Tool{Name: "t", InputSchema: json.RawMessage(tc.schema), OutputSchema: json.RawMessage(tc.schema)}, h)
			if (err == nil) != tc.ok {
				t.Fatalf("AddTool: %v, want ok=%v", err, tc.ok)
			}
			if !tc.ok {
				return
			}
			list, _ := s.modern().ss.listTools(&modernContext{Context: context.Background()}, MethodToolsList, nil)
			got, _ := json.Marshal(list.(*ListToolsResult).Tools[0].InputSchema)
			if !strings.Contains(string(got), `"unevaluatedProperties":false`) || !strings.Contains(string(got), `"$anchor":"addr"`) {
				t.Errorf("the schema was not kept as written: %s", got)
			}
		})
	}
}

// nopSink is a ModernSink that drops everything.
type nopSink struct{}

func (nopSink) Notify(context.Context, string, json.RawMessage) error { return nil }
func (nopSink) KeepAlive() error                                      { return nil }
func (nopSink) Done() <-chan struct{}                                 { return nil }

// TestMaxModernRequests checks the bound on modern requests in progress:
// one past it is refused with -32010 at once, and a slot freed is reused.
func TestMaxModernRequests(t *testing.T) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{MaxModernRequests: 1})
	entered, release := make(chan struct{}), make(chan struct{})
	if err := s.AddTool(&Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
		entered <- struct{}{}
		<-release
		return &CallToolResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	serve := func(id int64, method, params string) *jsonrpc.Error {
		var r ModernRequest
		req := &jsonrpc.Request{ID: jsonrpc.Int64ID(id), Method: method, Params: json.RawMessage(params)}
		if e := s.PrepareModern(context.Background(), &r, req, nopSink{}); e != nil {
			t.Fatal(e)
		}
		_, e := r.Serve()
		return e
	}
	done := make(chan *jsonrpc.Error, 1)
	go func() { done <- serve(1, MethodToolsCall, withMeta(`"name":"block"`)) }()
	<-entered
	if e := serve(2, MethodToolsList, withMeta("")); e == nil || e.Code != -32010 {
		t.Fatalf("second request: %v, want -32010", e)
	}
	close(release)
	if e := <-done; e != nil {
		t.Fatalf("first request: %v", e)
	}
	if e := serve(3, MethodToolsList, withMeta("")); e != nil {
		t.Fatalf("after the first ended: %v", e)
	}
}
