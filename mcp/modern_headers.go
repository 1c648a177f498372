package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/textproto"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// x-mcp-header (basic/transports/streamable-http, "Custom Headers from
// Tool Parameters"; server/tools): a tool's input schema may mark
// primitive parameters to be mirrored into Mcp-Param-{Name} headers, which
// the server checks against the arguments.

// paramHeader is one x-mcp-header annotation of a tool's input schema.
type paramHeader struct {
	name string   // the annotation as written, {Name}
	key  string   // the canonical header name, Mcp-Param-{Name}
	path []string // the chain of properties keys to the parameter
	typ  string   // "string", "integer" or "boolean"
}

// ErrInvalidHeaderAnnotation is wrapped by the error that explains why a
// tool's x-mcp-header annotations make it unusable: the server refuses the
// tool at AddTool, and a client leaves it out of tools/list (revision
// 2026-07-28: clients MUST drop such tools).
var ErrInvalidHeaderAnnotation = errors.New("mcp: invalid x-mcp-header annotation")

// schemaKeywords are the keywords whose values are subschemas (or arrays
// or maps of them), which the annotation walk enters; any other keyword's
// value is data (enum, const, default, examples) and is not walked.
var schemaKeywords = map[string]byte{
	"items": 's', "contains": 's', "additionalProperties": 's', "propertyNames": 's',
	"unevaluatedItems": 's', "unevaluatedProperties": 's', "not": 's', "if": 's', "then": 's', "else": 's',
	"additionalItems": 's',
	"prefixItems":     'a', "allOf": 'a', "anyOf": 'a', "oneOf": 'a',
	"$defs": 'm', "definitions": 'm', "patternProperties": 'm', "dependentSchemas": 'm',
}

// toolParamHeaders reads the x-mcp-header annotations of a tool's input
// schema, refusing one that breaks the revision's constraints: a value
// that is empty or not an HTTP token, duplicates (without regard to case),
// a parameter that is not a string, integer or boolean, or an annotation
// not reachable from the root through properties alone.
func toolParamHeaders(schema json.RawMessage) ([]paramHeader, error) {
	if len(schema) == 0 || !bytes.Contains(schema, []byte(`"x-mcp-header"`)) {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("%w: inputSchema: %v", ErrInvalidHeaderAnnotation, err)
	}
	var out []paramHeader
	seen := map[string]bool{}
	var walk func(node any, static bool, path []string) error
	walk = func(node any, static bool, path []string) error {
		obj, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		if v, ok := obj["x-mcp-header"]; ok {
			h, err := annotation(v, obj, static && len(path) > 0, path)
			if err != nil {
				return err
			}
			if seen[h.key] {
				return fmt.Errorf("%w: %q is used twice", ErrInvalidHeaderAnnotation, v)
			}
			seen[h.key] = true
			out = append(out, h)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys) // errors in a stable order
		for _, k := range keys {
			v := obj[k]
			if k == "properties" {
				props, _ := v.(map[string]any)
				names := make([]string, 0, len(props))
				for n := range props {
					names = append(names, n)
				}
				sort.Strings(names)
				for _, n := range names {
					if err := walk(props[n], static, append(path[:len(path):len(path)], n)); err != nil {
						return err
					}
				}
				continue
			}
			switch schemaKeywords[k] {
			case 's':
				if err := walk(v, false, path); err != nil {
					return err
				}
			case 'a':
				list, _ := v.([]any)
				for _, e := range list {
					if err := walk(e, false, path); err != nil {
						return err
					}
				}
			case 'm':
				m, _ := v.(map[string]any)
				for _, e := range m {
					if err := walk(e, false, path); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(root, true, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// annotation checks one x-mcp-header value v on the schema obj at path.
func annotation(v any, obj map[string]any, reachable bool, path []string) (paramHeader, error) {
	name, ok := v.(string)
	if !ok || name == "" || !isToken(name) {
		return paramHeader{}, fmt.Errorf("%w: %v is not an HTTP field-name token", ErrInvalidHeaderAnnotation, v)
	}
	if !reachable {
		return paramHeader{}, fmt.Errorf("%w: %q is not on a property reachable from the root through properties alone", ErrInvalidHeaderAnnotation, name)
	}
	typ, _ := obj["type"].(string)
	switch typ {
	case "string", "integer", "boolean":
	default:
		return paramHeader{}, fmt.Errorf("%w: %q is on a parameter of type %q (string, integer or boolean only)", ErrInvalidHeaderAnnotation, name, typ)
	}
	return paramHeader{name: name, key: textproto.CanonicalMIMEHeaderKey("Mcp-Param-" + name), path: path, typ: typ}, nil
}

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}

// checkParamHeaders checks the Mcp-Param-* headers of a tools/call of the
// named tool against its arguments: a parameter present (and not null)
// in the arguments needs its header, whose value, decoded, must equal it;
// integers compare numerically. It answers -32020 otherwise.
func (s *Server) checkParamHeaders(header func(string) (string, bool), name string, params json.RawMessage) *jsonrpc.Error {
	s.mu.RLock()
	t := s.tools[name]
	s.mu.RUnlock()
	if t == nil || len(t.headers) == 0 {
		return nil
	}
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil // the tool call answers malformed params itself
	}
	var args any
	if len(p.Arguments) > 0 {
		dec := json.NewDecoder(bytes.NewReader(p.Arguments))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return nil
		}
	}
	for _, h := range t.headers {
		v := lookupPath(args, h.path)
		raw, ok := header(h.key)
		if v == nil {
			continue // absent or null: no header is expected
		}
		if !ok {
			return headerMismatch(h.key + " header is missing (or repeated) but the argument is present")
		}
		got, ok := DecodeHeaderValue(raw)
		if !ok {
			return headerMismatch(h.key + " header value is malformed")
		}
		if !sameParam(got, v) {
			return headerMismatch(h.key + " header value " + clip.Quote(got) + " does not match the argument")
		}
	}
	return nil
}

// lookupPath returns the value at path in args, or nil.
func lookupPath(args any, path []string) any {
	for _, k := range path {
		obj, ok := args.(map[string]any)
		if !ok {
			return nil
		}
		args = obj[k]
	}
	return args
}

// sameParam reports whether the header value h stands for the argument v.
func sameParam(h string, v any) bool {
	switch v := v.(type) {
	case string:
		return h == v
	case bool:
		return h == strconv.FormatBool(v)
	case json.Number:
		a, err1 := strconv.ParseFloat(h, 64)
		b, err2 := strconv.ParseFloat(string(v), 64)
		return err1 == nil && err2 == nil && a == b && !math.IsInf(a, 0)
	}
	return false
}

// headerMismatch is the -32020 of a header check
// (basic/transports/streamable-http, "Server Validation").
func headerMismatch(msg string) *jsonrpc.Error {
	return jsonrpc.NewError(CodeHeaderMismatch, "Header mismatch: "+msg)
}
