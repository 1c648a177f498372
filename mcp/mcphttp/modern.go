package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// The modern leg of the Streamable HTTP handler (revision 2026-07-28,
// basic/transports/streamable-http): one POST carries one request, which
// is validated (its _meta, then the MCP-Protocol-Version, Mcp-Method,
// Mcp-Name and Mcp-Param-* headers against the body), served without a
// session in the POST's goroutine, and answered with JSON, or with an SSE
// stream scoped to the request once the handler sends a notification
// about it. Mcp-Session-Id and Last-Event-ID are ignored; GET and DELETE
// get 405.

// Header names of revision 2026-07-28, in canonical form.
const (
	headerMcpMethod = "Mcp-Method"
	headerMcpName   = "Mcp-Name"
)

// modernByHeader reports whether r's MCP-Protocol-Version header names a
// modern revision: such a request goes to the modern leg whatever else it
// carries (basic/versioning: the era comes from the header first).
func modernByHeader(r *http.Request) bool {
	v, ok := oneHeader(r.Header, headerProtocolVersion)
	return ok && mcp.IsModernProtocolVersion(v)
}

// modernByBody reports whether a POST that names no modern version in its
// header is still a modern request: a request (not initialize, not
// naming a legacy session) whose params carry the modern protocolVersion
// _meta key, or whose header names a version no legacy session speaks (so
// that it is answered with -32022 listing the versions that are).
func modernByBody(r *http.Request, msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.IsNotification() || req.Method == mcp.MethodInitialize || headerGet(r.Header, headerSessionID) != "" {
		return false
	}
	if v, ok := oneHeader(r.Header, headerProtocolVersion); ok && !mcp.IsSupportedProtocolVersion(v) {
		return true
	}
	return bytes.Contains(req.Params, []byte(`"`+mcp.MetaKeyProtocolVersion+`"`))
}

// refuseModern answers 405 to a GET or DELETE of a modern client
// (basic/transports/streamable-http, "Earlier Streamable HTTP Revisions")
// and reports whether it did.
func (h *Handler) refuseModern(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodPost || !modernByHeader(r) {
		return false
	}
	w.Header().Set("Allow", http.MethodPost)
	writeHTTPError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, "Method Not Allowed: "+r.Method+" is not part of protocol version "+mcp.ProtocolVersion20260728)
	return true
}

// serveModern answers a POST of the modern leg whose body is msg.
func (h *Handler) serveModern(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Invalid Request: protocol version "+mcp.ProtocolVersion20260728+" takes one JSON-RPC request or notification per POST")
		return
	}
	if req.IsNotification() {
		// The revision defines no client notification over HTTP (closing
		// the stream cancels); one is accepted and ignored.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if h.closing.Load() {
		h.writeUnavailable(w, "Service Unavailable: the server is shutting down")
		return
	}
	srv := h.getServer(r)
	if srv == nil {
		writeHTTPError(w, http.StatusBadRequest, req.ID, "Bad Request: no server for this request")
		return
	}
	// The request and its answer, allocated together.
	x := &struct {
		mr   mcp.ModernRequest
		sink httpSink
	}{}
	x.sink.w, x.sink.h = w, h
	mr := &x.mr
	ctx := r.Context()
	if f := h.opts.Identity; f != nil {
		// Binds a requestState and the tasks extension's tasks to the
		// caller (mcp.WithPrincipal).
		ctx = mcp.WithPrincipal(ctx, f(r))
	}
	if e := srv.PrepareModern(ctx, mr, req, &x.sink); e != nil {
		writeModernError(w, req.ID, http.StatusBadRequest, e)
		return
	}
	if e := checkModernHeaders(r, req, mr); e != nil {
		writeModernError(w, req.ID, http.StatusBadRequest, e)
		return
	}
	if e := mr.CheckVersion(); e != nil {
		writeModernError(w, req.ID, http.StatusBadRequest, e)
		return
	}
	if e := mr.CheckParamHeaders(func(key string) (string, bool) { return oneHeader(r.Header, key) }); e != nil {
		writeModernError(w, req.ID, http.StatusBadRequest, e)
		return
	}
	if req.Method != mcp.MethodSubscriptionsListen {
		// Shutdown waits for answers, not for listen streams, which it
		// ends (see modernDone).
		h.exchanges.Add(1)
		defer h.exchanges.Add(-1)
	}
	res, e := mr.Serve()
	x.sink.finish(req.ID, mr, res, e)
}

// modernStatus is the HTTP status of a modern error answered as JSON:
// 400 for the errors of revision 2026-07-28 (they are MUSTs), 404 for an
// unknown method, 200 for every other JSON-RPC error.
func modernStatus(e *jsonrpc.Error) int {
	switch e.Code {
	case mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability, mcp.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	}
	return http.StatusOK
}

// writeModernError answers a request of the modern leg with a JSON-RPC
// error carrying its id (the suite's sep-2575-http-server-error-jsonrpc-id).
func writeModernError(w http.ResponseWriter, id jsonrpc.ID, status int, e *jsonrpc.Error) {
	writeJSON(w, status, "", &jsonrpc.Response{ID: id, Error: e})
}

// headerMismatch is the -32020 of a header check
// (basic/transports/streamable-http, "Server Validation").
func headerMismatch(msg string) *jsonrpc.Error {
	return jsonrpc.NewError(mcp.CodeHeaderMismatch, "Header mismatch: "+msg)
}

// oneHeader returns the single value of the canonical header key, with
// optional white space trimmed (RFC 9110 section 5.5), and whether there
// is exactly one.
func oneHeader(h http.Header, key string) (string, bool) {
	v := h[key]
	if len(v) != 1 {
		return "", false
	}
	return strings.Trim(v[0], " \t"), true
}

// checkModernHeaders checks the standard request headers against the body:
// MCP-Protocol-Version against the _meta version, Mcp-Method against the
// method, Mcp-Name against params.name (tools/call, prompts/get) or
// params.uri (resources/read). Header names match case-insensitively
// (net/http canonicalizes them); values exactly, after the Base64 sentinel
// of Mcp-Name is decoded.
func checkModernHeaders(r *http.Request, req *jsonrpc.Request, mr *mcp.ModernRequest) *jsonrpc.Error {
	v, ok := oneHeader(r.Header, headerProtocolVersion)
	if !ok {
		return headerMismatch("the request needs exactly one MCP-Protocol-Version header")
	}
	if pv := mr.ProtocolVersion(); v != pv {
		return headerMismatch("MCP-Protocol-Version header value " + clip.Quote(v) + " does not match _meta value " + clip.Quote(pv))
	}
	if v, ok = oneHeader(r.Header, headerMcpMethod); !ok {
		return headerMismatch("the request needs exactly one Mcp-Method header")
	}
	if v != req.Method {
		return headerMismatch("Mcp-Method header value " + clip.Quote(v) + " does not match body value " + clip.Quote(req.Method))
	}
	body, ok := mr.MirroredName()
	if !ok {
		return nil // not mirrored, or the handler answers the missing member with -32602
	}
	if v, ok = oneHeader(r.Header, headerMcpName); !ok {
		return headerMismatch("the request needs exactly one Mcp-Name header")
	}
	name, ok := mcp.DecodeHeaderValue(v)
	if !ok {
		return headerMismatch("Mcp-Name header value is malformed")
	}
	if name != body {
		return headerMismatch("Mcp-Name header value " + clip.Quote(name) + " does not match body value " + clip.Quote(body))
	}
	return nil
}

// httpSink is the modern sink of one POST: the first notification turns
// the answer into an SSE stream (basic/transports/streamable-http,
// "Receiving Messages"); without one the answer is JSON. notify and
// finish may run on different goroutines.
type httpSink struct {
	w http.ResponseWriter
	h *Handler

	mu   sync.Mutex
	sse  bool // the SSE stream is open
	done bool // the answer is written: nothing more may be
	bad  bool // a write failed: the client is gone
}

var errAnswered = errors.New("mcp: the request has been answered; its stream is closed")

// startSSE opens the SSE stream. Called with mu held, before any write.
func (s *httpSink) startSSE() {
	hd := s.w.Header()
	hd["Content-Type"] = eventStreamType
	hd["Cache-Control"] = noCache
	hd.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.sse = true
}

// write writes b and flushes it, within the handler's write timeout.
// Called with mu held.
func (s *httpSink) write(b []byte) error {
	if s.bad {
		return errAnswered
	}
	s.h.armWrite(s.w)
	if _, err := s.w.Write(b); err != nil {
		s.bad = true
		return err
	}
	if err := http.NewResponseController(s.w).Flush(); err != nil {
		s.bad = true
		return err
	}
	return nil
}

// Notify implements mcp.ModernSink.
func (s *httpSink) Notify(_ context.Context, method string, params json.RawMessage) error {
	bp := s.h.getBuf()
	defer s.h.putBuf(bp)
	b := append((*bp)[:0], "event: message\ndata: "...)
	b, err := jsonrpc.AppendMessage(b, &jsonrpc.Request{Method: method, Params: params})
	if err != nil {
		return err
	}
	b = append(b, "\n\n"...)
	*bp = b
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return errAnswered
	}
	if !s.sse {
		s.startSSE()
	}
	return s.write(b)
}

// KeepAlive implements mcp.ModernSink.
func (s *httpSink) KeepAlive() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return errAnswered
	}
	if !s.sse {
		s.startSSE()
	}
	return s.write([]byte(":\n\n"))
}

// Done implements mcp.ModernSink.
func (s *httpSink) Done() <-chan struct{} { return s.h.modernDone }

// finish writes the answer: the result (encoded by mr) or the error, as
// JSON, or as the last event of the SSE stream if one is open.
func (s *httpSink) finish(id jsonrpc.ID, mr *mcp.ModernRequest, res any, e *jsonrpc.Error) {
	bp := s.h.getBuf()
	defer s.h.putBuf(bp)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	b := (*bp)[:0]
	if s.sse {
		b = append(b, "event: message\ndata: "...)
	}
	start := len(b)
	if e == nil {
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = id.AppendJSON(b)
		b = append(b, `,"result":`...)
		var err error
		if b, err = mr.AppendResult(b, res); err != nil {
			s.h.log.Error("mcp: cannot encode a result", "error", err)
			e = jsonrpc.ErrInternal
			b = b[:start]
		} else {
			b = append(b, '}')
		}
	}
	if e != nil {
		b, _ = jsonrpc.AppendMessage(b, &jsonrpc.Response{ID: id, Error: e})
	}
	*bp = b
	if s.sse {
		b = append(b, "\n\n"...)
		*bp = b
		_ = s.write(b)
		return
	}
	status := http.StatusOK
	if e != nil {
		status = modernStatus(e)
	}
	hd := s.w.Header()
	hd["Content-Type"] = jsonType
	setContentLength(hd, len(b))
	s.h.armWrite(s.w)
	s.w.WriteHeader(status)
	_, _ = s.w.Write(b)
}

// putBuf returns a buffer from getBuf to the pool.
func (h *Handler) putBuf(p *[]byte) {
	if cap(*p) <= maxPooledBuf {
		*p = (*p)[:0]
		h.bufs.Put(p)
	}
}
