package jsonschema

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// ErrUninferable is matched (with errors.Is) by the error For and ForType
// return for a Go type that has no JSON Schema: channels, functions,
// complex numbers, maps whose keys are not strings or integers, and
// recursive types.
var ErrUninferable = errors.New("jsonschema: cannot infer a schema for the type")

// For returns the JSON Schema (2020-12) that describes the JSON encoding of
// a value of type T by encoding/json. See ForType for the rules.
func For[T any]() (json.RawMessage, error) {
	return ForType(reflect.TypeFor[T]())
}

// ForType returns the JSON Schema (2020-12) that describes the JSON
// encoding of a value of type t by encoding/json:
//
//   - bool is "boolean"; signed integers are "integer", unsigned ones
//     "integer" with "minimum": 0; floats are "number"; strings are
//     "string"; []byte is a base64 "string".
//   - time.Time is a "string" with "format": "date-time".
//   - A struct is an "object" with "additionalProperties": false, whose
//     properties are its exported fields named as encoding/json names them
//     (json tags; "-" skips a field; embedded structs are inlined). A field
//     is required unless its tag says omitempty or omitzero or it is a
//     pointer. A `jsonschema:"..."` tag gives the property's description.
//   - A pointer is its element's schema that also allows null.
//   - A slice is an "array" of its element's schema that also allows null
//     (a nil slice encodes as null); an array [N]T has exactly N items.
//   - A map with string or integer keys is an "object" whose
//     "additionalProperties" is the value's schema, and also allows null.
//   - An interface, json.RawMessage, and any other type that marshals
//     itself (json.Marshaler or encoding.TextMarshaler, except time.Time,
//     which is a string) is {}, any value; a TextMarshaler is a "string".
//
// Channels, functions, complex numbers, other map keys and recursive types
// are refused with an error matching ErrUninferable.
func ForType(t reflect.Type) (json.RawMessage, error) {
	if t == nil {
		return json.RawMessage(`{}`), nil
	}
	s, err := infer(t, map[reflect.Type]bool{})
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

var (
	timeType          = reflect.TypeFor[time.Time]()
	rawMessageType    = reflect.TypeFor[json.RawMessage]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

func marshals(t reflect.Type, iface reflect.Type) bool {
	return t.Implements(iface) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(iface))
}

// nullable adds "null" to the types s allows.
func nullable(s map[string]any) map[string]any {
	switch typ := s["type"].(type) {
	case string:
		if typ != "null" {
			s["type"] = []string{"null", typ}
		}
	case []string:
		for _, x := range typ {
			if x == "null" {
				return s
			}
		}
		s["type"] = append([]string{"null"}, typ...)
	}
	// no "type": the schema already allows null
	return s
}

func infer(t reflect.Type, seen map[reflect.Type]bool) (map[string]any, error) {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}, nil
	case t == rawMessageType:
		return map[string]any{}, nil
	case marshals(t, jsonMarshalerType):
		return map[string]any{}, nil
	case marshals(t, textMarshalerType):
		return map[string]any{"type": "string"}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"type": "integer", "minimum": 0}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Pointer:
		s, err := infer(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return nullable(s), nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !marshals(t.Elem(), jsonMarshalerType) && !marshals(t.Elem(), textMarshalerType) {
			return map[string]any{"type": []string{"null", "string"}, "contentEncoding": "base64"}, nil
		}
		items, err := infer(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": []string{"null", "array"}, "items": items}, nil
	case reflect.Array:
		items, err := infer(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items, "minItems": t.Len(), "maxItems": t.Len()}, nil
	case reflect.Map:
		switch t.Key().Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			if !marshals(t.Key(), textMarshalerType) {
				return nil, fmt.Errorf("%w: %v: map key type %v", ErrUninferable, t, t.Key())
			}
		}
		vals, err := infer(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": []string{"null", "object"}, "additionalProperties": vals}, nil
	case reflect.Struct:
		if seen[t] {
			return nil, fmt.Errorf("%w: %v is recursive", ErrUninferable, t)
		}
		seen[t] = true
		defer delete(seen, t)
		props := map[string]any{}
		var required []string
		if err := structFields(t, seen, props, &required, false); err != nil {
			return nil, err
		}
		s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			s["required"] = required
		}
		return s, nil
	}
	return nil, fmt.Errorf("%w: %v", ErrUninferable, t)
}

// structFields adds the properties of struct t to props: its own fields
// first, then those of embedded structs that no shallower field shadows.
// Fields reached through an embedded pointer are never required.
func structFields(t reflect.Type, seen map[reflect.Type]bool, props map[string]any, required *[]string, optional bool) error {
	type embedded struct {
		t        reflect.Type
		optional bool
	}
	var inline []embedded
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				inline = append(inline, embedded{et, optional || ft.Kind() == reflect.Pointer})
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := props[name]; dup {
			continue
		}
		s, err := infer(ft, seen)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if d := f.Tag.Get("jsonschema"); d != "" {
			s["description"] = d
		}
		props[name] = s
		omit := false
		for _, o := range strings.Split(opts, ",") {
			if o == "omitempty" || o == "omitzero" {
				omit = true
			}
		}
		if !omit && !optional && ft.Kind() != reflect.Pointer {
			*required = append(*required, name)
		}
	}
	for _, e := range inline {
		if seen[e.t] {
			return fmt.Errorf("%w: %v is recursive", ErrUninferable, e.t)
		}
		seen[e.t] = true
		err := structFields(e.t, seen, props, required, e.optional)
		delete(seen, e.t)
		if err != nil {
			return err
		}
	}
	return nil
}
