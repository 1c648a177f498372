package mcphttp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

// BenchmarkStreamableHandlerCallToolModern is
// BenchmarkStreamableHandlerCallTool at protocol version 2026-07-28: each
// POST is a stateless tools/call carrying its _meta and headers, served
// by calling the handler directly, so that the allocations reported are
// the server's.
func BenchmarkStreamableHandlerCallToolModern(b *testing.B) {
	s := benchServer(b)
	h := NewHandler(func(*http.Request) *mcp.Server { return s }, nil)
	defer h.Close()
	body := &resettableBody{}
	req := httptest.NewRequest("POST", "http://localhost/mcp", body)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20260728)
	req.Header.Set("Mcp-Method", mcp.MethodToolsCall)
	req.Header.Set("Mcp-Name", "echo")
	bodies := make([]string, 4096)
	for i := range bodies {
		bodies[i] = `{"jsonrpc":"2.0","id":` + itoa(i+1) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":` + modernMeta + `}}`
	}
	out := &benchWriter{h: http.Header{}}
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		body.Reset(bodies[n%len(bodies)])
		n++
		req.ContentLength = int64(body.Len())
		out.buf.Reset()
		clear(out.h)
		h.ServeHTTP(out, req)
		if out.code != 200 {
			b.Fatalf("status %d: %s", out.code, out.buf.String())
		}
	}
}
