package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// lineConn is the client end of a server connected over pipes, as stdio.
type lineConn struct {
	t   *testing.T
	w   io.WriteCloser
	r   *bufio.Reader
	msg chan map[string]any
}

func connectLines(t *testing.T, s *Server) *lineConn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := s.Connect(ctx, &IOTransport{Reader: inR, Writer: outW, Closer: inR})
	if err != nil {
		t.Fatal(err)
	}
	c := &lineConn{t: t, w: inW, r: bufio.NewReader(outR), msg: make(chan map[string]any, 64)}
	go func() {
		for {
			line, err := c.r.ReadString('\n')
			if err != nil {
				close(c.msg)
				return
			}
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil {
				c.msg <- m
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		ss.Close()
		outR.Close()
	})
	return c
}

func (c *lineConn) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *lineConn) next() map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.msg:
		if !ok {
			c.t.Fatal("the connection ended")
		}
		return m
	case <-time.After(10 * time.Second):
		c.t.Fatal("no message in 10 s")
	}
	return nil
}

// TestModernConn checks a connection (stdio) whose first request is
// modern: it is served statelessly, notifications about a request come
// before its answer, removed methods are unknown, and _meta is checked
// on every request.
func TestModernConn(t *testing.T) {
	c := connectLines(t, modernServer(t))
	meta := strings.TrimSuffix(modernMeta, "}")
	c.send(call(1, "tools/call", `{"name":"chatty","_meta":`+meta+`,"progressToken":"p","io.modelcontextprotocol/logLevel":"info"}}`))
	for _, want := range []string{NotificationProgress, NotificationMessage} {
		if m := c.next(); m["method"] != want {
			t.Fatalf("got %v, want %s", m, want)
		}
	}
	res, _ := c.next()["result"].(map[string]any)
	if res["resultType"] != "complete" || res["_meta"] == nil {
		t.Fatalf("result %v", res)
	}
	for _, tc := range []struct {
		name, body string
		code       int
	}{
		{"discover", call(2, "server/discover", withMeta("")), 0},
		{"ping", call(3, "ping", withMeta("")), -32601},
		{"initialize", call(4, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`), -32601},
		{"no capabilities", call(5, "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`), -32602},
		{"unsupported version", call(6, "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"v9","io.modelcontextprotocol/clientCapabilities":{}}}`), -32022},
		{"missing capability", call(7, "tools/call", withMeta(`"name":"needs_sampling"`)), -32021},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			c.send(tc.body)
			m := c.next()
			e, _ := m["error"].(map[string]any)
			code := 0
			if e != nil {
				code = int(e["code"].(float64))
			}
			if code != tc.code {
				t.Fatalf("got %v, want code %d", m, tc.code)
			}
		})
	}
}

// TestModernConnListen checks subscriptions/listen over a connection:
// the acknowledgement, tagged change notifications, and the end of the
// subscription when the client cancels it.
func TestModernConnListen(t *testing.T) {
	s := modernServer(t)
	c := connectLines(t, s)
	c.send(call(9, "subscriptions/listen", withMeta(`"notifications":{"toolsListChanged":true}`)))
	if m := c.next(); m["method"] != NotificationSubscriptionsAcknowledged {
		t.Fatalf("got %v", m)
	}
	s.RemoveTools("zeta")
	m := c.next()
	p, _ := m["params"].(map[string]any)
	if m["method"] != NotificationToolsListChanged || p["_meta"].(map[string]any)[MetaKeySubscriptionID] != float64(9) {
		t.Fatalf("got %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)
	// The subscription is gone: a later change reaches nobody, and the
	// next request is answered.
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.modernMem.lmu.Lock()
		n := len(s.modernMem.listeners)
		s.modernMem.lmu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the listener is still registered")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLegacyConnIgnoresModernMeta checks that a connection opened by
// initialize stays legacy: a later request carrying modern _meta is
// served as a legacy one.
func TestLegacyConnIgnoresModernMeta(t *testing.T) {
	c := connectLines(t, modernServer(t))
	c.send(call(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`))
	if res, _ := c.next()["result"].(map[string]any); res["protocolVersion"] != ProtocolVersion20251125 {
		t.Fatalf("initialize: %v", res)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(call(2, "tools/call", withMeta(`"name":"echo"`)))
	res, _ := c.next()["result"].(map[string]any)
	if _, ok := res["resultType"]; ok || !strings.Contains(strings.ToLower(jsonString(res)), "legacy legacy") {
		t.Fatalf("result %v", res)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
