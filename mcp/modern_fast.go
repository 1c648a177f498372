package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/mcpstack/mcpstack/internal/jsonfast"
	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// The fast path of a modern tools/call: params holding only name,
// arguments and a _meta of protocol keys (and progressToken) are taken
// apart in place, with no encoding/json and no allocation beyond the
// name, so that a modern call costs no more than a legacy one, which
// sends no _meta. Anything else (other members or _meta keys, escaped
// keys, duplicates, values of the wrong type) goes to the ordinary
// decoding, which also says what is wrong. Two readers share the
// scanning: fastCall, which takes the request's _meta (RequestMeta) and
// the name Mcp-Name mirrors into the modern context, and
// decodeModernCallToolParams, which callTool uses to decode the call's
// params; the context does not carry the params.

// maxFastDepth bounds the nesting the scanner follows, as splitCallTool.
const maxFastDepth = 10000

// modernCallSplit is the text of the members of tools/call params found by
// splitModernCall; nil for an absent member.
type modernCallSplit struct {
	name, args, meta []byte
}

// splitModernCall finds the members of raw, tools/call params, if raw is
// an object holding a string name, at most an object arguments and an
// object _meta, each once and spelled exactly, and nothing else. The
// _meta object is walked by scanMeta, which is given raw and the index of
// its '{' and returns the index just past its '}' (so that _meta, the
// longest member of a modern call, is walked once).
func splitModernCall(raw []byte, scanMeta func(raw []byte, v int) (int, bool)) (sp modernCallSplit, ok bool) {
	end, ok := jsonfast.ScanObject(raw, 0, func(key []byte, v int) (int, bool) {
		var dst *[]byte
		var open byte
		switch string(key) {
		case "name":
			dst, open = &sp.name, '"'
		case "arguments":
			dst, open = &sp.args, '{'
		case "_meta":
			dst, open = &sp.meta, '{'
		default:
			return v, false
		}
		if *dst != nil || v >= len(raw) || raw[v] != open {
			return v, false
		}
		var e int
		var ok bool
		if dst == &sp.meta {
			e, ok = scanMeta(raw, v)
		} else {
			e, ok = jsonfast.SkipValue(raw, v, 1, maxFastDepth)
		}
		if !ok {
			return e, false
		}
		*dst = raw[v:e:e]
		return e, true
	})
	if !ok || jsonfast.SkipSpace(raw, end) != len(raw) || sp.name == nil {
		return modernCallSplit{}, false
	}
	return sp, true
}

// unquoteName returns the value of the JSON string name (as
// splitModernCall found it).
func unquoteName(name []byte) string {
	_, escaped, _ := jsonfast.ScanString(name, 0)
	return jsonfast.Unquote(name, escaped)
}

// fastCall decodes raw, the params of a modern tools/call, into c: its
// request _meta and the name Mcp-Name mirrors. It reports whether it
// could; decodeModernCallToolParams then decodes the same params without
// encoding/json.
func (c *modernContext) fastCall(raw []byte) bool {
	sp, ok := splitModernCall(raw, c.scanMeta)
	// `""` (two bytes) is the empty name, which Validate refuses; an
	// escaped name is never empty.
	if !ok || sp.meta == nil || len(sp.name) == 2 {
		return false
	}
	c.nameVal = unquoteName(sp.name)
	c.name = &c.nameVal
	return true
}

// requestMetaKey reports whether key is one of the _meta keys that
// RequestMeta holds apart from progressToken: the protocol keys of a
// modern request (revision 2026-07-28, basic/index#meta), which
// RequestMetaFromContext gives a handler.
func requestMetaKey(key string) bool {
	switch key {
	case MetaKeyProtocolVersion, MetaKeyClientCapabilities, MetaKeyClientInfo, MetaKeyLogLevel:
		return true
	}
	return false
}

// decodeModernCallToolParams decodes raw, the params of a modern
// tools/call, into p as decodeCallToolParams does, with the same errors,
// except that p.Meta leaves out the protocol keys (requestMetaKey): a
// handler finds those in RequestMetaFromContext, and p.Meta holds the rest
// of _meta (progressToken and any application keys), nil if nothing
// remains. Params holding only name, arguments and a _meta of protocol
// keys and progressToken are decoded here without encoding/json (so that
// the protocol keys are never decoded into a map); anything else goes
// through decodeCallToolParams. known, if not empty, is the name as the
// request's metadata has it (modernContext.name): when the params spell
// the same name without escapes, that string is reused, sparing an
// allocation; it never changes what is decoded.
func decodeModernCallToolParams(raw json.RawMessage, p *CallToolRequestParams, known string) error {
	var meta Meta
	scan := func(raw []byte, v int) (int, bool) { return callMeta(raw, v, &meta) }
	if sp, ok := splitModernCall(raw, scan); ok && len(sp.name) > 2 {
		_, escaped, _ := jsonfast.ScanString(sp.name, 0)
		name := known
		if escaped || known == "" || string(sp.name[1:len(sp.name)-1]) != known {
			name = jsonfast.Unquote(sp.name, escaped)
		}
		*p = CallToolRequestParams{Name: name, Meta: meta}
		if sp.args != nil {
			// Shared with the request, read-only, as decodeCallToolParams does.
			p.Arguments = json.RawMessage(sp.args)
		}
		return nil
	}
	if err := decodeCallToolParams(raw, p); err != nil {
		return err
	}
	for k := range p.Meta {
		if requestMetaKey(k) {
			delete(p.Meta, k)
		}
	}
	if len(p.Meta) == 0 {
		p.Meta = nil
	}
	return nil
}

// callMeta scans the _meta object at raw[v:] and sets *meta to the p.Meta
// of decodeModernCallToolParams: its progressToken, decoded as
// Meta.UnmarshalJSON decodes it, or nil. It returns the index past the
// object, and reports false for any key but the protocol keys and
// progressToken, a repeated key, and a progressToken that is not a string
// or an integer.
func callMeta(raw []byte, v int, meta *Meta) (int, bool) {
	var tok any
	seen := 0
	end, ok := jsonfast.ScanObject(raw, v, func(key []byte, v int) (int, bool) {
		e, ok := jsonfast.SkipValue(raw, v, 1, maxFastDepth)
		if !ok {
			return e, false
		}
		bit := 0
		switch string(key) {
		case MetaKeyProtocolVersion:
			bit = 1
		case MetaKeyClientCapabilities:
			bit = 2
		case MetaKeyClientInfo:
			bit = 4
		case MetaKeyLogLevel:
			bit = 8
		case MetaKeyProgressToken:
			bit = 16
			tok, ok = metaToken(raw[v:e])
		default:
			return e, false
		}
		if !ok || seen&bit != 0 {
			return e, false
		}
		seen |= bit
		return e, true
	})
	if ok && tok != nil {
		*meta = Meta{MetaKeyProgressToken: tok}
	}
	return end, ok
}

// metaToken decodes val, a progress token, as Meta.UnmarshalJSON would: a
// string as a string, an integer as a json.Number.
func metaToken(val []byte) (any, bool) {
	if val[0] == '"' {
		_, escaped, ok := jsonfast.ScanString(val, 0)
		if !ok {
			return nil, false
		}
		return jsonfast.Unquote(val, escaped), true
	}
	if _, err := strconv.ParseInt(string(val), 10, 64); err != nil {
		return nil, false
	}
	return json.Number(string(val)), true
}

// scanMeta decodes the modern _meta object at raw[v:] into c.req.meta and
// returns the index past it; it reports false for anything but the
// protocol keys with values of the right types, and for a _meta missing a
// required key.
func (c *modernContext) scanMeta(raw []byte, v int) (int, bool) {
	m := &c.req.meta
	var caps, info []byte
	seen := 0
	end, ok := jsonfast.ScanObject(raw, v, func(key []byte, v int) (int, bool) {
		e, ok := jsonfast.SkipValue(raw, v, 1, maxFastDepth)
		if !ok {
			return e, false
		}
		val := raw[v:e]
		bit := 0
		switch string(key) {
		case MetaKeyProtocolVersion:
			bit, ok = 1, fastString(val, &m.ProtocolVersion)
		case MetaKeyClientCapabilities:
			bit, ok, caps = 2, val[0] == '{', val
		case MetaKeyClientInfo:
			bit, ok, info = 4, fastImplementation(val), val
		case MetaKeyLogLevel:
			var s string
			bit, ok = 8, fastString(val, &s)
			if ok {
				m.LogLevel, ok = knownLevel(s)
			}
		case MetaKeyProgressToken:
			bit = 16
			if c.req.token, ok = fastID(val); ok {
				m.ProgressToken = &c.req.token
			}
		default:
			return e, false
		}
		if !ok || seen&bit != 0 {
			return e, false
		}
		seen |= bit
		return e, true
	})
	if !ok || seen&3 != 3 || m.ProtocolVersion == "" {
		return end, false
	}
	if !isEmptyObject(caps) {
		if strictjson.Unmarshal(caps, &c.req.caps) != nil || c.req.caps.Validate() != nil {
			return end, false
		}
	}
	m.ClientCapabilities = &c.req.caps
	c.req.info = info // decoded when asked for (RequestMetaFromContext)
	return end, true
}

// fastString decodes the JSON string val into *s; the known protocol
// versions cost no allocation.
func fastString(val []byte, s *string) bool {
	if val[0] != '"' {
		return false
	}
	_, escaped, ok := jsonfast.ScanString(val, 0)
	if !ok {
		return false
	}
	if !escaped && string(val[1:len(val)-1]) == ProtocolVersion20260728 {
		*s = ProtocolVersion20260728
		return true
	}
	*s = jsonfast.Unquote(val, escaped)
	return true
}

// knownLevel returns the LoggingLevel constant named s.
func knownLevel(s string) (LoggingLevel, bool) {
	l := LoggingLevel(s)
	if l.Validate() != nil {
		return "", false
	}
	return l, true
}

// fastID decodes a progress token: a string or an integer.
func fastID(val []byte) (jsonrpc.ID, bool) {
	if val[0] == '"' {
		_, escaped, ok := jsonfast.ScanString(val, 0)
		return jsonrpc.StringID(jsonfast.Unquote(val, escaped)), ok
	}
	n, err := strconv.ParseInt(string(val), 10, 64)
	return jsonrpc.Int64ID(n), err == nil
}

// fastImplementation checks the shape of a clientInfo object without
// decoding it: its string members are strings and icons an array (the
// type errors strictjson would report).
func fastImplementation(val []byte) bool {
	end, ok := jsonfast.ScanObject(val, 0, func(key []byte, v int) (int, bool) {
		e, ok := jsonfast.SkipValue(val, v, 1, maxFastDepth)
		if !ok {
			return e, false
		}
		switch string(key) {
		case "name", "title", "version", "description", "websiteUrl":
			return e, val[v] == '"'
		case "icons":
			return e, val[v] == '['
		}
		return e, true
	})
	return ok && end == len(val)
}

// isEmptyObject reports whether raw is {} (with any space inside).
func isEmptyObject(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) >= 2 && t[0] == '{' && len(bytes.TrimSpace(t[1:len(t)-1])) == 0 && t[len(t)-1] == '}'
}

// clientInfo decodes the clientInfo kept by scanMeta, once.
func (m *modernRequest) clientInfo() {
	m.infoOnce.Do(func() {
		if m.info == nil || m.meta.ClientInfo != nil {
			return
		}
		var impl Implementation
		if json.Unmarshal(m.info, &impl) == nil {
			m.meta.ClientInfo = &impl
		}
	})
}
