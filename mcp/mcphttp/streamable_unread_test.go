package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// dialSmall connects to addr with a small receive buffer, so that a
// server writing to a client that does not read blocks soon.
func dialSmall(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// sendUnread writes an HTTP request on conn, whose answer nobody reads.
func sendUnread(t *testing.T, conn net.Conn, method, sid, version, body string) {
	t.Helper()
	req := fmt.Sprintf("%s /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n", method, sid, version)
	if body != "" {
		req += fmt.Sprintf("Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	if _, err := io.WriteString(conn, req+"\r\n"+body); err != nil {
		t.Fatal(err)
	}
}

// TestStreamableUnreadStreamBounded checks that the messages waiting for a
// client that does not read its standalone GET stream are bounded in
// number and bytes, and that past the bounds the client loses its
// connection, the stream's messages staying in the store (issue 16 item
// 8).
func TestStreamableUnreadStreamBounded(t *testing.T) {
	const version = mcp.ProtocolVersion20251125
	tests := []struct {
		name           string
		maxMsgs, bytes int
		size           int // of each notification's data
	}{
		{"messages", 8, 64 << 20, 1 << 10},
		{"bytes", 1 << 20, 256 << 10, 64 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, ts := serve(t, toolServer(t, nil), &Options{MaxQueuedMessages: tt.maxMsgs, MaxQueuedBytes: tt.bytes})
			sid := rawInit(t, ts.URL, version)
			conn := dialSmall(t, ts.Listener.Addr().String())
			sendUnread(t, conn, http.MethodGet, sid, version, "")
			s := h.session(sid)
			eventually(t, "the GET stream is open", func() bool {
				s.mu.Lock()
				st := s.standalone
				s.mu.Unlock()
				if st == nil {
					return false
				}
				st.mu.Lock()
				defer st.mu.Unlock()
				return st.w != nil
			})
			st := s.standalone
			data, _ := json.Marshal(strings.Repeat("x", tt.size))
			most, cut := 0, false
			for i := 0; i < 16<<20/tt.size && !cut; i++ {
				if err := s.ss.Notify(context.Background(), mcp.NotificationMessage, &mcp.LoggingMessageNotificationParams{Level: mcp.LoggingLevelInfo, Data: data}); err != nil {
					t.Fatal(err)
				}
				st.mu.Lock()
				most = max(most, len(st.queue))
				if st.queued > tt.bytes+tt.size+100 {
					t.Fatalf("%d bytes queued, bound %d", st.queued, tt.bytes)
				}
				cut = st.w == nil
				st.mu.Unlock()
			}
			if most > tt.maxMsgs {
				t.Fatalf("%d messages queued, bound %d", most, tt.maxMsgs)
			}
			if !cut {
				t.Fatal("16 MiB sent to a client that does not read, and it still has its connection")
			}
			// The connection ends: what the client reads ends.
			_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			if _, err := io.Copy(io.Discard, conn); err != nil && strings.Contains(err.Error(), "timeout") {
				t.Fatalf("the connection was not cut: %v", err)
			}
			// The session goes on, and a new GET stream opens.
			r := rawAsync(http.MethodGet, ts.URL, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version}, "")
			eventually(t, "a new GET stream is open", func() bool {
				st.mu.Lock()
				defer st.mu.Unlock()
				return st.w != nil
			})
			s.terminate()
			<-r
		})
	}
}

// TestStreamableResumeWhileWriteBlocked checks that a GET resuming the
// stream of a POST whose client stopped reading is not held up by the
// handler blocked writing to that POST's connection: no lock is held
// across a network write, and the takeover cuts the old connection, so
// that the handler goes on and the new connection gets everything
// (issue 16 item 8). The POST's connection stalls by construction
// (stallListener), not by filling socket buffers and guessing when the
// writer is stuck, so the GET is sent only once a write is blocked, and
// only a cut unblocks it: a loaded machine changes nothing.
func TestStreamableResumeWhileWriteBlocked(t *testing.T) {
	const version = mcp.ProtocolVersion20251125
	const n, size = 64, 4 << 10
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapability{}}})
	data, _ := json.Marshal(strings.Repeat("y", size))
	if err := s.AddTool(&mcp.Tool{Name: "flood", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		for range n {
			if err := ss.Notify(ctx, mcp.NotificationMessage, &mcp.LoggingMessageNotificationParams{Level: mcp.LoggingLevelInfo, Data: data}); err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	h := NewHandler(func(*http.Request) *mcp.Server { return s }, &Options{EventStore: &eventstore.Memory{MaxBytesPerSession: 4 * n * size, MaxEventsPerStream: 2 * n}})
	ts := httptest.NewUnstartedServer(h)
	// The stall starts after a few events went through: the handler is
	// blocked mid-stream, with events written, queued and still to come.
	sl := newStallListener(ts.Listener, 4*size)
	ts.Listener = sl
	ts.Start()
	t.Cleanup(func() {
		h.Close()
		sl.release() // a write still stalled (the test failed) must not hold up ts.Close
		ts.Close()
		checkBudgetWhole(t, h)
	})
	sid := rawInit(t, ts.URL, version) // its answer was stream 1
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	sl.stall(conn.LocalAddr())
	go io.Copy(io.Discard, conn) // the client reads: only the stall blocks the server
	sendUnread(t, conn, http.MethodPost, sid, version, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flood","arguments":{}}}`)
	select {
	case <-sl.stalled:
	case <-time.After(time.Minute):
		t.Fatal("the POST's stream never wrote past its first events")
	}
	ch := rawAsync(http.MethodGet, ts.URL, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version, "Last-Event-ID": "2_0"}, "")
	var r rawResponse
	select {
	case r = <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
	case <-time.After(time.Minute): // nothing but a cut ends the stall
		t.Fatal("the resuming GET was held up by the blocked write")
	}
	if r.status != http.StatusOK {
		t.Fatalf("resume: %d %.200s", r.status, r.body)
	}
	notes, done := 0, false
	for _, ev := range sseEvents(t, r.body) {
		switch {
		case len(ev.data) == 0:
		case strings.Contains(string(ev.data), `"notifications/message"`):
			notes++
		case strings.Contains(string(ev.data), `"done"`):
			done = true
		}
	}
	if notes != n || !done {
		t.Fatalf("resumed stream: %d notifications (want %d), answer %v", notes, n, done)
	}
}

// stallListener is a listener whose connections from the addresses marked
// with stall behave, once after bytes have been written to them, as the
// connection of a client that stopped reading: a write blocks until the
// connection is cut (a write deadline that has passed, what cutConn
// sets) or closed. A deadline still to come does not end the stall, so
// that only a cut can. stalled is closed when the first write blocks.
type stallListener struct {
	net.Listener
	after   int
	stalled chan struct{}
	once    sync.Once

	mu    sync.Mutex
	addrs map[string]bool
	conns []*stallConn
}

func newStallListener(l net.Listener, after int) *stallListener {
	return &stallListener{Listener: l, after: after, stalled: make(chan struct{}), addrs: map[string]bool{}}
}

// stall marks the connections from the client address addr.
func (l *stallListener) stall(addr net.Addr) {
	l.mu.Lock()
	l.addrs[addr.String()] = true
	l.mu.Unlock()
}

func (l *stallListener) stalls(addr net.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.addrs[addr.String()]
}

func (l *stallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	sc := &stallConn{Conn: c, l: l, wake: make(chan struct{}, 1), closed: make(chan struct{})}
	l.mu.Lock()
	l.conns = append(l.conns, sc)
	l.mu.Unlock()
	return sc, nil
}

// release closes every connection accepted, ending any stalled write.
func (l *stallListener) release() {
	l.mu.Lock()
	conns := l.conns
	l.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// stallConn is a connection of a stallListener.
type stallConn struct {
	net.Conn
	l         *stallListener
	wake      chan struct{} // a deadline was set
	closed    chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	written  int
	deadline time.Time
}

func (c *stallConn) Write(p []byte) (int, error) {
	if !c.l.stalls(c.RemoteAddr()) {
		return c.Conn.Write(p)
	}
	c.mu.Lock()
	if c.written+len(p) <= c.l.after {
		c.written += len(p)
		c.mu.Unlock()
		return c.Conn.Write(p)
	}
	c.mu.Unlock()
	c.l.once.Do(func() { close(c.l.stalled) })
	for {
		c.mu.Lock()
		d := c.deadline
		c.mu.Unlock()
		if !d.IsZero() && !time.Now().Before(d) {
			return 0, os.ErrDeadlineExceeded
		}
		select {
		case <-c.wake:
		case <-c.closed:
			return 0, net.ErrClosed
		}
	}
}

func (c *stallConn) setDeadline(t time.Time) {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *stallConn) SetWriteDeadline(t time.Time) error {
	c.setDeadline(t)
	return c.Conn.SetWriteDeadline(t)
}

func (c *stallConn) SetDeadline(t time.Time) error {
	c.setDeadline(t)
	return c.Conn.SetDeadline(t)
}

func (c *stallConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// TestStreamableNoEventsAfterClose checks that a message sent on a stream
// of a session that has ended (a handler still running when its session
// expired, say) is not kept in the event store, whose entry for the
// session was deleted: the late event would stay there for good.
func TestStreamableNoEventsAfterClose(t *testing.T) {
	const version = mcp.ProtocolVersion20251125
	store := &eventstore.Memory{}
	h, ts := serve(t, toolServer(t, nil), &Options{EventStore: store})
	sid := rawInit(t, ts.URL, version)
	s := h.session(sid)
	s.mu.Lock()
	st := s.standaloneLocked()
	s.mu.Unlock()
	s.terminate()
	if err := st.send(&jsonrpc.Request{Method: mcp.NotificationMessage, Params: json.RawMessage(`{"level":"info","data":"late"}`)}, false); err != nil {
		t.Fatal(err)
	}
	if evs, err := store.After(context.Background(), sid, standaloneStreamID, 0); err == nil {
		t.Fatalf("events of an ended session were kept in the store: %d", len(evs))
	}
}
