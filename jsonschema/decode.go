package jsonschema

import (
	"encoding/json"

	"github.com/mcpstack/mcpstack/internal/jsonfast"
)

// decodeInstance decodes data, one JSON value with optional whitespace
// around it, into exactly the value that the library's UnmarshalJSON
// (encoding/json's Decoder with UseNumber, into an any) returns for it:
// map[string]any (a repeated key keeps its last value), []any (never nil),
// string (invalid UTF-8 and unpaired surrogate escapes become U+FFFD),
// json.Number (the literal's text), bool and nil. It crosses strings eight
// bytes at a time and allocates only the values it returns.
//
// ok is false when data is not valid JSON or nests deeper than maxDepth;
// the caller then decodes it the library's way, for the library's error.
// badNum reports that some number fails numberOK.
func decodeInstance(data []byte, maxDepth int) (v any, badNum, ok bool) {
	d := instanceDecoder{data: data, maxDepth: maxDepth}
	v, ok = d.value(0)
	if !ok || d.skipSpace() != len(data) {
		return nil, false, false
	}
	return v, d.badNum, true
}

type instanceDecoder struct {
	data     []byte
	i        int
	badNum   bool
	maxDepth int
}

func (d *instanceDecoder) skipSpace() int {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return d.i
		}
	}
	return d.i
}

func (d *instanceDecoder) value(depth int) (any, bool) {
	if d.skipSpace() >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.i]; {
	case c == '"':
		return d.str()
	case c == '{':
		if depth >= d.maxDepth {
			return nil, false
		}
		d.i++
		m := make(map[string]any)
		if d.skipSpace() < len(d.data) && d.data[d.i] == '}' {
			d.i++
			return m, true
		}
		for {
			if d.skipSpace() >= len(d.data) || d.data[d.i] != '"' {
				return nil, false
			}
			k, ok := d.str()
			if !ok {
				return nil, false
			}
			if d.skipSpace() >= len(d.data) || d.data[d.i] != ':' {
				return nil, false
			}
			d.i++
			e, ok := d.value(depth + 1)
			if !ok {
				return nil, false
			}
			m[k] = e
			if d.skipSpace() >= len(d.data) {
				return nil, false
			}
			switch d.data[d.i] {
			case '}':
				d.i++
				return m, true
			case ',':
				d.i++
			default:
				return nil, false
			}
		}
	case c == '[':
		if depth >= d.maxDepth {
			return nil, false
		}
		d.i++
		a := make([]any, 0)
		if d.skipSpace() < len(d.data) && d.data[d.i] == ']' {
			d.i++
			return a, true
		}
		for {
			e, ok := d.value(depth + 1)
			if !ok {
				return nil, false
			}
			a = append(a, e)
			if d.skipSpace() >= len(d.data) {
				return nil, false
			}
			switch d.data[d.i] {
			case ']':
				d.i++
				return a, true
			case ',':
				d.i++
			default:
				return nil, false
			}
		}
	case c == '-' || ('0' <= c && c <= '9'):
		return d.number()
	case c == 't':
		return d.literal("true", true)
	case c == 'f':
		return d.literal("false", false)
	case c == 'n':
		return d.literal("null", nil)
	}
	return nil, false
}

// str decodes the string literal at d.i into a string.
func (d *instanceDecoder) str() (string, bool) {
	end, escaped, ok := jsonfast.ScanString(d.data, d.i)
	if !ok {
		return "", false
	}
	s := jsonfast.Unquote(d.data[d.i:end], escaped)
	d.i = end
	return s, true
}

func (d *instanceDecoder) literal(lit string, v any) (any, bool) {
	if len(d.data)-d.i < len(lit) || string(d.data[d.i:d.i+len(lit)]) != lit {
		return nil, false
	}
	d.i += len(lit)
	return v, true
}

// number decodes the number at d.i (RFC 8259 grammar) as a json.Number.
func (d *instanceDecoder) number() (any, bool) {
	data, start, i := d.data, d.i, d.i
	digits := func() int {
		s := i
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
		return i - s
	}
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case digits() == 0:
		return nil, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		if digits() == 0 {
			return nil, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	d.i = i
	n := json.Number(data[start:i])
	if !numberOK(string(n)) {
		d.badNum = true
	}
	return n, true
}
