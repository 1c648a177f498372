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
// side).
//
// Trace context travels in each message's params._meta (traceparent,
// tracestate and, with a baggage propagator, baggage), as the conventions
// recommend, over stdio and over HTTP alike. A receiving span's parent is
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
// The package is a module of its own, so that mcpstack's core module
// gains no OpenTelemetry dependency. Import it under another name when
// the OpenTelemetry API package is imported too.
package otel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	gootel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpstack/mcpstack/internal/jsonfast"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// instrumentationName names the tracer and the meter.
const instrumentationName = "github.com/mcpstack/mcpstack/otel"

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
	in := &instrumentation{
		tracer:    tp.Tracer(instrumentationName),
		prop:      prop,
		transport: opts.NetworkTransport,
		serverDur: server.Inst(),
		clientDur: client.Inst(),
	}
	return &Middleware{Receiving: in.receiving, Sending: in.sending}, nil
}

type instrumentation struct {
	tracer    trace.Tracer
	prop      propagation.TextMapPropagator
	transport string
	serverDur metric.Float64Histogram
	clientDur metric.Float64Histogram
}

// The span kinds, made once: an option is an interface value, which
// would otherwise be allocated for every span.
var (
	serverKind = trace.WithSpanKind(trace.SpanKindServer)
	clientKind = trace.WithSpanKind(trace.SpanKindClient)
)

// receiving wraps the handling of a received message.
func (in *instrumentation) receiving(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		start := time.Now()
		p := peek(method, params)
		local := trace.SpanFromContext(ctx)
		ctx = in.prop.Extract(ctx, p.carrier) // the carried context, and baggage
		var opts []trace.SpanStartOption
		if local.SpanContext().IsValid() {
			// The handler already runs in a span of this process (the
			// HTTP server span): it stays the parent, and the context the
			// message carried is linked.
			if carried := trace.SpanContextFromContext(ctx); carried.IsValid() && !carried.Equal(local.SpanContext()) {
				opts = append(opts, trace.WithLinks(trace.Link{SpanContext: carried}))
			}
			ctx = trace.ContextWithSpan(ctx, local)
		}
		attrs := in.attributes(ctx, method, p, true)
		opts = append(opts, serverKind, trace.WithAttributes(attrs...))
		ctx, span := in.tracer.Start(ctx, spanName(method, p), opts...)
		res, err := next(ctx, method, params)
		in.end(ctx, span, in.serverDur, start, attrs, res, err)
		return res, err
	}
}

// sending wraps the sending of a message.
func (in *instrumentation) sending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		start := time.Now()
		p := peek(method, params)
		attrs := in.attributes(ctx, method, p, false)
		ctx, span := in.tracer.Start(ctx, spanName(method, p), clientKind, trace.WithAttributes(attrs...))
		carrier := propagation.MapCarrier{}
		in.prop.Inject(ctx, carrier)
		if len(carrier) > 0 {
			if withMeta, err := addMeta(params, carrier); err == nil {
				params = withMeta
			} // else params are not an object: sent as they are, untraced
		}
		res, err := next(ctx, method, params)
		in.end(ctx, span, in.clientDur, start, attrs, res, err)
		return res, err
	}
}

// attributes are those of the span and of the duration histogram.
func (in *instrumentation) attributes(ctx context.Context, method string, p peeked, receiving bool) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, semconv.McpMethodNameKey.String(method))
	switch method {
	case mcp.MethodToolsCall:
		attrs = append(attrs, semconv.GenAIOperationNameKey.String("execute_tool"))
		if p.name != "" {
			attrs = append(attrs, semconv.GenAIToolNameKey.String(p.name))
		}
	case mcp.MethodPromptsGet:
		if p.name != "" {
			attrs = append(attrs, semconv.GenAIPromptNameKey.String(p.name))
		}
	}
	if p.uri != "" {
		attrs = append(attrs, semconv.McpResourceURIKey.String(p.uri))
	}
	if in.transport != "" {
		attrs = append(attrs, semconv.NetworkTransportKey.String(in.transport))
	}
	var version, session string
	if ss := mcp.ServerSessionFromContext(ctx); ss != nil {
		version, session = ss.ProtocolVersion(), ss.ID()
	} else if cs := mcp.ClientSessionFromContext(ctx); cs != nil {
		version = cs.ProtocolVersion()
	}
	if version != "" {
		attrs = append(attrs, semconv.McpProtocolVersionKey.String(version))
	}
	if session != "" {
		attrs = append(attrs, semconv.McpSessionIDKey.String(session))
	}
	if receiving {
		if id, ok := jsonrpc.RequestIDFromContext(ctx); ok && id.IsValid() {
			attrs = append(attrs, semconv.JSONRPCRequestIDKey.String(id.String()))
		}
	}
	return attrs
}

// end records the outcome on the span and the duration histogram. Only
// attributes of low cardinality go to the histogram: not the session, the
// request id or the resource URI.
func (in *instrumentation) end(ctx context.Context, span trace.Span, hist metric.Float64Histogram, start time.Time, attrs []attribute.KeyValue, res any, err error) {
	var outcome []attribute.KeyValue
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		code := strconv.Itoa(int(rpcErr.Code))
		outcome = append(outcome, semconv.RPCResponseStatusCodeKey.String(code), semconv.ErrorTypeKey.String(code))
		span.SetStatus(codes.Error, rpcErr.Message)
	case err != nil:
		outcome = append(outcome, semconv.ErrorTypeKey.String(errorType(err)))
		span.SetStatus(codes.Error, err.Error())
	case toolFailed(res):
		// A tool's own failure is a result, not a protocol error; the
		// conventions name it "tool_error".
		outcome = append(outcome, semconv.ErrorTypeKey.String("tool_error"))
		span.SetStatus(codes.Error, "the tool reported an error")
	}
	span.SetAttributes(outcome...)
	span.End()

	metricAttrs := make([]attribute.KeyValue, 0, len(attrs)+len(outcome))
	for _, a := range attrs {
		switch a.Key {
		case semconv.McpSessionIDKey, semconv.JSONRPCRequestIDKey, semconv.McpResourceURIKey:
		default:
			metricAttrs = append(metricAttrs, a)
		}
	}
	metricAttrs = append(metricAttrs, outcome...)
	hist.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(), metric.WithAttributes(metricAttrs...))
}

// errorType names an error that is not a JSON-RPC error: the context's
// end, or "_OTHER" as the conventions say for an unknown class.
func errorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "_OTHER"
}

// toolFailed reports whether res is a tools/call result with isError set,
// typed (received) or JSON (sent).
func toolFailed(res any) bool {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r != nil && r.IsError != nil && *r.IsError
	case json.RawMessage:
		if !bytes.Contains(r, []byte(`"isError"`)) {
			return false
		}
		var v map[string]json.RawMessage
		return json.Unmarshal(r, &v) == nil && string(v["isError"]) == "true"
	}
	return false
}

// spanName is "{mcp.method.name} {target}", the target being the tool or
// prompt name when the method has one.
func spanName(method string, p peeked) string {
	if p.name != "" && (method == mcp.MethodToolsCall || method == mcp.MethodPromptsGet) {
		return method + " " + p.name
	}
	return method
}

// peeked is what the instrumentation reads of a message's params: the
// tool or prompt name, the resource URI, and the _meta entries that carry
// trace context.
type peeked struct {
	name, uri string
	carrier   propagation.MapCarrier
}

// peek reads params with exact member names (never case-folded, as
// encoding/json would match them into a struct), so that the telemetry
// names what the server dispatches. It scans the text once and allocates
// only the strings it keeps: a tools/call whose arguments are a megabyte
// costs a scan, not a decode. Params it cannot scan that way (a key with
// an escape, malformed JSON) are read with encoding/json instead.
func peek(method string, params json.RawMessage) peeked {
	var p peeked
	if len(params) == 0 || params[0] != '{' {
		return p
	}
	wantName := method == mcp.MethodToolsCall || method == mcp.MethodPromptsGet
	wantURI := method == mcp.MethodResourcesRead || method == mcp.MethodResourcesSubscribe ||
		method == mcp.MethodResourcesUnsubscribe || method == mcp.NotificationResourcesUpdated
	_, ok := jsonfast.ScanObject(params, 0, func(key []byte, v int) (int, bool) {
		switch {
		case wantName && string(key) == "name":
			s, end, ok := scanString(params, v)
			p.name = s
			return end, ok
		case wantURI && string(key) == "uri":
			s, end, ok := scanString(params, v)
			p.uri = s
			return end, ok
		case string(key) == "_meta" && v < len(params) && params[v] == '{':
			return jsonfast.ScanObject(params, v, func(key []byte, v int) (int, bool) {
				switch string(key) {
				case "traceparent", "tracestate", "baggage":
					s, end, ok := scanString(params, v)
					if s != "" {
						if p.carrier == nil {
							p.carrier = propagation.MapCarrier{}
						}
						p.carrier[string(key)] = s
					}
					return end, ok
				}
				return jsonfast.SkipValue(params, v, 2, maxPeekDepth)
			})
		}
		return jsonfast.SkipValue(params, v, 1, maxPeekDepth)
	})
	if !ok {
		return peekSlow(method, params)
	}
	return p
}

// maxPeekDepth bounds the nesting peek walks through; deeper params are
// read by peekSlow, whose decoder has its own bound.
const maxPeekDepth = 10000

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

// peekSlow is peek through encoding/json, for params peek cannot scan.
func peekSlow(method string, params json.RawMessage) peeked {
	var p peeked
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
		p.name = str(top["name"])
	case mcp.MethodResourcesRead, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe, mcp.NotificationResourcesUpdated:
		p.uri = str(top["uri"])
	}
	if raw, ok := top["_meta"]; ok {
		var meta map[string]json.RawMessage
		if json.Unmarshal(raw, &meta) == nil {
			for k, v := range meta {
				switch k {
				case "traceparent", "tracestate", "baggage":
					if s := str(v); s != "" {
						if p.carrier == nil {
							p.carrier = propagation.MapCarrier{}
						}
						p.carrier[k] = s
					}
				}
			}
		}
	}
	return p
}

// addMeta returns params with the carrier's entries set in its _meta,
// which it creates when absent; params must be a JSON object, or empty.
// Other _meta entries and members are kept.
func addMeta(params json.RawMessage, carrier propagation.MapCarrier) (json.RawMessage, error) {
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
	for k, v := range carrier {
		b, err := json.Marshal(v)
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
