package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

type addIn struct {
	A    int    `json:"a" jsonschema:"first addend"`
	B    int    `json:"b"`
	Mode string `json:"mode,omitempty"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func typedServer(t *testing.T) *Server {
	t.Helper()
	s := testServer(nil)
	mustOK(t, AddTool(s, &Tool{Name: "add", Description: "adds"}, func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams, in addIn) (*CallToolResult, addOut, error) {
		switch in.Mode {
		case "fail":
			return nil, addOut{}, errors.New("cannot add today")
		case "protocol":
			return nil, addOut{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: mode")
		case "url":
			return nil, addOut{}, NewURLElicitationRequiredError("authorize first", ElicitRequestURLParams{Message: "log in", URL: "https://example.com/auth", ElicitationID: "e1"})
		case "content":
			return &CallToolResult{Content: []Content{&TextContent{Text: "custom"}}}, addOut{Sum: in.A + in.B}, nil
		}
		return nil, addOut{Sum: in.A + in.B}, nil
	}))
	mustOK(t, AddTool(s, &Tool{Name: "untyped_out"}, func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams, in map[string]any) (*CallToolResult, any, error) {
		return &CallToolResult{Content: []Content{&TextContent{Text: "ok"}}}, nil, nil
	}))
	mustOK(t, AddTool(s, &Tool{Name: "raw_schema", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string","maxLength":2}}}`)},
		func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams, in struct {
			X string `json:"x"`
		}) (*CallToolResult, any, error) {
			return &CallToolResult{Content: []Content{&TextContent{Text: in.X}}}, nil, nil
		}))
	return s
}

func TestTypedTools(t *testing.T) {
	tests := []struct {
		name       string
		tool, args string
		wantErr    bool   // a result with isError
		wantText   string // substring of the first text block
		wantStruct string
		wantCode   int64 // a JSON-RPC error
	}{
		{"ok", "add", `{"a":2,"b":3}`, false, `{"sum":5}`, `{"sum":5}`, 0},
		{"own content", "add", `{"a":2,"b":3,"mode":"content"}`, false, "custom", `{"sum":5}`, 0},
		{"missing required", "add", `{"a":2}`, true, "b", "", 0},
		{"wrong type", "add", `{"a":"x","b":1}`, true, "invalid arguments", "", 0},
		{"unknown property", "add", `{"a":1,"b":1,"c":1}`, true, "invalid arguments", "", 0},
		{"handler error", "add", `{"a":1,"b":1,"mode":"fail"}`, true, "cannot add today", "", 0},
		{"protocol error", "add", `{"a":1,"b":1,"mode":"protocol"}`, false, "", "", jsonrpc.CodeInvalidParams},
		{"url elicitation", "add", `{"a":1,"b":1,"mode":"url"}`, false, "", "", CodeURLElicitationRequired},
		{"no output schema", "untyped_out", `{"z":1}`, false, "ok", "", 0},
		{"raw schema kept", "raw_schema", `{"x":"ab"}`, false, "ab", "", 0},
		{"raw schema enforced", "raw_schema", `{"x":"abc"}`, true, "invalid arguments", "", 0},
		{"unknown tool", "nope", `{}`, false, "", "", jsonrpc.CodeInvalidParams},
	}
	for _, tc := range featureTransports {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cs := tc.connect(t, typedServer(t), testClient(nil))
			lt, err := cs.ListTools(ctx, nil)
			mustOK(t, err)
			schemas := map[string][2]string{}
			for _, tl := range lt.Tools {
				schemas[tl.Name] = [2]string{string(tl.InputSchema), string(tl.OutputSchema)}
			}
			if got := schemas["add"][0]; got != `{"additionalProperties":false,"properties":{"a":{"description":"first addend","type":"integer"},"b":{"type":"integer"},"mode":{"type":"string"}},"required":["a","b"],"type":"object"}` {
				t.Errorf("add input schema %s", got)
			}
			if got := schemas["add"][1]; got != `{"additionalProperties":false,"properties":{"sum":{"type":"integer"}},"required":["sum"],"type":"object"}` {
				t.Errorf("add output schema %s", got)
			}
			if schemas["untyped_out"][1] != "" || !strings.Contains(schemas["raw_schema"][0], "maxLength") {
				t.Errorf("schemas %v", schemas)
			}
			for _, tt := range tests {
				res, err := cs.CallTool(ctx, &CallToolRequestParams{Name: tt.tool, Arguments: json.RawMessage(tt.args)})
				if tt.wantCode != 0 {
					if tt.wantCode == CodeURLElicitationRequired {
						var ue *URLElicitationRequiredError
						if !errors.As(err, &ue) || len(ue.Data.Elicitations) != 1 || ue.Data.Elicitations[0].ElicitationID != "e1" {
							t.Errorf("%s: %v", tt.name, err)
						}
						continue
					}
					expectCode(t, tt.name, err, tt.wantCode)
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", tt.name, err)
					continue
				}
				isErr := res.IsError != nil && *res.IsError
				if isErr != tt.wantErr {
					t.Errorf("%s: isError %v", tt.name, isErr)
				}
				if len(res.Content) == 0 || !strings.Contains(textOfContent(t, res.Content[0]), tt.wantText) {
					t.Errorf("%s: content %#v", tt.name, res.Content)
				}
				if string(res.StructuredContent) != tt.wantStruct {
					t.Errorf("%s: structuredContent %s, want %s", tt.name, res.StructuredContent, tt.wantStruct)
				}
			}
		})
	}
}

func TestAddToolRefuses(t *testing.T) {
	s := testServer(nil)
	h := func(context.Context, *ServerSession, *CallToolRequestParams, addIn) (*CallToolResult, addOut, error) {
		return nil, addOut{}, nil
	}
	tests := []struct {
		name string
		err  error
	}{
		{"bad name", AddTool(s, &Tool{Name: "has space"}, h)},
		{"empty name", AddTool(s, &Tool{Name: ""}, h)},
		{"long name", AddTool(s, &Tool{Name: strings.Repeat("a", 129)}, h)},
		{"scalar input", AddTool(s, &Tool{Name: "x"}, func(context.Context, *ServerSession, *CallToolRequestParams, int) (*CallToolResult, any, error) {
			return nil, nil, nil
		})},
		{"slice output", AddTool(s, &Tool{Name: "x"}, func(context.Context, *ServerSession, *CallToolRequestParams, addIn) (*CallToolResult, []int, error) {
			return nil, nil, nil
		})},
		{"channel field", AddTool(s, &Tool{Name: "x"}, func(context.Context, *ServerSession, *CallToolRequestParams, struct{ C chan int }) (*CallToolResult, any, error) {
			return nil, nil, nil
		})},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s: accepted", tt.name)
		}
	}
	if !errors.Is(tests[0].err, ErrInvalidToolName) || !errors.Is(tests[2].err, ErrInvalidToolName) {
		t.Errorf("name errors: %v, %v", tests[0].err, tests[2].err)
	}
	if err := AddTool(s, &Tool{Name: "A-z_0.9"}, h); err != nil {
		t.Errorf("valid name refused: %v", err)
	}
}

func TestValidToolName(t *testing.T) {
	for name, ok := range map[string]bool{
		"a": true, "get_weather": true, "DATA.export-v2": true, strings.Repeat("x", 128): true,
		"": false, strings.Repeat("x", 129): false, "a b": false, "a/b": false, "é": false, "a,b": false,
	} {
		if err := ValidToolName(name); (err == nil) != ok {
			t.Errorf("%q: %v", name, err)
		}
	}
}
