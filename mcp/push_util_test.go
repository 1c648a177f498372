package mcp

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// HTTPConnectForTest connects c to s over Streamable HTTP on loopback. The
// tests of package mcp cannot import mcphttp (it imports mcp), so
// mcphttp_hook_test.go, in package mcp_test, sets it when the test binary
// starts; the tests that run a feature over every transport use it.
var HTTPConnectForTest func(t *testing.T, s *Server, c *Client) *ClientSession

// httpConnect is HTTPConnectForTest, which must be set.
func httpConnect(t *testing.T, s *Server, c *Client) *ClientSession {
	t.Helper()
	if HTTPConnectForTest == nil {
		t.Fatal("HTTPConnectForTest is not set (mcphttp_hook_test.go)")
	}
	return HTTPConnectForTest(t, s, c)
}

// eventually waits, for at most 20 seconds, until cond holds.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pushServer serves one session of a Server through the push seam
// (Server.ConnectPush and ServerSession.Deliver), as an HTTP transport
// does, without HTTP: posts are decoded as the transports decode them, and
// what the session writes is recorded, encoded.
type pushServer struct {
	ss  *ServerSession
	dec *jsonrpc.Decoder
	out recordStream
}

// recordStream is the stream of a pushServer: it records the messages
// written, encoded, and is never read.
type recordStream struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	closed bool
}

func (r *recordStream) Read(context.Context) (jsonrpc.Message, error) {
	return nil, errors.New("a push stream is not read")
}

func (r *recordStream) Write(_ context.Context, m jsonrpc.Message) error {
	b, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return jsonrpc.ErrClosed
	}
	r.buf.Write(b)
	return nil
}

func (r *recordStream) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	return nil
}

// newPushServer starts a session of s over the push seam and initializes
// it; the session is closed when the test ends.
func newPushServer(t testing.TB, s *Server) *pushServer {
	t.Helper()
	p := &pushServer{dec: jsonrpc.NewDecoder(MethodNames()...)}
	p.ss = s.ConnectPush(&p.out)
	t.Cleanup(func() { p.ss.Close() })
	init := p.post(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + ProtocolVersion20251125 + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if !bytes.Contains(init.buf.Bytes(), []byte(`"result"`)) {
		t.Fatalf("initialize: %s", init.buf.String())
	}
	p.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

// postResult is what the session wrote while a post was delivered.
type postResult struct{ buf bytes.Buffer }

// post decodes body and delivers it to the session, and returns what the
// session wrote meanwhile (for a request, its response).
func (p *pushServer) post(body string) *postResult {
	m, err := p.dec.Decode([]byte(body))
	if err != nil {
		var r postResult
		r.buf.WriteString(err.Error())
		return &r
	}
	p.out.mu.Lock()
	p.out.buf.Reset()
	p.out.mu.Unlock()
	p.ss.Deliver(context.Background(), m)
	p.out.mu.Lock()
	defer p.out.mu.Unlock()
	var r postResult
	r.buf.Write(p.out.buf.Bytes())
	return &r
}

// directPost posts body to the session of h; sid is ignored (there is
// one session).
func directPost(h *pushServer, body, _ string) *postResult { return h.post(body) }
