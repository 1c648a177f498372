package mcphttp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// Tests of the bounds on connections, sessions and queued requests of the
// Streamable HTTP handler (issue #16 items 7, 11 and 13).

// rawConn opens a TCP connection to ts with a small receive buffer, so
// that a server writing to a client that does not read blocks soon.
func rawConn(t *testing.T, ts *httptest.Server) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	tc := c.(*net.TCPConn)
	_ = tc.SetReadBuffer(4096)
	t.Cleanup(func() { tc.Close() })
	return tc
}

// TestStreamableBodyReadTimeout: a POST whose body trickles in loses its
// connection after ReadTimeout; before, it was held for ever.
func TestStreamableBodyReadTimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string // sent of a declared 100 bytes
	}{
		{"nothing", ""},
		{"one byte", "{"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ts := serve(t, toolServer(t, nil), &Options{ReadTimeout: 100 * time.Millisecond})
			c := rawConn(t, ts)
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n%s", ts.Listener.Addr(), tc.body)
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			b, err := io.ReadAll(c)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("the connection of a trickling body was still open after 20s")
			}
			if len(b) > 0 && !strings.HasPrefix(string(b), "HTTP/1.1 400") {
				t.Fatalf("answer %q, want a 400 or a closed connection", b)
			}
		})
	}
}

// bigServer has one tool, big, whose result is n bytes of text.
func bigServer(t *testing.T, n int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, nil)
	text := strings.Repeat("x", n)
	if err := s.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.ServerSession, *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStreamableWriteTimeout: an answer that the client does not read ends
// after WriteTimeout, and its exchange with it; before, the write blocked
// for ever, holding the answer's memory and goroutine.
func TestStreamableWriteTimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		json bool
	}{{"sse", false}, {"json", true}} {
		t.Run(tc.name, func(t *testing.T) {
			h, ts := serve(t, bigServer(t, 16<<20), &Options{WriteTimeout: 200 * time.Millisecond, JSONResponse: tc.json})
			sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
			c := rawConn(t, ts)
			body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{}}}`
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n%s", ts.Listener.Addr(), sid, len(body), body)
			eventually(t, "the exchange is counted", func() bool { return h.exchanges.Load() == 1 })
			// The client reads nothing: the server's write must give up.
			eventually(t, "the unread answer is given up", func() bool { return h.exchanges.Load() == 0 })
		})
	}
}

// TestStreamableSSEOutlivesServerTimeouts: with an http.Server's
// ReadTimeout and WriteTimeout far shorter than a stream, SSE streams go
// on, since the handler manages the deadlines per body and per event.
func TestStreamableSSEOutlivesServerTimeouts(t *testing.T) {
	release := make(chan struct{})
	s := toolServer(t, release)
	h := NewHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ReadTimeout = 200 * time.Millisecond
	ts.Config.WriteTimeout = 200 * time.Millisecond
	ts.Start()
	t.Cleanup(func() { h.Close(); ts.Close() })
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)

	req, _ := http.NewRequest("GET", ts.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := newSSEReader(resp.Body, 0)
	if _, err := r.next(); err != nil { // the priming event
		t.Fatal(err)
	}
	call := rawAsync("POST", ts.URL, map[string]string{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
	time.Sleep(time.Second) // five times the server's timeouts
	if err := h.session(sid).ss.Notify(context.Background(), "notifications/tools/list_changed", nil); err != nil {
		t.Fatal(err)
	}
	if ev, err := r.next(); err != nil || !strings.Contains(string(ev.data), "list_changed") {
		t.Fatalf("GET stream after the server's timeouts: %q, %v", ev.data, err)
	}
	close(release)
	if a := <-call; a.err != nil || !strings.Contains(a.body, "released") {
		t.Fatalf("SSE answer after the server's timeouts: %v %q", a.err, a.body)
	}
}

// TestStreamableMaxSessions: past MaxSessions, an initialize gets 503 with
// Retry-After and a JSON-RPC error; a session that ends frees its place.
func TestStreamableMaxSessions(t *testing.T) {
	_, ts := serve(t, toolServer(t, nil), &Options{MaxSessions: 2, RetryInterval: 1500 * time.Millisecond})
	first := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	for range 3 {
		r := rawDo(t, "POST", ts.URL, nil, fmt.Sprintf(rawInitBody, mcp.ProtocolVersion20251125))
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "2" || r.header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("initialize over the cap: %d Retry-After %q session %q", r.status, r.header.Get("Retry-After"), r.header.Get("Mcp-Session-Id"))
		}
		if resp := decodeResponse(t, r.body); resp.Error == nil || !strings.Contains(resp.Error.Message, "too many sessions") {
			t.Fatalf("body %s", r.body)
		}
	}
	if r := rawDo(t, "DELETE", ts.URL, map[string]string{"Mcp-Session-Id": first}, ""); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", r.status)
	}
	rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
}

// TestStreamableMaxQueuedRequests: with every handler slot of a session
// taken and MaxQueuedRequests waiting, a further request is answered at
// once with CodeOverloaded; the others are served. Before, requests
// queued without bound.
func TestStreamableMaxQueuedRequests(t *testing.T) {
	release := make(chan struct{})
	s := toolServer(t, release, func(o *mcp.ServerOptions) {
		o.MaxConcurrency = 1
		o.MaxQueuedRequests = 1
	})
	h, ts := serve(t, s, &Options{JSONResponse: true})
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	hdr := map[string]string{"Mcp-Session-Id": sid}
	call := func(id int) <-chan rawResponse {
		return rawAsync("POST", ts.URL, hdr, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"block","arguments":{}}}`, id))
	}
	first := call(11)
	eventually(t, "the first call holds the slot", func() bool {
		select {
		case r := <-first:
			t.Fatalf("first call answered: %v %d %s", r.err, r.status, r.body)
		default:
		}
		return h.exchanges.Load() == 1
	})
	// Of two more, one waits and the other finds the queue full.
	a, b := call(12), call(13)
	var refused rawResponse
	var waiting <-chan rawResponse
	select {
	case refused = <-a:
		waiting = b
	case refused = <-b:
		waiting = a
	case <-time.After(20 * time.Second):
		t.Fatal("no request refused")
	}
	if refused.err != nil || refused.status != 200 {
		t.Fatalf("refused request: %v %d", refused.err, refused.status)
	}
	if resp := decodeResponse(t, refused.body); resp.Error == nil || resp.Error.Code != jsonrpc.CodeOverloaded {
		t.Fatalf("refused request answered %s", refused.body)
	}
	close(release)
	for _, ch := range []<-chan rawResponse{first, waiting} {
		if r := <-ch; r.err != nil || !strings.Contains(r.body, "released") {
			t.Fatalf("queued request: %v %s", r.err, r.body)
		}
	}
}

// TestStreamableShutdownEndsStreamsResumably: Shutdown ends a GET stream
// after its last event with a retry field, and keeps the session's events
// in the store for resumption; before, they were deleted.
func TestStreamableShutdownEndsStreamsResumably(t *testing.T) {
	store := &eventstore.Memory{}
	h, ts := serve(t, toolServer(t, nil), &Options{EventStore: store})
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	req, _ := http.NewRequest("GET", ts.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var mu sync.Mutex
	var seen strings.Builder
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(writerFunc(func(b []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return seen.Write(b)
		}), br)
		done <- err
	}()
	if err := h.session(sid).ss.Notify(context.Background(), "notifications/tools/list_changed", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the event reaches the client", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(seen.String(), "list_changed")
	})
	if err := h.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the stream did not end cleanly: %v", err)
	}
	if got := seen.String(); !strings.HasSuffix(got, "retry: 1000\n\n") {
		t.Fatalf("stream ended with %q, want a retry field last", got)
	}
	events, err := store.After(context.Background(), sid, standaloneStreamID, 0)
	if err != nil || len(events) != 1 {
		t.Fatalf("events kept after Shutdown: %d, %v", len(events), err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestSSEHandlerLimits: the 2024-11-05 transport has the same bounds: a
// stream past MaxSessions gets 503, and a trickling POST body loses its
// connection after ReadTimeout.
func TestSSEHandlerLimits(t *testing.T) {
	s := toolServer(t, nil)
	h := NewSSEHandler(func(*http.Request) *mcp.Server { return s }, &SSEOptions{MaxSessions: 1, ReadTimeout: 100 * time.Millisecond})
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	_, _, endpoint := openLegacy(t, ts.URL, nil)
	if r := rawDo(t, "GET", ts.URL, nil, ""); r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("a stream past MaxSessions: %d, Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	c := rawConn(t, ts)
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", endpoint, ts.Listener.Addr())
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var ne net.Error
	if _, err := io.ReadAll(c); errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the connection of a trickling body was still open after 20s")
	}
}
