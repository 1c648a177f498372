package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// start serves im on 127.0.0.1 and opens n sessions.
func start(tb testing.TB, im impl, n int) *target {
	tb.Helper()
	h, release := im.new()
	srv := httptest.NewServer(h)
	t := &target{impl: im, srv: srv, cl: newClient(srv.URL, n, true), release: release}
	tb.Cleanup(func() { t.cl.close(); srv.Close(); release() })
	ids, err := t.cl.handshakes(context.Background(), n, 4)
	if err != nil {
		tb.Fatalf("%s: %v", im.name, err)
	}
	t.sessions = ids
	return t
}

// TestEcho checks that every server under test answers the client's flow
// and that the MCP servers echo, small and 1 MiB.
func TestEcho(t *testing.T) {
	ctx := context.Background()
	for _, im := range impls() {
		t.Run(im.name, func(t *testing.T) {
			tg := start(t, im, 2)
			if err := tg.check(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := tg.bigEcho(ctx, 1); err != nil {
				t.Fatal(err)
			}
			lv, err := tg.calls(ctx, 20, 2)
			if err != nil {
				t.Fatal(err)
			}
			if lv.RPS <= 0 || lv.Allocs <= 0 {
				t.Errorf("implausible figures: %+v", lv)
			}
			if a, _, err := handlerCost(im, 50); err != nil || a <= 0 {
				t.Errorf("handlerCost = %v allocs, %v", a, err)
			}
		})
	}
}

// TestMedian checks the median helper.
func TestMedian(t *testing.T) {
	id := func(f float64) float64 { return f }
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.in, id); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// BenchmarkToolsCall measures one tools/call round trip, sequentially, per
// server. Allocations are the whole process's (client included).
func BenchmarkToolsCall(b *testing.B) {
	ctx := context.Background()
	for _, im := range impls() {
		b.Run(im.name, func(b *testing.B) {
			tg := start(b, im, 1)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tg.cl.call(ctx, tg.sessions[0], callBody(tg.id(), "hello")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkToolsCallParallel measures tools/call with 16 client goroutines,
// each on its own session.
func BenchmarkToolsCallParallel(b *testing.B) {
	ctx := context.Background()
	for _, im := range impls() {
		b.Run(im.name, func(b *testing.B) {
			const conc = 16
			tg := start(b, im, conc)
			var next atomic.Int64
			b.SetParallelism((conc + 1) / 2) // GOMAXPROCS is multiplied in
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				sid := tg.sessions[int(next.Add(1)-1)%conc]
				for pb.Next() {
					if _, err := tg.cl.call(ctx, sid, callBody(tg.id(), "hello")); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkInitialize measures one initialize handshake (initialize and
// notifications/initialized) per server.
func BenchmarkInitialize(b *testing.B) {
	ctx := context.Background()
	for _, im := range impls() {
		b.Run(im.name, func(b *testing.B) {
			tg := start(b, im, 1)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tg.cl.handshake(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEchoMiB measures a tools/call echoing 1 MiB per server.
func BenchmarkEchoMiB(b *testing.B) {
	ctx := context.Background()
	text := strings.Repeat("a", 1<<20)
	for _, im := range impls() {
		b.Run(im.name, func(b *testing.B) {
			tg := start(b, im, 1)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tg.cl.call(ctx, tg.sessions[0], callBody(tg.id(), text)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
