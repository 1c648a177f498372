package mcp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/jsonschema"
)

// ToolSchemaError reports a tool whose input or output schema cannot be
// used: it is not valid in its dialect, names a dialect that is not
// supported (errors.Is(err, jsonschema.ErrUnsupportedDialect)), refers to
// a remote document, does not describe an object, or exceeds one of the
// schema limits (errors.Is(err, jsonschema.ErrLimit)).
type ToolSchemaError struct {
	Tool  string // the tool's name
	Field string // "inputSchema" or "outputSchema"
	Err   error
}

func (e *ToolSchemaError) Error() string {
	return fmt.Sprintf("mcp: tool %q: %s: %v", e.Tool, e.Field, e.Err)
}

func (e *ToolSchemaError) Unwrap() error { return e.Err }

// compiledTool holds a tool's compiled schemas.
type compiledTool struct {
	input  *jsonschema.Schema
	output *jsonschema.Schema // nil without an output schema
}

// compileTool compiles t's input and output schemas within limits. A
// missing input schema means {"type":"object"}.
func compileTool(t *Tool, limits jsonschema.Limits) (compiledTool, error) {
	var ct compiledTool
	in := t.InputSchema
	if len(in) == 0 {
		in = json.RawMessage(`{"type":"object"}`)
	}
	s, err := jsonschema.CompileToolSchema(in, jsonschema.WithLimits(limits))
	if err != nil {
		return ct, &ToolSchemaError{Tool: t.Name, Field: "inputSchema", Err: err}
	}
	ct.input = s
	if len(t.OutputSchema) > 0 {
		s, err := jsonschema.CompileToolSchema(t.OutputSchema, jsonschema.WithLimits(limits))
		if err != nil {
			return ct, &ToolSchemaError{Tool: t.Name, Field: "outputSchema", Err: err}
		}
		ct.output = s
	}
	return ct, nil
}

// schemaError turns a schema that arrived over the protocol and could not
// be compiled into the JSON-RPC error sent back: -32602, whose message says
// plainly when the dialect is unsupported.
func schemaError(what string, err error) *jsonrpc.Error {
	var ud *jsonschema.UnsupportedDialectError
	if errors.As(err, &ud) {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %s: unsupported JSON Schema dialect %q", what, ud.URI)
	}
	return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %s: %v", what, err)
}

// toolError returns a tool result that reports a failure to the model.
func toolError(format string, args ...any) *CallToolResult {
	t := true
	return &CallToolResult{IsError: &t, Content: []Content{&TextContent{Text: fmt.Sprintf(format, args...)}}}
}
