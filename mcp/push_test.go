package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"
)

// sessionCount is the number of sessions s knows.
func sessionCount(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// subscriberCount is the number of URIs with a subscriber.
func subscriberCount(s *Server) int {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	return len(s.subscribers)
}

// TestConnectPushEnds: a session made by ConnectPush is forgotten by the
// server, and its subscriptions dropped, however it ends: by Close (once
// or twice), or by a failed keep-alive ping, which closes it from the
// session's own goroutine (the only end a transport does not call). A
// forgotten session receives no list-changed notification; its stream is
// closed.
func TestConnectPushEnds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		keepAlive time.Duration
		end       func(p *pushServer)
	}{
		{"Close", 0, func(p *pushServer) { p.ss.Close() }},
		{"Close twice", 0, func(p *pushServer) { p.ss.Close(); p.ss.Close() }},
		{"Close concurrently", 0, func(p *pushServer) {
			done := make(chan struct{})
			go func() { p.ss.Close(); close(done) }()
			p.ss.Close()
			<-done
		}},
		// The recording stream never answers the ping: it fails when
		// its context ends, after KeepAlive.
		{"failed keep-alive", 20 * time.Millisecond, func(p *pushServer) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testServer(&ServerOptions{KeepAlive: tc.keepAlive})
			mustOK(t, s.AddResource(&Resource{URI: "file:///r", Name: "r"}, func(context.Context, *ServerSession, *ReadResourceRequestParams) (*ReadResourceResult, error) {
				return &ReadResourceResult{}, nil
			}))
			p := newPushServer(t, s)
			if r := p.post(`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///r"}}`); !bytes.Contains(r.buf.Bytes(), []byte(`"result"`)) {
				t.Fatalf("subscribe: %s", r.buf.String())
			}
			if sessionCount(s) != 1 || subscriberCount(s) != 1 {
				t.Fatalf("%d sessions, %d subscribed URIs, want 1 and 1", sessionCount(s), subscriberCount(s))
			}
			tc.end(p)
			eventually(t, "the session is forgotten", func() bool { return sessionCount(s) == 0 })
			if n := subscriberCount(s); n != 0 {
				t.Errorf("%d subscribed URIs left", n)
			}
			p.out.mu.Lock()
			closed := p.out.closed
			p.out.buf.Reset()
			p.out.mu.Unlock()
			if !closed {
				t.Error("the stream is not closed")
			}
			mustOK(t, s.AddTool(&Tool{Name: "late", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
				return &CallToolResult{}, nil
			}))
			p.out.mu.Lock()
			defer p.out.mu.Unlock()
			if p.out.buf.Len() != 0 {
				t.Errorf("an ended session was sent %s", p.out.buf.String())
			}
		})
	}
}

// TestConnectPushDeliver: Deliver serves what it is handed in the
// caller's goroutine: a request is answered before Deliver returns, with
// the values of Deliver's context in the handler's; the response goes to
// the stream's Write with the request's id.
func TestConnectPushDeliver(t *testing.T) {
	type key struct{}
	s := testServer(nil)
	var got any
	mustOK(t, s.AddTool(&Tool{Name: "value", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		got = ctx.Value(key{})
		return &CallToolResult{}, nil
	}))
	p := newPushServer(t, s)
	m, err := p.dec.Decode([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"value"}}`))
	if err != nil {
		t.Fatal(err)
	}
	p.ss.Deliver(context.WithValue(context.Background(), key{}, "from the transport"), m)
	p.out.mu.Lock()
	out := p.out.buf.String()
	p.out.mu.Unlock()
	if got != "from the transport" {
		t.Errorf("the handler's context carries %v", got)
	}
	if !bytes.Contains([]byte(out), []byte(`"id":7,"result"`)) {
		t.Errorf("written: %s", out)
	}
	if v := s.ProtocolVersions(); len(v) == 0 || v[0] != p.ss.ProtocolVersion() {
		t.Errorf("ProtocolVersions() = %v, negotiated %q", v, p.ss.ProtocolVersion())
	}
}
