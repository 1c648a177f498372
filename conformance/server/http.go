package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// mcpPath is where the server answers MCP over Streamable HTTP.
const mcpPath = "/mcp"

// reconnectRetry is the retry field sent before cutting a test_reconnection
// stream: how long the client waits before it resumes.
const reconnectRetry = 500 * time.Millisecond

// newHTTPHandler returns the server's HTTP handler, with /mcp served by a
// stateful Streamable HTTP handler (SSE answers, resumable from an in-memory
// event store, DNS-rebinding defence on), and a function that closes it.
func newHTTPHandler(s *mcp.Server, logger *slog.Logger) (http.Handler, func()) {
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s }, &mcphttp.Options{Logger: logger})
	mux := http.NewServeMux()
	mux.Handle(mcpPath, lenientVersion(cutReconnection(h)))
	return mux, func() { h.Close() }
}

// lenientVersion drops an MCP-Protocol-Version header that names a version
// the library supports, so that the session's negotiated version applies.
//
// The library answers 400 to a header that differs from the negotiated
// version. The 2025-11-25 revision asks for 400 only on an invalid or
// unsupported version, and the 0.1.16 suite sends 2025-03-26 on its raw
// requests in sessions that negotiated 2025-11-25 (server-sse-polling,
// server-sse-multiple-streams). Unsupported values still reach the handler
// and get 400.
func lenientVersion(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("MCP-Protocol-Version"); v != "" && r.Header.Get("Mcp-Session-Id") != "" && mcp.IsSupportedProtocolVersion(v) {
			r = r.Clone(r.Context())
			r.Header.Del("MCP-Protocol-Version")
		}
		next.ServeHTTP(w, r)
	})
}

// maxPeek bounds the body read to recognize a test_reconnection call.
const maxPeek = 1 << 20

// cutKey keys the channel, in a test_reconnection call's request context,
// that is closed once its stream has been cut.
type cutKey struct{}

// cutReconnection serves a POST that calls the tool test_reconnection with
// a response writer that ends the SSE answer right after its priming event,
// as a proxy cutting a long response would, but first writes a retry field
// telling the client to resume after reconnectRetry. The call goes on; its
// result is kept in the event store, and the client receives it on the GET
// with Last-Event-ID that resumes the stream. The tool waits until the cut
// is made (see reconnectionTool), so the result never races it.
func cutReconnection(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
		if err != nil {
			http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		if len(body) > maxPeek || !callsReconnection(body) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		cut := make(chan struct{})
		ctx = context.WithValue(ctx, cutKey{}, (<-chan struct{})(cut))
		cw := &cuttingWriter{ResponseWriter: w, cut: func() { cancel(); close(cut) }}
		next.ServeHTTP(cw, r.WithContext(ctx))
	})
}

// callsReconnection reports whether a POST body is a tools/call of
// test_reconnection.
func callsReconnection(body []byte) bool {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == "tools/call" && m.Params.Name == reconnectionToolName
}

// errCut is what writes to a cut response return.
var errCut = errors.New("the stream was cut (test_reconnection)")

// cuttingWriter passes an SSE response through until its first flush that
// carries bytes (the priming event), then appends a retry field, flushes,
// and refuses every later write, cancelling the request's context so that
// the handler lets the stream go.
type cuttingWriter struct {
	http.ResponseWriter
	mu      sync.Mutex
	written int
	sse     bool
	done    bool
	cut     func()
}

func (c *cuttingWriter) WriteHeader(code int) {
	c.sse = code == http.StatusOK && strings.HasPrefix(c.Header().Get("Content-Type"), "text/event-stream")
	c.ResponseWriter.WriteHeader(code)
}

func (c *cuttingWriter) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return 0, errCut
	}
	n, err := c.ResponseWriter.Write(b)
	c.written += n
	return n, err
}

func (c *cuttingWriter) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	if c.sse && c.written > 0 {
		_, _ = io.WriteString(c.ResponseWriter, "retry: "+strconv.FormatInt(reconnectRetry.Milliseconds(), 10)+"\n\n")
		c.done = true
		defer c.cut()
	}
	_ = http.NewResponseController(c.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (c *cuttingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
