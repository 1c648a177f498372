package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
)

// Resumption: the server drops an SSE stream in the middle of a response
// that carries many notifications; the client resumes, and receives every
// message exactly once, in order, and the final result.

const resumeN = 200

// checkSequence checks that got is 1..n.
func checkSequence(t *testing.T, what string, got []float64, n int) {
	t.Helper()
	if len(got) != n {
		t.Errorf("%s: %d notifications, want %d", what, len(got), n)
	}
	for i, v := range got {
		if v != float64(i+1) {
			t.Fatalf("%s: notification %d carries %v, want %d (lost, repeated or reordered): %v", what, i, v, i+1, got)
		}
	}
}

func TestStreamableResumePolling(t *testing.T) {
	// The server closes each connection after 7 messages, with a retry
	// field (SSE polling); the client reconnects with Last-Event-ID.
	ctx := context.Background()
	h := NewHandler(func(*http.Request) *mcp.Server { return toolServer(t, nil) }, &Options{MaxEventsPerConnection: 7, RetryInterval: 1})
	rec := &headerRecorder{h: h}
	ts := httptest.NewServer(rec)
	defer ts.Close()
	defer h.Close()
	var mu sync.Mutex
	var progress []float64
	// The client's own backoff is an hour: only by honouring the server's
	// retry field (1ms) can it finish (the deadline only guards a failure).
	cs, err := samplingClient(&progress, &mu).Connect(ctx, &ClientTransport{Endpoint: ts.URL, DisableStandaloneSSE: true, RetryDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if got := callText(t, cs, cctx, progressCall(resumeN, "poll")); got != "done" {
		t.Fatalf("result %q", got)
	}
	mu.Lock()
	checkSequence(t, "polled stream", progress, resumeN)
	mu.Unlock()
	resumes := 0
	for _, r := range rec.requests() {
		if r.method == "GET" {
			last := r.header.Get("Last-Event-ID")
			if _, _, ok := parseEventID(last); !ok {
				t.Errorf("GET without a valid Last-Event-ID: %q", last)
			}
			resumes++
		}
	}
	if want := (resumeN + 1) / 7; resumes < want {
		t.Errorf("%d resumptions, want at least %d", resumes, want)
	}
	// Sampling works across polled streams too.
	if got := callText(t, cs, ctx, &mcp.CallToolRequestParams{Name: "sample", Arguments: json.RawMessage(`{}`)}); got != "model said: forty-two" {
		t.Fatalf("sample: %q", got)
	}
}

func TestStreamableResumeAfterDrop(t *testing.T) {
	// A proxy cuts every TCP connection after 30 message events, in the
	// middle of the 30th: the client sees a broken stream (no retry field,
	// an incomplete event) and must resume from the last complete event.
	for _, jsonMode := range []bool{false, true} {
		t.Run(fmt.Sprint("json=", jsonMode), func(t *testing.T) {
			ctx := context.Background()
			s := toolServer(t, nil)
			h, ts := serve(t, s, &Options{JSONResponse: jsonMode})
			proxy := newCuttingProxy(t, ts.Listener.Addr().String(), 30)
			var mu sync.Mutex
			var progress []float64
			var logs []float64
			c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(ctx context.Context, cs *mcp.ClientSession, p *mcp.ProgressNotificationParams) {
					mu.Lock()
					progress = append(progress, p.Progress)
					mu.Unlock()
				},
				LoggingMessageHandler: func(ctx context.Context, cs *mcp.ClientSession, p *mcp.LoggingMessageNotificationParams) {
					n, _ := strconv.Atoi(string(p.Data))
					mu.Lock()
					logs = append(logs, float64(n))
					mu.Unlock()
				},
			})
			cs, err := c.Connect(ctx, &ClientTransport{Endpoint: "http://" + proxy.addr(), RetryDelay: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for round := range 2 {
				mu.Lock()
				progress = progress[:0]
				mu.Unlock()
				if got := callText(t, cs, ctx, progressCall(resumeN, "drop")); got != "done" {
					t.Fatalf("round %d: result %q", round, got)
				}
				mu.Lock()
				checkSequence(t, "dropped POST stream", progress, resumeN)
				mu.Unlock()
			}
			// The standalone GET stream resumes as well.
			ss := onlySession(t, h).ss
			for i := 1; i <= 100; i++ {
				if err := ss.Notify(ctx, mcp.NotificationMessage, &mcp.LoggingMessageNotificationParams{Level: mcp.LoggingLevelInfo, Data: json.RawMessage(strconv.Itoa(i))}); err != nil {
					t.Fatal(err)
				}
			}
			eventually(t, "100 log messages on the GET stream", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(logs) >= 100
			})
			mu.Lock()
			checkSequence(t, "dropped GET stream", logs, 100)
			mu.Unlock()
			if proxy.cuts.Load() < 2*resumeN/30 {
				t.Errorf("only %d connections were cut", proxy.cuts.Load())
			}
		})
	}
}

// cuttingProxy forwards TCP connections to a backend and cuts each one in
// the middle of its n-th SSE message event.
type cuttingProxy struct {
	ln      net.Listener
	backend string
	n       int
	cuts    atomic.Int32
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn
}

func newCuttingProxy(t *testing.T, backend string, n int) *cuttingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cuttingProxy{ln: ln, backend: backend, n: n}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *cuttingProxy) addr() string { return p.ln.Addr().String() }

func (p *cuttingProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		b, err := net.Dial("tcp", p.backend)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, b)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			io.Copy(b, c)
			b.Close()
		}()
		go func() {
			defer p.wg.Done()
			p.pipe(c, b)
		}()
	}
}

// pipe copies backend to client, counting the message events ("data: {")
// and cutting both connections just after the n-th one's data prefix.
func (p *cuttingProxy) pipe(client, backend net.Conn) {
	defer client.Close()
	defer backend.Close()
	const marker = "data: {"
	matched, seen := 0, 0
	buf := make([]byte, 32<<10)
	for {
		n, err := backend.Read(buf)
		chunk := buf[:n]
		for i, c := range chunk {
			switch {
			case c == marker[matched]:
				matched++
			case c == marker[0]:
				matched = 1
			default:
				matched = 0
			}
			if matched == len(marker) {
				matched = 0
				seen++
				if seen == p.n {
					client.Write(chunk[:i+1])
					p.cuts.Add(1)
					return
				}
			}
		}
		if _, werr := client.Write(chunk); werr != nil || err != nil {
			return
		}
	}
}
