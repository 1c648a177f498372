package jsonschema_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpstack/mcpstack/jsonschema"
)

// A schema without "$schema" is JSON Schema 2020-12. Validation errors
// name each failing location; an unknown "$schema" is refused.
func Example() {
	s, err := jsonschema.Compile([]byte(`{
		"type": "object",
		"properties": {
			"city": {"type": "string", "minLength": 1},
			"days": {"type": "integer", "minimum": 1, "maximum": 7}
		},
		"required": ["city"]
	}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Dialect())
	fmt.Println(s.ValidateJSON([]byte(`{"city": "Paris", "days": 3}`)))
	fmt.Println(s.ValidateJSON([]byte(`{"days": 0}`)))

	_, err = jsonschema.Compile([]byte(`{"$schema": "https://example.com/my-dialect"}`))
	fmt.Println(err)
	fmt.Println(errors.Is(err, jsonschema.ErrUnsupportedDialect))
	// Output:
	// https://json-schema.org/draft/2020-12/schema
	// <nil>
	// jsonschema: validation failed: (root): missing required property "city"; /days: must be >= 1
	// jsonschema: unsupported JSON Schema dialect "https://example.com/my-dialect" (supported: 2020-12, 2019-09, draft-07, draft-06, draft-04)
	// true
}

// A schema that is not valid for its dialect is reported with the path to
// the offending keyword.
func ExampleInvalidSchemaError() {
	_, err := jsonschema.Compile([]byte(`{"properties": {"age": {"minimum": "zero"}}}`))
	var ise *jsonschema.InvalidSchemaError
	if errors.As(err, &ise) {
		fmt.Println(ise.Issues[0].Location)
	}
	fmt.Println(err)
	// Output:
	// /properties/age/minimum
	// jsonschema: invalid schema: /properties/age/minimum: must be number, not string
}

// References are resolved without any network access: a remote "$ref" is
// an error unless the document was registered in memory.
func ExampleWithResource() {
	schema := []byte(`{"$ref": "https://schemas.example.com/point.json"}`)

	_, err := jsonschema.Compile(schema)
	fmt.Println(errors.Is(err, jsonschema.ErrRemoteRef))

	s, err := jsonschema.Compile(schema, jsonschema.WithResource(
		"https://schemas.example.com/point.json",
		[]byte(`{"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false}`),
	))
	if err != nil {
		panic(err)
	}
	fmt.Println(s.ValidateJSON([]byte(`[1, 2, 3]`)))
	// Output:
	// true
	// jsonschema: validation failed: /2: is not allowed
}

// MCP tool schemas must be object schemas.
func ExampleCompileToolSchema() {
	_, err := jsonschema.CompileToolSchema(json.RawMessage(`{"type": "string"}`))
	fmt.Println(err)

	s, err := jsonschema.CompileToolSchema(json.RawMessage(`{
		"$schema": "http://json-schema.org/draft-07/schema#",
		"type": "object",
		"properties": {"a": {"type": "number"}, "b": {"type": "number"}},
		"required": ["a", "b"]
	}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Dialect())
	fmt.Println(s.Validate(map[string]any{"a": 1, "b": "2"}))
	// Output:
	// jsonschema: invalid schema: /type: must be "object" in a tool schema, not "string"
	// http://json-schema.org/draft-07/schema#
	// jsonschema: validation failed: /b: must be number, not string
}

// ApplyDefaults fills in top-level defaults, for example in an elicitation
// response.
func ExampleApplyDefaults() {
	s, err := jsonschema.CompileToolSchema(json.RawMessage(`{
		"type": "object",
		"properties": {
			"name": {"type": "string"},
			"notify": {"type": "boolean", "default": true},
			"priority": {"type": "integer", "default": 3}
		}
	}`))
	if err != nil {
		panic(err)
	}
	content := jsonschema.ApplyDefaults(s, map[string]any{"name": "Ada", "priority": 1})
	b, _ := json.Marshal(content)
	fmt.Println(string(b))
	// Output:
	// {"name":"Ada","notify":true,"priority":1}
}
