package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

// BenchmarkTracingCost calls mcpstack's handler directly with tools/call
// (no network and no client, as handlerCost does), under each stage of
// tracing's cost with the traced rows' SDK configuration: no middleware;
// the parent span looked up; a span started and ended; with its seven
// attributes; with the histogram record (the floor row's middleware);
// the otel module (the otel row's). Timings need -cpu 1 and a quiet
// machine; instruction counts do not (bench/README.md):
//
//	go test -c -o /tmp/bench.test . && GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no \
//	  /tmp/bench.test -test.run '^$' -test.bench 'TracingCost/otel$' -test.cpu 1 -test.benchtime 12000x
//
// at two -test.benchtime counts, the difference of the totals over the
// difference of the counts.
func BenchmarkTracingCost(b *testing.B) {
	stages := []struct {
		name string
		new  func() (http.Handler, func())
	}{
		{"none", newOurs},
		{"lookup", floorAt(stageLookup)},
		{"span", floorAt(stageSpan)},
		{"attributes", floorAt(stageAttrs)},
		{"floor", newOursSDKFloor},
		{"otel", newOursTraced},
	}
	for _, st := range stages {
		b.Run(st.name, func(b *testing.B) {
			h, release := st.new()
			defer release()
			sid, err := directHandshake(h)
			if err != nil {
				b.Fatal(err)
			}
			id := 2
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, directRequest(sid, callBody(id, "hello"), false))
				id++
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
				}
			}
		})
	}
}

// floorAt is the floor row's server, its middleware doing the SDK's work
// up to stage.
func floorAt(stage floorStage) func() (http.Handler, func()) {
	return func() (http.Handler, func()) {
		tp, mp := tracedProviders()
		h, release := newOursWith(&mcp.ServerOptions{ReceivingMiddleware: []mcp.Middleware{floorMiddleware(tp, mp, stage)}})
		return h, func() {
			release()
			tp.Shutdown(context.Background())
			mp.Shutdown(context.Background())
		}
	}
}
