package jsonschema

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// CompileToolSchema compiles an MCP tool "inputSchema" or "outputSchema"
// (or an elicitation "requestedSchema"). Besides everything [Compile]
// checks, MCP requires the root of such a schema to be an object schema
// with "type": "object"; a schema that is not is an [*InvalidSchemaError]
// pointing at "/type".
func CompileToolSchema(raw json.RawMessage, opts ...Option) (*Schema, error) {
	s, doc, err := compile(raw, opts)
	if err != nil {
		return nil, err
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, &InvalidSchemaError{Issues: []Issue{{"", `a tool schema must be an object with "type": "object", not ` + jsonTypeOfSchema(doc)}}}
	}
	t, ok := obj["type"]
	if !ok {
		return nil, &InvalidSchemaError{Issues: []Issue{{"/type", `missing: a tool schema must have "type": "object"`}}}
	}
	if t != "object" {
		return nil, &InvalidSchemaError{Issues: []Issue{{"/type", `must be "object" in a tool schema, not ` + display(t)}}}
	}
	return s, nil
}

// jsonTypeOfSchema names a non-object schema document for a message.
func jsonTypeOfSchema(doc any) string {
	if b, ok := doc.(bool); ok {
		if b {
			return "the boolean schema true"
		}
		return "the boolean schema false"
	}
	return jsonTypeName(doc)
}

// ApplyDefaults fills in, for each property declared directly in the
// schema's root "properties" with a "default", that default wherever
// instance lacks the property. Present properties, even null ones, are
// left alone; nested schemas are not consulted.
//
// Each default is a fresh value decoded as encoding/json decodes into an
// [any] (numbers are float64, or [json.Number] where a float64 cannot
// hold them), so it shares nothing with the schema or with other calls. Like append, ApplyDefaults returns the updated map,
// which is a new map if instance is nil and some default applies.
func ApplyDefaults(s *Schema, instance map[string]any) map[string]any {
	for _, d := range s.defaults {
		if _, ok := instance[d.name]; ok {
			continue
		}
		v, err := decodeDefault(d.value)
		if err != nil {
			// Unreachable: the value was produced by json.Marshal.
			continue
		}
		if instance == nil {
			instance = make(map[string]any, len(s.defaults))
		}
		instance[d.name] = v
	}
	return instance
}

// decodeDefault decodes b like json.Unmarshal into an any, falling back
// to json.Number for numbers that overflow float64.
func decodeDefault(b []byte) (any, error) {
	var v any
	if err := json.Unmarshal(b, &v); err == nil {
		return v, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	err := dec.Decode(&v)
	return v, err
}

// topLevelDefaults collects the root properties' "default" values.
func topLevelDefaults(doc any) []propertyDefault {
	root, _ := doc.(map[string]any)
	props, _ := root["properties"].(map[string]any)
	var out []propertyDefault
	for name, p := range props {
		ps, _ := p.(map[string]any)
		v, ok := ps["default"]
		if !ok {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			continue
		}
		out = append(out, propertyDefault{name, b})
	}
	slices.SortFunc(out, func(a, b propertyDefault) int { return strings.Compare(a.name, b.name) })
	return out
}
