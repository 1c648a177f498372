package mcphttp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

// callLoop returns a function that serves one more tools/call POST on h,
// by calling it directly, at protocol version 2026-07-28 (modern) or in
// a 2025-11-25 session (legacy), with a fresh id each time.
func callLoop(tb testing.TB, h *Handler, modern bool) func() {
	body := &resettableBody{}
	req := httptest.NewRequest("POST", "http://localhost/mcp", body)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	meta := ""
	if modern {
		req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20260728)
		req.Header.Set("Mcp-Method", mcp.MethodToolsCall)
		req.Header.Set("Mcp-Name", "echo")
		meta = `,"_meta":` + modernMeta
	} else {
		req.Header.Set("Mcp-Session-Id", directSession(tb, h))
		req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
	}
	bodies := make([]string, 4096)
	for i := range bodies {
		bodies[i] = `{"jsonrpc":"2.0","id":` + itoa(i+1) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}` + meta + `}}`
	}
	out := &benchWriter{h: http.Header{}}
	n := 0
	return func() {
		if n == len(bodies) {
			if !modern { // ids must not repeat within a session
				req.Header.Set("Mcp-Session-Id", directSession(tb, h))
			}
			n = 0
		}
		body.Reset(bodies[n])
		n++
		req.ContentLength = int64(body.Len())
		out.buf.Reset()
		clear(out.h)
		h.ServeHTTP(out, req)
		if out.code != 200 {
			tb.Fatalf("status %d: %s", out.code, out.buf.String())
		}
	}
}

// BenchmarkStreamableHandlerCallToolModern is
// BenchmarkStreamableHandlerCallTool/JSON at protocol version 2026-07-28:
// each POST is a stateless tools/call carrying its _meta and headers,
// served by calling the handler directly, so that the allocations
// reported are the server's.
func BenchmarkStreamableHandlerCallToolModern(b *testing.B) {
	s := benchServer(b)
	h := NewHandler(func(*http.Request) *mcp.Server { return s }, nil)
	defer h.Close()
	serve := callLoop(b, h, true)
	b.ReportAllocs()
	for b.Loop() {
		serve()
	}
}

// TestModernCallAllocs checks that a modern tools/call allocates no more
// than a legacy one in a session (JSON answers): the modern leg has no
// session to make, and must not make up for it elsewhere.
func TestModernCallAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("measures allocations")
	}
	s := benchServer(t)
	h := NewHandler(func(*http.Request) *mcp.Server { return s }, &Options{JSONResponse: true})
	defer h.Close()
	modern, legacy := callLoop(t, h, true), callLoop(t, h, false)
	m := testing.AllocsPerRun(500, modern)
	l := testing.AllocsPerRun(500, legacy)
	if m > l {
		t.Errorf("a modern tools/call allocates %v times, a legacy one %v", m, l)
	}
	t.Logf("allocations per tools/call: modern %v, legacy %v", m, l)
}
