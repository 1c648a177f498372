package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

func benchServer(b testing.TB) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	if err := s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(p.Arguments)}}}, nil
	}); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkStreamableCallTool is a whole tools/call from our Client to our
// Server over HTTP on 127.0.0.1, in each answer mode. Allocations count
// both sides.
func BenchmarkStreamableCallTool(b *testing.B) {
	for _, mode := range []struct {
		name string
		json bool
	}{{"JSON", true}, {"SSE", false}} {
		b.Run(mode.name, func(b *testing.B) {
			s := benchServer(b)
			h := NewHandler(func(*http.Request) *mcp.Server { return s }, &Options{JSONResponse: mode.json})
			ts := httptest.NewServer(h)
			defer ts.Close()
			defer h.Close()
			ctx := context.Background()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &ClientTransport{Endpoint: ts.URL, DisableStandaloneSSE: true})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			p := &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStreamableCallToolParallel is BenchmarkStreamableCallTool with
// concurrent callers on one session.
func BenchmarkStreamableCallToolParallel(b *testing.B) {
	s := benchServer(b)
	h := NewHandler(func(*http.Request) *mcp.Server { return s }, &Options{JSONResponse: true})
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close()
	ctx := context.Background()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &ClientTransport{Endpoint: ts.URL, HTTPClient: hc, DisableStandaloneSSE: true})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	p := &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := cs.CallTool(ctx, p); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchWriter is a minimal flushable http.ResponseWriter.
type benchWriter struct {
	h    http.Header
	code int
	buf  bytes.Buffer
}

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) WriteHeader(code int)        { w.code = code }
func (w *benchWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }
func (w *benchWriter) Flush()                      {}

// directPost serves one POST of body, in session sid when sid is not
// empty, by calling h.ServeHTTP directly (no network), and returns what h
// wrote.
func directPost(h http.Handler, body, sid string) *benchWriter {
	req := httptest.NewRequest("POST", "http://localhost/mcp", strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
	}
	w := &benchWriter{h: http.Header{}}
	h.ServeHTTP(w, req)
	return w
}

// directSession opens a session on h with directPost (initialize, then
// notifications/initialized) and returns its id.
func directSession(tb testing.TB, h http.Handler) string {
	tb.Helper()
	// Request id 0, so that callers may number their requests from 1.
	w := directPost(h, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`, "")
	sid := w.h.Get("Mcp-Session-Id")
	if w.code != http.StatusOK || sid == "" {
		tb.Fatalf("initialize: status %d, session %q: %s", w.code, sid, w.buf.String())
	}
	if w = directPost(h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid); w.code != http.StatusAccepted {
		tb.Fatalf("initialized: status %d: %s", w.code, w.buf.String())
	}
	return sid
}

// resettableBody is a request body that can be read again.
type resettableBody struct{ strings.Reader }

func (*resettableBody) Close() error { return nil }

// BenchmarkStreamableHandlerCallTool serves tools/call POSTs by calling the
// handler directly, without a network or an HTTP client, so that the
// allocations reported are the server's: handler, session, JSON-RPC
// connection, tool dispatch and the answer.
func BenchmarkStreamableHandlerCallTool(b *testing.B) {
	for _, mode := range []struct {
		name     string
		json     bool
		replicas bool // a session shared with replicas (replicas.go), held here
	}{{"JSON", true, false}, {"SSE", false, false}, {"JSON+replicas", true, true}} {
		b.Run(mode.name, func(b *testing.B) {
			s := benchServer(b)
			opts := &Options{JSONResponse: mode.json}
			if mode.replicas {
				opts.EventStore, opts.Replicas = &sharedStore{}, &memReplica{net: &memNet{}, id: "R0"}
			}
			h := NewHandler(func(*http.Request) *mcp.Server { return s }, opts)
			defer h.Close()
			sid := directSession(b, h)

			// One request object, re-armed each time with a fresh id.
			body := &resettableBody{}
			req := httptest.NewRequest("POST", "http://localhost/mcp", body)
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
			bodies := make([]string, 4096)
			for i := range bodies {
				bodies[i] = `{"jsonrpc":"2.0","id":` + itoa(i+1) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
			}
			// Ids must not repeat within a session: after 4096 requests,
			// start another session (off the clock).
			out := &benchWriter{h: http.Header{}}
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				if n == len(bodies) {
					b.StopTimer()
					req.Header.Set("Mcp-Session-Id", directSession(b, h))
					n = 0
					b.StartTimer()
				}
				body.Reset(bodies[n])
				n++
				req.ContentLength = int64(body.Len())
				out.buf.Reset()
				clear(out.h)
				h.ServeHTTP(out, req)
				if out.code != 200 {
					b.Fatalf("status %d: %s", out.code, out.buf.String())
				}
			}
		})
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}
