package mcp

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/internal/jsonfast"
	"github.com/mcpstack/mcpstack/internal/strictjson"
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
	fast := newArgsDecoder(reflect.TypeFor[In]())
	return s.AddTool(&tt, func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
		var in In
		args := []byte(p.Arguments)
		if len(args) == 0 {
			args = []byte("{}")
		}
		if fast == nil || !fast.decode(args, reflect.ValueOf(&in).Elem()) {
			var zero In
			in = zero
			if err := strictjson.Unmarshal(args, &in); err != nil {
				return toolError("invalid arguments for tool %q: %s", p.Name, jsonErrorText(err)), nil
			}
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
	if err := strictjson.Unmarshal(raw, &m); err != nil {
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

// argsDecoder decodes a tool's arguments into a struct of plain fields
// (strings, booleans, integers, floats) faster than encoding/json, which
// crosses a large string argument several times a byte at a time. It is
// exact: it decodes only input on which encoding/json (v1) would succeed
// with the same value, and reports false for anything else, so that the
// caller starts over with json.Unmarshal and gets its result and its
// errors. It reports false for: input that is not one JSON object; a
// member name with escapes or non-ASCII bytes, given twice, or matching a
// field only case-insensitively; a value of the wrong JSON type for its
// field, or a number out of its field's range.
type argsDecoder struct {
	fields []argField
}

// argField is one struct field that arguments decode into.
type argField struct {
	name  string // its JSON name
	index int    // its index in the struct
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// newArgsDecoder returns a decoder for t, or nil if t is not a struct
// whose fields the decoder handles exactly as encoding/json does.
func newArgsDecoder(t reflect.Type) *argsDecoder {
	if t.Kind() != reflect.Struct || hasUnmarshaler(t) {
		return nil
	}
	d := &argsDecoder{}
	seen := make(map[string]bool)
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",string,") || !plainName(name) {
			return nil
		}
		if name == "" {
			name = f.Name
		}
		switch f.Type.Kind() {
		case reflect.String, reflect.Bool,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
			reflect.Float32, reflect.Float64:
		default:
			return nil
		}
		if hasUnmarshaler(f.Type) || seen[strings.ToLower(name)] || !plainName(name) {
			return nil
		}
		seen[strings.ToLower(name)] = true
		d.fields = append(d.fields, argField{name: name, index: i})
	}
	if len(d.fields) > 64 {
		return nil
	}
	return d
}

func hasUnmarshaler(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || p.Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || p.Implements(textUnmarshalerType)
}

// plainName reports whether a JSON name has only ASCII letters, digits,
// '_', '-' and '.', which encoding/json takes as they are.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// decode decodes data into v, an addressable zero struct of the decoder's
// type. On false, v may be partly set.
func (d *argsDecoder) decode(data []byte, v reflect.Value) bool {
	const maxDepth = 10000
	var seen uint64
	end, ok := jsonfast.ScanObject(data, 0, func(key []byte, vs int) (int, bool) {
		f := -1
		for j := range d.fields {
			if d.fields[j].name == string(key) {
				f = j
				break
			}
			if bytes.EqualFold(key, []byte(d.fields[j].name)) {
				return vs, false
			}
		}
		if f < 0 {
			for _, c := range key {
				if c >= utf8.RuneSelf {
					return vs, false
				}
			}
			return jsonfast.SkipValue(data, vs, 1, maxDepth)
		}
		if seen&(1<<f) != 0 {
			return vs, false
		}
		seen |= 1 << f
		return setArg(data, vs, v.Field(d.fields[f].index))
	})
	return ok && jsonfast.SkipSpace(data, end) == len(data)
}

// setArg decodes the value at data[i] into the field fv, as encoding/json
// would, and returns the index past it; false if encoding/json would not
// take it (or the value is malformed).
func setArg(data []byte, i int, fv reflect.Value) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	if data[i] == 'n' { // null leaves a plain field as it is
		if len(data)-i >= 4 && string(data[i:i+4]) == "null" {
			return i + 4, true
		}
		return i, false
	}
	switch fv.Kind() {
	case reflect.String:
		if data[i] != '"' {
			return i, false
		}
		end, escaped, ok := jsonfast.ScanString(data, i)
		if !ok {
			return i, false
		}
		fv.SetString(jsonfast.Unquote(data[i:end], escaped))
		return end, true
	case reflect.Bool:
		switch {
		case len(data)-i >= 4 && string(data[i:i+4]) == "true":
			fv.SetBool(true)
			return i + 4, true
		case len(data)-i >= 5 && string(data[i:i+5]) == "false":
			fv.SetBool(false)
			return i + 5, true
		}
		return i, false
	}
	if c := data[i]; c != '-' && (c < '0' || c > '9') {
		return i, false
	}
	end, ok := jsonfast.SkipValue(data, i, 0, 1)
	if !ok {
		return i, false
	}
	lit := string(data[i:end])
	switch fv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(lit, 10, 64)
		if err != nil || fv.OverflowInt(n) {
			return i, false
		}
		fv.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(lit, 10, 64)
		if err != nil || fv.OverflowUint(n) {
			return i, false
		}
		fv.SetUint(n)
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(lit, fv.Type().Bits())
		if err != nil || fv.OverflowFloat(n) {
			return i, false
		}
		fv.SetFloat(n)
	default:
		return i, false
	}
	return end, true
}
