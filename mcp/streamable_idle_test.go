package mcp

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// residentBytes returns the resident set size of the process, read from
// /proc/self/statm (its second field, in pages), and false where that file
// does not exist (systems other than Linux).
func residentBytes() (uint64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	fields := bytes.Fields(b)
	if len(fields) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseUint(string(fields[1]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}

// idleCost is what one idle session holds, on average.
type idleCost struct {
	heap  float64 // Go heap and goroutine stacks, in bytes
	rss   float64 // resident set, in bytes; 0 when unknown
	rssOK bool    // rss was measured
}

// idleSessionBytes opens n sessions on h (initialize, then
// notifications/initialized, by calling the handler directly) and returns
// the growth of the Go heap plus goroutine stacks, and of the resident set
// once the runtime has returned its free memory to the system, divided by
// n: what an idle session costs. The sessions stay open until h is closed.
func idleSessionBytes(tb testing.TB, h *StreamableHTTPHandler, n int) idleCost {
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
	measure := func() (heap, rss uint64, rssOK bool) {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		debug.FreeOSMemory()
		rss, rssOK = residentBytes()
		return ms.HeapAlloc + ms.StackInuse, rss, rssOK
	}
	before, rssBefore, ok1 := measure()
	for range n {
		sid := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}`, "")
		post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid)
		ids = append(ids, sid)
	}
	after, rssAfter, ok2 := measure()
	runtime.KeepAlive(ids)
	var c idleCost
	if after > before {
		c.heap = float64(after-before) / float64(n)
	}
	if c.rssOK = ok1 && ok2; c.rssOK && rssAfter > rssBefore {
		c.rss = float64(rssAfter-rssBefore) / float64(n)
	}
	return c
}

// BenchmarkStreamableIdleSession reports the heap and stack bytes that
// one idle session holds (B/session), and on Linux the growth of the
// resident set per session (B-rss/session), with 10,000 sessions open (as
// bench/ measures it: JSON answers, sessions that never expire, and with
// the default expiry, whose timer each session holds). Run it with
// -benchtime 1x -count 5 and take the medians: the resident set depends
// on how the runtime's pages happen to be filled.
func BenchmarkStreamableIdleSession(b *testing.B) {
	for _, mode := range []struct {
		name    string
		timeout time.Duration
	}{{"NoExpiry", -1}, {"DefaultExpiry", 0}} {
		b.Run(mode.name, func(b *testing.B) {
			var per idleCost
			for b.Loop() {
				s := benchServer(b)
				h := NewStreamableHTTPHandler(func(*http.Request) *Server { return s }, &StreamableHTTPOptions{JSONResponse: true, SessionTimeout: mode.timeout})
				per = idleSessionBytes(b, h, 10000)
				h.Close()
			}
			b.ReportMetric(per.heap, "B/session")
			if per.rssOK {
				b.ReportMetric(per.rss, "B-rss/session")
			}
		})
	}
}
