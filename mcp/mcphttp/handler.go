package mcphttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// Handler serves MCP's Streamable HTTP transport (protocol
// revisions 2025-03-26 and later) on one endpoint, conventionally /mcp:
// clients POST their messages, and GET the session's standalone stream of
// server messages.
//
// Each message the server sends goes on exactly one stream: the answer to
// the POST of the request it belongs to (its response, and the requests and
// notifications sent while handling it), or else the session's standalone
// GET stream. SSE event ids have the form "<stream>_<seq>"; with them a
// client resumes a dropped stream by GET with Last-Event-ID and receives the
// messages of that stream it missed, from the event store. A client that
// disconnects does not cancel its request: the request completes and its
// messages wait in the store.
//
// A POSTed message is handled in the goroutine that serves the POST (see
// mcp.ServerSession.Deliver): sessions have no goroutines of their own, and
// an idle session holds about 1.1 KB of heap, 1.2 KB with its expiry timer
// (BenchmarkStreamableIdleSession).
//
// The HTTP rules, checked in this order (error bodies are JSON-RPC errors
// without an id, except for a malformed message whose id could be read),
// each with the section of MCP 2025-11-25 basic/transports that states it:
//
//   - Host or Origin not allowed (see Options): 403
//     (basic/transports#security-warning).
//   - With Options.CORS, a CORS preflight (OPTIONS) gets 204
//     or 403 (see CORSOptions).
//   - A method other than POST, GET or DELETE: 405 with Allow.
//   - POST: Accept must list application/json and text/event-stream (406);
//     Content-Type must be application/json (415); a body over MaxBodyBytes
//     gets 413; a malformed message gets 400 with the error that answers it.
//     Initialize (with no Mcp-Session-Id) opens a session, whose id the
//     answer carries in Mcp-Session-Id. Anything else needs the header: 400
//     without it, 404 for a session unknown or ended. A batch is accepted
//     only in a session at protocol version 2025-03-26 (400 otherwise).
//     Notifications and responses get 202 with no body; requests get their
//     responses as JSON or SSE (basic/transports#sending-messages-to-the-server;
//     the session id: basic/transports#session-management). A request that
//     the client cancels (notifications/cancelled) is not answered: its
//     POST gets 202, or its stream ends.
//   - MCP-Protocol-Version, on any request in a session: a value other
//     than the negotiated version gets 400. Without the header, the
//     negotiated version is assumed, since the session knows it; in
//     stateless mode, where nothing else tells, 2025-03-26 is
//     (basic/transports#protocol-version-header).
//   - GET: Accept must list text/event-stream (406). Without Last-Event-ID
//     it opens the session's standalone stream: 409 if one is open already,
//     405 when DisableStandaloneSSE is set. With Last-Event-ID it resumes
//     that stream, taking it over from a previous connection; an id that is
//     malformed, or whose missed events are no longer kept, gets 400; one
//     for a POST's stream that has ended and whose events the client all
//     has gets 405, so that the client stops resuming it
//     (basic/transports#listening-for-messages-from-the-server,
//     basic/transports#resumability-and-redelivery).
//   - DELETE ends the session: 204, or 405 when DisableDelete is set
//     (basic/transports#session-management).
//   - During Shutdown, new sessions and new requests get 503.
//
// For clients at protocol version 2025-11-25 or later, every SSE stream
// starts with a priming event: an id and empty data (MCP 2025-11-25
// basic/transports#sending-messages-to-the-server). Older clients do not
// expect it and do not get it.
type Handler struct {
	getServer func(*http.Request) *mcp.Server
	opts      Options
	store     eventstore.Store
	log       *slog.Logger
	guard     hostGuard
	dec       *jsonrpc.Decoder // reuses the MCP method names

	mu       sync.RWMutex
	sessions map[string]*httpSession
	closing  atomic.Bool // Shutdown started: no new sessions or requests
	closed   atomic.Bool
	// keepEvents is set by Shutdown: the sessions it ends keep their events
	// in the store, for clients to resume elsewhere.
	keepEvents atomic.Bool

	retryAfter []string // the Retry-After of a 503 (see RetryInterval)

	exchanges atomic.Int64 // POSTed requests not yet answered

	start time.Time // the handler's creation: sessions keep times as durations since

	bufs sync.Pool // of *[]byte: the buffers of outgoing messages (see outMsg.buf)

	modernDone chan struct{} // closed by Close: the modern leg's listen streams end (modern.go)
	modernOnce sync.Once
	budget     *eventstore.Budget // what is buffered for clients (see Options.MaxBufferedBytes); nil: no bound
	rep        *replicaState      // Options.Replicas (replicas.go); nil without
}

// NewHandler returns a handler that serves sessions of the
// server that getServer returns for the request that opens them (the
// initialize POST, or in stateless mode every POST). getServer may return
// the same Server every time. If it returns nil, the request gets 400.
func NewHandler(getServer func(*http.Request) *mcp.Server, opts *Options) *Handler {
	h := &Handler{getServer: getServer, sessions: make(map[string]*httpSession), start: time.Now(), modernDone: make(chan struct{})}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.SessionTimeout == 0 {
		h.opts.SessionTimeout = DefaultSessionTimeout
	}
	if h.opts.MaxBodyBytes <= 0 {
		h.opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if h.opts.RetryInterval <= 0 {
		h.opts.RetryInterval = DefaultRetryInterval
	}
	h.opts.ReadTimeout = defaultBound(h.opts.ReadTimeout, DefaultReadTimeout)
	h.opts.WriteTimeout = defaultBound(h.opts.WriteTimeout, DefaultWriteTimeout)
	h.opts.MaxSessions = defaultBound(h.opts.MaxSessions, DefaultMaxSessions)
	h.retryAfter = []string{strconv.FormatInt(int64((h.opts.RetryInterval+time.Second-1)/time.Second), 10)}
	if h.opts.MaxQueuedMessages <= 0 {
		h.opts.MaxQueuedMessages = DefaultMaxQueuedMessages
	}
	if h.opts.MaxQueuedBytes <= 0 {
		h.opts.MaxQueuedBytes = DefaultMaxQueuedBytes
	}
	if h.opts.MaxBatchLength <= 0 {
		h.opts.MaxBatchLength = DefaultMaxBatchLength
	}
	if h.opts.MaxBatchConcurrency <= 0 {
		h.opts.MaxBatchConcurrency = DefaultMaxBatchConcurrency
	}
	h.budget = newBudget(h.opts.Budget, h.opts.MaxBufferedBytes)
	if !h.opts.Stateless {
		h.store = h.opts.EventStore
		if h.store == nil {
			h.store = &eventstore.Memory{Budget: h.budget}
		}
	}
	h.log = h.opts.Logger
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.dec = jsonrpc.NewDecoder(mcp.MethodNames()...).WithMaxBatchLength(h.opts.MaxBatchLength)
	h.rep = h.newReplicas()
	h.guard = newHostGuard(h.opts.DisableDNSRebindingProtection, h.opts.AllowedHosts, h.opts.AllowedOrigins)
	h.guard.setCORS(h.opts.CORS)
	return h
}

// ServeHTTP answers one HTTP request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.armWrite(w) // for the answers written at once: errors, 202
	if err := h.guard.check(r); err != "" {
		writeHTTPError(w, http.StatusForbidden, jsonrpc.ID{}, "Forbidden: "+err)
		return
	}
	if h.guard.cors != nil && h.guard.cors.Handle(w, r) {
		return // a preflight, answered
	}
	if h.refuseModern(w, r) { // see modern.go
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.servePost(w, r)
	case http.MethodGet:
		h.serveGet(w, r)
	case http.MethodDelete:
		h.serveDelete(w, r)
	default:
		w.Header().Set("Allow", h.allowed())
		writeHTTPError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, "Method Not Allowed: "+r.Method)
	}
}

func (h *Handler) allowed() string {
	if h.opts.Stateless {
		return "POST"
	}
	if h.opts.DisableDelete {
		return "GET, POST"
	}
	return "GET, POST, DELETE"
}

// Close ends every session at once: their streams end, and later requests
// for them get 404. New sessions are refused with 503. Close does not wait
// for the handlers of the sessions' requests to return. The sessions'
// events are deleted from the event store, unless Shutdown called Close.
func (h *Handler) Close() error {
	h.closing.Store(true)
	h.closed.Store(true)
	h.modernOnce.Do(func() { close(h.modernDone) })
	h.rep.close()
	h.mu.Lock()
	list := make([]*httpSession, 0, len(h.sessions))
	for _, s := range h.sessions {
		list = append(list, s)
	}
	h.mu.Unlock()
	for _, s := range list {
		s.terminate()
	}
	return nil
}

// Shutdown ends the handler gracefully: it refuses new sessions and new
// requests with 503 (and Retry-After), waits until every request already
// POSTed has been answered (or ctx ends), then calls Close. Messages that
// answer in-flight requests (such as the client's response to a sampling
// request) are still accepted while it waits, and so are GETs that resume
// a stream. Close then ends every SSE stream cleanly after its last
// queued event, with an SSE retry field for clients at 2025-11-25 or
// later, and the sessions' events stay in the event store, so that a
// client can resume them from a server that shares the store. It returns
// ctx's error if ctx ended first: requests still in flight then were cut.
//
// An http.Server's own Shutdown does not end the long-lived SSE responses:
// call this first, or alongside.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.closing.Store(true)
	h.keepEvents.Store(true)
	wait := time.Millisecond
	var err error
	for h.exchanges.Load() > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-t.C:
		}
		t.Stop()
		if err != nil {
			break
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
	h.Close()
	return err
}

// session returns the session with id, or nil.
func (h *Handler) session(id string) *httpSession {
	h.mu.RLock()
	s := h.sessions[id]
	h.mu.RUnlock()
	return s
}

// lookup finds the session of a request, answering 400 or 404 itself when
// there is none (MCP 2025-11-25 basic/transports#session-management: a
// request without the session id gets 400, one for a session the server
// ended gets 404), or 403 when it belongs to another caller. It also
// checks the protocol version header.
func (h *Handler) lookup(w http.ResponseWriter, r *http.Request) *httpSession {
	id := headerGet(r.Header, headerSessionID)
	if id == "" {
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: missing "+headerSessionID+" header")
		return nil
	}
	s := h.session(id)
	if s == nil && h.rep != nil && h.sharedID(id) {
		if s = h.rebuild(w, r, id); s == nil { // see replicas.go
			return nil
		}
	} else if s == nil {
		writeHTTPError(w, http.StatusNotFound, jsonrpc.ID{}, "Not Found: unknown or terminated session")
		return nil
	} else if s.rep != nil {
		h.touch(s)
	}
	if f := h.opts.Identity; f != nil && f(r) != s.owner {
		h.log.Warn("mcphttp: session used by another caller; refused", "session", id)
		writeHTTPError(w, http.StatusForbidden, jsonrpc.ID{}, "Forbidden: the session belongs to another caller")
		return nil
	}
	if msg := s.checkVersion(headerGet(r.Header, headerProtocolVersion)); msg != "" {
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, msg)
		return nil
	}
	return s
}

func (h *Handler) servePost(w http.ResponseWriter, r *http.Request) {
	if !acceptsBoth(r.Header["Accept"]) {
		writeHTTPError(w, http.StatusNotAcceptable, jsonrpc.ID{}, "Not Acceptable: Accept must list application/json and text/event-stream")
		return
	}
	// A POST naming a session is checked against it (unknown session,
	// another caller's, wrong protocol version) before its body is read:
	// nothing of a request that cannot be served is buffered.
	var s *httpSession
	modern := modernByHeader(r) // see modern.go
	if !modern && !h.opts.Stateless && headerGet(r.Header, headerSessionID) != "" {
		if s = h.lookup(w, r); s == nil {
			return
		}
	}
	h.armRead(w)
	msg, held, ok := readPostedMessage(w, r, h.opts.MaxBodyBytes, h.dec, h.budget, h.retryAfter)
	if !ok {
		return // the deadline stays: net/http may read on, to skip the body
	}
	defer h.budget.Release(held) // the body, which the messages refer to
	h.clearRead(w)               // what follows, an SSE answer, must outlive the body's deadline
	if modern || (s == nil && modernByBody(r, msg)) {
		h.serveModern(w, r, msg)
		return
	}
	var one [1]jsonrpc.Message // msgs of a single message, kept off the heap
	var msgs []jsonrpc.Message
	if b, ok := msg.(jsonrpc.Batch); ok {
		for _, e := range b {
			if de, ok := e.(*jsonrpc.DecodeError); ok {
				writeJSON(w, http.StatusBadRequest, "", de.Response())
				return
			}
			if req, ok := e.(*jsonrpc.Request); ok && req.Method == mcp.MethodInitialize {
				writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Invalid Request: initialize must not be part of a batch")
				return
			}
		}
		msgs = b
	} else {
		one[0] = msg
		msgs = one[:]
	}
	if h.opts.Stateless {
		h.postStateless(w, r, msg, msgs)
		return
	}
	newSession := false
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == mcp.MethodInitialize && !req.IsNotification() && s == nil {
		if h.closing.Load() {
			h.writeUnavailable(w, "Service Unavailable: the server is shutting down")
			return
		}
		if h.full() {
			h.writeUnavailable(w, tooManySessions)
			return
		}
		srv := h.getServer(r)
		if srv == nil {
			writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: no server for this request")
			return
		}
		var err error
		if s, err = h.newSession(srv); err != nil {
			if errors.Is(err, errTooManySessions) {
				h.writeUnavailable(w, tooManySessions)
				return
			}
			h.log.Error("mcphttp: cannot start a session", "error", err)
			writeHTTPError(w, http.StatusInternalServerError, jsonrpc.ID{}, "Internal Server Error: cannot start a session")
			return
		}
		if f := h.opts.Identity; f != nil {
			s.owner = f(r)
		}
		h.recordSession(r.Context(), s, req.Params) // see shared.go
		newSession = true
	} else {
		if s == nil {
			if s = h.lookup(w, r); s == nil { // answers 400: no session id
				return
			}
		}
		if isBatch(msg) {
			if v := s.ss.ProtocolVersion(); v != mcp.ProtocolVersion20250326 {
				writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Invalid Request: batches are not supported at protocol version "+v)
				return
			}
		}
	}
	if !s.enter() {
		writeHTTPError(w, http.StatusNotFound, jsonrpc.ID{}, "Not Found: unknown or terminated session")
		return
	}
	defer s.leave()
	sessionHeader := ""
	if newSession {
		sessionHeader = s.id
	}
	if s.rep != nil && !newSession { // a shared session: see replicas.go
		batch := isBatch(msg)
		h.forwardCancels(r.Context(), s, msgs)
		if msgs = h.forwardResponses(r.Context(), s, msgs); len(msgs) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		h.exchange(w, r, s, msgs, batch, "", primeVersion(s, msg))
		if changes, ready := changesState(msgs); changes {
			h.writeBack(r.Context(), s, ready)
		}
		return
	}
	h.exchange(w, r, s, msgs, isBatch(msg), sessionHeader, primeVersion(s, msg))
}

func isBatch(m jsonrpc.Message) bool {
	_, ok := m.(jsonrpc.Batch)
	return ok
}

// primeVersion is the protocol version that decides whether SSE streams of
// this POST start with a priming event: the one asked for in initialize,
// else the session's.
func primeVersion(s *httpSession, m jsonrpc.Message) string {
	if req, ok := m.(*jsonrpc.Request); ok && req.Method == mcp.MethodInitialize {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = strictjson.Unmarshal(req.Params, &p)
		return p.ProtocolVersion
	}
	if s.ss != nil {
		return s.ss.ProtocolVersion()
	}
	return ""
}

// exchange delivers the POSTed messages to the session and answers the
// POST: 202 when they hold no request, else their responses as JSON or
// SSE.
//
// The messages are delivered in the POST's goroutine (see
// mcp.ServerSession.Deliver): a request's handler runs there, and whatever the
// server sends about the request while it runs is written to this POST's
// answer by the goroutine that sends it (see outStream.send). Only when
// the answer may have to end before the request does (SSE polling, see
// Options.MaxEventsPerConnection) do the handlers run in a
// goroutine of their own while this one pumps their messages.
func (h *Handler) exchange(w http.ResponseWriter, r *http.Request, s *httpSession, msgs []jsonrpc.Message, batch bool, sessionHeader, version string) {
	var idBuf [1]jsonrpc.ID
	ids := idBuf[:0]
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && !req.IsNotification() {
			ids = append(ids, req.ID)
		}
	}
	if len(ids) > 0 {
		msgs, ids = s.dropPrecancelled(msgs, ids)
	}
	ctx := context.Context(httpValues{r})
	if len(ids) == 0 {
		// Accepted even during Shutdown: it may answer an in-flight request.
		if s.isClosed() {
			writeHTTPError(w, http.StatusNotFound, jsonrpc.ID{}, "Not Found: unknown or terminated session")
			return
		}
		s.handOver(ctx, msgs)
		if sessionHeader != "" {
			w.Header().Set(headerSessionID, sessionHeader)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if h.closing.Load() && sessionHeader == "" {
		h.writeUnavailable(w, "Service Unavailable: the server is shutting down")
		return
	}
	// The stream and its answer writer are allocated together, one
	// 256-byte block: an allocation fewer per POST.
	x := &struct {
		st outStream
		c  answerWriter
	}{}
	st, c := &x.st, &x.c
	st.sess, st.pending = s, len(ids)
	if sessionHeader != "" {
		s.opening.Store(st)
	}
	st.queue = st.inline[:0]
	if !h.opts.JSONResponse {
		st.sse = true
		st.id = s.newStreamID()
		st.resumable = h.store != nil && s.id != ""
	}
	c.w, c.sessionHeader, c.batch, c.wt = w, sessionHeader, batch, h.opts.WriteTimeout
	c.prime = version >= mcp.ProtocolVersion20251125
	c.poll = h.opts.MaxEventsPerConnection > 0 && version >= mcp.ProtocolVersion20251125
	var sw *streamWriter
	if c.poll {
		sw = newStreamWriter(w)
		st.w = sw
	} else {
		st.direct = c
	}
	dup, refused, ok := s.register(ids, st, batch)
	if !ok {
		writeHTTPError(w, http.StatusBadRequest, dup, "Invalid Request: id "+string(dup.AppendJSON(nil))+" is already in use")
		return
	}
	h.exchanges.Add(1)
	st.counted = true
	if st.sse {
		// Not under st.mu, which guards no write: nothing else writes to
		// c before the handlers run, and a GET that takes the stream
		// over meanwhile cuts c (see cutLocked), making this write fail.
		c.start(st.id, 0, st.resumable)
	}
	if len(refused) > 0 {
		msgs = s.refuse(st, msgs, ids, refused)
	}
	if sw != nil {
		own := slices.Clone(msgs) // for the goroutine; the caller's may be on its stack
		go s.handOver(ctx, own)
		h.pump(r, st, sw, c)
		return
	}
	s.handOver(ctx, msgs)
	h.finishDirect(r, st, c)
}

// finishDirect ends the answer c of a POST whose messages were delivered
// in its goroutine: it writes a JSON answer, or ends the SSE stream that
// the handlers wrote to. If a request is still unanswered (the session
// ended, or a cancellation is on its way), it waits as pump does.
func (h *Handler) finishDirect(r *http.Request, st *outStream, c *answerWriter) {
	st.mu.Lock()
	st.waitDrainedLocked()
	if st.direct != c { // a resuming GET took the stream over
		st.mu.Unlock()
		return
	}
	st.direct = nil
	if !st.done {
		sw := newStreamWriter(c.w)
		st.w = sw
		sw.signal()
		st.mu.Unlock()
		h.pump(r, st, sw, c)
		return
	}
	q := st.takeQueue()
	sse := st.sse
	st.mu.Unlock()
	if !sse {
		h.writeJSONAnswer(c, q)
		h.releaseMsgs(q)
	}
	st.finish()
}

// postStateless serves a POST with a fresh session of its own.
func (h *Handler) postStateless(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message, msgs []jsonrpc.Message) {
	version := headerGet(r.Header, headerProtocolVersion)
	srv := h.getServer(r)
	if srv == nil {
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: no server for this request")
		return
	}
	init := false
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == mcp.MethodInitialize {
		init = true
	} else {
		if version == "" {
			// MCP 2025-11-25 basic/transports#protocol-version-header:
			// without the header and any other way to know, assume
			// 2025-03-26.
			version = mcp.ProtocolVersion20250326
		} else if !slices.Contains(srv.ProtocolVersions(), version) {
			writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: unsupported "+headerProtocolVersion+" "+clip.Quote(version))
			return
		}
		if isBatch(msg) && version != mcp.ProtocolVersion20250326 {
			writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Invalid Request: batches are not supported at protocol version "+version)
			return
		}
	}
	hasRequest := false
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && !req.IsNotification() {
			hasRequest = true
		}
	}
	if !hasRequest {
		// No session could relate a notification or a response to anything.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if h.closing.Load() {
		h.writeUnavailable(w, "Service Unavailable: the server is shutting down")
		return
	}
	s, err := h.newStatelessSession(srv)
	if err != nil {
		h.log.Error("mcphttp: cannot start a session", "error", err)
		writeHTTPError(w, http.StatusInternalServerError, jsonrpc.ID{}, "Internal Server Error: cannot start a session")
		return
	}
	defer s.closeWhenAnswered()
	if !init {
		if err := s.implicitInit(httpValues{r}, version); err != nil {
			s.terminate()
			h.log.Error("mcphttp: implicit initialization failed", "error", err)
			writeHTTPError(w, http.StatusInternalServerError, jsonrpc.ID{}, "Internal Server Error: implicit initialization failed")
			return
		}
	}
	if init {
		version = primeVersion(s, msg)
	}
	h.exchange(w, r, s, msgs, isBatch(msg), "", version)
}

func (h *Handler) serveGet(w http.ResponseWriter, r *http.Request) {
	if h.opts.Stateless {
		w.Header().Set("Allow", h.allowed())
		writeHTTPError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, "Method Not Allowed: this server offers no GET stream")
		return
	}
	if !acceptsEventStream(r.Header["Accept"]) {
		writeHTTPError(w, http.StatusNotAcceptable, jsonrpc.ID{}, "Not Acceptable: Accept must list text/event-stream")
		return
	}
	last := headerGet(r.Header, headerLastEventID)
	if last == "" && h.opts.DisableStandaloneSSE {
		w.Header().Set("Allow", h.allowed())
		writeHTTPError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, "Method Not Allowed: this server offers no standalone GET stream")
		return
	}
	if id := headerGet(r.Header, headerSessionID); last != "" && h.session(id) == nil && !h.takesOver(last) && h.resumeElsewhere(w, r, id, last) {
		return // a session of another replica (see shared.go)
	}
	s := h.lookup(w, r)
	if s == nil {
		return
	}
	if !s.enter() {
		writeHTTPError(w, http.StatusNotFound, jsonrpc.ID{}, "Not Found: unknown or terminated session")
		return
	}
	defer s.leave()
	h.clearRead(w) // a GET has no body; the stream must outlive any read deadline
	version := s.ss.ProtocolVersion()
	c := &answerWriter{w: w, wt: h.opts.WriteTimeout}
	c.prime = version >= mcp.ProtocolVersion20251125
	c.poll = h.opts.MaxEventsPerConnection > 0 && version >= mcp.ProtocolVersion20251125
	var prior *priorEvents // another replica's standalone stream, taken over (replicas.go)
	if last != "" {
		streamID, seq, ok := parseEventID(last)
		if !ok {
			writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: malformed "+headerLastEventID+" "+clip.Quote(last))
			return
		}
		if prior, ok = h.takeOver(w, r, s, streamID, seq); !ok {
			h.resume(w, r, s, c, streamID, seq)
			return
		} else if prior == nil {
			return // answered
		}
	}
	if h.closing.Load() {
		h.writeUnavailable(w, "Service Unavailable: the server is shutting down")
		return
	}
	s.mu.Lock()
	st := s.standaloneLocked()
	s.mu.Unlock()
	sw := newStreamWriter(w)
	st.mu.Lock()
	if st.w != nil {
		st.mu.Unlock()
		writeHTTPError(w, http.StatusConflict, jsonrpc.ID{}, "Conflict: the session's GET stream is already open")
		return
	}
	after := st.delivered
	if after < st.seq {
		events, err := h.store.After(r.Context(), s.id, st.id, after)
		if err != nil {
			h.log.Warn("mcphttp: undelivered events of the GET stream are lost", "session", s.id, "error", err)
			after = st.seq
		}
		st.setQueue(eventsToQueue(events))
	}
	st.w = sw
	sw.signal()
	st.mu.Unlock()
	if s.rep != nil { // this replica now writes the standalone stream (replicas.go)
		h.claimStandalone(r.Context(), s, true)
		defer h.claimStandalone(context.WithoutCancel(r.Context()), s, false)
		if prior != nil {
			h.followTaken(s, prior) // what the old writer wrote after prior
		}
	}
	prior.write(c)
	c.start(st.id, after, true)
	h.pump(r, st, sw, c)
}

// resume serves a GET with Last-Event-ID: the events of that stream after
// seq, then, if the stream is still live, what follows.
func (h *Handler) resume(w http.ResponseWriter, r *http.Request, s *httpSession, c *answerWriter, streamID string, seq int64) {
	s.mu.Lock()
	st := s.streams[streamID]
	if streamID == s.standaloneID() {
		st = s.standaloneLocked()
	}
	s.mu.Unlock()
	if st == nil && s.rep != nil && h.resumeShared(w, r, s, streamID, seq) {
		return // another replica's stream (see replicas.go)
	}
	if st == nil {
		// A finished stream: replay what the store kept.
		events, err := h.store.After(r.Context(), s.id, streamID, seq)
		if err != nil {
			h.resumeFailed(w, s.id, err)
			return
		}
		if len(events) == 0 {
			h.streamOver(w, streamID)
			return
		}
		c.start(streamID, seq, true)
		for i, e := range events {
			c.event(streamID, e.Seq, e.Data)
			if c.poll && c.sent >= h.opts.MaxEventsPerConnection && i < len(events)-1 {
				c.buf = appendSSERetry(c.buf[:0], h.opts.RetryInterval)
				c.buf = append(c.buf, '\n')
				c.write(c.buf)
				break
			}
		}
		c.flush()
		return
	}
	sw := newStreamWriter(w)
	st.mu.Lock()
	if seq > st.seq {
		st.mu.Unlock()
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: cannot resume: event "+strconv.FormatInt(seq, 10)+" of stream "+strconv.Quote(streamID)+" was never sent")
		return
	}
	if !st.standalone && st.done && seq == st.seq {
		// Answered, and the client has every event: nothing will follow.
		st.mu.Unlock()
		h.streamOver(w, streamID)
		return
	}
	var events []eventstore.Event
	if seq < st.seq {
		var err error
		if events, err = h.store.After(r.Context(), s.id, streamID, seq); err != nil {
			st.mu.Unlock()
			h.resumeFailed(w, s.id, err)
			return
		}
	}
	// The old connection, if any, is presumably dead: take over, and cut
	// it, so that a write blocked on it (a POST's handler writing its
	// own answer, say) returns.
	st.cutLocked()
	st.w = sw
	st.setQueue(eventsToQueue(events))
	sw.signal()
	st.mu.Unlock()
	c.start(streamID, seq, true)
	h.pump(r, st, sw, c)
}

// streamOver answers a GET that resumes a POST's stream whose every event
// the client already has, and to which nothing more will be sent: its
// requests were answered (or cancelled). An SSE stream that opened and
// closed at once would be taken by clients for a dropped connection, to
// be resumed again after the retry delay, for ever (the TypeScript SDK's
// client does so about once a second). The 2025-11-25 transport's answer
// to a GET for which the server offers no stream is 405 (MCP 2025-11-25
// basic/transports#listening-for-messages-from-the-server); clients stop
// on it.
func (h *Handler) streamOver(w http.ResponseWriter, streamID string) {
	w.Header().Set("Allow", h.allowed())
	writeHTTPError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, "Method Not Allowed: stream "+strconv.Quote(streamID)+" has ended and the client has all its events; nothing is left to resume")
}

func eventsToQueue(events []eventstore.Event) []outMsg {
	if len(events) == 0 {
		return nil
	}
	q := make([]outMsg, len(events))
	for i, e := range events {
		q[i] = outMsg{seq: e.Seq, data: e.Data}
	}
	return q
}

// parseEventID splits "<stream>_<seq>". An event id names its stream, so
// that Last-Event-ID resumes that stream and no other (MCP 2025-11-25
// basic/transports#resumability-and-redelivery).
//
// An id longer than maxEventIDLen is malformed: none this package mints is
// (see maxEventIDLen), and a client's would otherwise go, whole, into a
// store command and the error message.
func parseEventID(id string) (stream string, seq int64, ok bool) {
	if len(id) > maxEventIDLen {
		return "", 0, false
	}
	i := strings.LastIndexByte(id, '_')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(id[i+1:], 10, 64)
	if err != nil || seq < 0 {
		return "", 0, false
	}
	return id[:i], seq, true
}

// maxEventIDLen bounds a Last-Event-ID: the longest event id this package
// mints is a copy's stream (a replica name of up to 64 characters, '-',
// a counter) then '_' and a sequence number, under 110 bytes.
const maxEventIDLen = 160

func formatEventID(b []byte, stream string, seq int64) []byte {
	b = append(b, stream...)
	b = append(b, '_')
	return strconv.AppendInt(b, seq, 10)
}

// serveDelete ends the session a client no longer needs (MCP 2025-11-25
// basic/transports#session-management), or answers 405 when the handler
// does not let clients end sessions.
func (h *Handler) serveDelete(w http.ResponseWriter, r *http.Request) {
	if h.opts.Stateless || h.opts.DisableDelete {
		w.Header().Set("Allow", h.allowed())
		writeHTTPError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, "Method Not Allowed: sessions cannot be ended by the client")
		return
	}
	s := h.lookup(w, r)
	if s == nil {
		return
	}
	if s.rep != nil {
		s.rep.ending.Store(true) // the record and events go (see replicas.go)
	}
	s.terminate()
	if s.rep != nil {
		h.endEverywhere(r.Context(), s)
	}
	w.WriteHeader(http.StatusNoContent)
}

// Header values shared by all responses, to spare an allocation each;
// nothing modifies them.
var (
	jsonType        = []string{"application/json"}
	eventStreamType = []string{"text/event-stream"}
	noCache         = []string{"no-cache"}
)

// writeHTTPError answers with status and a JSON-RPC error body.
func writeHTTPError(w http.ResponseWriter, status int, id jsonrpc.ID, msg string) {
	code := int64(jsonrpc.CodeInvalidRequest)
	if status >= 500 {
		code = jsonrpc.CodeInternalError
	}
	writeJSON(w, status, "", &jsonrpc.Response{ID: id, Error: jsonrpc.NewError(code, msg)})
}

func writeJSON(w http.ResponseWriter, status int, sessionID string, m jsonrpc.Message) {
	b, err := jsonrpc.Encode(m)
	if err != nil {
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if sessionID != "" {
		h.Set(headerSessionID, sessionID)
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// readBody reads a POST body of at most limit bytes. A body of known
// length is read into a buffer of that size at once; one of unknown length
// (chunked) grows its buffer as it is read, up to the limit.
//
// The body's bytes are taken from b before they are read (or, for a
// chunked body, once read): without room, it fails with 503. On success
// the caller releases len(body) to b once nothing refers to the body.
func readBody(r *http.Request, limit int64, b *eventstore.Budget) ([]byte, int, error) {
	if r.ContentLength > limit {
		//lint:ignore ST1005 the message is the body of the 413 answer, after its status text
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("Request Entity Too Large: the body exceeds %d bytes", limit)
	}
	if r.ContentLength >= 0 {
		if !b.TryAcquire(int(r.ContentLength)) {
			return nil, http.StatusServiceUnavailable, errBodyOverBudget
		}
		buf := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			b.Release(len(buf))
			//lint:ignore ST1005 the message is the body of the 400 answer, after its status text
			return nil, http.StatusBadRequest, fmt.Errorf("Bad Request: reading the body: %w", err)
		}
		return buf, 0, nil
	}
	buf := make([]byte, 0, 512)
	lr := io.LimitedReader{R: r.Body, N: limit + 1}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			//lint:ignore ST1005 the message is the body of the 413 answer, after its status text
			return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("Request Entity Too Large: the body exceeds %d bytes", limit)
		}
		if err == io.EOF {
			if !b.TryAcquire(len(buf)) {
				return nil, http.StatusServiceUnavailable, errBodyOverBudget
			}
			return buf, 0, nil
		}
		if err != nil {
			//lint:ignore ST1005 the message is the body of the 400 answer, after its status text
			return nil, http.StatusBadRequest, fmt.Errorf("Bad Request: reading the body: %w", err)
		}
	}
}

// headerGet is h.Get(key) for a key already in canonical form (as every
// constant passed to it is), without canonicalizing key again: the header
// of a request read by net/http is keyed canonically.
func headerGet(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// readPostedMessage checks a POST's Content-Type, reads its body within
// maxBytes and decodes the one message it carries. On failure it has
// answered the request (415, 413, 503 with retryAfter when b has no room
// for the body, or 400 with the JSON-RPC error) and reports false. On
// success it returns the bytes of the body taken from b, which the caller
// releases once the message is handled. dec may be nil.
func readPostedMessage(w http.ResponseWriter, r *http.Request, maxBytes int64, dec *jsonrpc.Decoder, b *eventstore.Budget, retryAfter []string) (jsonrpc.Message, int, bool) {
	if !isJSONContentType(headerGet(r.Header, "Content-Type")) {
		writeHTTPError(w, http.StatusUnsupportedMediaType, jsonrpc.ID{}, "Unsupported Media Type: Content-Type must be application/json")
		return nil, 0, false
	}
	body, status, err := readBody(r, maxBytes, b)
	if err != nil {
		if status == http.StatusServiceUnavailable {
			w.Header()["Retry-After"] = retryAfter
		}
		writeHTTPError(w, status, jsonrpc.ID{}, err.Error())
		return nil, 0, false
	}
	m, err := dec.Decode(body)
	if err != nil {
		b.Release(len(body))
		var de *jsonrpc.DecodeError
		if errors.As(err, &de) {
			writeJSON(w, http.StatusBadRequest, "", de.Response())
			return nil, 0, false
		}
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: "+err.Error())
		return nil, 0, false
	}
	return m, len(body), true
}
