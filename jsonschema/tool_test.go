package jsonschema

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCompileToolSchemaExamples compiles the schemas of the MCP
// 2025-11-25 example tools and elicitation requests (copied into
// testdata/mcp) and validates an instance against each.
func TestCompileToolSchemaExamples(t *testing.T) {
	tests := []struct {
		file    string
		field   string
		dialect Dialect
		good    string
		bad     string
	}{
		{"with-default-2020-12-input-schema.json", "inputSchema", Draft202012, `{"a":1,"b":2.5}`, `{"a":1}`},
		{"with-explicit-draft-07-input-schema.json", "inputSchema", Draft7, `{"a":1,"b":2}`, `{"a":"1","b":2}`},
		{"with-no-parameters.json", "inputSchema", Draft202012, `{}`, `{"x":1}`},
		{"with-output-schema-for-structured-content.json", "inputSchema", Draft202012, `{"location":"Paris"}`, `{}`},
		{"with-output-schema-for-structured-content.json", "outputSchema", Draft202012, `{"temperature":21.5,"conditions":"sunny","humidity":40}`, `{"temperature":"hot","conditions":"sunny","humidity":40}`},
		{"elicit-multiple-fields.json", "requestedSchema", Draft202012, `{"name":"Ada","email":"ada@example.org","age":36}`, `{"name":"Ada","email":"ada@example.org","age":12}`},
		{"elicit-single-field.json", "requestedSchema", Draft202012, `{"name":"ada"}`, `{"name":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.field, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "mcp", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]json.RawMessage
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			raw, ok := doc[tt.field]
			if !ok {
				t.Fatalf("no %s in %s", tt.field, tt.file)
			}
			s, err := CompileToolSchema(raw)
			if err != nil {
				t.Fatalf("CompileToolSchema: %v", err)
			}
			if s.Dialect() != tt.dialect {
				t.Errorf("Dialect() = %q, want %q", s.Dialect(), tt.dialect)
			}
			if err := s.ValidateJSON([]byte(tt.good)); err != nil {
				t.Errorf("ValidateJSON(%s) = %v, want nil", tt.good, err)
			}
			if err := s.ValidateJSON([]byte(tt.bad)); !errors.Is(err, ErrValidation) {
				t.Errorf("ValidateJSON(%s) = %v, want ErrValidation", tt.bad, err)
			}
		})
	}
}

func TestCompileToolSchemaRootMustBeObject(t *testing.T) {
	tests := []struct {
		schema   string
		location string
		contains string
	}{
		{`{}`, "/type", `must have "type": "object"`},
		{`{"properties":{"a":{}}}`, "/type", `must have "type": "object"`},
		{`{"type":"string"}`, "/type", `must be "object" in a tool schema, not "string"`},
		{`{"type":["object"]}`, "/type", `not ["object"]`},
		{`{"type":["object","null"]}`, "/type", `not ["object","null"]`},
		{`true`, "", "not the boolean schema true"},
		{`false`, "", "not the boolean schema false"},
	}
	for _, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			_, err := CompileToolSchema(json.RawMessage(tt.schema))
			var ise *InvalidSchemaError
			if !errors.As(err, &ise) {
				t.Fatalf("CompileToolSchema error = %v (%T), want *InvalidSchemaError", err, err)
			}
			if len(ise.Issues) != 1 || ise.Issues[0].Location != tt.location {
				t.Fatalf("Issues = %v, want one at %q", ise.Issues, tt.location)
			}
			if !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("message %q does not contain %q", err, tt.contains)
			}
		})
	}
}

func TestCompileToolSchemaKeepsCompileErrors(t *testing.T) {
	tests := []struct {
		schema string
		target error
	}{
		{`{"$schema":"https://example.com/d","type":"object"}`, ErrUnsupportedDialect},
		{`{"type":"object","properties":{"a":{"type":12}}}`, ErrInvalidSchema},
		{`{"type":"object","$ref":"https://example.com/s.json"}`, ErrRemoteRef},
		{`[`, ErrInvalidSchema},
		{`[]`, ErrInvalidSchema},
	}
	for _, tt := range tests {
		if _, err := CompileToolSchema(json.RawMessage(tt.schema)); !errors.Is(err, tt.target) {
			t.Errorf("CompileToolSchema(%s) = %v, want %v", tt.schema, err, tt.target)
		}
	}
	// Options pass through.
	if _, err := CompileToolSchema(json.RawMessage(`{"type":"object","items":[{}]}`), WithDefaultDialect(Draft7)); err != nil {
		t.Errorf("with a draft-07 default: %v", err)
	}
}

func TestApplyDefaults(t *testing.T) {
	s, err := CompileToolSchema(json.RawMessage(`{
		"type":"object",
		"properties":{
			"name":{"type":"string","default":"anonymous"},
			"count":{"type":"integer","default":3},
			"ratio":{"type":"number","default":0.5},
			"on":{"type":"boolean","default":false},
			"none":{"type":["string","null"],"default":null},
			"tags":{"type":"array","default":["a","b"]},
			"opts":{"type":"object","default":{"x":1},"properties":{"y":{"default":2}}},
			"plain":{"type":"string"}
		},
		"$defs":{"unused":{"default":"ignored"}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]any{
		"name": "anonymous", "count": 3.0, "ratio": 0.5, "on": false, "none": nil,
		"tags": []any{"a", "b"}, "opts": map[string]any{"x": 1.0},
	}
	tests := []struct {
		name string
		in   map[string]any
		want map[string]any
	}{
		{"nil map", nil, all},
		{"empty map", map[string]any{}, all},
		{"present values win, even null", map[string]any{"name": "Ada", "count": nil, "extra": 1},
			map[string]any{"name": "Ada", "count": nil, "extra": 1, "ratio": 0.5, "on": false, "none": nil,
				"tags": []any{"a", "b"}, "opts": map[string]any{"x": 1.0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ApplyDefaults(s, tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ApplyDefaults = %#v\nwant %#v", got, tt.want)
			}
			if tt.in != nil && len(tt.in) != len(tt.want) {
				t.Error("ApplyDefaults did not fill the given map in place")
			}
			if err := s.Validate(got); err != nil && tt.name != "present values win, even null" {
				t.Errorf("defaults should satisfy the schema: %v", err)
			}
		})
	}

	// Each call gets fresh values.
	first := ApplyDefaults(s, nil)
	first["tags"].([]any)[0] = "changed"
	first["opts"].(map[string]any)["x"] = "changed"
	second := ApplyDefaults(s, nil)
	if second["tags"].([]any)[0] != "a" || second["opts"].(map[string]any)["x"] != 1.0 {
		t.Errorf("defaults shared between calls: %v", second)
	}
}

func TestApplyDefaultsNoDefaults(t *testing.T) {
	for _, schema := range []string{`{"type":"object"}`, `{"type":"object","properties":{"a":{"type":"string"}}}`, `true`, `{"properties":{"a":true}}`} {
		s, err := Compile([]byte(schema))
		if err != nil {
			t.Fatal(err)
		}
		if got := ApplyDefaults(s, nil); got != nil {
			t.Errorf("%s: ApplyDefaults(nil) = %v, want nil", schema, got)
		}
		in := map[string]any{"k": "v"}
		if got := ApplyDefaults(s, in); !reflect.DeepEqual(got, map[string]any{"k": "v"}) {
			t.Errorf("%s: ApplyDefaults changed the map: %v", schema, got)
		}
	}
}
