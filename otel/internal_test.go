package otel

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// newTestInstrumentation is an instrumentation with W3C trace context and
// baggage, spans kept in memory.
func newTestInstrumentation(t testing.TB, maxSets int) (*instrumentation, *tracetest.InMemoryExporter) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	t.Cleanup(func() { tp.Shutdown(context.Background()); mp.Shutdown(context.Background()) })
	in, err := newInstrumentation(Options{TracerProvider: tp, MeterProvider: mp, MaxCachedSets: maxSets,
		Propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})})
	if err != nil {
		t.Fatal(err)
	}
	return in, spans
}

// peekSeeds are params of every shape peek meets.
var peekSeeds = []string{
	`{"name":"echo","arguments":{"text":"hi"},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","progressToken":1}}`,
	`{"name":"e\u0063ho","_meta":{"tracestate":"a=b","baggage":"user=ada"}}`,
	`{"Name":"admin","name":"echo"}`,
	`{"name":"a","name":"b","_meta":{"traceparent":"x"},"_meta":{"baggage":"k=v"}}`,
	`{"uri":"file:///a","_meta":null}`,
	` { "name" : 7 , "_meta" : { "traceparent" : 1 , "traceparent" : "t" } } `,
	`{"n\u0061me":"escaped-key"}`,
	`{}`, `[]`, `null`, `"s"`, ``,
	`{"name":"\xff"}`,
	`{"_meta":{"traceparent":"1","traceparent":"2","traceparent":"3","traceparent":"4","traceparent":"5","traceparent":"6","traceparent":"7","traceparent":"8","traceparent":"9"}}`,
}

// FuzzPeek checks that peek's scan reads what encoding/json decodes: the
// same tool or prompt name, resource URI and trace context, for any
// valid params, under every method that reads one of them.
func FuzzPeek(f *testing.F) {
	for _, s := range peekSeeds {
		f.Add(s)
	}
	in := &instrumentation{fields: metaFields(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))}
	f.Fuzz(func(t *testing.T, params string) {
		for _, method := range []string{mcp.MethodToolsCall, mcp.MethodResourcesRead} {
			fast := in.peek(method, []byte(params)) // must not panic, valid or not
			if !json.Valid([]byte(params)) {
				continue
			}
			slow := in.peekSlow(method, []byte(params))
			if string(fast.name) != string(slow.name) || fast.uri != slow.uri {
				t.Errorf("%s %s: peek read name %q uri %q, encoding/json %q %q", method, params, fast.name, fast.uri, slow.name, slow.uri)
			}
			var a, b metaCarrier
			in.fillCarrier(&a, []byte(params), &fast)
			in.fillCarrier(&b, []byte(params), &slow)
			if got, want := carrierMap(&a), carrierMap(&b); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: peek read trace context %v, encoding/json %v", method, params, got, want)
			}
		}
	})
}

func carrierMap(c *metaCarrier) map[string]string {
	m := map[string]string{}
	for _, k := range c.Keys() {
		m[k] = c.Get(k)
	}
	return m
}

// FuzzSpliceMeta checks that adding trace context to params by splicing
// text gives what decoding and encoding them does: the same members, the
// same _meta entries, the trace context added.
func FuzzSpliceMeta(f *testing.F) {
	for _, s := range peekSeeds {
		f.Add(s, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "k=<v>")
	}
	f.Add(`{"_meta":{}}`, "p", "")
	f.Add(`{"a":1,"_meta":{"progressToken":"t"}}`, "p\u2028", "\xff")
	in := &instrumentation{fields: metaFields(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))}
	f.Fuzz(func(t *testing.T, params, traceparent, bag string) {
		var c metaCarrier
		c.Set("traceparent", traceparent)
		if bag != "" {
			c.Set("baggage", bag)
		}
		p := in.peek(mcp.MethodToolsCall, []byte(params))
		spliced, ok := in.spliceMeta([]byte(params), &p, &c)
		if !ok {
			return
		}
		if !json.Valid([]byte(params)) && strings.TrimSpace(params) != "" {
			t.Fatalf("spliced invalid params %q", params)
		}
		want, err := addMeta(json.RawMessage(params), &c)
		if err != nil {
			t.Fatalf("splice made %s of %q, which addMeta refuses: %v", spliced, params, err)
		}
		var got, wantV any
		if err := json.Unmarshal(spliced, &got); err != nil {
			t.Fatalf("splice made invalid JSON %q of %q: %v", spliced, params, err)
		}
		json.Unmarshal(want, &wantV)
		if !reflect.DeepEqual(got, wantV) {
			t.Errorf("params %q: spliced %s, want %s", params, spliced, want)
		}
	})
}

// TestCacheBounded checks that the cache of targets and attribute sets
// stops at MaxCachedSets, keeps only messages served without a protocol
// error (a made-up tool does not enter it), and that spans are named and
// attributed alike whether their target was cached or not.
func TestCacheBounded(t *testing.T) {
	for _, max := range []int{-1, 1, 5, 0} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			in, spans := newTestInstrumentation(t, max)
			h := in.receiving(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
				var p struct{ Name string }
				json.Unmarshal(params, &p)
				if p.Name[0] == 'x' {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool"}
				}
				return &mcp.CallToolResult{}, nil
			})
			for round := range 3 {
				for i := range 20 {
					for _, prefix := range []string{"tool", "x"} {
						name := fmt.Sprintf("%s%d", prefix, i)
						h(context.Background(), mcp.MethodToolsCall, json.RawMessage(`{"name":"`+name+`"}`))
						got := spans.GetSpans()[len(spans.GetSpans())-1]
						if got.Name != "tools/call "+name {
							t.Fatalf("round %d: span %q, want tools/call %s", round, got.Name, name)
						}
						if v, ok := attrOf(got.Attributes, "gen_ai.tool.name"); !ok || v != name {
							t.Fatalf("round %d: gen_ai.tool.name %q, want %s", round, v, name)
						}
					}
				}
			}
			c := &in.server.cache
			kept := 0
			if m := c.targets.Load(); m != nil {
				for _, names := range *m {
					for name, tg := range names {
						if name[0] == 'x' {
							t.Errorf("made-up tool %q cached", name)
						}
						kept++
						if vs := tg.variants.Load(); vs != nil {
							kept += len(*vs)
						}
					}
				}
			}
			limit := max
			if max == 0 {
				limit = DefaultMaxCachedSets
			}
			if max < 0 {
				limit = 0
			}
			if kept > limit || kept+int(c.left.Load()) != limit {
				t.Errorf("MaxCachedSets %d: %d targets and variants kept, %d left", max, kept, c.left.Load())
			}
			if max == 0 && kept != 40 {
				t.Errorf("default bound: %d kept, want 20 targets and their 20 variants", kept)
			}
		})
	}
}

func attrOf(attrs []attribute.KeyValue, key string) (string, bool) {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value.AsString(), true
		}
	}
	return "", false
}

// TestCacheConcurrent runs messages of a few tools, with a few versions
// and outcomes, from many goroutines at once (run it with -race): the
// cache fills without duplicates and within its bound.
func TestCacheConcurrent(t *testing.T) {
	in, _ := newTestInstrumentation(t, 30)
	h := in.receiving(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if len(params) > 20 {
			return &mcp.CallToolResult{IsError: new(bool)}, nil
		}
		return &mcp.CallToolResult{}, nil
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				name := fmt.Sprintf("t%d", (i+g)%12)
				params := `{"name":"` + name + `"}`
				if i%3 == 0 {
					params = `{"name":"` + name + `","arguments":{}}`
				}
				h(context.Background(), mcp.MethodToolsCall, json.RawMessage(params))
			}
		}()
	}
	wg.Wait()
	c := &in.server.cache
	kept := 0
	for _, names := range *c.targets.Load() {
		for _, tg := range names {
			kept++
			if vs := tg.variants.Load(); vs != nil {
				kept += len(*vs)
				seen := map[variantKeyForTest]bool{}
				for _, v := range *vs {
					k := variantKeyForTest{v.version, v.kind, v.code}
					if seen[k] {
						t.Errorf("variant %+v kept twice", k)
					}
					seen[k] = true
				}
			}
		}
	}
	if kept+int(c.left.Load()) != 30 || kept > 30 {
		t.Errorf("%d kept, %d left, want 30 in all", kept, c.left.Load())
	}
}

type variantKeyForTest struct {
	version string
	kind    outcomeKind
	code    int64
}
