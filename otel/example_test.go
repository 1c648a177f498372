package otel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"slices"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpstack/mcpstack/mcp"
	mcpotel "github.com/mcpstack/mcpstack/otel"
)

// A traced server and a traced client: each side records a span for the
// tool call, and the server's span continues the client's trace, whose
// context traveled in the request's params._meta.
func Example() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	mw, err := mcpotel.New(mcpotel.Options{TracerProvider: tp, Propagator: propagation.TraceContext{}})
	if err != nil {
		log.Fatal(err)
	}

	srv := mcp.NewServer(&mcp.Implementation{Name: "traced", Version: "1"}, &mcp.ServerOptions{
		ReceivingMiddleware: []mcp.Middleware{mw.Receiving},
		SendingMiddleware:   []mcp.Middleware{mw.Sending},
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "add"}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams, in struct{ A, B int }) (*mcp.CallToolResult, map[string]int, error) {
		return nil, map[string]int{"sum": in.A + in.B}, nil
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "caller", Version: "1"}, &mcp.ClientOptions{
		ReceivingMiddleware: []mcp.Middleware{mw.Receiving},
		SendingMiddleware:   []mcp.Middleware{mw.Sending},
	})

	ctx := context.Background()
	ct, st := mcp.InMemoryTransports()
	if _, err := srv.Connect(ctx, st); err != nil {
		log.Fatal(err)
	}
	cs, err := client.Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "add", Arguments: json.RawMessage(`{"A":1,"B":2}`)}); err != nil {
		log.Fatal(err)
	}
	cs.Close()

	var out []string
	var traces = map[string]bool{}
	for _, s := range spans.GetSpans() {
		if s.Name == "tools/call add" {
			out = append(out, fmt.Sprintf("%s (%s)", s.Name, s.SpanKind))
			traces[s.SpanContext.TraceID().String()] = true
		}
	}
	slices.Sort(out)
	for _, line := range out {
		fmt.Println(line)
	}
	fmt.Println("one trace:", len(traces) == 1)
	// Output:
	// tools/call add (client)
	// tools/call add (server)
	// one trace: true
}
