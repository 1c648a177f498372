package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
)

// maxSafeInteger is the largest integer a JavaScript number holds exactly
// (2^53-1), the range the revision allows in a mirrored integer.
const maxSafeInteger = 1<<53 - 1

// argHeaderValue converts the argument at path to its header form; ok is
// false when there is none (absent or null: the header is omitted) or it
// is not a string, an integer in the safe range, or a boolean.
func argHeaderValue(args map[string]any, path []string) (string, bool) {
	var v any = args
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		if v, ok = m[k]; !ok {
			return "", false
		}
	}
	switch t := v.(type) {
	case string:
		return EncodeHeaderValue(t), true
	case bool:
		if t {
			return "true", true
		}
		return "false", true
	case json.Number:
		if i, err := t.Int64(); err == nil && i >= -maxSafeInteger && i <= maxSafeInteger {
			return fmt.Sprint(i), true
		}
		if f, err := t.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) <= maxSafeInteger {
			return fmt.Sprint(int64(f)), true
		}
	}
	return "", false
}

// paramHeadersKey is the context key of the Mcp-Param-* headers of one
// tools/call, which the Streamable HTTP client adds to its POST.
type paramHeadersKey struct{}

// ParamHeaders returns the Mcp-Param-* headers (full names, encoded
// values) that a modern session computed from the x-mcp-header
// annotations of the tool a tools/call names, when ctx is the context the
// session passed to its stream's Write for that request; nil otherwise.
// A client transport that mirrors request metadata into headers (the
// Streamable HTTP client) adds them to the request.
func ParamHeaders(ctx context.Context) map[string]string {
	h, _ := ctx.Value(paramHeadersKey{}).(map[string]string)
	return h
}

// withParamHeaders returns ctx carrying the Mcp-Param-* headers of the
// tools/call whose params are raw, from the annotations ListTools found.
func (cs *ClientSession) withParamHeaders(ctx context.Context, raw json.RawMessage) context.Context {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return ctx
	}
	cs.mu.Lock()
	hs := cs.headerParams[p.Name]
	cs.mu.Unlock()
	if len(hs) == 0 || len(p.Arguments) == 0 {
		return ctx
	}
	dec := json.NewDecoder(bytes.NewReader(p.Arguments))
	dec.UseNumber()
	var args map[string]any
	if dec.Decode(&args) != nil {
		return ctx
	}
	h := make(map[string]string, len(hs))
	for _, ph := range hs {
		if v, ok := argHeaderValue(args, ph.path); ok {
			h[ph.key] = v
		}
	}
	if len(h) == 0 {
		return ctx
	}
	return context.WithValue(ctx, paramHeadersKey{}, h)
}

// modernHTTP reports whether the session is modern over Streamable HTTP.
func (cs *ClientSession) modernHTTP() bool {
	if b, ok := cs.stream.(httpBinding); !ok || !b.MirrorsRequestHeaders() {
		return false
	}
	return cs.modern()
}

// filterHeaderTools drops from res the tools whose annotations are invalid
// (logging a warning for each, as the revision asks) and records the
// annotations of the others. It is a no-op unless the session is modern
// over Streamable HTTP.
func (cs *ClientSession) filterHeaderTools(res *ListToolsResult) {
	if !cs.modernHTTP() {
		return
	}
	kept := res.Tools[:0]
	for _, t := range res.Tools {
		hs, err := toolParamHeaders(t.InputSchema)
		cs.mu.Lock()
		if cs.headerParams == nil {
			cs.headerParams = make(map[string][]paramHeader)
		}
		if err != nil {
			delete(cs.headerParams, t.Name)
		} else if hs != nil {
			cs.headerParams[t.Name] = hs
		} else {
			delete(cs.headerParams, t.Name)
		}
		cs.mu.Unlock()
		if err != nil {
			cs.client.log.Warn("mcp: tool rejected", "tool", t.Name, "reason", err)
			continue
		}
		kept = append(kept, t)
	}
	clear(res.Tools[len(kept):])
	res.Tools = kept
}
