package otel

import (
	"bytes"
	"encoding/json"

	"github.com/mcpstack/mcpstack/internal/jsonfast"
)

// metaCarrier is the propagation.TextMapCarrier of one message's trace
// context: a few keys and values kept in order, in the call's own
// allocation for the first four.
type metaCarrier struct {
	keys, vals []string
	kbuf, vbuf [4]string
}

// Get returns the value of key, or "".
func (c *metaCarrier) Get(key string) string {
	for i, k := range c.keys {
		if k == key {
			return c.vals[i]
		}
	}
	return ""
}

// Set sets key to value, replacing an earlier value.
func (c *metaCarrier) Set(key, value string) {
	for i, k := range c.keys {
		if k == key {
			c.vals[i] = value
			return
		}
	}
	if c.keys == nil {
		c.keys, c.vals = c.kbuf[:0], c.vbuf[:0]
	}
	c.keys = append(c.keys, key)
	c.vals = append(c.vals, value)
}

// Keys returns the keys set, in the order they were first set.
func (c *metaCarrier) Keys() []string { return c.keys }

// spliceMeta returns params with the carrier's entries added to its _meta
// by copying the text around them, which it can do when params are empty,
// null or an object scanned by peek with at most one _meta, an object
// that holds none of the propagator's fields, and every key of the
// carrier is one of those fields (so that no member is written twice).
// Otherwise it reports false, and addMeta does the work.
func (in *instrumentation) spliceMeta(params []byte, p *peeked, c *metaCarrier) ([]byte, bool) {
	for _, k := range c.keys {
		if in.fieldIndex([]byte(k)) < 0 {
			return nil, false
		}
	}
	size := 0
	for i := range c.keys {
		size += len(c.keys[i]) + len(c.vals[i]) + 6
	}
	if trimmed := bytes.TrimSpace(params); len(trimmed) == 0 || string(trimmed) == "null" {
		out := make([]byte, 0, size+len(`{"_meta":{}}`))
		out = append(out, `{"_meta":{`...)
		out = appendEntries(out, c)
		return append(out, "}}"...), true
	}
	switch {
	case !p.object || p.metas > 1:
		return nil, false
	case p.metas == 0:
		out := make([]byte, 0, len(params)+size+len(`"_meta":{},`))
		out = append(out, params[:p.open+1]...)
		out = append(out, `"_meta":{`...)
		out = appendEntries(out, c)
		out = append(out, '}')
		if p.members > 0 {
			out = append(out, ',')
		}
		return append(out, params[p.open+1:]...), true
	case p.metaOpen >= 0 && p.nfound == 0:
		out := make([]byte, 0, len(params)+size+1)
		out = append(out, params[:p.metaOpen+1]...)
		out = appendEntries(out, c)
		if p.metaMembers > 0 {
			out = append(out, ',')
		}
		return append(out, params[p.metaOpen+1:]...), true
	}
	return nil, false
}

// appendEntries appends the carrier's entries as JSON object members,
// comma-separated.
func appendEntries(out []byte, c *metaCarrier) []byte {
	for i := range c.keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = jsonfast.AppendString(out, c.keys[i])
		out = append(out, ':')
		out = jsonfast.AppendString(out, c.vals[i])
	}
	return out
}

// addMeta returns params with the carrier's entries set in its _meta,
// which it creates when absent; params must be a JSON object, or empty.
// Other _meta entries and members are kept. It decodes and encodes the
// whole params, for what spliceMeta cannot do.
func addMeta(params json.RawMessage, c *metaCarrier) (json.RawMessage, error) {
	top := map[string]json.RawMessage{}
	if trimmed := bytes.TrimSpace(params); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if err := json.Unmarshal(trimmed, &top); err != nil {
			return nil, err
		}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := top["_meta"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, err
		}
	}
	for i, k := range c.keys {
		b, err := json.Marshal(c.vals[i])
		if err != nil {
			return nil, err
		}
		meta[k] = b
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	top["_meta"] = b
	return json.Marshal(top)
}

// bytesContains reports whether b holds s.
func bytesContains(b []byte, s string) bool { return bytes.Contains(b, []byte(s)) }
