package auth

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// This file reads, without decoding the whole message, the few members of
// a JSON-RPC request that scope requirements depend on: method, and in
// params name, uri and ref. Members are matched by their exact name after
// unescaping (not with encoding/json's case-insensitive matching), as a
// strict JSON-RPC decoder reads them; a repeated member counts with its
// last value. Input this reader cannot follow yields no members: it is not
// valid JSON, and the next handler refuses it without acting on it.

// eachMember calls f with the key (unescaped) and raw value of each member
// of the JSON object in b. It reports false if b is not an object.
func eachMember(b []byte, f func(key, val []byte)) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipWS(b, i+1) == len(b)
	}
	for i < len(b) {
		end, ok := scanString(b, i)
		if !ok {
			return false
		}
		key, ok := stringValue(b[i:end])
		if !ok {
			return false
		}
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		vend, ok := scanValue(b, i)
		if !ok {
			return false
		}
		f(key, b[i:vend])
		i = skipWS(b, vend)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return skipWS(b, i+1) == len(b)
		default:
			return false
		}
	}
	return false
}

// eachElement calls f with each raw element of the JSON array in b.
func eachElement(b []byte, f func(val []byte)) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return skipWS(b, i+1) == len(b)
	}
	for i < len(b) {
		end, ok := scanValue(b, i)
		if !ok {
			return false
		}
		f(b[i:end])
		i = skipWS(b, end)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return skipWS(b, i+1) == len(b)
		default:
			return false
		}
	}
	return false
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the index after the JSON string starting at b[i].
func scanString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		default:
			if b[j] < 0x20 {
				return 0, false
			}
		}
	}
	return 0, false
}

// scanValue returns the index after the JSON value starting at b[i]. It
// checks the nesting of objects and arrays and the ends of strings only.
func scanValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return scanString(b, i)
	case '{', '[':
		var stack []byte
		for j := i; j < len(b); j++ {
			switch c := b[j]; c {
			case '"':
				end, ok := scanString(b, j)
				if !ok {
					return 0, false
				}
				j = end - 1
			case '{', '[':
				stack = append(stack, c)
			case '}', ']':
				if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
					return 0, false
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(b) && bytes.IndexByte([]byte(",}] \t\r\n"), b[j]) < 0 {
		j++
	}
	return j, j > i
}

// stringValue returns the content of a JSON string literal, unescaped.
func stringValue(lit []byte) ([]byte, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return nil, false
	}
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner, true
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// requestScopes adds to base the scopes the JSON-RPC request (or batch)
// in body requires.
func (m *Middleware) requestScopes(base []string, body []byte) []string {
	i := skipWS(body, 0)
	if i < len(body) && body[i] == '[' {
		out := base
		eachElement(body, func(v []byte) { out = m.messageScopes(out, v) })
		return out
	}
	return m.messageScopes(base, body)
}

func (m *Middleware) messageScopes(out []string, raw []byte) []string {
	var method, params []byte
	if !eachMember(raw, func(k, v []byte) {
		switch string(k) {
		case "method":
			method = v
		case "params":
			params = v
		}
	}) || method == nil {
		return out
	}
	name, ok := stringValue(method)
	if !ok {
		return out
	}
	out = mergeScopes(out, m.opts.MethodScopes[string(name)])
	if params == nil {
		return out
	}
	var pname, uri, ref []byte
	if !eachMember(params, func(k, v []byte) {
		switch string(k) {
		case "name":
			pname = v
		case "uri":
			uri = v
		case "ref":
			ref = v
		}
	}) {
		return out
	}
	switch string(name) {
	case "tools/call":
		if s, ok := stringValue(pname); ok {
			out = mergeScopes(out, m.opts.ToolScopes[string(s)])
		}
	case "prompts/get":
		if s, ok := stringValue(pname); ok {
			out = mergeScopes(out, m.opts.PromptScopes[string(s)])
		}
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		if s, ok := stringValue(uri); ok {
			out = mergeScopes(out, m.resourceScopes(string(s)))
		}
	case "completion/complete":
		var typ, rname, ruri []byte
		if ref == nil || !eachMember(ref, func(k, v []byte) {
			switch string(k) {
			case "type":
				typ = v
			case "name":
				rname = v
			case "uri":
				ruri = v
			}
		}) {
			return out
		}
		t, _ := stringValue(typ)
		switch string(t) {
		case "ref/prompt":
			if s, ok := stringValue(rname); ok {
				out = mergeScopes(out, m.opts.PromptScopes[string(s)])
			}
		case "ref/resource":
			if s, ok := stringValue(ruri); ok {
				out = mergeScopes(out, m.resourceScopes(string(s)))
			}
		}
	}
	return out
}
