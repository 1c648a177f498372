package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// strictServerHandler is a server with a tool, a prompt and a resource,
// and an initialized session on it over the push seam, which HTTP
// transports use. Its handlers record the name or URI they ran for.
func strictServerHandler(t *testing.T, opts *ServerOptions) (h *pushServer, sid string, ran *[]string) {
	var seen []string
	s := testServer(opts)
	for _, name := range []string{"echo", "fetch"} {
		mustOK(t, s.AddTool(&Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, _ *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
			seen = append(seen, "tool:"+p.Name)
			return &CallToolResult{}, nil
		}))
	}
	mustOK(t, s.AddPrompt(&Prompt{Name: "p"}, func(_ context.Context, _ *ServerSession, p *GetPromptRequestParams) (*GetPromptResult, error) {
		seen = append(seen, "prompt:"+p.Name)
		return &GetPromptResult{}, nil
	}))
	mustOK(t, s.AddResource(&Resource{URI: "file:///r", Name: "r"}, func(_ context.Context, _ *ServerSession, p *ReadResourceRequestParams) (*ReadResourceResult, error) {
		seen = append(seen, "resource:"+p.URI)
		return &ReadResourceResult{}, nil
	}))
	return newPushServer(t, s), "", &seen
}

// TestStrictParams: the server decodes params with exact member names: a
// member that matches only when case is ignored is unknown, a repeated one
// is -32602 (issue #16 item 1). Errors name JSON types, not Go ones (item
// 17).
func TestStrictParams(t *testing.T) {
	h, sid, ran := strictServerHandler(t, nil)
	big := `"arguments":{"pad":"` + strings.Repeat("x", 2048) + `"}`
	for i, tc := range []struct {
		method, params string
		wantRan        string // "" for none
		wantErr        string // a substring of the -32602 message; "" for success
	}{
		{"tools/call", `{"name":"echo"}`, "tool:echo", ""},
		{"tools/call", `{"Name":"fetch"}`, "", "name"},
		{"tools/call", `{"name":"echo","NAME":"fetch"}`, "tool:echo", ""},
		{"tools/call", `{"NAME":"fetch","name":"echo","arguments":{}}`, "tool:echo", ""},
		{"tools/call", `{"NAME":"fetch","name":"echo",` + big + `}`, "tool:echo", ""},
		{"tools/call", `{"name":null,"Name":"fetch"}`, "", "name"},
		{"tools/call", `{"name":"echo","name":"fetch"}`, "", `member "name" appears more than once`},
		{"tools/call", `{"name":"echo","name":"fetch",` + big + `}`, "", `member "name" appears more than once`},
		{"tools/call", `{"name":"echo","arguments":{},"arguments":{}}`, "", `member "arguments" appears more than once`},
		{"tools/call", `{"name":"echo","Arguments":5}`, "tool:echo", ""},
		{"tools/call", `{"name":"echo","_meta":"x"}`, "", "_meta must be an object, not a string"},
		{"tools/call", `{"name":5}`, "", "name must be a string, not a number"},
		{"prompts/get", `{"name":"p","NAME":"q"}`, "prompt:p", ""},
		{"prompts/get", `{"Name":"p"}`, "", "name"},
		{"prompts/get", `{"name":"p","arguments":[1]}`, "", "arguments must be an object, not an array"},
		{"resources/read", `{"uri":"file:///r","URI":"file:///x"}`, "resource:file:///r", ""},
		{"resources/read", `{"Uri":"file:///r"}`, "", "uri"},
		{"resources/read", `{"uri":"file:///r","uri":"file:///r"}`, "", `member "uri" appears more than once`},
		{"resources/read", `{"uri":"file:///r","_meta":[]}`, "", "_meta must be an object, not an array"},
	} {
		*ran = nil
		w := directPost(h, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+1)+`,"method":"`+tc.method+`","params":`+tc.params+`}`, sid)
		tc.params = fmt.Sprintf("%.80s", tc.params)
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(w.buf.Bytes(), &resp); err != nil {
			t.Errorf("%s %s: %v: %s", tc.method, tc.params, err, w.buf.String())
			continue
		}
		got := strings.Join(*ran, ",")
		if got != tc.wantRan {
			t.Errorf("%s %s: ran %q, want %q", tc.method, tc.params, got, tc.wantRan)
		}
		switch {
		case tc.wantErr == "" && resp.Error != nil:
			t.Errorf("%s %s: %+v", tc.method, tc.params, resp.Error)
		case tc.wantErr != "" && (resp.Error == nil || resp.Error.Code != -32602 || !strings.Contains(resp.Error.Message, tc.wantErr)):
			t.Errorf("%s %s: %s, want -32602 with %q", tc.method, tc.params, w.buf.String(), tc.wantErr)
		}
		if resp.Error != nil {
			for _, leak := range []string{"Go ", "interface {}", "map[", "[]", "mcp.", "json.", "int64", "float64"} {
				if strings.Contains(resp.Error.Message, leak) {
					t.Errorf("%s %s: %q names a Go type", tc.method, tc.params, resp.Error.Message)
				}
			}
		}
	}
}
