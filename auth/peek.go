package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// This file reads, without decoding the whole message, the few members of
// a JSON-RPC request that scope requirements depend on: method, and in
// params name, uri and ref. Members are matched by their exact name after
// unescaping (not with encoding/json's case-insensitive matching), as a
// strict JSON-RPC decoder reads them; a repeated member is refused. Input this reader cannot follow yields no members: it is not
// valid JSON, and the next handler refuses it without acting on it.
//
// The server reads the same members with the same rules (jsonrpc.Decode
// for the message, internal/strictjson for params): exact names only, a
// repeat refused. So the middleware and the dispatcher cannot read
// different values from the same bytes.

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

// ErrRepeatedMember is the error of a request whose params, or completion
// ref, hold one of the members that scopes depend on (name, uri, ref,
// type) more than once. The middleware refuses it with 400: the server
// refuses a repeated member too (-32602), so the two never resolve a
// repeat differently. (A repeat in the message itself is refused by
// jsonrpc.Decode, which the middleware reads the message with.)
var ErrRepeatedMember = errors.New("auth: a member of the request appears more than once")

// repeatError names the repeated member.
func repeatError(name []byte) error {
	return fmt.Errorf("%w: %s", ErrRepeatedMember, name)
}

// A target is what one JSON-RPC request asks for, as far as scopes go.
type target struct {
	method string
	kind   targetKind
	key    []byte // the tool's or prompt's name, or the resource's URI
}

type targetKind uint8

const (
	targetNone targetKind = iota // the method alone decides
	targetTool
	targetPrompt
	targetResource
)

// requestScopes adds to base the scopes the JSON-RPC request (or batch)
// in body requires.
func (m *Middleware) requestScopes(base []string, body []byte) ([]string, error) {
	out := base
	err := readTargets(m.dec, body, func(t target) {
		out = mergeScopes(out, m.opts.MethodScopes[t.method])
		switch t.kind {
		case targetTool:
			out = mergeScopes(out, m.opts.ToolScopes[string(t.key)])
		case targetPrompt:
			out = mergeScopes(out, m.opts.PromptScopes[string(t.key)])
		case targetResource:
			out = mergeScopes(out, m.resourceScopes(string(t.key)))
		}
	})
	return out, err
}

// readTargets calls f with the target of each request in body, a JSON-RPC
// message or batch. Members are matched by their exact names, as the
// server's decoders match them (a member whose name differs only in case
// is an unknown member to both); a member read here that is repeated in
// its object is an error, as it is for the server.
func readTargets(dec *jsonrpc.Decoder, body []byte, f func(target)) error {
	i := skipWS(body, 0)
	if i < len(body) && body[i] == '[' {
		var err error
		eachElement(body, func(v []byte) {
			if err == nil {
				err = messageTarget(dec, v, f)
			}
		})
		return err
	}
	return messageTarget(dec, body, f)
}

// memberSet reads the members of an object named in names (at most 8),
// refusing a repeat of any of them.
type memberSet struct {
	names []string
	vals  [8][]byte
	err   error
}

func (s *memberSet) read(obj []byte) bool {
	return eachMember(obj, func(k, v []byte) {
		for j, n := range s.names {
			if string(k) == n {
				if s.vals[j] != nil && s.err == nil {
					s.err = repeatError(k)
				}
				s.vals[j] = v
			}
		}
	})
}

var (
	paramsMembers = []string{"name", "uri", "ref"}
	refMembers    = []string{"type", "name", "uri"}
)

// readsTarget reports whether messageTarget reads the target of a
// request of method from its params (see the switch there).
func readsTarget(method string) bool {
	switch method {
	case "tools/call", "prompts/get", "resources/read", "resources/subscribe", "resources/unsubscribe", "completion/complete":
		return true
	}
	return false
}

// messageTarget reads the message with the server's own decoder,
// jsonrpc.Decode (dec saves copying the method names it knows), so that both see the same method and params (or both
// refuse the message), then the members of params that scopes depend on.
func messageTarget(dec *jsonrpc.Decoder, raw []byte, f func(target)) error {
	m, err := dec.Decode(raw)
	if err != nil {
		return nil // not a valid message: the server refuses it without acting on it
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok {
		return nil
	}
	t := target{method: req.Method}
	params := []byte(req.Params)
	if params == nil {
		f(t)
		return nil
	}
	ps := memberSet{names: paramsMembers}
	if !ps.read(params) {
		f(t)
		return nil
	}
	if ps.err != nil {
		if !readsTarget(t.method) {
			// The scope of this method does not depend on its params:
			// a repeated member there is the server's to judge (it
			// may not act on the message at all), not a reason to
			// refuse the body before it.
			f(t)
			return nil
		}
		return ps.err
	}
	pname, uri, ref := ps.vals[0], ps.vals[1], ps.vals[2]
	switch t.method {
	case "tools/call":
		if s, ok := stringValue(pname); ok {
			t.kind, t.key = targetTool, s
		}
	case "prompts/get":
		if s, ok := stringValue(pname); ok {
			t.kind, t.key = targetPrompt, s
		}
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		if s, ok := stringValue(uri); ok {
			t.kind, t.key = targetResource, s
		}
	case "completion/complete":
		rs := memberSet{names: refMembers}
		if ref == nil || !rs.read(ref) {
			break
		}
		if rs.err != nil {
			return rs.err
		}
		typ, _ := stringValue(rs.vals[0])
		switch string(typ) {
		case "ref/prompt":
			if s, ok := stringValue(rs.vals[1]); ok {
				t.kind, t.key = targetPrompt, s
			}
		case "ref/resource":
			if s, ok := stringValue(rs.vals[2]); ok {
				t.kind, t.key = targetResource, s
			}
		}
	}
	f(t)
	return nil
}
