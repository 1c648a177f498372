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
// decoding, which also says what is wrong.

// maxFastDepth bounds the nesting the scanner follows, as splitCallTool.
const maxFastDepth = 10000

// fastCall decodes raw, the params of a modern tools/call, into c (its
// request _meta and its call params) and reports whether it could.
func (c *modernContext) fastCall(raw []byte) bool {
	nameS, nameE, argS, argE, metaS, metaE := -1, -1, -1, -1, -1, -1
	end, ok := jsonfast.ScanObject(raw, 0, func(key []byte, v int) (int, bool) {
		e, ok := jsonfast.SkipValue(raw, v, 1, maxFastDepth)
		if !ok {
			return e, false
		}
		switch string(key) {
		case "name":
			if nameS >= 0 || raw[v] != '"' {
				return e, false
			}
			nameS, nameE = v, e
		case "arguments":
			if argS >= 0 || raw[v] != '{' {
				return e, false
			}
			argS, argE = v, e
		case "_meta":
			if metaS >= 0 || raw[v] != '{' {
				return e, false
			}
			metaS, metaE = v, e
		default:
			return e, false
		}
		return e, true
	})
	if !ok || jsonfast.SkipSpace(raw, end) != len(raw) || nameS < 0 || metaS < 0 {
		return false
	}
	if !c.scanMeta(raw[metaS:metaE]) {
		return false
	}
	_, escaped, _ := jsonfast.ScanString(raw, nameS)
	p := &c.mem
	p.Name = jsonfast.Unquote(raw[nameS:nameE], escaped)
	if p.Name == "" {
		return false
	}
	if argS >= 0 {
		// Shared with the request, read-only, as decodeCallToolParams does.
		p.Arguments = raw[argS:argE:argE]
	}
	if c.req.meta.ProgressToken != nil {
		p.Meta = Meta{MetaKeyProgressToken: *c.req.meta.ProgressToken}
	}
	c.name = &p.Name
	c.decoded = true
	return true
}

// scanMeta decodes a modern _meta object into c.req.meta; it reports
// false for anything but the protocol keys with values of the right
// types, and for a _meta missing a required key.
func (c *modernContext) scanMeta(raw []byte) bool {
	m := &c.req.meta
	var caps, info []byte
	seen := 0
	end, ok := jsonfast.ScanObject(raw, 0, func(key []byte, v int) (int, bool) {
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
	if !ok || end != len(raw) || seen&3 != 3 || m.ProtocolVersion == "" {
		return false
	}
	if !isEmptyObject(caps) {
		if strictjson.Unmarshal(caps, &c.req.caps) != nil || c.req.caps.Validate() != nil {
			return false
		}
	}
	m.ClientCapabilities = &c.req.caps
	c.req.info = info // decoded when asked for (RequestMetaFromContext)
	return true
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
