package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
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
