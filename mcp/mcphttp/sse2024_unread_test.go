package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// TestSSEHandlerUnreadStreamBounded checks that a 2024-11-05 session whose
// client stops reading its stream ends once the messages waiting for it
// pass SSEOptions.MaxQueuedBytes, instead of the server holding them, and
// its senders waiting, for as long as the connection lasts (issue 16 item
// 8).
func TestSSEHandlerUnreadStreamBounded(t *testing.T) {
	const bound = 256 << 10
	h := NewSSEHandler(func(*http.Request) *mcp.Server { return toolServer(t, nil) }, &SSEOptions{MaxQueuedBytes: bound})
	ts := httptest.NewServer(h)
	defer ts.Close()
	d := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
	}}
	hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	req, _ := http.NewRequest("GET", ts.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ev, err := newSSEReader(resp.Body, 0).next(); err != nil || ev.name != "endpoint" {
		t.Fatalf("first event %q, %v", ev.name, err)
	}
	// From here on, the client reads nothing.
	var s *sseSession
	h.mu.Lock()
	for _, e := range h.sessions {
		s = e
	}
	h.mu.Unlock()
	data, _ := json.Marshal(strings.Repeat("x", 64<<10))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := 0; ; i++ {
		err := s.ss.Notify(ctx, mcp.NotificationMessage, &mcp.LoggingMessageNotificationParams{Level: mcp.LoggingLevelInfo, Data: data})
		if q := s.queued.Load(); q > bound+int64(len(data))+200 {
			t.Fatalf("%d bytes queued, bound %d", q, bound)
		}
		if err == nil {
			if i > 100000 {
				t.Fatal("the client reads nothing, and the server takes everything")
			}
			continue
		}
		if !errors.Is(err, jsonrpc.ErrClosed) {
			t.Fatalf("after %d messages: %v; want the session ended", i, err)
		}
		break
	}
	eventually(t, "the session is forgotten", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.sessions) == 0
	})
}
