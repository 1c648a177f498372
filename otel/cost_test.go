package otel_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	mcpotel "github.com/mcpstack/mcpstack/otel"
)

// TestSpansPerRequest checks what a traced server does per tools/call in
// the shape bench/ measures (Streamable HTTP with JSON answers, a
// 2025-11-25 session, both middleware installed, an untraced client):
// exactly one span, the SERVER span of the call, and one record of
// mcp.server.operation.duration; the sending middleware, which a server
// installs for its own requests and notifications, makes nothing when
// the server sends none.
func TestSpansPerRequest(t *testing.T) {
	tel := newTelemetry(t)
	srv := testServer(t, tel.middleware(t, "tcp"))
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return srv }, &mcphttp.Options{JSONResponse: true})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { h.Close() })
	ctx := context.Background()
	cl := mcp.NewClient(&mcp.Implementation{Name: "plain", Version: "1"}, &mcp.ClientOptions{EraPolicy: mcp.EraPolicyLegacy})
	cs, err := cl.Connect(ctx, &mcphttp.ClientTransport{Endpoint: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var before metricdata.ResourceMetrics
	if err := tel.reader.Collect(ctx, &before); err != nil {
		t.Fatal(err)
	}
	tel.spans.Reset()
	const calls = 20
	for range calls {
		if _, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	spans := tel.spans.GetSpans()
	for _, s := range spans {
		if s.Name != "tools/call echo" || s.SpanKind != trace.SpanKindServer {
			t.Errorf("span %q of kind %s: want only tools/call echo, SERVER", s.Name, s.SpanKind)
		}
	}
	if len(spans) != calls {
		t.Errorf("%d spans for %d calls, want one each", len(spans), calls)
	}
	var after metricdata.ResourceMetrics
	if err := tel.reader.Collect(ctx, &after); err != nil {
		t.Fatal(err)
	}
	if got := records(after, "mcp.server.operation.duration") - records(before, "mcp.server.operation.duration"); got != calls {
		t.Errorf("%d server duration records for %d calls, want one each", got, calls)
	}
	if got := records(after, "mcp.client.operation.duration"); got != 0 {
		t.Errorf("%d client duration records: the server sent nothing", got)
	}
}

// records counts the data points recorded in the histogram named name.
func records(rm metricdata.ResourceMetrics, name string) uint64 {
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				n += dp.Count
			}
		}
	}
	return n
}

// TestDurationIsTheSpans checks that the duration histograms record the
// duration of the message's span, whose start and end times the SDK took,
// rather than a measurement of their own: the clock is read twice per
// message, not four times, and a span and its data point agree. Each
// handler sleeps a different time, so that a histogram timed apart from
// the span would differ from it by more than rounding.
func TestDurationIsTheSpans(t *testing.T) {
	tel := newTelemetry(t)
	mw := tel.middleware(t, "")
	for _, d := range []time.Duration{time.Millisecond, 3 * time.Millisecond} {
		next := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			time.Sleep(d)
			return &mcp.CallToolResult{}, nil
		}
		params := json.RawMessage(`{"name":"echo"}`)
		mw.Receiving(next)(context.Background(), mcp.MethodToolsCall, params)
		mw.Sending(next)(context.Background(), mcp.MethodToolsCall, params)
	}
	sums := map[trace.SpanKind]float64{}
	for _, s := range tel.spans.GetSpans() {
		sums[s.SpanKind] += s.EndTime.Sub(s.StartTime).Seconds()
	}
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for name, kind := range map[string]trace.SpanKind{"mcp.server.operation.duration": trace.SpanKindServer, "mcp.client.operation.duration": trace.SpanKindClient} {
		var sum float64
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name == name {
					for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
						sum += dp.Sum
					}
				}
			}
		}
		if math.Abs(sum-sums[kind]) > 1e-9 || sum == 0 {
			t.Errorf("%s: durations sum to %.9f s, the %s spans' to %.9f s: want the same", name, sum, kind, sums[kind])
		}
	}
}

// TestDurationWithoutSpanTimes checks the histograms of messages whose
// span keeps no times (not sampled, or of the API's no-op
// implementation): the middleware then times them itself.
func TestDurationWithoutSpanTimes(t *testing.T) {
	for name, tp := range map[string]trace.TracerProvider{
		"not sampled": sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample())),
		"no-op":       noop.NewTracerProvider(),
	} {
		t.Run(name, func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			defer mp.Shutdown(context.Background())
			mw, err := mcpotel.New(mcpotel.Options{TracerProvider: tp, MeterProvider: mp, Propagator: propagation.TraceContext{}})
			if err != nil {
				t.Fatal(err)
			}
			const d = 2 * time.Millisecond
			next := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
				time.Sleep(d)
				return &mcp.CallToolResult{}, nil
			}
			mw.Receiving(next)(context.Background(), mcp.MethodToolsCall, json.RawMessage(`{"name":"echo"}`))
			var rm metricdata.ResourceMetrics
			if err := reader.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			var sum float64
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
						sum += dp.Sum
					}
				}
			}
			if sum < d.Seconds() || sum > 10 {
				t.Errorf("recorded %.6f s for a message handled in at least %v", sum, d)
			}
		})
	}
}
