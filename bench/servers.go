package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	mcpotel "github.com/mcpstack/mcpstack/otel"
)

// An impl is one server under test: a name and a constructor for a fresh
// http.Handler serving one echo tool over Streamable HTTP, with a function
// that releases what the handler holds.
type impl struct {
	name string
	// bare is true for the baseline handler, which answers every request
	// with a fixed result and does not echo.
	bare bool
	// modern is true for the rows driven in revision 2026-07-28's shape
	// (modern.go): no initialize, per-request _meta and headers.
	modern bool
	// redis is true for the rows whose state is on Redis (redis.go):
	// they run only when -redis names one.
	redis bool
	new   func() (http.Handler, func())
}

// echoSchema is the echo tool's input schema, the same for every server.
const echoSchema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`

// echoArgs are the echo tool's arguments.
type echoArgs struct {
	Text string `json:"text"`
}

func impls() []impl {
	return []impl{
		{name: "mcpstack", new: newOurs},
		// The same handler as mcpstack's row: the era is chosen per
		// request.
		{name: "mcpstack@2026-07-28", modern: true, new: newOurs},
		{name: "mcpstack+otel", new: newOursTraced},
		{name: "mcpstack+otel-floor", new: newOursSDKFloor},
		{name: "mcpstack+redis", redis: true, new: newOursRedis},
		{name: "mcpstack×3", new: newOurs3},
		{name: "mcpstack×3+redis", redis: true, new: newOursRedis3},
		{name: "mcpstack+sse", new: newOursSSE},
		{name: "mcpstack+sse+redis", redis: true, new: newOursSSERedis},
		{name: "mcp-go", new: newMCPGo},
		{name: "go-sdk", new: newGoSDK},
		{name: "go-sdk-stateless@2026-07-28", modern: true, new: newGoSDKStateless},
		{name: "bare", bare: true, new: newBare},
	}
}

// newOurs serves mcpstack's Server through its Streamable HTTP handler,
// stateful, answering requests with JSON rather than SSE.
func newOurs() (http.Handler, func()) { return newOursWith(nil) }

// newOursTraced is newOurs with the otel module's middleware, as a
// production server would run it: every request sampled, spans handed to a
// batch processor whose exporter discards them, and the duration
// histograms aggregated by a reader that is never collected. The
// difference with newOurs is the cost of tracing and metrics in the
// server, not of exporting them.
func newOursTraced() (http.Handler, func()) {
	tp, mp := tracedProviders()
	mw, err := mcpotel.New(mcpotel.Options{TracerProvider: tp, MeterProvider: mp,
		Propagator: propagation.TraceContext{}, NetworkTransport: "tcp"})
	if err != nil {
		panic(err)
	}
	h, release := newOursWith(&mcp.ServerOptions{
		ReceivingMiddleware: []mcp.Middleware{mw.Receiving},
		SendingMiddleware:   []mcp.Middleware{mw.Sending},
	})
	return h, func() {
		release()
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	}
}

// newOursSDKFloor is newOursTraced with, instead of the otel module, the
// least any instrumentation following the conventions asks of the same
// SDK per message: a SERVER span with a name and seven attributes made
// once (the values a tools/call's span carries, request id included),
// started and ended, and one histogram record with an attribute set
// made once. It reads nothing of the message and nothing of its context:
// its cost over newOurs is a floor under the otel row's.
func newOursSDKFloor() (http.Handler, func()) {
	tp, mp := tracedProviders()
	h, release := newOursWith(&mcp.ServerOptions{ReceivingMiddleware: []mcp.Middleware{floorMiddleware(tp, mp, stageFloor)}})
	return h, func() {
		release()
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	}
}

// tracedProviders are the SDK providers of the traced rows: every span
// sampled and handed to a batch processor whose exporter discards, the
// histograms aggregated by a reader that is never collected.
func tracedProviders() (*sdktrace.TracerProvider, *sdkmetric.MeterProvider) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(discardExporter{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	return tp, mp
}

// floorStage is how much of the SDK floor's work a floor middleware does;
// the floor row does it all, BenchmarkTracingCost climbs the stages.
type floorStage int

const (
	stageLookup floorStage = iota // the parent span looked up, as Start does first
	stageSpan                     // a span started and ended
	stageAttrs                    // with its seven attributes
	stageFloor                    // and the histogram record
)

// floorMiddleware is the floor row's middleware on tp and mp, doing the
// SDK's work up to stage.
func floorMiddleware(tp *sdktrace.TracerProvider, mp *sdkmetric.MeterProvider, stage floorStage) mcp.Middleware {
	tracer := tp.Tracer("floor")
	hist, err := mp.Meter("floor").Float64Histogram("mcp.server.operation.duration")
	if err != nil {
		panic(err)
	}
	attrs := []attribute.KeyValue{
		attribute.String("mcp.method.name", mcp.MethodToolsCall), attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", "echo"), attribute.String("network.transport", "tcp"),
		attribute.String("mcp.protocol.version", protocolVersion),
		attribute.String("mcp.session.id", "0123456789abcdef0123456789abcdef"), attribute.String("jsonrpc.request.id", "1000"),
	}
	record := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs[:5]...))}
	kind := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if stage == stageLookup {
				trace.SpanFromContext(ctx)
				return next(ctx, method, params)
			}
			ctx, span := tracer.Start(ctx, "tools/call echo", kind...)
			if stage >= stageAttrs {
				span.SetAttributes(attrs...)
			}
			res, err := next(ctx, method, params)
			span.End()
			if stage >= stageFloor {
				hist.Record(ctx, 0.001, record...)
			}
			return res, err
		}
	}
}

// discardExporter is a span exporter that drops every span.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

func newOursWith(opts *mcp.ServerOptions) (http.Handler, func()) {
	s := oursServer(opts)
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s },
		&mcphttp.Options{JSONResponse: true, SessionTimeout: -1})
	return h, func() { h.Close() }
}

// oursServer is mcpstack's Server with the echo tool, for every transport.
func oursServer(opts *mcp.ServerOptions) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, opts)
	err := mcp.AddTool(s, &mcp.Tool{Name: "echo", InputSchema: json.RawMessage(echoSchema)},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams, a echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
		})
	if err != nil {
		panic(err)
	}
	return s
}

// goSDKServer is the go-sdk's Server with the echo tool.
func goSDKServer() *gosdk.Server {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	s.AddTool(&gosdk.Tool{Name: "echo", InputSchema: json.RawMessage(echoSchema)},
		func(ctx context.Context, req *gosdk.CallToolRequest) (*gosdk.CallToolResult, error) {
			var a echoArgs
			if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
				return nil, err
			}
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: a.Text}}}, nil
		})
	return s
}

// mcpGoServer is mcp-go's MCPServer with the echo tool.
func mcpGoServer() *mcpgoserver.MCPServer {
	s := mcpgoserver.NewMCPServer("bench", "1.0.0", mcpgoserver.WithToolCapabilities(false))
	s.AddTool(mcpgo.NewToolWithRawSchema("echo", "", json.RawMessage(echoSchema)),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			t, err := req.RequireString("text")
			if err != nil {
				return nil, err
			}
			return mcpgo.NewToolResultText(t), nil
		})
	return s
}

// newGoSDK serves the official go-sdk's Server through its Streamable HTTP
// handler, stateful, with its JSONResponse option.
func newGoSDK() (http.Handler, func()) {
	s := goSDKServer()
	h := gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{JSONResponse: true})
	return h, func() {}
}

// newMCPGo serves mark3labs/mcp-go's MCPServer through its Streamable HTTP
// server with stateful sessions (it answers requests with JSON unless the
// handler sends notifications first).
func newMCPGo() (http.Handler, func()) {
	s := mcpGoServer()
	h := mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStateful(true))
	return h, func() {}
}

// bareResult is the baseline handler's fixed answer to any request.
var bareResult = []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}`)

// bareEchoHead starts the bare handler's echo: the request itself becomes
// the result.
var bareEchoHead = []byte(`{"jsonrpc":"2.0","id":1,"result":`)

// bareEchoOver is the body size above which the bare handler answers the
// body itself (a raw echo, for the 1 MiB echo) instead of its fixed result.
const bareEchoOver = 64 << 10

// newBare is the baseline: a net/http handler that reads the body and
// answers a fixed JSON-RPC result (202 for notifications), with a fixed
// session id so that the client's flow is the same. A body over
// bareEchoOver is echoed back whole, as the result: the floor of a 1 MiB
// echo.
func newBare() (http.Handler, func()) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if bytes.Contains(body, []byte(`"method":"notifications/`)) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Mcp-Session-Id", "bare")
		w.Header().Set("Content-Type", "application/json")
		if len(body) > bareEchoOver {
			// The 1 MiB echo: answer the request's own bytes, so that
			// the bare figure is the floor of moving them both ways.
			w.Header().Set("Content-Length", strconv.Itoa(len(bareEchoHead)+len(body)+1))
			w.Write(bareEchoHead)
			w.Write(body)
			w.Write([]byte("}"))
			return
		}
		w.Write(bareResult)
	})
	return h, func() {}
}
