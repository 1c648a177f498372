package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/jsonschema"
)

// TypedToolHandler handles a tools/call of a tool added with AddTool. in
// holds the call's arguments, already checked against the input schema and
// decoded. The handler returns the result's output as out; res may be nil,
// or carry content, IsError or _meta of its own.
//
// An error the handler returns is the tool's failure: the client gets a
// result with IsError set and the error's text, so that a model can see
// what went wrong. A *jsonrpc.Error or *URLElicitationRequiredError is a
// protocol error instead, and answers the request as such.
type TypedToolHandler[In, Out any] func(ctx context.Context, ss *ServerSession, params *CallToolRequestParams, in In) (res *CallToolResult, out Out, err error)

// AddTool adds a tool to s whose arguments decode into In and whose
// structured output is Out.
//
// Unless t sets them, the tool's inputSchema is inferred from In and its
// outputSchema from Out, with jsonschema.For (JSON Schema 2020-12: json
// tags name the properties, fields without omitempty or omitzero and not
// pointers are required, a `jsonschema:"..."` tag is the description). In
// must be a struct or a map (a tool's input is an object); Out must be a
// struct or a map, or an interface type such as any for a tool with no
// output schema.
//
// When the tool has an output schema and the handler succeeds, out is sent
// as the result's structuredContent and, if the handler set no content,
// also as a text block holding the same JSON, for clients that predate
// structured content.
func AddTool[In, Out any](s *Server, t *Tool, h TypedToolHandler[In, Out]) error {
	if t == nil || h == nil {
		return errors.New("mcp: AddTool needs a tool and a handler")
	}
	tt := *t
	if len(tt.InputSchema) == 0 {
		it := reflect.TypeFor[In]()
		if k := derefKind(it); k != reflect.Struct && k != reflect.Map {
			return fmt.Errorf("mcp: tool %q: the input type %v is not a struct or a map", t.Name, it)
		}
		in, err := jsonschema.ForType(it)
		if err != nil {
			return fmt.Errorf("mcp: tool %q: input schema: %w", t.Name, err)
		}
		tt.InputSchema = objectOnly(in)
	}
	ot := reflect.TypeFor[Out]()
	structured := ot.Kind() != reflect.Interface
	if len(tt.OutputSchema) == 0 && structured {
		if k := derefKind(ot); k != reflect.Struct && k != reflect.Map {
			return fmt.Errorf("mcp: tool %q: the output type %v is not a struct, a map or an interface", t.Name, ot)
		}
		out, err := jsonschema.ForType(ot)
		if err != nil {
			return fmt.Errorf("mcp: tool %q: output schema: %w", t.Name, err)
		}
		tt.OutputSchema = objectOnly(out)
	}
	structured = structured || len(tt.OutputSchema) > 0
	return s.AddTool(&tt, func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
		var in In
		args := []byte(p.Arguments)
		if len(args) == 0 {
			args = []byte("{}")
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return toolError("invalid arguments for tool %q: %s", p.Name, jsonErrorText(err)), nil
		}
		res, out, err := h(ctx, ss, p, in)
		if err != nil {
			var je *jsonrpc.Error
			var ue *URLElicitationRequiredError
			if errors.As(err, &je) || errors.As(err, &ue) {
				return nil, err
			}
			return toolError("%v", err), nil
		}
		if res == nil {
			res = &CallToolResult{}
		}
		if res.IsError != nil && *res.IsError {
			return res, nil
		}
		if structured && len(res.StructuredContent) == 0 {
			b, err := json.Marshal(out)
			if err != nil {
				return nil, fmt.Errorf("mcp: tool %q: encoding its output: %w", p.Name, err)
			}
			if string(b) == "null" {
				b = []byte("{}")
			}
			res.StructuredContent = b
			if len(res.Content) == 0 {
				res.Content = []Content{&TextContent{Text: string(b)}}
			}
		}
		return res, nil
	})
}

func derefKind(t reflect.Type) reflect.Kind {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind()
}

// objectOnly drops "null" from the root type of an inferred schema: a
// tool's schemas describe an object.
func objectOnly(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return raw
	}
	if types, ok := m["type"].([]any); ok && len(types) == 2 && types[0] == "null" {
		m["type"] = types[1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}
