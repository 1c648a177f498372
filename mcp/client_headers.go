package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// paramHeader is one x-mcp-header annotation of a tool's inputSchema: the
// argument at Path (a chain of properties keys) is mirrored into the
// header Mcp-Param-{Name} (revision 2026-07-28, Streamable HTTP "Custom
// Headers from Tool Parameters").
type paramHeader struct {
	Name string
	Path []string
}

// ErrInvalidHeaderAnnotation is wrapped by the error that explains why a
// tool's x-mcp-header annotations make it unusable over Streamable HTTP.
var ErrInvalidHeaderAnnotation = errors.New("mcp: invalid x-mcp-header annotation")

// headerKeyword is the schema keyword that designates a parameter.
const headerKeyword = "x-mcp-header"

// maxSafeInteger is the largest integer a JavaScript number holds exactly
// (2^53-1), the range the revision allows in a mirrored integer.
const maxSafeInteger = 1<<53 - 1

// toolHeaderParams returns the x-mcp-header annotations of an input
// schema, checking every constraint of the revision: each value is a
// non-empty HTTP token, unique without regard to case, on a property of
// type string, integer or boolean that is reached from the root through
// properties keys only. Any annotation elsewhere (under items, $defs,
// a composition or conditional keyword, $ref) invalidates the tool.
func toolHeaderParams(schema json.RawMessage) ([]paramHeader, error) {
	if !bytes.Contains(schema, []byte(headerKeyword)) {
		return nil, nil // the common case costs one scan
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("%w: inputSchema: %v", ErrInvalidHeaderAnnotation, err)
	}
	var out []paramHeader
	seen := map[string]bool{}
	var walk func(node any, path []string, reachable, isProperty bool) error
	walk = func(node any, path []string, reachable, isProperty bool) error {
		switch n := node.(type) {
		case []any:
			for _, e := range n {
				if err := walk(e, path, false, false); err != nil {
					return err
				}
			}
		case map[string]any:
			if v, ok := n[headerKeyword]; ok {
				if err := checkAnnotation(v, n, path, reachable && isProperty, seen); err != nil {
					return err
				}
				out = append(out, paramHeader{Name: v.(string), Path: append([]string(nil), path...)})
			}
			for k, child := range n {
				if k == headerKeyword {
					continue
				}
				if k == "properties" {
					if props, ok := child.(map[string]any); ok {
						for name, ps := range props {
							p := append(path[:len(path):len(path)], name)
							if err := walk(ps, p, reachable, true); err != nil {
								return err
							}
						}
						continue
					}
				}
				if err := walk(child, path, false, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true, false); err != nil {
		return nil, err
	}
	return out, nil
}

// checkAnnotation checks one x-mcp-header value v found in schema node n.
func checkAnnotation(v any, n map[string]any, path []string, reachable bool, seen map[string]bool) error {
	where := strings.Join(path, ".")
	if where == "" {
		where = "(root)"
	}
	name, ok := v.(string)
	if !ok {
		return fmt.Errorf("%w: at %s: the value is not a string", ErrInvalidHeaderAnnotation, where)
	}
	if !reachable {
		return fmt.Errorf("%w: %q at %s: not reachable from the root through properties only", ErrInvalidHeaderAnnotation, name, where)
	}
	if name == "" {
		return fmt.Errorf("%w: at %s: empty", ErrInvalidHeaderAnnotation, where)
	}
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return fmt.Errorf("%w: %q at %s: not an HTTP field-name token", ErrInvalidHeaderAnnotation, name, where)
		}
	}
	if t, _ := n["type"].(string); t != "string" && t != "integer" && t != "boolean" {
		return fmt.Errorf("%w: %q at %s: the property's type must be string, integer or boolean", ErrInvalidHeaderAnnotation, name, where)
	}
	key := strings.ToLower(name)
	if seen[key] {
		return fmt.Errorf("%w: %q at %s: names another parameter's header too (case-insensitively)", ErrInvalidHeaderAnnotation, name, where)
	}
	seen[key] = true
	return nil
}

// isTokenChar reports whether b is an RFC 9110 tchar.
func isTokenChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// EncodeHeaderValue returns s as the value of an Mcp-Name or
// Mcp-Param-* header (revision 2026-07-28, Streamable HTTP "Value
// Encoding"): as it is when it is printable ASCII without leading or
// trailing spaces, else, and when it looks like the sentinel itself, in the
// =?base64?…?= form. Tabs and other control characters are always
// encoded. A client transport that mirrors request metadata into headers
// calls it; it is safe for concurrent use.
func EncodeHeaderValue(s string) string {
	plain := s == "" || (s[0] != ' ' && s[len(s)-1] != ' ')
	for i := 0; plain && i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			plain = false
		}
	}
	if plain && !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")) {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

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
		if v, ok := argHeaderValue(args, ph.Path); ok {
			h["Mcp-Param-"+ph.Name] = v
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
		hs, err := toolHeaderParams(t.InputSchema)
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
