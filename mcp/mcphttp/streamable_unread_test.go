package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
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
// (issue 16 item 8).
func TestStreamableResumeWhileWriteBlocked(t *testing.T) {
	const version = mcp.ProtocolVersion20251125
	const n, size = 128, 256 << 10 // 32 MiB: more than any socket buffers
	var sent atomic.Int64
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapability{}}})
	data, _ := json.Marshal(strings.Repeat("y", size))
	if err := s.AddTool(&mcp.Tool{Name: "flood", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		for range n {
			if err := ss.Notify(ctx, mcp.NotificationMessage, &mcp.LoggingMessageNotificationParams{Level: mcp.LoggingLevelInfo, Data: data}); err != nil {
				return nil, err
			}
			sent.Add(1)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	_, ts := serve(t, s, &Options{EventStore: &eventstore.Memory{MaxBytesPerSession: 2 * n * size, MaxEventsPerStream: 2 * n}})
	sid := rawInit(t, ts.URL, version) // its answer was stream 1
	conn := dialSmall(t, ts.Listener.Addr().String())
	sendUnread(t, conn, http.MethodPost, sid, version, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flood","arguments":{}}}`)
	// Wait until the handler is stuck writing: its count stops moving.
	last, still := int64(-1), 0
	for still < 5 {
		time.Sleep(50 * time.Millisecond)
		if v := sent.Load(); v == last && v > 0 {
			still++
		} else {
			last, still = v, 0
		}
	}
	if last == n {
		t.Skip("the handler never blocked: the socket buffers took everything")
	}
	ch := rawAsync(http.MethodGet, ts.URL, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version, "Last-Event-ID": "2_0"}, "")
	r := awaitPOST(t, ch)
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
