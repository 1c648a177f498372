// Package otel instruments mcpstack's MCP servers and clients with
// OpenTelemetry, following the semantic conventions for the Model Context
// Protocol (https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/):
// a span per request or notification, sent or received, named
// "{mcp.method.name} {target}" (the tool or prompt name, when there is
// one); the attributes mcp.method.name, gen_ai.tool.name,
// gen_ai.prompt.name, mcp.resource.uri, mcp.session.id,
// mcp.protocol.version, jsonrpc.request.id, rpc.response.status_code and
// error.type; and the histograms mcp.server.operation.duration (on the
// receiving side) and mcp.client.operation.duration (on the sending
// side). As the conventions say, a receiver does not count as its own
// failure a request it could not serve (JSON-RPC codes -32700, -32600,
// -32601, -32602 and -32002): its span records the code in
// rpc.response.status_code without error.type or an error status; a
// sender counts every JSON-RPC error. mcp.session.id is left out for
// sessions of revision 2026-07-28 and later, which have none.
//
// Trace context travels in each message's params._meta (traceparent,
// tracestate and, with a baggage propagator, baggage: the propagator's
// fields), as the conventions recommend, over stdio and over HTTP alike. A receiving span's parent is
// the span already in the handler's context when there is one (the HTTP
// server span of an instrumented Streamable HTTP handler, such as
// otelhttp's), linked to the context the message carried; otherwise it is
// the context the message carried.
//
// Use [New] once and put its two middleware in a server's or a client's
// options:
//
//	mw, err := otel.New(otel.Options{NetworkTransport: "tcp"})
//	srv := mcp.NewServer(impl, &mcp.ServerOptions{
//		ReceivingMiddleware: []mcp.Middleware{mw.Receiving},
//		SendingMiddleware:   []mcp.Middleware{mw.Sending},
//	})
//
// The cost per message is a span and a histogram record, little more
// than the OpenTelemetry SDK itself asks of any instrumentation: span
// names and the attribute sets of the histograms are computed once per
// method and tool or prompt name and kept (up to Options.MaxCachedSets of
// them), params are scanned, not decoded, the buffers of a message's
// attributes and trace context are pooled, and the histogram records the
// duration of the message's span from the times the SDK took for it
// (the middleware reads the clock itself only for spans that keep no
// times). Of the allocations of a sampled tools/call received without
// trace context, all but the request id's string are the SDK's (the
// span, its context, its attributes, its snapshot at End); with a
// traceparent, its string and what the propagator builds are added.
// BenchmarkSDKFloor and BenchmarkReceiving compare the SDK's cost with
// the middleware's. With every message sampled and the SDK's batch span
// processor, that SDK cost is about a fifth of the server CPU of a small
// tools/call over Streamable HTTP (bench/README.md); the SDK's defaults
// offer nothing cheaper for it (its span ID generator and attribute
// limits cost next to nothing), so a server that must spend less samples
// fewer messages, with a ratio-based sampler: an unsampled message costs
// a non-recording span and the histogram record.
//
// The package is a module of its own, so that mcpstack's core module
// gains no OpenTelemetry dependency. Import it under another name when
// the OpenTelemetry API package is imported too.
package otel

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	gootel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// instrumentationName names the tracer and the meter.
const instrumentationName = "github.com/mcpstack/mcpstack/otel"

// DefaultMaxCachedSets is the number of precomputed span names and
// attribute sets each side (receiving, sending) keeps when
// Options.MaxCachedSets is zero: far more than the methods, tools and
// prompts of a server, few enough (a few hundred bytes each) to cost
// nothing worth counting.
const DefaultMaxCachedSets = 1024

// statelessRevision is the first protocol revision without sessions: the
// conventions say mcp.session.id MUST NOT be set for it and later ones.
// Revisions are dates, so later ones sort after it.
const statelessRevision = "2026-07-28"

// Options configure the instrumentation. The zero value uses the global
// tracer provider, meter provider and propagator of package
// go.opentelemetry.io/otel, read once by New.
type Options struct {
	// TracerProvider makes the tracer; nil means the global one.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the meter; nil means the global one.
	MeterProvider metric.MeterProvider
	// Propagator injects trace context into params._meta and extracts it;
	// nil means the global one. Its fields are the _meta keys; W3C Trace
	// Context uses traceparent and tracestate, Baggage uses baggage.
	Propagator propagation.TextMapPropagator
	// NetworkTransport is the network.transport attribute: "pipe" for
	// stdio, "tcp" for Streamable HTTP; empty leaves it out.
	NetworkTransport string
	// MaxCachedSets bounds, per side, the span names and attribute sets
	// kept precomputed: one per (method, tool or prompt name) that was
	// served without a protocol error, and one per protocol version and
	// outcome of each. Past the bound, messages build their own, which
	// costs a few allocations each. Zero means DefaultMaxCachedSets;
	// negative keeps none. Only messages served without a protocol error
	// enter the cache, so that a peer calling made-up tools cannot fill
	// it.
	MaxCachedSets int
}

// Middleware holds the two middleware of one side of MCP, server or
// client: Receiving goes in ReceivingMiddleware, Sending in
// SendingMiddleware. Both are safe for concurrent use by any number of
// sessions.
type Middleware struct {
	// Receiving makes a SERVER span for every message received and
	// records mcp.server.operation.duration.
	Receiving mcp.Middleware
	// Sending makes a CLIENT span for every message sent, injects its
	// context into the message's params._meta, and records
	// mcp.client.operation.duration.
	Sending mcp.Middleware
}

// New returns the instrumentation's middleware. It fails only when a
// histogram cannot be created.
func New(opts Options) (*Middleware, error) {
	in, err := newInstrumentation(opts)
	if err != nil {
		return nil, err
	}
	return &Middleware{Receiving: in.receiving, Sending: in.sending}, nil
}

func newInstrumentation(opts Options) (*instrumentation, error) {
	tp, mp, prop := opts.TracerProvider, opts.MeterProvider, opts.Propagator
	if tp == nil {
		tp = gootel.GetTracerProvider()
	}
	if mp == nil {
		mp = gootel.GetMeterProvider()
	}
	if prop == nil {
		prop = gootel.GetTextMapPropagator()
	}
	meter := mp.Meter(instrumentationName)
	server, err := mcpconv.NewServerOperationDuration(meter)
	if err != nil {
		return nil, err
	}
	client, err := mcpconv.NewClientOperationDuration(meter)
	if err != nil {
		return nil, err
	}
	budget := opts.MaxCachedSets
	if budget == 0 {
		budget = DefaultMaxCachedSets
	}
	in := &instrumentation{
		tracer: tp.Tracer(instrumentationName),
		prop:   prop,
		fields: metaFields(prop),
	}
	if opts.NetworkTransport != "" {
		in.static = append(in.static, semconv.NetworkTransportKey.String(opts.NetworkTransport))
	}
	in.server = &side{in: in, receiving: true, kind: serverKind, kindOnly: []trace.SpanStartOption{serverKind}, hist: server.Inst()}
	in.client = &side{in: in, kind: clientKind, kindOnly: []trace.SpanStartOption{clientKind}, hist: client.Inst()}
	in.server.cache.left.Store(max(int64(budget), 0))
	in.client.cache.left.Store(max(int64(budget), 0))
	return in, nil
}

// metaFields returns the propagator's fields, the _meta keys that carry
// trace context, without duplicates and at most maxFields of them.
func metaFields(prop propagation.TextMapPropagator) []string {
	var fields []string
	for _, f := range prop.Fields() {
		if len(fields) < maxFields && !contains(fields, f) {
			fields = append(fields, f)
		}
	}
	return fields
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

type instrumentation struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	fields []string             // the _meta keys of trace context
	static []attribute.KeyValue // of every span and data point: network.transport
	server *side                // receiving
	client *side                // sending
	calls  sync.Pool            // of *call
}

// side is one direction of the instrumentation: receiving (SERVER spans,
// mcp.server.operation.duration) or sending (CLIENT spans,
// mcp.client.operation.duration).
type side struct {
	in        *instrumentation
	receiving bool
	kind      trace.SpanStartOption
	kindOnly  []trace.SpanStartOption // kind alone, made once
	hist      metric.Float64Histogram
	cache     targetCache
}

// The span kinds, made once: an option is an interface value, which
// would otherwise be allocated for every span.
var (
	serverKind = trace.WithSpanKind(trace.SpanKindServer)
	clientKind = trace.WithSpanKind(trace.SpanKindClient)
)

// call holds what one message's span needs beyond its target's
// precomputed attributes: the carrier of its trace context and its
// attributes. Calls are pooled (see side.getCall): a propagator reads or
// writes the carrier only during Extract or Inject, and a span copies
// the attributes SetAttributes is given (its parameter is variadic, and
// callers routinely pass slices they keep using), so a call is put back
// as soon as its span has started and its trace context has been read or
// written, and a message allocates none.
type call struct {
	carrier metaCarrier
	attrs   [8]attribute.KeyValue
	used    int // attrs[:used] were set
}

// getCall returns a cleared call from the instrumentation's pool.
func (in *instrumentation) getCall() *call {
	if c, ok := in.calls.Get().(*call); ok {
		return c
	}
	return new(call)
}

// putCall clears c, so that the pool keeps no string of a message alive,
// and puts it back. c may be nil.
func (in *instrumentation) putCall(c *call) {
	if c != nil {
		c.carrier = metaCarrier{}
		clear(c.attrs[:c.used])
		c.used = 0
		in.calls.Put(c)
	}
}

// facts are a message's attributes that vary from message to message.
type facts struct {
	version, session, requestID, uri string
}

func (f *facts) any() bool {
	return f.version != "" || f.session != "" || f.requestID != "" || f.uri != ""
}

// factsOf reads the session's protocol version and id and the resource
// URI. The request's id, an attribute of the span only, is read by
// start once it knows the span records.
func factsOf(ctx context.Context, p *peeked) facts {
	f := facts{uri: p.uri}
	if ss := mcp.ServerSessionFromContext(ctx); ss != nil {
		f.version, f.session = ss.ProtocolVersion(), ss.ID()
	} else if cs := mcp.ClientSessionFromContext(ctx); cs != nil {
		f.version = cs.ProtocolVersion()
	}
	if f.version >= statelessRevision {
		f.session = ""
	}
	return f
}

// requestIDOf returns the id of the request ctx handles, as text, or "".
// Only the receiving side has one: a sender's middleware runs before the
// id is given.
func requestIDOf(ctx context.Context) string {
	if id, ok := jsonrpc.RequestIDFromContext(ctx); ok && id.IsValid() {
		return id.String()
	}
	return ""
}

// timedSpan is a span that reports when it started and ended, as the
// SDK's recording spans do (they are sdktrace.ReadOnlySpan).
type timedSpan interface {
	StartTime() time.Time
	EndTime() time.Time
}

// stopwatch times a message for its histogram. A span that reports its
// own times is the stopwatch: the histogram records the span's duration,
// and the clock is read twice per message (by the SDK, when the span
// starts and ends) rather than four times. Other spans (not sampled, or
// of an API implementation that keeps no times) are timed by reads of
// the clock of its own, from just after the span started.
type stopwatch struct {
	span  timedSpan // nil when start is the stopwatch's own reading
	start time.Time
}

// watch returns the stopwatch of a message whose span just started and
// records.
func watch(span trace.Span) stopwatch {
	if ts, ok := span.(timedSpan); ok {
		if start := ts.StartTime(); !start.IsZero() {
			return stopwatch{span: ts, start: start}
		}
	}
	return stopwatch{start: time.Now()}
}

// elapsed is the message's duration, once its span has ended.
func (w stopwatch) elapsed() time.Duration {
	if w.span != nil {
		if end := w.span.EndTime(); !end.IsZero() {
			return end.Sub(w.start)
		}
	}
	return time.Since(w.start)
}

// start starts the message's span, with the side's kind and, when link
// is valid, a link to it. Its attributes are set once it started, and
// only if it records: options to Start would be copied twice (into the
// start configuration, then the span), and a span not sampled needs
// none. Samplers thus see the span's name (method and tool or prompt
// name), kind and parent. The attributes that vary are gathered in c,
// or in a call of the pool when c is nil; start returns the call it
// used, or nil, for the caller to put back.
func (s *side) start(ctx context.Context, t *target, c *call, link trace.SpanContext, f *facts) (context.Context, trace.Span, stopwatch, *call) {
	var span trace.Span
	outer := ctx
	if link.IsValid() {
		ctx, span = s.in.tracer.Start(ctx, t.spanName, s.kind, trace.WithLinks(trace.Link{SpanContext: link}))
	} else {
		ctx, span = s.in.tracer.Start(ctx, t.spanName, s.kindOnly...)
	}
	if !span.IsRecording() {
		return ctx, span, stopwatch{start: time.Now()}, c
	}
	w := watch(span)
	if s.receiving {
		f.requestID = requestIDOf(outer) // one lookup shorter than in ctx
	}
	if !f.any() {
		span.SetAttributes(t.attrs...)
		return ctx, span, w, c
	}
	if c == nil {
		c = s.in.getCall()
	}
	a := append(c.attrs[:0], t.attrs...)
	if f.uri != "" {
		a = append(a, semconv.McpResourceURIKey.String(f.uri))
	}
	if f.version != "" {
		a = append(a, semconv.McpProtocolVersionKey.String(f.version))
	}
	if f.session != "" {
		a = append(a, semconv.McpSessionIDKey.String(f.session))
	}
	if f.requestID != "" {
		a = append(a, semconv.JSONRPCRequestIDKey.String(f.requestID))
	}
	c.used = len(a)
	span.SetAttributes(a...)
	return ctx, span, w, c
}

// receiving wraps the handling of a received message.
func (in *instrumentation) receiving(next mcp.MethodHandler) mcp.MethodHandler {
	s := in.server
	return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		p := in.peek(method, params)
		t := s.target(method, p.name)
		var c *call
		var link trace.SpanContext
		if p.carried() {
			// Only a message that carries trace context is worth an
			// Extract: the others keep the handler's context as it is.
			c = in.getCall()
			in.fillCarrier(&c.carrier, params, &p)
			local := trace.SpanFromContext(ctx)
			ctx = in.prop.Extract(ctx, &c.carrier) // the carried context, and baggage
			if local.SpanContext().IsValid() {
				// The handler already runs in a span of this process (the
				// HTTP server span): it stays the parent, and the context
				// the message carried is linked.
				if carried := trace.SpanContextFromContext(ctx); carried.IsValid() && !carried.Equal(local.SpanContext()) {
					link = carried
				}
				ctx = trace.ContextWithSpan(ctx, local)
			}
		}
		f := factsOf(ctx, &p)
		ctx, span, w, c := s.start(ctx, t, c, link, &f)
		in.putCall(c)
		res, err := next(ctx, method, params)
		s.end(ctx, t, span, w, f.version, res, err)
		return res, err
	}
}

// sending wraps the sending of a message.
func (in *instrumentation) sending(next mcp.MethodHandler) mcp.MethodHandler {
	s := in.client
	return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		p := in.peek(method, params)
		t := s.target(method, p.name)
		f := factsOf(ctx, &p)
		ctx, span, w, c := s.start(ctx, t, in.getCall(), trace.SpanContext{}, &f)
		in.prop.Inject(ctx, &c.carrier)
		if len(c.carrier.keys) > 0 {
			if withMeta, ok := in.spliceMeta(params, &p, &c.carrier); ok {
				params = withMeta
			} else if withMeta, err := addMeta(params, &c.carrier); err == nil {
				params = withMeta
			} // else params are not an object: sent as they are, untraced
		}
		in.putCall(c) // spliceMeta and addMeta copied the entries
		res, err := next(ctx, method, params)
		s.end(ctx, t, span, w, f.version, res, err)
		return res, err
	}
}

// end records the outcome on the span and the duration histogram, and
// keeps the target for the next messages when it was served without a
// protocol error.
func (s *side) end(ctx context.Context, t *target, span trace.Span, w stopwatch, version string, res any, err error) {
	o := outcomeOf(res, err, s.receiving)
	if o.kind != outcomeOK {
		span.SetAttributes(o.attributes()...)
		if !o.refused {
			span.SetStatus(codes.Error, o.message)
		}
	}
	span.End()
	// The span's context stays in ctx for exemplars; the record does not
	// look at ctx's end, so a cancelled request is still counted.
	s.hist.Record(ctx, w.elapsed().Seconds(), s.recordOptions(t, version, o)...)
	if o.kind == outcomeOK || o.kind == outcomeToolError {
		s.cache.keep(t)
	}
}

// outcomeKind classifies how a message ended.
type outcomeKind uint8

const (
	outcomeOK outcomeKind = iota
	outcomeRPC
	outcomeToolError
	outcomeCancelled
	outcomeTimeout
	outcomeOther
)

// outcome is how a message ended, as the span and the histogram record
// it.
type outcome struct {
	kind outcomeKind
	// code is the JSON-RPC error code of outcomeRPC.
	code int64
	// refused is set for a JSON-RPC error that the receiver does not
	// count as its own failure: the request could not be served.
	refused bool
	// message is the span status's description.
	message string
}

func outcomeOf(res any, err error, receiving bool) outcome {
	if err == nil {
		if toolFailed(res) {
			// A tool's own failure is a result, not a protocol error; the
			// conventions name it "tool_error".
			return outcome{kind: outcomeToolError, message: "the tool reported an error"}
		}
		return outcome{}
	}
	var rpcErr *jsonrpc.Error // escapes to errors.As: made only on failure
	switch {
	case errors.As(err, &rpcErr):
		return outcome{kind: outcomeRPC, code: rpcErr.Code, refused: receiving && notServed(rpcErr.Code), message: rpcErr.Message}
	case errors.Is(err, context.Canceled):
		return outcome{kind: outcomeCancelled, message: err.Error()}
	case errors.Is(err, context.DeadlineExceeded):
		return outcome{kind: outcomeTimeout, message: err.Error()}
	}
	return outcome{kind: outcomeOther, message: err.Error()}
}

// notServed reports whether a receiver's JSON-RPC error code says that
// the caller sent a request it could not serve, which the conventions
// (mcp.server.status.attributes) say SHOULD NOT count as an error: parse
// error, invalid request, method not found, invalid params (also an
// unknown tool) and resource not found.
func notServed(code int64) bool {
	switch code {
	case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeMethodNotFound, jsonrpc.CodeInvalidParams, mcp.CodeResourceNotFound:
		return true
	}
	return false
}

// attributes are the outcome's attributes: rpc.response.status_code for
// a JSON-RPC error, and error.type unless the error is a refused request.
func (o outcome) attributes() []attribute.KeyValue {
	switch o.kind {
	case outcomeRPC:
		code := strconv.FormatInt(o.code, 10)
		if o.refused {
			return []attribute.KeyValue{semconv.RPCResponseStatusCodeKey.String(code)}
		}
		return []attribute.KeyValue{semconv.RPCResponseStatusCodeKey.String(code), semconv.ErrorTypeKey.String(code)}
	case outcomeToolError:
		return []attribute.KeyValue{semconv.ErrorTypeKey.String("tool_error")}
	case outcomeCancelled:
		return []attribute.KeyValue{semconv.ErrorTypeKey.String("cancelled")}
	case outcomeTimeout:
		return []attribute.KeyValue{semconv.ErrorTypeKey.String("timeout")}
	case outcomeOther:
		// "_OTHER", as the conventions say for an unknown class.
		return []attribute.KeyValue{semconv.ErrorTypeKey.String("_OTHER")}
	}
	return nil
}

// toolFailed reports whether res is a tools/call result with isError set,
// typed (received) or JSON (sent).
func toolFailed(res any) bool {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r != nil && r.IsError != nil && *r.IsError
	case json.RawMessage:
		if !bytesContains(r, `"isError"`) {
			return false
		}
		var v map[string]json.RawMessage
		return json.Unmarshal(r, &v) == nil && string(v["isError"]) == "true"
	}
	return false
}
