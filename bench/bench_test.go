package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// TestMain lets the test binary be the split host's child too.
// The rows on Redis run when MCPSTACK_REDIS_URL names one (see
// testImpls).
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv(redisEnv); !ok {
		os.Setenv(redisEnv, os.Getenv("MCPSTACK_REDIS_URL"))
	}
	if _, ok := os.LookupEnv(childEnv); ok {
		if err := serveChild(); err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testImpls are the servers under test: all of them, the rows on Redis
// only when a Redis is at hand.
func testImpls() []impl { return config{Redis: redisURL() != ""}.impls() }

// start serves im on 127.0.0.1, in this process, and opens n sessions.
func start(tb testing.TB, im impl, n int) *target {
	tb.Helper()
	return startOn(tb, &sharedHost{}, im, n)
}

// startOn serves im on h and opens n sessions.
func startOn(tb testing.TB, h host, im impl, n int) *target {
	tb.Helper()
	ctx := context.Background()
	url, inst, err := h.start(ctx, im.name)
	if err != nil {
		tb.Fatal(err)
	}
	t := &target{impl: im, host: h, url: url, instance: inst, cl: newClient(url, n, true)}
	t.cl.modern = im.modern
	tb.Cleanup(func() { t.cl.close(); h.stop(ctx, inst) })
	if err := t.open(ctx, n, 4); err != nil {
		tb.Fatalf("%s: %v", im.name, err)
	}
	return t
}

// TestEcho checks that every server under test answers the client's flow
// and that the MCP servers echo, small and 1 MiB.
func TestEcho(t *testing.T) {
	ctx := context.Background()
	for _, im := range testImpls() {
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
	for _, im := range testImpls() {
		b.Run(im.name, func(b *testing.B) {
			tg := start(b, im, 1)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tg.cl.call(ctx, tg.sessions[0], tg.body("hello")); err != nil {
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
	for _, im := range testImpls() {
		b.Run(im.name, func(b *testing.B) {
			const conc = 16
			tg := start(b, im, conc)
			var next atomic.Int64
			b.SetParallelism((conc + 1) / 2) // GOMAXPROCS is multiplied in
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				sid := tg.sessions[int(next.Add(1)-1)%conc]
				for pb.Next() {
					if _, err := tg.cl.call(ctx, sid, tg.body("hello")); err != nil {
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
	for _, im := range testImpls() {
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
	for _, im := range testImpls() {
		b.Run(im.name, func(b *testing.B) {
			tg := start(b, im, 1)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tg.cl.call(ctx, tg.sessions[0], tg.body(text)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSplitHost runs the servers in a child process (this test binary,
// unpinned) and checks that calls, the child's figures and the idle
// measure all come back, and that the child's figures are its own: the
// child allocates while serving calls, and a stop makes the instance
// unreachable.
func TestSplitHost(t *testing.T) {
	ctx := context.Background()
	h, err := startChild(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	// Every implementation starts in the child by its name (names with
	// characters a query string escapes, such as "+", included).
	for _, im := range testImpls() {
		if err := startOn(t, h, im, 1).check(ctx); err != nil {
			t.Fatalf("%s in the child: %v", im.name, err)
		}
	}
	ours := impls()[0]
	tg := startOn(t, h, ours, 2)
	if err := tg.check(ctx); err != nil {
		t.Fatal(err)
	}
	lv, err := tg.calls(ctx, 40, 2)
	if err != nil {
		t.Fatal(err)
	}
	if lv.Allocs < 1 || lv.Bytes < 100 {
		t.Errorf("the child's figures per call are implausible: %+v", lv)
	}
	heap, _, err := idleBytes(ctx, h, ours, 200, true)
	if err != nil {
		t.Fatal(err)
	}
	if heap < 100 || heap > 100_000 {
		t.Errorf("idle session heap = %.0f bytes, implausible", heap)
	}
	if _, _, err := h.start(ctx, "nonesuch"); err == nil {
		t.Error("starting an unknown implementation succeeded")
	}
	url, inst, err := h.start(ctx, "bare")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.stop(ctx, inst); err != nil {
		t.Fatal(err)
	}
	cl := newClient(url, 1, true)
	defer cl.close()
	if _, err := cl.handshake(ctx); err == nil {
		t.Error("a stopped instance still answers")
	}
}

func TestCPUs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{"", nil, false},
		{"0", []int{0}, false},
		{"0,3,7", []int{0, 3, 7}, false},
		{"0,x", nil, true},
		{"-1", nil, true},
	} {
		got, err := parseCPUs(tc.in)
		if (err != nil) != tc.bad || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("parseCPUs(%q) = %v, %v", tc.in, got, err)
		}
		if !tc.bad && formatCPUs(got) != tc.in {
			t.Errorf("formatCPUs(%v) = %q, want %q", got, formatCPUs(got), tc.in)
		}
	}
}
