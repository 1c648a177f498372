package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/jsonschema"
)

func noopTool(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
	return &CallToolResult{}, nil
}

func TestAddToolRefusesBadSchemas(t *testing.T) {
	tests := []struct {
		name        string
		input       string
		output      string
		field       string
		unsupported bool
	}{
		{"invalid keyword value", `{"type":"object","properties":{"a":{"type":12}}}`, ``, "inputSchema", false},
		{"unsupported dialect", `{"$schema":"https://example.com/my-dialect","type":"object"}`, ``, "inputSchema", true},
		{"not an object schema", `{"type":"array"}`, ``, "inputSchema", false},
		{"remote ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`, ``, "inputSchema", false},
		{"bad output schema", `{"type":"object"}`, `{"type":"object","minProperties":"two"}`, "outputSchema", false},
		{"array output schema", `{"type":"object"}`, `{"type":"array"}`, "outputSchema", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
			tool := &Tool{Name: "t", InputSchema: json.RawMessage(tt.input)}
			if tt.output != "" {
				tool.OutputSchema = json.RawMessage(tt.output)
			}
			err := s.AddTool(tool, noopTool)
			var tse *ToolSchemaError
			if !errors.As(err, &tse) || tse.Field != tt.field || tse.Tool != "t" {
				t.Fatalf("AddTool: %v, want a *ToolSchemaError on %s", err, tt.field)
			}
			if got := errors.Is(err, jsonschema.ErrUnsupportedDialect); got != tt.unsupported {
				t.Errorf("unsupported dialect = %v, want %v (%v)", got, tt.unsupported, err)
			}
			if len(s.tools) != 0 {
				t.Error("the tool was added anyway")
			}
		})
	}
	// Other dialects are accepted by $schema.
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	if err := s.AddTool(&Tool{Name: "d7", InputSchema: json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`)}, noopTool); err != nil {
		t.Fatalf("draft-07 refused: %v", err)
	}
}

func TestToolArgumentsAndOutputValidated(t *testing.T) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	err := s.AddTool(&Tool{
		Name:         "age",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"age":{"type":"integer","minimum":0}},"required":["age"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`),
	}, func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
		var in struct{ Age int }
		json.Unmarshal(p.Arguments, &in)
		if in.Age == 99 {
			return &CallToolResult{StructuredContent: json.RawMessage(`{"ok":"yes"}`)}, nil // breaks its schema
		}
		return &CallToolResult{StructuredContent: json.RawMessage(`{"ok":true}`), Content: []Content{&TextContent{Text: `{"ok":true}`}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, cs := connectPair(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	ctx := context.Background()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{`{"age":-1}`, `{}`, `{"age":"x"}`} {
		res, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "age", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s: bad arguments must be a tool error, not %v", args, err)
		}
		if res.IsError == nil || !*res.IsError || !strings.Contains(res.Content[0].(*TextContent).Text, "invalid arguments") {
			t.Errorf("%s: result %+v", args, res)
		}
	}
	res, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "age", Arguments: json.RawMessage(`{"age":3}`)})
	if err != nil || string(res.StructuredContent) != `{"ok":true}` {
		t.Fatalf("valid call: %v %+v", err, res)
	}
	_, err = cs.CallTool(ctx, &CallToolRequestParams{Name: "age", Arguments: json.RawMessage(`{"age":99}`)})
	if !errors.Is(err, jsonrpc.ErrInternal) {
		t.Fatalf("output breaking its schema: %v", err)
	}
}

// fakeServer answers initialize and the given methods with canned results,
// to show the client what our own server would never send.
func fakeServer(t *testing.T, results map[string]string) Transport {
	ct, st := InMemoryTransports()
	stream, _ := st.Connect(context.Background())
	conn := jsonrpc.NewConn(stream, jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == MethodInitialize {
			return json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`), nil
		}
		if r, ok := results[req.Method]; ok {
			return json.RawMessage(r), nil
		}
		return nil, jsonrpc.ErrMethodNotFound
	})})
	t.Cleanup(func() { conn.Close() })
	return ct
}

func TestClientReportsBadToolSchemas(t *testing.T) {
	ct := fakeServer(t, map[string]string{
		MethodToolsList: `{"tools":[
			{"name":"good","inputSchema":{"type":"object"},"outputSchema":{"type":"object","required":["n"]}},
			{"name":"dialect","inputSchema":{"$schema":"https://example.com/x","type":"object"}},
			{"name":"invalid","inputSchema":{"type":"object","properties":{"a":{"minimum":"0"}}}}]}`,
		MethodToolsCall: `{"content":[],"structuredContent":{"m":1}}`,
	})
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if res == nil || len(res.Tools) != 3 {
		t.Fatalf("ListTools result %+v", res)
	}
	var tse *ToolSchemaError
	if !errors.As(err, &tse) || !errors.Is(err, jsonschema.ErrUnsupportedDialect) {
		t.Fatalf("ListTools error %v", err)
	}
	if !strings.Contains(err.Error(), `"dialect"`) || !strings.Contains(err.Error(), `"invalid"`) || strings.Contains(err.Error(), `"good"`) {
		t.Errorf("error does not name exactly the bad tools: %v", err)
	}
	_, err = cs.CallTool(context.Background(), &CallToolRequestParams{Name: "good"})
	var sce *StructuredContentError
	if !errors.As(err, &sce) || sce.Tool != "good" {
		t.Fatalf("mismatching structured content: %v", err)
	}
}

func TestElicitationSchemaDialects(t *testing.T) {
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		ElicitationHandler: func(ctx context.Context, cs *ClientSession, p ElicitRequestParams) (*ElicitResult, error) {
			return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	ss, _ := connectPair(t, NewServer(&Implementation{Name: "s", Version: "1"}, nil), c)
	ctx := context.Background()

	_, err := ss.Elicit(ctx, &ElicitRequestFormParams{Message: "who?", RequestedSchema: RequestedSchema{
		Schema:     "https://example.com/not-a-dialect",
		Properties: map[string]PrimitiveSchemaDefinition{"name": &StringSchema{}},
	}})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, "unsupported JSON Schema dialect") || !strings.Contains(je.Message, "https://example.com/not-a-dialect") {
		t.Fatalf("unsupported dialect: %v", err)
	}

	res, err := ss.Elicit(ctx, &ElicitRequestFormParams{Message: "who?", RequestedSchema: RequestedSchema{
		Properties: map[string]PrimitiveSchemaDefinition{
			"name": &StringSchema{},
			"city": &StringSchema{Default: "London"},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content["name"] != "Ada" || res.Content["city"] != "London" {
		t.Fatalf("defaults not applied: %+v", res.Content)
	}

	_, err = ss.Elicit(ctx, &ElicitRequestURLParams{Message: "go", URL: "https://example.com/x", ElicitationID: "e1"})
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("undeclared URL mode: %v", err)
	}
}

func TestSamplingToolSchemaDialect(t *testing.T) {
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		Capabilities: &ClientCapabilities{Sampling: &SamplingCapability{Tools: &Capability{}}},
		CreateMessageHandler: func(ctx context.Context, cs *ClientSession, p *CreateMessageRequestParams) (*CreateMessageResult, error) {
			return &CreateMessageResult{Role: RoleAssistant, Model: "m", Content: []Content{&TextContent{Text: "ok"}}}, nil
		},
	})
	ss, _ := connectPair(t, NewServer(&Implementation{Name: "s", Version: "1"}, nil), c)
	_, err := ss.CreateMessage(context.Background(), &CreateMessageRequestParams{
		MaxTokens: 10,
		Messages:  []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "hi"}}}},
		Tools:     []Tool{{Name: "w", InputSchema: json.RawMessage(`{"$schema":"https://example.com/dialect","type":"object"}`)}},
	})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, "unsupported JSON Schema dialect") {
		t.Fatalf("sampling tool with an unsupported dialect: %v", err)
	}
}
