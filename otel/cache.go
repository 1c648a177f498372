package otel

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/mcpstack/mcpstack/mcp"
)

// target is what every message of one method and tool or prompt name
// shares, computed once: the span name, the attributes of low
// cardinality, and the
// histogram's record options per protocol version and outcome. A target
// is immutable once made, except for its variants, which only grow.
type target struct {
	method, name string
	// spanName is "{mcp.method.name} {target}", the target being the tool
	// or prompt name when the method has one.
	spanName string
	// attrs are mcp.method.name, gen_ai.operation.name, gen_ai.tool.name
	// or gen_ai.prompt.name, and network.transport: the attributes of the
	// span and of the histogram alike.
	attrs []attribute.KeyValue
	// cached is set once the target is in its side's cache; variants are
	// kept only for cached targets.
	cached atomic.Bool
	// variants are the record options made so far, read without a lock;
	// mu serializes their growth.
	mu       sync.Mutex
	variants atomic.Pointer[[]variant]
}

// variant is the histogram's record options for one protocol version and
// outcome of a target.
type variant struct {
	version string
	kind    outcomeKind
	code    int64
	opts    []metric.RecordOption
}

// target returns the target of method and name (the tool or prompt name,
// nil when the method has none): the cached one, or a new one.
func (s *side) target(method string, name []byte) *target {
	if t := s.cache.lookup(method, name); t != nil {
		return t
	}
	return s.newTarget(method, string(name))
}

func (s *side) newTarget(method, name string) *target {
	t := &target{method: method, name: name, spanName: method}
	attrs := make([]attribute.KeyValue, 0, 3+len(s.in.static))
	attrs = append(attrs, semconv.McpMethodNameKey.String(method))
	switch method {
	case mcp.MethodToolsCall:
		attrs = append(attrs, semconv.GenAIOperationNameKey.String("execute_tool"))
		if name != "" {
			attrs = append(attrs, semconv.GenAIToolNameKey.String(name))
			t.spanName = method + " " + name
		}
	case mcp.MethodPromptsGet:
		if name != "" {
			attrs = append(attrs, semconv.GenAIPromptNameKey.String(name))
			t.spanName = method + " " + name
		}
	}
	t.attrs = append(attrs, s.in.static...)
	return t
}

// recordOptions returns the histogram's record options for a message of
// t that ended with o in a session of this protocol version. Only
// attributes of low cardinality go to the histogram: not the session,
// the request id or the resource URI.
func (s *side) recordOptions(t *target, version string, o outcome) []metric.RecordOption {
	if vs := t.variants.Load(); vs != nil {
		for i := range *vs {
			v := &(*vs)[i]
			if v.version == version && v.kind == o.kind && v.code == o.code {
				return v.opts
			}
		}
	}
	attrs := make([]attribute.KeyValue, 0, len(t.attrs)+3)
	attrs = append(attrs, t.attrs...)
	if version != "" {
		attrs = append(attrs, semconv.McpProtocolVersionKey.String(version))
	}
	attrs = append(attrs, o.attributes()...)
	opts := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	if t.cached.Load() {
		t.mu.Lock()
		defer t.mu.Unlock()
		var grown []variant
		if vs := t.variants.Load(); vs != nil {
			for i := range *vs {
				if v := &(*vs)[i]; v.version == version && v.kind == o.kind && v.code == o.code {
					return v.opts // made meanwhile by another message
				}
			}
			grown = append(grown, *vs...)
		}
		if s.cache.reserve() {
			grown = append(grown, variant{version: version, kind: o.kind, code: o.code, opts: opts})
			t.variants.Store(&grown)
		}
	}
	return opts
}

// targetCache holds a side's targets by method, then tool or prompt name.
// Lookups take no lock: the maps are replaced, never changed, under mu.
type targetCache struct {
	mu      sync.Mutex
	targets atomic.Pointer[map[string]map[string]*target]
	// left is how many more targets and variants may be kept.
	left atomic.Int64
}

// lookup returns the cached target, or nil. It does not allocate.
func (c *targetCache) lookup(method string, name []byte) *target {
	if m := c.targets.Load(); m != nil {
		return (*m)[method][string(name)]
	}
	return nil
}

// reserve takes one place of the budget, if there is one left.
func (c *targetCache) reserve() bool {
	if c.left.Add(-1) >= 0 {
		return true
	}
	c.left.Add(1)
	return false
}

// keep caches t unless it or another target of the same method and name
// already is, or the budget is spent.
func (c *targetCache) keep(t *target) {
	if t.cached.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.targets.Load()
	if old != nil && (*old)[t.method][t.name] != nil {
		return
	}
	if !c.reserve() {
		return
	}
	m := make(map[string]map[string]*target, 1)
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	names := make(map[string]*target, len(m[t.method])+1)
	for k, v := range m[t.method] {
		names[k] = v
	}
	names[t.name] = t
	m[t.method] = names
	t.cached.Store(true)
	c.targets.Store(&m)
}
