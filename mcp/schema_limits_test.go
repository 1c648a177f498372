package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/jsonschema"
)

// hostileToolSchemas are input schemas that would cost the compiler
// seconds, each refused by a limit (#16.12).
var hostileToolSchemas = []struct {
	name, schema, limit string
}{
	{"deep", `{"type":"object","properties":{"a":` + strings.Repeat(`{"properties":{"a":`, 3000) + `{}` + strings.Repeat(`}}`, 3000) + `}}`, jsonschema.LimitSchemaDepth},
	{"wide", `{"type":"object","allOf":[` + strings.TrimSuffix(strings.Repeat(`{},`, 100000), ",") + `]}`, jsonschema.LimitSchemaBytes},
	{"fanout", `{"type":"object","$ref":"#/$defs/d0","$defs":{` + fanoutDefs(30) + `}}`, jsonschema.LimitSubschemas},
}

func fanoutDefs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{}`, n)
	return b.String()
}

// TestClientHostileToolSchema lists tools among which some schemas are
// hostile: each of those reports its limit, and the others stay usable.
func TestClientHostileToolSchema(t *testing.T) {
	tools := []string{`{"name":"good","inputSchema":{"type":"object"},"outputSchema":{"type":"object","required":["n"]}}`}
	for _, h := range hostileToolSchemas {
		tools = append(tools, `{"name":"`+h.name+`","inputSchema":`+h.schema+`}`)
	}
	ct := fakeServer(t, map[string]string{
		MethodToolsList: `{"tools":[` + strings.Join(tools, ",") + `]}`,
		MethodToolsCall: `{"content":[],"structuredContent":{"m":1}}`,
	})
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if res == nil || len(res.Tools) != len(tools) {
		t.Fatalf("ListTools result %+v", res)
	}
	if !errors.Is(err, jsonschema.ErrLimit) {
		t.Fatalf("ListTools error %v, want jsonschema.ErrLimit", err)
	}
	for _, h := range hostileToolSchemas {
		if !strings.Contains(err.Error(), fmt.Sprintf("tool %q: inputSchema: jsonschema: limit exceeded: %s", h.name, h.limit)) {
			t.Errorf("error does not report the limit of tool %q: %v", h.name, err)
		}
	}
	if strings.Contains(err.Error(), `"good"`) {
		t.Errorf("error names the good tool: %v", err)
	}
	// The good tool's output schema was kept and is checked.
	_, err = cs.CallTool(context.Background(), &CallToolRequestParams{Name: "good"})
	var sce *StructuredContentError
	if !errors.As(err, &sce) || sce.Tool != "good" {
		t.Fatalf("mismatching structured content: %v", err)
	}
}

// TestClientHostileSamplingToolSchema sends a sampling request whose tool
// has a hostile schema: -32602 naming the limit, and the handler never runs.
func TestClientHostileSamplingToolSchema(t *testing.T) {
	ran := false
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		Capabilities: &ClientCapabilities{Sampling: &SamplingCapability{Tools: &Capability{}}},
		CreateMessageHandler: func(context.Context, *ClientSession, *CreateMessageRequestParams) (*CreateMessageResult, error) {
			ran = true
			return nil, errors.New("unreachable")
		},
	})
	ss, _ := connectPair(t, NewServer(&Implementation{Name: "s", Version: "1"}, nil), c)
	for _, h := range hostileToolSchemas {
		t.Run(h.name, func(t *testing.T) {
			_, err := ss.CreateMessage(context.Background(), &CreateMessageRequestParams{
				MaxTokens: 10,
				Messages:  []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "hi"}}}},
				Tools:     []Tool{{Name: h.name, InputSchema: json.RawMessage(h.schema)}},
			})
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, "limit exceeded: "+h.limit) {
				t.Fatalf("CreateMessage = %v, want -32602 naming the limit", err)
			}
			if ran {
				t.Fatal("the handler ran")
			}
		})
	}
}

// TestServerDeepArguments calls a tool with arguments nested deeper than
// the limit: a result with IsError naming the limit, the handler not run.
func TestServerDeepArguments(t *testing.T) {
	tests := []struct {
		name    string
		limits  jsonschema.Limits
		depth   int
		wantErr bool
	}{
		{name: "9000 deep", depth: 9000, wantErr: true},
		{name: "within the default", depth: jsonschema.DefaultMaxInstanceDepth - 1},
		{name: "over a lower limit", limits: jsonschema.Limits{MaxInstanceDepth: 8}, depth: 8, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{SchemaLimits: tc.limits})
			recursive := json.RawMessage(`{"type":"object","additionalProperties":{"$ref":"#"}}`)
			ran := false
			if err := s.AddTool(&Tool{Name: "t", InputSchema: recursive}, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
				ran = true
				return &CallToolResult{}, nil
			}); err != nil {
				t.Fatal(err)
			}
			_, cs := connectPair(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
			args := strings.Repeat(`{"a":`, tc.depth) + `{}` + strings.Repeat(`}`, tc.depth)
			res, err := cs.CallTool(context.Background(), &CallToolRequestParams{Name: "t", Arguments: json.RawMessage(args)})
			if err != nil {
				t.Fatal(err)
			}
			isErr := res.IsError != nil && *res.IsError
			if isErr != tc.wantErr || ran == tc.wantErr {
				t.Fatalf("IsError = %v, handler ran = %v, want IsError %v", isErr, ran, tc.wantErr)
			}
			if tc.wantErr {
				text := res.Content[0].(*TextContent).Text
				if !strings.Contains(text, "limit exceeded: instance depth") {
					t.Errorf("result %q does not name the limit", text)
				}
			}
		})
	}
}

// TestServerWideArguments calls a tool whose schema applies many
// subschemas to every item with wide arguments (#16.12): over the
// validation work limit, a result with IsError naming the limit, the
// handler not run; the limit is SchemaLimits.MaxValidationWork.
func TestServerWideArguments(t *testing.T) {
	var allOf []string
	for i := range 100 {
		allOf = append(allOf, fmt.Sprintf(`{"minLength":%d}`, i))
	}
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"array","items":{"allOf":[` + strings.Join(allOf, ",") + `]}}}}`)
	items := func(n int) json.RawMessage {
		return json.RawMessage(`{"a":[` + strings.TrimSuffix(strings.Repeat(`"`+strings.Repeat("x", 100)+`",`, n), ",") + `]}`)
	}
	tests := []struct {
		name    string
		limits  jsonschema.Limits
		items   int
		wantErr bool
	}{
		{name: "10000 items", items: 10000, wantErr: true},
		{name: "a few items", items: 10},
		{name: "no limit", limits: jsonschema.Limits{MaxValidationWork: -1}, items: 1000},
		{name: "over a lower limit", limits: jsonschema.Limits{MaxValidationWork: 1000}, items: 10, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{SchemaLimits: tc.limits})
			ran := false
			if err := s.AddTool(&Tool{Name: "t", InputSchema: schema}, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
				ran = true
				return &CallToolResult{}, nil
			}); err != nil {
				t.Fatal(err)
			}
			_, cs := connectPair(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
			res, err := cs.CallTool(context.Background(), &CallToolRequestParams{Name: "t", Arguments: items(tc.items)})
			if err != nil {
				t.Fatal(err)
			}
			isErr := res.IsError != nil && *res.IsError
			if isErr != tc.wantErr || ran == tc.wantErr {
				t.Fatalf("IsError = %v, handler ran = %v, want IsError %v", isErr, ran, tc.wantErr)
			}
			if tc.wantErr {
				text := res.Content[0].(*TextContent).Text
				if !strings.Contains(text, "limit exceeded: validation work") {
					t.Errorf("result %q does not name the limit", text)
				}
			}
		})
	}
}
