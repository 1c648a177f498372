package mcphttp

import (
	"bytes"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
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
func idleSessionBytes(tb testing.TB, h *Handler, n int) idleCost {
	tb.Helper()
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
		ids = append(ids, directSession(tb, h))
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
				h := NewHandler(func(*http.Request) *mcp.Server { return s }, &Options{JSONResponse: true, SessionTimeout: mode.timeout})
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

// TestRequestStreamsInline checks that the first backing array of a
// session's request list keeps no stale stream once the list has grown
// out of it: an idle session would hold that stream and its buffers.
func TestRequestStreamsInline(t *testing.T) {
	for _, n := range []int{1, 2, 5, maxLinearRequests + 1} {
		var rs requestStreams
		streams := make([]*outStream, n)
		for i := range n {
			streams[i] = &outStream{}
			rs.put(jsonrpc.Int64ID(int64(i)), streams[i])
		}
		if n > 1 && rs.list1 != ([1]requestStream{}) {
			t.Errorf("%d requests: the inline array still holds %v", n, rs.list1[0].id)
		}
		for i := range n {
			if got := rs.remove(jsonrpc.Int64ID(int64(i)), nil); got != streams[i] {
				t.Errorf("%d requests: remove(%d) = %p, want %p", n, i, got, streams[i])
			}
		}
		if rs.len() != 0 {
			t.Errorf("%d requests: %d left after removing all", n, rs.len())
		}
	}
}
