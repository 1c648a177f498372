package jsonschema

import (
	"github.com/mcpstack/mcpstack/internal/jsonfast"
)

// fastValidator checks instances against the simplest and most common
// tool schemas straight from their JSON text, without decoding them and
// without allocating. It covers a root object schema whose only
// assertions are "type": "object", "properties" whose subschemas assert at
// most a single "type" (annotations such as "description" are allowed),
// "required" and a boolean "additionalProperties".
//
// It only ever says "valid" when the full validator would: when it cannot
// tell, or the instance is invalid, ValidateJSON takes the full path, which
// gives the verdict and the error it always gave. It answers "cannot tell"
// for a repeated member name, one with escapes or non-ASCII bytes, an
// "integer" with a fraction or exponent in its text, and anything that
// might make the full path report ErrInvalidJSON (malformed JSON, numbers
// numberOK refuses, nesting deeper than maxDepth).
type fastValidator struct {
	props      []fastProp // declared and required names
	additional bool       // whether undeclared members are allowed
	maxDepth   int        // Limits.MaxInstanceDepth
}

// fastProp is one member name the schema mentions.
type fastProp struct {
	name     string
	typ      string // the JSON Schema type it must have; "" for any
	declared bool   // it is in "properties" (not only in "required")
	required bool
}

// annotationKeywords are the keywords that never make an instance invalid.
var annotationKeywords = map[string]bool{
	"title": true, "description": true, "$comment": true, "default": true,
	"examples": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// newFastValidator returns the fast validator for the decoded schema doc,
// or nil if doc is not in the simple form it covers. maxDepth bounds the
// nesting of the instances it accepts.
func newFastValidator(doc any, maxDepth int) *fastValidator {
	root, ok := doc.(map[string]any)
	if !ok || root["type"] != "object" {
		return nil
	}
	v := &fastValidator{additional: true, maxDepth: maxDepth}
	for k, e := range root {
		switch k {
		case "type", "properties", "required":
		case "$schema":
			s, ok := e.(string)
			if !ok {
				return nil
			}
			if _, err := ParseDialect(s); err != nil {
				return nil
			}
		case "additionalProperties":
			b, ok := e.(bool)
			if !ok {
				return nil
			}
			v.additional = b
		default:
			if !annotationKeywords[k] {
				return nil
			}
		}
	}
	// "properties" first, then "required", which may name more members.
	index := make(map[string]int)
	if e, ok := root["properties"]; ok {
		props, ok := e.(map[string]any)
		if !ok {
			return nil
		}
		for name, sub := range props {
			typ, ok := simpleType(sub)
			if !ok || !plainMemberName(name) {
				return nil
			}
			index[name] = len(v.props)
			v.props = append(v.props, fastProp{name: name, typ: typ, declared: true})
		}
	}
	if e, ok := root["required"]; ok {
		names, ok := e.([]any)
		if !ok {
			return nil
		}
		for _, n := range names {
			name, ok := n.(string)
			if !ok || !plainMemberName(name) {
				return nil
			}
			j, ok := index[name]
			if !ok {
				j = len(v.props)
				index[name] = j
				v.props = append(v.props, fastProp{name: name})
			}
			v.props[j].required = true
		}
	}
	if len(v.props) > 64 {
		return nil
	}
	return v
}

// simpleType returns the type a property subschema asserts, if all it
// asserts is at most one "type".
func simpleType(sub any) (string, bool) {
	m, ok := sub.(map[string]any)
	if !ok {
		return "", false
	}
	typ := ""
	for k, e := range m {
		switch {
		case k == "type":
			s, ok := e.(string)
			if !ok {
				return "", false
			}
			switch s {
			case "string", "boolean", "null", "object", "array", "number", "integer":
			default:
				return "", false
			}
			typ = s
		case !annotationKeywords[k]:
			return "", false
		}
	}
	return typ, true
}

// plainMemberName reports whether a name is non-empty printable ASCII
// with no '"' or '\\', so that it appears as it is in JSON text.
func plainMemberName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7F || c == '"' || c == '\\' {
			return false
		}
	}
	return s != ""
}

// valid reports whether data is certainly valid: false means invalid or
// cannot tell.
func (v *fastValidator) valid(data []byte) bool {
	var seen uint64
	i, ok := jsonfast.ScanObject(data, 0, func(key []byte, vs int) (int, bool) {
		end, ok := skipChecked(data, vs, 1, v.maxDepth)
		if !ok {
			return end, false
		}
		p := -1
		for j := range v.props {
			if v.props[j].name == string(key) {
				p = j
				break
			}
		}
		switch {
		case p >= 0:
			pr := &v.props[p]
			if seen&(1<<p) != 0 || !hasType(data[vs:end], pr.typ) || (!pr.declared && !v.additional) {
				return end, false
			}
			seen |= 1 << p
		case !v.additional:
			return end, false
		default:
			for _, c := range key {
				if c >= 0x80 {
					return end, false
				}
			}
		}
		return end, true
	})
	if !ok {
		return false
	}
	if jsonfast.SkipSpace(data, i) != len(data) {
		return false
	}
	for j := range v.props {
		if v.props[j].required && seen&(1<<j) == 0 {
			return false
		}
	}
	return true
}

// hasType reports whether the JSON value raw (valid, checked) certainly
// has the JSON Schema type typ.
func hasType(raw []byte, typ string) bool {
	switch typ {
	case "":
		return true
	case "string":
		return raw[0] == '"'
	case "object":
		return raw[0] == '{'
	case "array":
		return raw[0] == '['
	case "boolean":
		return raw[0] == 't' || raw[0] == 'f'
	case "null":
		return raw[0] == 'n'
	case "number":
		return raw[0] == '-' || ('0' <= raw[0] && raw[0] <= '9')
	case "integer":
		if raw[0] != '-' && (raw[0] < '0' || '9' < raw[0]) {
			return false
		}
		for _, c := range raw {
			if c == '.' || c == 'e' || c == 'E' {
				return false
			}
		}
		return true
	}
	return false
}

// skipChecked is jsonfast.SkipValue that also refuses numbers numberOK
// refuses, so that an instance it accepts decodes without ErrInvalidJSON,
// and values nested deeper than maxDepth.
func skipChecked(data []byte, i, depth, maxDepth int) (int, bool) {
	i = jsonfast.SkipSpace(data, i)
	if i >= len(data) {
		return i, false
	}
	switch c := data[i]; {
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return i, false
		}
		end := c + 2 // '}' or ']'
		i = jsonfast.SkipSpace(data, i+1)
		if i < len(data) && data[i] == end {
			return i + 1, true
		}
		for {
			var ok bool
			if c == '{' {
				i = jsonfast.SkipSpace(data, i)
				if i >= len(data) || data[i] != '"' {
					return i, false
				}
				if i, _, ok = jsonfast.ScanString(data, i); !ok {
					return i, false
				}
				i = jsonfast.SkipSpace(data, i)
				if i >= len(data) || data[i] != ':' {
					return i, false
				}
				i++
			}
			if i, ok = skipChecked(data, i, depth+1, maxDepth); !ok {
				return i, false
			}
			i = jsonfast.SkipSpace(data, i)
			if i >= len(data) {
				return i, false
			}
			if data[i] == end {
				return i + 1, true
			}
			if data[i] != ',' {
				return i, false
			}
			i++
		}
	case c == '-' || ('0' <= c && c <= '9'):
		end, ok := jsonfast.SkipValue(data, i, 0, 1)
		if !ok || !numberOK(string(data[i:end])) {
			return i, false
		}
		return end, true
	}
	return jsonfast.SkipValue(data, i, depth, maxDepth)
}
