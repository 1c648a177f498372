package otel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	mcpotel "github.com/mcpstack/mcpstack/otel"
)

// telemetry is one test's OpenTelemetry SDK: spans kept in memory,
// metrics read on demand, W3C trace context and baggage propagated.
type telemetry struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
	prop   propagation.TextMapPropagator
}

func newTelemetry(t *testing.T) *telemetry {
	tel := &telemetry{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader(),
		prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(tel.spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() { tel.tp.Shutdown(context.Background()); tel.mp.Shutdown(context.Background()) })
	return tel
}

func (tel *telemetry) middleware(t *testing.T, transport string) *mcpotel.Middleware {
	t.Helper()
	mw, err := mcpotel.New(mcpotel.Options{TracerProvider: tel.tp, MeterProvider: tel.mp, Propagator: tel.prop, NetworkTransport: transport})
	if err != nil {
		t.Fatal(err)
	}
	return mw
}

// span returns the one ended span with this name and kind.
func (tel *telemetry) span(t *testing.T, name string, kind trace.SpanKind) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range tel.spans.GetSpans() {
		if s.Name == name && s.SpanKind == kind {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		var names []string
		for _, s := range tel.spans.GetSpans() {
			names = append(names, s.Name+"/"+s.SpanKind.String())
		}
		t.Fatalf("%d spans %q of kind %s; spans: %q", len(found), name, kind, names)
	}
	return found[0]
}

func attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

func wantAttr(t *testing.T, s tracetest.SpanStub, key, want string) {
	t.Helper()
	v, ok := attr(s, key)
	if !ok || v.String() != want {
		t.Errorf("span %q: %s = %q (set %v), want %q", s.Name, key, v.String(), ok, want)
	}
}

// testServer has the tools the tests call: echo, fail (a tool error),
// sample (asks the client to sample) and whoami (returns the baggage
// member "user" it received).
func testServer(t *testing.T, mw *mcpotel.Middleware) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "traced", Version: "1"}, &mcp.ServerOptions{
		ReceivingMiddleware: []mcp.Middleware{mw.Receiving},
		SendingMiddleware:   []mcp.Middleware{mw.Sending},
	})
	obj := json.RawMessage(`{"type":"object"}`)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	add := func(name string, h mcp.ToolHandler) {
		if err := s.AddTool(&mcp.Tool{Name: name, InputSchema: obj}, h); err != nil {
			t.Fatal(err)
		}
	}
	add("echo", func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return text(string(p.Arguments)), nil
	})
	add("fail", func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		res := text("broken")
		isError := true
		res.IsError = &isError
		return res, nil
	})
	add("whoami", func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return text(baggage.FromContext(ctx).Member("user").Value()), nil
	})
	add("sample", func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		res, err := ss.CreateMessage(ctx, &mcp.CreateMessageRequestParams{
			Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: "?"}}}}, MaxTokens: 5,
		})
		if err != nil {
			return nil, err
		}
		return text(res.Model), nil
	})
	return s
}

func testClient(mw *mcpotel.Middleware) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "tracer", Version: "1"}, &mcp.ClientOptions{
		// TestTracing checks the attributes of a 2025-11-25 session
		// (mcp.session.id, the negotiated version, server-to-client
		// requests); against the dual-era server a default client would
		// go 2026-07-28.
		EraPolicy:           mcp.EraPolicyLegacy,
		ReceivingMiddleware: []mcp.Middleware{mw.Receiving},
		SendingMiddleware:   []mcp.Middleware{mw.Sending},
		CreateMessageHandler: func(ctx context.Context, cs *mcp.ClientSession, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "!"}}}, nil
		},
	})
}

// httpServerSpans stands in for an HTTP server instrumentation such as
// otelhttp's: a SERVER span per request, the child of the trace context
// of the request's headers.
func httpServerSpans(tel *telemetry, next http.Handler) http.Handler {
	tracer := tel.tp.Tracer("http-server")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := tel.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tracer.Start(ctx, "HTTP "+r.Method, trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// headerInjector stands in for an HTTP client instrumentation: it puts
// the request context's trace context in the headers.
type headerInjector struct{ prop propagation.TextMapPropagator }

func (h headerInjector) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	h.prop.Inject(r.Context(), propagation.HeaderCarrier(r.Header))
	return http.DefaultTransport.RoundTrip(r)
}

// TestTracing runs a traced client against a traced server, in one
// process over the in-memory transport (as over stdio) and over
// Streamable HTTP, and checks the spans, their parents, the propagated
// baggage and the duration histograms.
func TestTracing(t *testing.T) {
	for _, transport := range []string{"pipe", "tcp"} {
		t.Run(transport, func(t *testing.T) {
			tel := newTelemetry(t)
			mw := tel.middleware(t, transport)
			srv := testServer(t, mw)
			ctx := context.Background()
			var ct mcp.Transport
			if transport == "pipe" {
				c, s := mcp.InMemoryTransports()
				if _, err := srv.Connect(ctx, s); err != nil {
					t.Fatal(err)
				}
				ct = c
			} else {
				h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return srv }, nil)
				ts := httptest.NewServer(httpServerSpans(tel, h))
				t.Cleanup(ts.Close)
				ct = &mcphttp.ClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: headerInjector{tel.prop}}}
			}
			cs, err := testClient(mw).Connect(ctx, ct)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()

			member, _ := baggage.NewMember("user", "ada")
			bag, _ := baggage.New(member)
			callerCtx, caller := tel.tp.Tracer("test").Start(baggage.ContextWithBaggage(ctx, bag), "caller")
			call := func(name string) *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(callerCtx, &mcp.CallToolRequestParams{Name: name, Arguments: json.RawMessage(`{}`)})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return res
			}
			if got := call("whoami").Content[0].(*mcp.TextContent).Text; got != "ada" {
				t.Errorf("baggage user at the server = %q, want ada", got)
			}
			call("echo")
			if res := call("fail"); res.IsError == nil || !*res.IsError {
				t.Fatalf("fail: %+v", res)
			}
			call("sample")
			if _, err := cs.CallTool(callerCtx, &mcp.CallToolRequestParams{Name: "nope", Arguments: json.RawMessage(`{}`)}); err == nil {
				t.Fatal("an unknown tool was called")
			}
			caller.End()

			// The client's span is the caller's child; the server's span
			// descends from the client's, directly or through the HTTP
			// server span, in the same trace.
			out := tel.span(t, "tools/call echo", trace.SpanKindClient)
			in := tel.span(t, "tools/call echo", trace.SpanKindServer)
			if out.Parent.SpanID() != caller.SpanContext().SpanID() {
				t.Errorf("client span's parent %s, want the caller %s", out.Parent.SpanID(), caller.SpanContext().SpanID())
			}
			if in.SpanContext.TraceID() != caller.SpanContext().TraceID() {
				t.Errorf("server span in trace %s, want the caller's %s", in.SpanContext.TraceID(), caller.SpanContext().TraceID())
			}
			if transport == "pipe" {
				if in.Parent.SpanID() != out.SpanContext.SpanID() {
					t.Errorf("server span's parent %s, want the client span %s", in.Parent.SpanID(), out.SpanContext.SpanID())
				}
			} else {
				// The HTTP server span is the parent; the client span
				// the message carried is linked.
				var httpSpan *tracetest.SpanStub
				for _, s := range tel.spans.GetSpans() {
					if s.SpanContext.SpanID() == in.Parent.SpanID() {
						httpSpan = &s
					}
				}
				if httpSpan == nil || httpSpan.Name != "HTTP POST" || httpSpan.Parent.SpanID() != out.SpanContext.SpanID() {
					t.Errorf("server span's parent %+v, want the HTTP POST span under the client span", httpSpan)
				}
				if len(in.Links) != 0 && in.Links[0].SpanContext.SpanID() != out.SpanContext.SpanID() {
					t.Errorf("server span links %+v, want none or the client span", in.Links)
				}
				if v, ok := attr(in, "mcp.session.id"); !ok || v.AsString() == "" {
					t.Errorf("no mcp.session.id on the HTTP server span")
				}
			}
			for _, s := range []tracetest.SpanStub{out, in} {
				wantAttr(t, s, "mcp.method.name", "tools/call")
				wantAttr(t, s, "gen_ai.tool.name", "echo")
				wantAttr(t, s, "gen_ai.operation.name", "execute_tool")
				wantAttr(t, s, "mcp.protocol.version", mcp.LatestProtocolVersion)
				wantAttr(t, s, "network.transport", transport)
				if s.Status.Code == codes.Error {
					t.Errorf("span %q %s has status Error", s.Name, s.SpanKind)
				}
			}
			if _, ok := attr(in, "jsonrpc.request.id"); !ok {
				t.Errorf("no jsonrpc.request.id on the server span")
			}

			// A tool's failure and a protocol error.
			for _, kind := range []trace.SpanKind{trace.SpanKindClient, trace.SpanKindServer} {
				fail := tel.span(t, "tools/call fail", kind)
				wantAttr(t, fail, "error.type", "tool_error")
				if fail.Status.Code != codes.Error {
					t.Errorf("tools/call fail %s: status %v, want Error", kind, fail.Status)
				}
				// An unknown tool is an error of the caller's: the sender
				// counts it, the receiver records the code only (the
				// conventions' mcp.server.status.attributes).
				nope := tel.span(t, "tools/call nope", kind)
				wantAttr(t, nope, "rpc.response.status_code", "-32602")
				if kind == trace.SpanKindClient {
					wantAttr(t, nope, "error.type", "-32602")
					if nope.Status.Code != codes.Error {
						t.Errorf("tools/call nope %s: status %v, want Error", kind, nope.Status)
					}
				} else {
					if v, ok := attr(nope, "error.type"); ok {
						t.Errorf("tools/call nope %s: error.type %q, want none", kind, v.AsString())
					}
					if nope.Status.Code == codes.Error {
						t.Errorf("tools/call nope %s: status Error, want unset", kind)
					}
				}
			}

			// The server's request to the client is traced both ways, under
			// the tool call that made it.
			sampleIn := tel.span(t, "tools/call sample", trace.SpanKindServer)
			askOut := tel.span(t, "sampling/createMessage", trace.SpanKindClient)
			askIn := tel.span(t, "sampling/createMessage", trace.SpanKindServer)
			if askOut.Parent.SpanID() != sampleIn.SpanContext.SpanID() {
				t.Errorf("server's sampling span's parent %s, want the tool call %s", askOut.Parent.SpanID(), sampleIn.SpanContext.SpanID())
			}
			if askIn.SpanContext.TraceID() != askOut.SpanContext.TraceID() {
				t.Errorf("client's sampling span in another trace")
			}

			// The histograms: the server's and the client's.
			var rm metricdata.ResourceMetrics
			if err := tel.reader.Collect(ctx, &rm); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					h, ok := m.Data.(metricdata.Histogram[float64])
					if !ok {
						continue
					}
					for _, dp := range h.DataPoints {
						method, _ := dp.Attributes.Value("mcp.method.name")
						tool, _ := dp.Attributes.Value("gen_ai.tool.name")
						if method.AsString() == "tools/call" && tool.AsString() == "echo" && dp.Count == 1 {
							seen[m.Name] = true
						}
						if _, ok := dp.Attributes.Value("mcp.session.id"); ok {
							t.Errorf("%s carries mcp.session.id, an attribute of high cardinality", m.Name)
						}
					}
				}
			}
			for _, name := range []string{"mcp.server.operation.duration", "mcp.client.operation.duration"} {
				if !seen[name] {
					t.Errorf("no %s data point for tools/call echo", name)
				}
			}
		})
	}
}

// TestSendingKeepsMeta checks that trace context is added to a message's
// own _meta without losing its entries (a progress token here), and that
// params without _meta get one.
func TestSendingKeepsMeta(t *testing.T) {
	tel := newTelemetry(t)
	mw := tel.middleware(t, "")
	var got json.RawMessage
	next := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		got = params
		return json.RawMessage(`{}`), nil
	}
	ctx, span := tel.tp.Tracer("test").Start(context.Background(), "caller")
	defer span.End()
	for _, tc := range []struct{ params, keep string }{
		{`{"name":"echo","_meta":{"progressToken":7}}`, `"progressToken":7`},
		{`{"name":"echo"}`, `"name":"echo"`},
		{``, ``},
		{`null`, ``},
	} {
		if _, err := mw.Sending(next)(ctx, mcp.MethodToolsCall, json.RawMessage(tc.params)); err != nil {
			t.Fatal(err)
		}
		var v struct {
			Meta map[string]any `json:"_meta"`
		}
		if err := json.Unmarshal(got, &v); err != nil || v.Meta["traceparent"] == nil {
			t.Errorf("params %s sent as %s: no traceparent in _meta (%v)", tc.params, got, err)
		}
		if !strings.Contains(string(got), tc.keep) {
			t.Errorf("params %s sent as %s: lost %s", tc.params, got, tc.keep)
		}
	}
}

// TestPeekIsCaseExact checks that a member named "Name" is not taken for
// the tool's name: the span names what the server dispatches.
func TestPeekIsCaseExact(t *testing.T) {
	tel := newTelemetry(t)
	mw := tel.middleware(t, "")
	next := func(ctx context.Context, method string, params json.RawMessage) (any, error) { return nil, nil }
	mw.Receiving(next)(context.Background(), mcp.MethodToolsCall, json.RawMessage(`{"Name":"admin","name":"echo"}`))
	tel.span(t, "tools/call echo", trace.SpanKindServer)
}

// discard is a span exporter that drops every span.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkReceiving is the receiving middleware around a tools/call
// handler, as a production server runs it: every request sampled, spans
// to a batch processor whose exporter discards them, histograms
// aggregated.
func BenchmarkReceiving(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(discard{}))
	defer tp.Shutdown(context.Background())
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	mw, err := mcpotel.New(mcpotel.Options{TracerProvider: tp, MeterProvider: mp, Propagator: propagation.TraceContext{}, NetworkTransport: "tcp"})
	if err != nil {
		b.Fatal(err)
	}
	res := &mcp.CallToolResult{}
	h := mw.Receiving(func(ctx context.Context, method string, params json.RawMessage) (any, error) { return res, nil })
	params := json.RawMessage(`{"name":"echo","arguments":{"text":"hello"},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h(ctx, mcp.MethodToolsCall, params); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRefusedRequestsAreNotErrors checks the conventions' classification
// of JSON-RPC errors: a receiver records every code in
// rpc.response.status_code but counts as its own failure (error.type,
// status Error) only those other than parse error, invalid request,
// method not found, invalid params and resource not found; a sender
// counts every code. The histograms carry the same attributes.
func TestRefusedRequestsAreNotErrors(t *testing.T) {
	for _, tc := range []struct {
		code    int64
		refused bool // by the receiver
	}{
		{-32700, true}, {-32600, true}, {-32601, true}, {-32602, true}, {-32002, true},
		{-32603, false}, {-32000, false}, {-32042, false}, {1, false},
	} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			tel := newTelemetry(t)
			mw := tel.middleware(t, "")
			next := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
				return nil, fmt.Errorf("wrapped: %w", &jsonrpc.Error{Code: tc.code, Message: "refused here"})
			}
			ctx := context.Background()
			mw.Receiving(next)(ctx, mcp.MethodResourcesRead, json.RawMessage(`{"uri":"file:///x"}`))
			mw.Sending(next)(ctx, mcp.MethodResourcesRead, json.RawMessage(`{"uri":"file:///x"}`))
			code := fmt.Sprint(tc.code)
			for _, kind := range []trace.SpanKind{trace.SpanKindServer, trace.SpanKindClient} {
				s := tel.span(t, "resources/read", kind)
				wantAttr(t, s, "rpc.response.status_code", code)
				wantAttr(t, s, "mcp.resource.uri", "file:///x")
				isError := kind == trace.SpanKindClient || !tc.refused
				if v, ok := attr(s, "error.type"); ok != isError || (ok && v.AsString() != code) {
					t.Errorf("%s: error.type %q (set %v), want set %v", kind, v.AsString(), ok, isError)
				}
				if (s.Status.Code == codes.Error) != isError {
					t.Errorf("%s: status %v, want Error %v", kind, s.Status, isError)
				} else if isError && s.Status.Description != "refused here" {
					t.Errorf("%s: status description %q, want the JSON-RPC message", kind, s.Status.Description)
				}
			}
			var rm metricdata.ResourceMetrics
			if err := tel.reader.Collect(ctx, &rm); err != nil {
				t.Fatal(err)
			}
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
						got, _ := dp.Attributes.Value("rpc.response.status_code")
						_, hasType := dp.Attributes.Value("error.type")
						if got.AsString() != code || hasType != (m.Name == "mcp.client.operation.duration" || !tc.refused) {
							t.Errorf("%s: status code %q, error.type set %v", m.Name, got.AsString(), hasType)
						}
						if _, ok := dp.Attributes.Value("mcp.resource.uri"); ok {
							t.Errorf("%s carries mcp.resource.uri, which the conventions make opt-in", m.Name)
						}
					}
				}
			}
		})
	}
}

// fieldPropagator carries a span context in one custom field, "x-trace",
// as a vendor's propagator would: the keys in _meta are the propagator's
// fields, not only W3C's.
type fieldPropagator struct{}

func (fieldPropagator) Inject(ctx context.Context, c propagation.TextMapCarrier) {
	sc := trace.SpanContextFromContext(ctx)
	if sc.IsValid() {
		c.Set("x-trace", sc.TraceID().String()+"/"+sc.SpanID().String())
	}
}

func (fieldPropagator) Extract(ctx context.Context, c propagation.TextMapCarrier) context.Context {
	tid, sid, ok := strings.Cut(c.Get("x-trace"), "/")
	if !ok {
		return ctx
	}
	traceID, err1 := trace.TraceIDFromHex(tid)
	spanID, err2 := trace.SpanIDFromHex(sid)
	if err1 != nil || err2 != nil {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled, Remote: true}))
}

func (fieldPropagator) Fields() []string { return []string{"x-trace"} }

// TestPropagatorFields checks that trace context travels in the _meta
// keys the propagator names, both ways.
func TestPropagatorFields(t *testing.T) {
	tel := newTelemetry(t)
	mw, err := mcpotel.New(mcpotel.Options{TracerProvider: tel.tp, MeterProvider: tel.mp, Propagator: fieldPropagator{}})
	if err != nil {
		t.Fatal(err)
	}
	var sent json.RawMessage
	receive := mw.Receiving(func(ctx context.Context, method string, params json.RawMessage) (any, error) { return nil, nil })
	send := mw.Sending(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		sent = params
		return receive(context.Background(), method, params)
	})
	ctx, caller := tel.tp.Tracer("test").Start(context.Background(), "caller")
	send(ctx, mcp.MethodToolsCall, json.RawMessage(`{"name":"echo","_meta":{"progressToken":1}}`))
	caller.End()
	if !strings.Contains(string(sent), `"x-trace":`) || !strings.Contains(string(sent), `"progressToken":1`) {
		t.Errorf("sent %s: want x-trace and the progress token in _meta", sent)
	}
	out := tel.span(t, "tools/call echo", trace.SpanKindClient)
	in := tel.span(t, "tools/call echo", trace.SpanKindServer)
	if in.Parent.SpanID() != out.SpanContext.SpanID() || in.SpanContext.TraceID() != caller.SpanContext().TraceID() {
		t.Errorf("receiving span's parent %s in trace %s, want the sending span %s in %s",
			in.Parent.SpanID(), in.SpanContext.TraceID(), out.SpanContext.SpanID(), caller.SpanContext().TraceID())
	}
}

// nopProcessor takes the spans and does nothing with them, so that
// allocation counts are the middleware's and the SDK's span's, not an
// exporter's.
type nopProcessor struct{}

func (nopProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (nopProcessor) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (nopProcessor) Shutdown(context.Context) error                  { return nil }
func (nopProcessor) ForceFlush(context.Context) error                { return nil }

// TestMessageAllocations bounds the allocations of a traced tools/call,
// sampled, with its histogram record. Received with a traceparent in
// params: the SDK's span, its attributes, its snapshot at End and the
// context of the new span (four, what any instrumentation pays:
// BenchmarkSDKFloor), the carried context and its span (two, by the
// propagator) and the traceparent's string. Received without: the SDK's
// four. Sent: the SDK's four, the traceparent the propagator writes and
// the params with it spliced in. Not sampled: the SDK's non-recording
// span and its context. Names, attribute sets and record
// options are computed once per tool; the buffers of a message's
// attributes and carrier are pooled.
func TestMessageAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(nopProcessor{}))
	defer tp.Shutdown(context.Background())
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	mw, err := mcpotel.New(mcpotel.Options{TracerProvider: tp, MeterProvider: mp, Propagator: propagation.TraceContext{}, NetworkTransport: "tcp"})
	if err != nil {
		t.Fatal(err)
	}
	unsampled := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	defer unsampled.Shutdown(context.Background())
	mwUnsampled, err := mcpotel.New(mcpotel.Options{TracerProvider: unsampled, MeterProvider: mp, Propagator: propagation.TraceContext{}, NetworkTransport: "tcp"})
	if err != nil {
		t.Fatal(err)
	}
	var res any = &mcp.CallToolResult{}
	next := func(ctx context.Context, method string, params json.RawMessage) (any, error) { return res, nil }
	receive, send := mw.Receiving(next), mw.Sending(next)
	received := jsonrpc.WithRequestID(context.Background(), jsonrpc.Int64ID(7))
	// Past 99, an id's text is an allocation: a message not sampled does
	// not pay it, the id being an attribute of the span only.
	receivedLate := jsonrpc.WithRequestID(context.Background(), jsonrpc.Int64ID(1000))
	sent, caller := tp.Tracer("test").Start(context.Background(), "caller")
	defer caller.End()
	for _, tc := range []struct {
		name   string
		h      mcp.MethodHandler
		ctx    context.Context
		params string
		max    float64
	}{
		{"received, carried", receive, received, `{"name":"echo","arguments":{"text":"hello"},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}`, 7},
		{"received, not carried", receive, received, `{"name":"echo","arguments":{"text":"hello"}}`, 4},
		{"sent", send, sent, `{"name":"echo","arguments":{"text":"hello"},"_meta":{"progressToken":1}}`, 6},
		{"received, not sampled", mwUnsampled.Receiving(next), receivedLate, `{"name":"echo","arguments":{"text":"hello"}}`, 2},
	} {
		params := json.RawMessage(tc.params)
		tc.h(tc.ctx, mcp.MethodToolsCall, params) // the first message of a tool computes and keeps its sets
		// AllocsPerRun counts the whole process's allocations, so a
		// goroutine another test left behind (an SDK's batch processor, a
		// timer) can add to one measurement: the least of three is ours.
		got := testing.AllocsPerRun(200, func() { tc.h(tc.ctx, mcp.MethodToolsCall, params) })
		for range 2 {
			got = min(got, testing.AllocsPerRun(200, func() { tc.h(tc.ctx, mcp.MethodToolsCall, params) }))
		}
		if got > tc.max {
			t.Errorf("%s: %.1f allocations per message, want at most %.0f", tc.name, got, tc.max)
		}
	}
}

// BenchmarkSending is the sending middleware around a tools/call, its
// trace context spliced into the params' _meta.
func BenchmarkSending(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(discard{}))
	defer tp.Shutdown(context.Background())
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	mw, err := mcpotel.New(mcpotel.Options{TracerProvider: tp, MeterProvider: mp, Propagator: propagation.TraceContext{}, NetworkTransport: "tcp"})
	if err != nil {
		b.Fatal(err)
	}
	res := json.RawMessage(`{"content":[]}`)
	h := mw.Sending(func(ctx context.Context, method string, params json.RawMessage) (any, error) { return res, nil })
	params := json.RawMessage(`{"name":"echo","arguments":{"text":"hello"},"_meta":{"progressToken":1}}`)
	ctx, span := tp.Tracer("bench").Start(context.Background(), "caller")
	defer span.End()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h(ctx, mcp.MethodToolsCall, params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSDKFloor is what any instrumentation pays the SDK for one
// sampled message with the same setup as BenchmarkReceiving: a span with
// six attributes through the batch processor, and one histogram record
// with a precomputed attribute set. BenchmarkReceiving's excess over it
// is this package's own cost.
func BenchmarkSDKFloor(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(discard{}))
	defer tp.Shutdown(context.Background())
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	tracer := tp.Tracer("floor")
	hist, err := mp.Meter("floor").Float64Histogram("floor")
	if err != nil {
		b.Fatal(err)
	}
	attrs := []attribute.KeyValue{attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", "echo"), attribute.String("network.transport", "tcp"),
		attribute.String("mcp.protocol.version", "2025-11-25"), attribute.String("jsonrpc.request.id", "7")}
	opts := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs[:5]...))}
	kind := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, span := tracer.Start(ctx, "tools/call echo", kind...)
		span.SetAttributes(attrs...)
		span.End()
		hist.Record(ctx, 0.001, opts...)
	}
}
