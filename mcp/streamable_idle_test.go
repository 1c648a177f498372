package mcp

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// idleSessionBytes opens n sessions on h (initialize, then
// notifications/initialized, by calling the handler directly) and returns
// the growth of the Go heap plus goroutine stacks, after garbage
// collection, divided by n: what an idle session costs. The sessions stay
// open until h is closed.
func idleSessionBytes(tb testing.TB, h *StreamableHTTPHandler, n int) float64 {
	tb.Helper()
	post := func(body, sid string) string {
		req := httptest.NewRequest("POST", "http://localhost/mcp", strings.NewReader(body))
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		w := &benchWriter{h: http.Header{}}
		h.ServeHTTP(w, req)
		if w.code != http.StatusOK && w.code != http.StatusAccepted {
			tb.Fatalf("status %d: %s", w.code, w.buf.String())
		}
		return w.h.Get("Mcp-Session-Id")
	}
	ids := make([]string, 0, n) // allocated before the first measure
	measure := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc + ms.StackInuse
	}
	before := measure()
	for range n {
		sid := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}`, "")
		post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid)
		ids = append(ids, sid)
	}
	after := measure()
	runtime.KeepAlive(ids)
	if after < before {
		return 0
	}
	return float64(after-before) / float64(n)
}

// BenchmarkStreamableIdleSession reports the heap and stack bytes that
// one idle session holds, with 10,000 sessions open (as bench/ measures
// it: JSON answers, sessions that never expire, and with the default
// expiry, whose timer each session holds).
func BenchmarkStreamableIdleSession(b *testing.B) {
	for _, mode := range []struct {
		name    string
		timeout time.Duration
	}{{"NoExpiry", -1}, {"DefaultExpiry", 0}} {
		b.Run(mode.name, func(b *testing.B) {
			var per float64
			for b.Loop() {
				s := benchServer(b)
				h := NewStreamableHTTPHandler(func(*http.Request) *Server { return s }, &StreamableHTTPOptions{JSONResponse: true, SessionTimeout: mode.timeout})
				per = idleSessionBytes(b, h, 10000)
				h.Close()
			}
			b.ReportMetric(per, "B/session")
		})
	}
}
