package otel

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/internal/jsonfast"
	"github.com/mcpstack/mcpstack/mcp"
)

// maxFields bounds the propagator fields read from and written to _meta.
// W3C Trace Context and Baggage use three.
const maxFields = 8

// maxPeekDepth bounds the nesting peek walks through; deeper params are
// read by peekSlow, whose decoder has its own bound.
const maxPeekDepth = 10000

// peeked is what the instrumentation reads of a message's params: the
// tool or prompt name, the resource URI, where the _meta entries that
// carry trace context are, and where a sender can add its own.
type peeked struct {
	// name is the tool or prompt name, as bytes of params when it has no
	// escape, nil when absent.
	name []byte
	uri  string

	// object is set when params are a JSON object that was scanned, open
	// being the index of its '{' and members its member count.
	object  bool
	open    int
	members int
	// metas counts the _meta members; metaOpen is the index of the last
	// one's '{' (-1 when it is not an object), metaMembers its member
	// count.
	metas       int
	metaOpen    int
	metaMembers int
	// found are the indices of the values of the last _meta's entries
	// named by a propagator field, field the field's index.
	nfound int
	found  [maxFields]int
	field  [maxFields]uint8
	// slow holds the trace context read by peekSlow.
	slow map[string]string
}

// foundAt notes that the value of field f is at index v; a field seen
// again is replaced, as encoding/json keeps the last of duplicate keys.
// Fields are distinct and at most maxFields, so found never overflows.
func (p *peeked) foundAt(f uint8, v int) {
	for i := range p.nfound {
		if p.field[i] == f {
			p.found[i] = v
			return
		}
	}
	p.found[p.nfound], p.field[p.nfound] = v, f
	p.nfound++
}

// carried reports whether the params carry trace context.
func (p *peeked) carried() bool { return p.nfound > 0 || len(p.slow) > 0 }

// peek reads params with exact member names (never case-folded, as
// encoding/json would match them into a struct), so that the telemetry
// names what the server dispatches. It scans the text once, calls no
// closure and allocates nothing but a URI or an escaped name: a tools/call
// whose arguments are a megabyte costs a scan, not a decode. Params it
// cannot scan that way (a key with an escape, malformed JSON) are read
// with encoding/json instead.
func (in *instrumentation) peek(method string, params []byte) peeked {
	p := peeked{metaOpen: -1}
	if !in.peekFast(method, params, &p) {
		return in.peekSlow(method, params)
	}
	return p
}

func (in *instrumentation) peekFast(method string, params []byte, p *peeked) bool {
	i := jsonfast.SkipSpace(params, 0)
	if i >= len(params) || params[i] != '{' {
		return true // not an object: nothing to read
	}
	p.object, p.open = true, i
	wantName := method == mcp.MethodToolsCall || method == mcp.MethodPromptsGet
	wantURI := method == mcp.MethodResourcesRead || method == mcp.MethodResourcesSubscribe ||
		method == mcp.MethodResourcesUnsubscribe || method == mcp.NotificationResourcesUpdated
	i = jsonfast.SkipSpace(params, i+1)
	if i < len(params) && params[i] == '}' {
		return onlySpace(params, i+1)
	}
	for {
		key, v, ok := memberAt(params, i)
		if !ok {
			return false
		}
		p.members++
		var end int
		switch {
		case wantName && string(key) == "name":
			p.name, end, ok = rawString(params, v)
		case wantURI && string(key) == "uri":
			var uri []byte
			uri, end, ok = rawString(params, v)
			p.uri = string(uri)
		case string(key) == "_meta":
			end, ok = in.peekMeta(params, v, p)
		default:
			end, ok = jsonfast.SkipValue(params, v, 1, maxPeekDepth)
		}
		if !ok {
			return false
		}
		var more bool
		if i, more, ok = next(params, end); !ok {
			return false
		}
		if !more {
			return onlySpace(params, i)
		}
	}
}

// peekMeta reads the _meta value at data[i], noting where its entries
// named by the propagator's fields are. The last _meta counts, as with
// encoding/json.
func (in *instrumentation) peekMeta(data []byte, i int, p *peeked) (int, bool) {
	p.metas++
	p.metaOpen, p.metaMembers, p.nfound = -1, 0, 0
	if i >= len(data) || data[i] != '{' {
		return jsonfast.SkipValue(data, i, 1, maxPeekDepth)
	}
	p.metaOpen = i
	i = jsonfast.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for {
		key, v, ok := memberAt(data, i)
		if !ok {
			return i, false
		}
		p.metaMembers++
		if f := in.fieldIndex(key); f >= 0 {
			p.foundAt(uint8(f), v)
		}
		end, ok := jsonfast.SkipValue(data, v, 2, maxPeekDepth)
		if !ok {
			return end, false
		}
		var more bool
		if i, more, ok = next(data, end); !ok || !more {
			return i, ok
		}
	}
}

// onlySpace reports whether data holds only space from i on: what
// follows an object is not taken for part of it.
func onlySpace(data []byte, i int) bool { return jsonfast.SkipSpace(data, i) == len(data) }

// next reads what follows a member's value ending at data[end]: ','
// (more is set, i is the index of the next key) or '}' (i is the index
// just past it).
func next(data []byte, end int) (i int, more, ok bool) {
	i = jsonfast.SkipSpace(data, end)
	if i >= len(data) {
		return i, false, false
	}
	switch data[i] {
	case '}':
		return i + 1, false, true
	case ',':
		return jsonfast.SkipSpace(data, i+1), true, true
	}
	return i, false, false
}

// memberAt reads the key whose '"' is at data[i] and the ':' after it,
// and returns the key's bytes and the index of the value. A key with an
// escape is refused, so that keys compare byte by byte.
func memberAt(data []byte, i int) (key []byte, value int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, i, false
	}
	end, escaped, ok := jsonfast.ScanString(data, i)
	if !ok || escaped {
		return nil, i, false
	}
	key = data[i+1 : end-1]
	j := jsonfast.SkipSpace(data, end)
	if j >= len(data) || data[j] != ':' {
		return nil, j, false
	}
	return key, jsonfast.SkipSpace(data, j+1), true
}

// fieldIndex returns the index of key among the propagator's fields, or
// -1.
func (in *instrumentation) fieldIndex(key []byte) int {
	for i, f := range in.fields {
		if string(key) == f {
			return i
		}
	}
	return -1
}

// rawString returns the string value at data[i] as it decodes: the bytes
// of data when it holds no escape and is valid UTF-8, a decoded copy
// otherwise; nil when the value is another JSON type. It returns the
// index just past the value.
func rawString(data []byte, i int) ([]byte, int, bool) {
	if i >= len(data) || data[i] != '"' {
		end, ok := jsonfast.SkipValue(data, i, 1, maxPeekDepth)
		return nil, end, ok
	}
	end, escaped, ok := jsonfast.ScanString(data, i)
	if !ok {
		return nil, end, false
	}
	if raw := data[i+1 : end-1]; !escaped && utf8.Valid(raw) {
		return raw, end, true
	}
	return []byte(jsonfast.Unquote(data[i:end], escaped)), end, true
}

// scanString returns the string value at data[i], or "" when the value is
// another JSON type, with the index just past the value.
func scanString(data []byte, i int) (string, int, bool) {
	if i >= len(data) || data[i] != '"' {
		end, ok := jsonfast.SkipValue(data, i, 1, maxPeekDepth)
		return "", end, ok
	}
	end, escaped, ok := jsonfast.ScanString(data, i)
	if !ok {
		return "", end, false
	}
	return jsonfast.Unquote(data[i:end], escaped), end, true
}

// fillCarrier puts the trace context p found in params into c.
func (in *instrumentation) fillCarrier(c *metaCarrier, params []byte, p *peeked) {
	for k, v := range p.slow {
		c.Set(k, v)
	}
	for i := range p.nfound {
		if s, _, ok := scanString(params, p.found[i]); ok && s != "" {
			c.Set(in.fields[p.field[i]], s)
		}
	}
}

// peekSlow is peek through encoding/json, for params peek cannot scan.
func (in *instrumentation) peekSlow(method string, params []byte) peeked {
	p := peeked{metaOpen: -1}
	var top map[string]json.RawMessage
	if json.Unmarshal(params, &top) != nil {
		return p
	}
	str := func(raw json.RawMessage) string {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return s
	}
	switch method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		if name := str(top["name"]); name != "" {
			p.name = []byte(name)
		}
	case mcp.MethodResourcesRead, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe, mcp.NotificationResourcesUpdated:
		p.uri = str(top["uri"])
	}
	if raw, ok := top["_meta"]; ok {
		var meta map[string]json.RawMessage
		if json.Unmarshal(raw, &meta) == nil {
			for k, v := range meta {
				if in.fieldIndex([]byte(k)) < 0 {
					continue
				}
				if s := str(v); s != "" {
					if p.slow == nil {
						p.slow = map[string]string{}
					}
					p.slow[k] = s
				}
			}
		}
	}
	return p
}
