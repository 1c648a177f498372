package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// HTTP header names of the Streamable HTTP transport.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-Id"
)

const (
	// DefaultSessionTimeout is how long a Streamable HTTP session may stay
	// idle before the handler ends it, unless told otherwise.
	DefaultSessionTimeout = 30 * time.Minute
	// DefaultMaxBodyBytes bounds a POST body unless told otherwise: 4 MiB.
	DefaultMaxBodyBytes = 4 << 20
	// DefaultRetryInterval is the SSE retry field the handler sends before
	// it closes a connection whose stream goes on, unless told otherwise.
	DefaultRetryInterval = time.Second
	// DefaultReadTimeout bounds the reading of a POST body unless told
	// otherwise.
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds each write to a client (one SSE event, one
	// JSON answer) unless told otherwise.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMaxSessions bounds the sessions of a handler unless told
	// otherwise: about 10 MiB of idle sessions.
	DefaultMaxSessions = 10000

	// DefaultMaxQueuedMessages and DefaultMaxQueuedBytes bound what waits
	// for one SSE response unless told otherwise (see
	// StreamableHTTPOptions.MaxQueuedMessages): a client that is this far
	// behind is not reading, and its backlog would grow with every
	// message; 4 MiB is also the default bound of a POST body, and as
	// much as a MemoryEventStore keeps for four sessions.
	DefaultMaxQueuedMessages = 1024
	DefaultMaxQueuedBytes    = 4 << 20

	// DefaultMaxBatchLength bounds a batch unless told otherwise: a
	// 2025-03-26 client batches a few messages, and every entry holds a
	// decoded message and its answer until the whole batch is answered.
	DefaultMaxBatchLength = jsonrpc.DefaultMaxBatchLength
	// DefaultMaxBatchConcurrency bounds the requests of one batch handled
	// at once unless told otherwise: an eighth of a session's 64 handler
	// slots, so that one batch neither costs a goroutine per entry nor
	// keeps the session's other POSTs waiting.
	DefaultMaxBatchConcurrency = 8

	standaloneStreamID = "0"
)

// StreamableHTTPOptions configure a StreamableHTTPHandler. The zero value
// is usable: sessions, SSE answers, resumption from an in-memory event
// store, DELETE and the standalone GET stream are on, and the DNS-rebinding
// defence is on.
type StreamableHTTPOptions struct {
	// Stateless turns sessions off. No Mcp-Session-Id is issued or read;
	// each POST is served by a fresh session of the server that getServer
	// returns, which is closed when the POST has been answered. A POST
	// carrying anything but initialize is served by a session initialized
	// implicitly: as if the client had sent initialize with the version of
	// its MCP-Protocol-Version header (2025-03-26 when absent), no
	// capabilities and a clientInfo named "unknown", then
	// notifications/initialized. Notifications and responses POSTed by the client get 202 and are
	// dropped, since no session could relate them to anything; for the same
	// reason a server cannot send requests to the client (sampling,
	// elicitation, roots) in this mode. GET and DELETE get 405, and streams
	// cannot be resumed.
	Stateless bool
	// JSONResponse makes the handler answer a request with one
	// application/json response rather than an SSE stream. If the server
	// sends a notification or a request about it before its result, the
	// answer becomes an SSE stream there and then.
	JSONResponse bool
	// EventStore keeps the events of SSE streams so that clients can resume
	// them. Nil means a MemoryEventStore with the default limits.
	EventStore EventStore
	// SessionTimeout ends sessions that have had no HTTP request in
	// progress for that long. Zero means DefaultSessionTimeout; negative
	// means sessions never expire.
	SessionTimeout time.Duration
	// DisableDelete makes the handler answer DELETE with 405, so that
	// clients cannot end their sessions.
	DisableDelete bool
	// DisableStandaloneSSE makes the handler answer a GET that opens the
	// session's standalone stream with 405. A GET that resumes a stream
	// (with Last-Event-ID) is still served.
	DisableStandaloneSSE bool
	// MaxBodyBytes bounds a POST body; larger ones get 413. Zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxEventsPerConnection, if positive, makes the handler close an SSE
	// connection once it has sent that many messages on it, after sending
	// RetryInterval as the SSE retry field. The stream goes on: the client
	// reconnects with GET and Last-Event-ID and receives what follows. This
	// is SSE polling (protocol revision 2025-11-25); it bounds how long a
	// connection stays open, for proxies that cut long responses. It
	// applies only to sessions at 2025-11-25 or later, whose clients know
	// to reconnect.
	MaxEventsPerConnection int
	// RetryInterval is the reconnection delay sent before such a close.
	// Zero means DefaultRetryInterval. Rounded up to whole seconds, it is
	// also the Retry-After of a 503 answer.
	RetryInterval time.Duration

	// ReadTimeout bounds the reading of a POST body: a client that sends
	// it more slowly loses its connection. Zero means DefaultReadTimeout;
	// negative means no bound. The handler sets the connection's read
	// deadline itself (http.ResponseController), for the body only, and
	// clears it once the body is read and when a GET stream starts, so
	// that the read deadline of an http.Server.ReadTimeout does not end
	// the SSE streams that follow.
	ReadTimeout time.Duration
	// WriteTimeout bounds each write to a client: every SSE event, and a
	// JSON answer or error as a whole. A client that does not take a
	// message within it loses its connection (its stream's events stay in
	// the EventStore, for resumption). Zero means DefaultWriteTimeout;
	// negative means no bound. The handler moves the connection's write
	// deadline forward before each write and leaves it set, so that the
	// deadline of an http.Server.WriteTimeout does not end long-lived SSE
	// streams; give other handlers served on the same connections an
	// http.Server.WriteTimeout, which net/http resets at every request.
	WriteTimeout time.Duration
	// MaxSessions bounds the sessions open at once; the initialize that
	// would open one more gets 503 with Retry-After. Zero means
	// DefaultMaxSessions; negative means no bound. Idle sessions end after
	// SessionTimeout, freeing their places.
	MaxSessions int
	// MaxQueuedMessages and MaxQueuedBytes bound the messages waiting to
	// be written to one HTTP response (an SSE stream), for a client that
	// reads more slowly than the server sends. A message that would go
	// past either bound cuts the connection instead: the stream goes on
	// without it, its messages kept in the EventStore (within the store's
	// bounds), and the client resumes it with GET and Last-Event-ID. One
	// message is always let through, whatever its size. Zero means
	// DefaultMaxQueuedMessages and DefaultMaxQueuedBytes.
	MaxQueuedMessages int
	MaxQueuedBytes    int

	// MaxBatchLength bounds the messages of a batch (accepted at protocol
	// version 2025-03-26 only); a longer one gets 400 with an invalid
	// request error, before any of it is handled. Zero means
	// DefaultMaxBatchLength.
	MaxBatchLength int
	// MaxBatchConcurrency bounds how many requests of one batch are
	// handled at once; the others wait for one of them to finish. Zero
	// means DefaultMaxBatchConcurrency.
	MaxBatchConcurrency int

	// Identity, if set, names the caller of an HTTP request, such as the
	// subject and client of its verified access token. A session is bound
	// to the identity that created it: a later request for that session
	// from another identity (or from none) gets 403 and touches nothing.
	// Nil leaves sessions unbound, with the session id as the only key.
	Identity func(r *http.Request) string

	// AllowedHosts lists the Host header values accepted; others get 403.
	// An entry without a port matches any port ("localhost",
	// "example.com:8443", "[::1]"). When empty, and the request arrived on
	// a loopback address, only localhost and loopback IP addresses are
	// accepted; on other addresses any Host is, so set this list when
	// serving on a public address.
	AllowedHosts []string
	// AllowedOrigins lists the Origin header values accepted, such as
	// "https://app.example.com"; others get 403. A request without Origin
	// (one that no browser sent) is accepted. When empty, an Origin is
	// accepted if its host and port are those of the Host header, or if
	// both are loopback names.
	AllowedOrigins []string
	// DisableDNSRebindingProtection turns off the Host and Origin checks.
	DisableDNSRebindingProtection bool
	// CORS, if set, lets pages on the origins it lists use the endpoint
	// from a browser (see CORSOptions); those origins also pass the Origin
	// check. Nil answers no preflight and sends no CORS headers. A handler
	// in front of this one that may answer by itself (an authorization
	// middleware) needs the CORS function with the same options around it.
	CORS *CORSOptions

	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
}

// StreamableHTTPHandler serves MCP's Streamable HTTP transport (protocol
// revisions 2025-03-26 and later) on one endpoint, conventionally /mcp:
// clients POST their messages, and GET the session's standalone stream of
// server messages.
//
// Each message the server sends goes on exactly one stream: the answer to
// the POST of the request it belongs to (its response, and the requests and
// notifications sent while handling it), or else the session's standalone
// GET stream. SSE event ids have the form "<stream>_<seq>"; with them a
// client resumes a dropped stream by GET with Last-Event-ID and receives the
// messages of that stream it missed, from the EventStore. A client that
// disconnects does not cancel its request: the request completes and its
// messages wait in the store.
//
// A POSTed message is handled in the goroutine that serves the POST (see
// jsonrpc.Conn.Deliver): sessions have no goroutines of their own, and an
// idle session holds about 1.5 KB.
//
// The HTTP rules, checked in this order (error bodies are JSON-RPC errors
// without an id, except for a malformed message whose id could be read):
//
//   - Host or Origin not allowed (see StreamableHTTPOptions): 403.
//   - With StreamableHTTPOptions.CORS, a CORS preflight (OPTIONS) gets 204
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
//     responses as JSON or SSE. A request that the client cancels
//     (notifications/cancelled) is not answered: its POST gets 202, or its
//     stream ends.
//   - MCP-Protocol-Version, on any request in a session: a value other
//     than the negotiated version gets 400. Without the header, the
//     negotiated version is assumed, since the session knows it; in
//     stateless mode, where nothing else tells, 2025-03-26 is.
//   - GET: Accept must list text/event-stream (406). Without Last-Event-ID
//     it opens the session's standalone stream: 409 if one is open already,
//     405 when DisableStandaloneSSE is set. With Last-Event-ID it resumes
//     that stream, taking it over from a previous connection; an id that is
//     malformed, or whose missed events are no longer kept, gets 400; one
//     for a POST's stream that has ended and whose events the client all
//     has gets 405, so that the client stops resuming it.
//   - DELETE ends the session: 204, or 405 when DisableDelete is set.
//   - During Shutdown, new sessions and new requests get 503.
//
// For clients at protocol version 2025-11-25 or later, every SSE stream
// starts with a priming event: an id and empty data. Older clients do not
// expect it and do not get it.
type StreamableHTTPHandler struct {
	getServer func(*http.Request) *Server
	opts      StreamableHTTPOptions
	store     EventStore
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
}

// NewStreamableHTTPHandler returns a handler that serves sessions of the
// server that getServer returns for the request that opens them (the
// initialize POST, or in stateless mode every POST). getServer may return
// the same Server every time. If it returns nil, the request gets 400.
func NewStreamableHTTPHandler(getServer func(*http.Request) *Server, opts *StreamableHTTPOptions) *StreamableHTTPHandler {
	h := &StreamableHTTPHandler{getServer: getServer, sessions: make(map[string]*httpSession), start: time.Now()}
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
	if !h.opts.Stateless {
		h.store = h.opts.EventStore
		if h.store == nil {
			h.store = &MemoryEventStore{}
		}
	}
	h.log = h.opts.Logger
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.guard = newHostGuard(h.opts.DisableDNSRebindingProtection, h.opts.AllowedHosts, h.opts.AllowedOrigins)
	h.dec = jsonrpc.NewDecoder(methodNames()...).WithMaxBatchLength(h.opts.MaxBatchLength)
	h.guard.setCORS(h.opts.CORS)
	return h
}

// ServeHTTP answers one HTTP request.
func (h *StreamableHTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.armWrite(w) // for the answers written at once: errors, 202
	if err := h.guard.check(r); err != "" {
		writeHTTPError(w, http.StatusForbidden, jsonrpc.ID{}, "Forbidden: "+err)
		return
	}
	if h.guard.cors != nil && h.guard.cors.Handle(w, r) {
		return // a preflight, answered
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

func (h *StreamableHTTPHandler) allowed() string {
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
// events are deleted from the EventStore, unless Shutdown called Close.
func (h *StreamableHTTPHandler) Close() error {
	h.closing.Store(true)
	h.closed.Store(true)
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
// later, and the sessions' events stay in the EventStore, so that a
// client can resume them from a server that shares the store. It returns
// ctx's error if ctx ended first: requests still in flight then were cut.
//
// An http.Server's own Shutdown does not end the long-lived SSE responses:
// call this first, or alongside.
func (h *StreamableHTTPHandler) Shutdown(ctx context.Context) error {
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
func (h *StreamableHTTPHandler) session(id string) *httpSession {
	h.mu.RLock()
	s := h.sessions[id]
	h.mu.RUnlock()
	return s
}

// lookup finds the session of a request, answering 400 or 404 itself when
// there is none. It also checks the protocol version header.
func (h *StreamableHTTPHandler) lookup(w http.ResponseWriter, r *http.Request) *httpSession {
	id := headerGet(r.Header, headerSessionID)
	if id == "" {
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: missing "+headerSessionID+" header")
		return nil
	}
	s := h.session(id)
	if s == nil {
		writeHTTPError(w, http.StatusNotFound, jsonrpc.ID{}, "Not Found: unknown or terminated session")
		return nil
	}
	if f := h.opts.Identity; f != nil && f(r) != s.owner {
		h.log.Warn("mcp: session used by another caller; refused", "session", id)
		writeHTTPError(w, http.StatusForbidden, jsonrpc.ID{}, "Forbidden: the session belongs to another caller")
		return nil
	}
	if msg := s.checkVersion(headerGet(r.Header, headerProtocolVersion)); msg != "" {
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, msg)
		return nil
	}
	return s
}

// ---- POST ----

func (h *StreamableHTTPHandler) servePost(w http.ResponseWriter, r *http.Request) {
	if !acceptsBoth(r.Header["Accept"]) {
		writeHTTPError(w, http.StatusNotAcceptable, jsonrpc.ID{}, "Not Acceptable: Accept must list application/json and text/event-stream")
		return
	}
	// A POST naming a session is checked against it (unknown session,
	// another caller's, wrong protocol version) before its body is read:
	// nothing of a request that cannot be served is buffered.
	var s *httpSession
	if !h.opts.Stateless && headerGet(r.Header, headerSessionID) != "" {
		if s = h.lookup(w, r); s == nil {
			return
		}
	}
	h.armRead(w)
	msg, ok := readPostedMessage(w, r, h.opts.MaxBodyBytes, h.dec)
	if !ok {
		return // the deadline stays: net/http may read on, to skip the body
	}
	h.clearRead(w)             // what follows, an SSE answer, must outlive the body's deadline
	var one [1]jsonrpc.Message // msgs of a single message, kept off the heap
	var msgs []jsonrpc.Message
	if b, ok := msg.(jsonrpc.Batch); ok {
		for _, e := range b {
			if de, ok := e.(*jsonrpc.DecodeError); ok {
				writeJSON(w, http.StatusBadRequest, "", de.Response())
				return
			}
			if req, ok := e.(*jsonrpc.Request); ok && req.Method == MethodInitialize {
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
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == MethodInitialize && !req.IsNotification() && s == nil {
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
			h.log.Error("mcp: cannot start a session", "error", err)
			writeHTTPError(w, http.StatusInternalServerError, jsonrpc.ID{}, "Internal Server Error: cannot start a session")
			return
		}
		if f := h.opts.Identity; f != nil {
			s.owner = f(r)
		}
		h.recordSession(r.Context(), s) // see streamable_shared.go
		newSession = true
	} else {
		if s == nil {
			if s = h.lookup(w, r); s == nil { // answers 400: no session id
				return
			}
		}
		if isBatch(msg) {
			if v := s.ss.ProtocolVersion(); v != ProtocolVersion20250326 {
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
	if req, ok := m.(*jsonrpc.Request); ok && req.Method == MethodInitialize {
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
// jsonrpc.Conn.Deliver): a request's handler runs there, and whatever the
// server sends about the request while it runs is written to this POST's
// answer by the goroutine that sends it (see outStream.send). Only when
// the answer may have to end before the request does (SSE polling, see
// StreamableHTTPOptions.MaxEventsPerConnection) do the handlers run in a
// goroutine of their own while this one pumps their messages.
func (h *StreamableHTTPHandler) exchange(w http.ResponseWriter, r *http.Request, s *httpSession, msgs []jsonrpc.Message, batch bool, sessionHeader, version string) {
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
		s.deliver(ctx, msgs)
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
	// The stream and the response are allocated together.
	x := &struct {
		st outStream
		c  sseConn
	}{}
	st, c := &x.st, &x.c
	st.sess, st.pending = s, len(ids)
	st.queue = st.inline[:0]
	if !h.opts.JSONResponse {
		st.sse = true
		st.id = s.newStreamID()
		st.resumable = h.store != nil && s.id != ""
	}
	c.w, c.sessionHeader, c.batch, c.wt = w, sessionHeader, batch, h.opts.WriteTimeout
	c.prime = version >= ProtocolVersion20251125
	c.poll = h.opts.MaxEventsPerConnection > 0 && version >= ProtocolVersion20251125
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
		go s.deliver(ctx, own)
		h.pump(r, st, sw, c)
		return
	}
	s.deliver(ctx, msgs)
	h.finishDirect(r, st, c)
}

// finishDirect ends the answer c of a POST whose messages were delivered
// in its goroutine: it writes a JSON answer, or ends the SSE stream that
// the handlers wrote to. If a request is still unanswered (the session
// ended, or a cancellation is on its way), it waits as pump does.
func (h *StreamableHTTPHandler) finishDirect(r *http.Request, st *outStream, c *sseConn) {
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
	sse, failedInit := st.sse, st.lastErr && c.sessionHeader != ""
	st.mu.Unlock()
	if !sse {
		h.writeJSONAnswer(c, q)
		h.releaseMsgs(q)
	}
	if failedInit {
		st.sess.terminate() // the initialize failed: the session is useless
	}
	st.retire()
}

// postStateless serves a POST with a fresh session of its own.
func (h *StreamableHTTPHandler) postStateless(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message, msgs []jsonrpc.Message) {
	version := headerGet(r.Header, headerProtocolVersion)
	srv := h.getServer(r)
	if srv == nil {
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: no server for this request")
		return
	}
	init := false
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == MethodInitialize {
		init = true
	} else {
		if version == "" {
			version = ProtocolVersion20250326
		} else if !containsString(srv.opts.ProtocolVersions, version) {
			writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: unsupported "+headerProtocolVersion+" "+strconv.Quote(version))
			return
		}
		if isBatch(msg) && version != ProtocolVersion20250326 {
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
		h.log.Error("mcp: cannot start a session", "error", err)
		writeHTTPError(w, http.StatusInternalServerError, jsonrpc.ID{}, "Internal Server Error: cannot start a session")
		return
	}
	defer s.closeWhenAnswered()
	if !init {
		if err := s.implicitInit(httpValues{r}, version); err != nil {
			s.terminate()
			h.log.Error("mcp: implicit initialization failed", "error", err)
			writeHTTPError(w, http.StatusInternalServerError, jsonrpc.ID{}, "Internal Server Error: implicit initialization failed")
			return
		}
	}
	if init {
		version = primeVersion(s, msg)
	}
	h.exchange(w, r, s, msgs, isBatch(msg), "", version)
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// ---- GET ----

func (h *StreamableHTTPHandler) serveGet(w http.ResponseWriter, r *http.Request) {
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
	if id := headerGet(r.Header, headerSessionID); last != "" && h.session(id) == nil && h.resumeElsewhere(w, r, id, last) {
		return // a session of another replica (see streamable_shared.go)
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
	c := &sseConn{w: w, wt: h.opts.WriteTimeout}
	c.prime = version >= ProtocolVersion20251125
	c.poll = h.opts.MaxEventsPerConnection > 0 && version >= ProtocolVersion20251125
	if last != "" {
		streamID, seq, ok := parseEventID(last)
		if !ok {
			writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: malformed "+headerLastEventID+" "+strconv.Quote(last))
			return
		}
		h.resume(w, r, s, c, streamID, seq)
		return
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
			h.log.Warn("mcp: undelivered events of the GET stream are lost", "session", s.id, "error", err)
			after = st.seq
		}
		st.setQueue(eventsToQueue(events))
	}
	st.w = sw
	sw.signal()
	st.mu.Unlock()
	c.start(st.id, after, true)
	h.pump(r, st, sw, c)
}

// resume serves a GET with Last-Event-ID: the events of that stream after
// seq, then, if the stream is still live, what follows.
func (h *StreamableHTTPHandler) resume(w http.ResponseWriter, r *http.Request, s *httpSession, c *sseConn, streamID string, seq int64) {
	s.mu.Lock()
	st := s.streams[streamID]
	if streamID == standaloneStreamID {
		st = s.standaloneLocked()
	}
	s.mu.Unlock()
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
	var events []Event
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
// to a GET for which the server offers no stream is 405 (Streamable HTTP,
// "Listening for Messages from the Server"); clients stop on it.
func (h *StreamableHTTPHandler) streamOver(w http.ResponseWriter, streamID string) {
	w.Header().Set("Allow", h.allowed())
	writeHTTPError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, "Method Not Allowed: stream "+strconv.Quote(streamID)+" has ended and the client has all its events; nothing is left to resume")
}

func eventsToQueue(events []Event) []outMsg {
	if len(events) == 0 {
		return nil
	}
	q := make([]outMsg, len(events))
	for i, e := range events {
		q[i] = outMsg{seq: e.Seq, data: e.Data}
	}
	return q
}

// parseEventID splits "<stream>_<seq>".
func parseEventID(id string) (stream string, seq int64, ok bool) {
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

func formatEventID(b []byte, stream string, seq int64) []byte {
	b = append(b, stream...)
	b = append(b, '_')
	return strconv.AppendInt(b, seq, 10)
}

// ---- DELETE ----

func (h *StreamableHTTPHandler) serveDelete(w http.ResponseWriter, r *http.Request) {
	if h.opts.Stateless || h.opts.DisableDelete {
		w.Header().Set("Allow", h.allowed())
		writeHTTPError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, "Method Not Allowed: sessions cannot be ended by the client")
		return
	}
	s := h.lookup(w, r)
	if s == nil {
		return
	}
	s.terminate()
	w.WriteHeader(http.StatusNoContent)
}

// ---- streams ----

// outMsg is one message queued for an HTTP response.
type outMsg struct {
	seq    int64 // event seq on an SSE stream; 0 in a JSON answer
	data   []byte
	buf    *[]byte // the pooled buffer data is in, or nil (see releaseMsgs)
	resp   bool    // a response (as opposed to a request or notification)
	errRes bool    // an error response
}

// streamWriter is the identity of the HTTP response currently attached to
// a stream, which a pump goroutine writes. It is woken when a message is
// queued, or when another connection took the stream over (the stream's w
// is then another writer).
type streamWriter struct {
	wake chan struct{}
	w    http.ResponseWriter // the response, to cut it (see cutConn); nil if none
}

func newStreamWriter(w http.ResponseWriter) *streamWriter {
	return &streamWriter{wake: make(chan struct{}, 1), w: w}
}

// cutConn ends the connection of the response w while another goroutine
// may be blocked writing to it: the write fails at once, and so does every
// later one. Its caller holds the lock of the stream w is attached to,
// which proves that the handler serving w has not returned (see
// outStream.cutLocked). Setting a deadline does no I/O.
func cutConn(w http.ResponseWriter) {
	if w != nil {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now())
	}
}

func (sw *streamWriter) signal() {
	select {
	case sw.wake <- struct{}{}:
	default:
	}
}

// outStream is one logical stream of server messages: the answer to one
// POST, or the session's standalone GET stream. Its messages are queued for
// the HTTP response attached to it, if any, and kept in the event store
// when it is resumable.
type outStream struct {
	sess *httpSession
	mu   sync.Mutex

	// Set when the stream is made, then read only.
	standalone bool
	counted    bool // counted in the handler's exchanges

	// The other fields are guarded by mu. The bools are together so that
	// the stream and its response stay one 256-byte allocation (see
	// exchange).
	sse       bool
	resumable bool
	done      bool // every request answered
	retired   bool
	lastErr   bool          // the last response sent was an error
	writing   bool          // a goroutine is writing the queue to a direct response (see drainDirect)
	id        string        // "" while a JSON answer
	seq       int64         // last event seq
	delivered int64         // last seq flushed to a client (standalone stream)
	pending   int           // requests not yet answered
	queued    int           // bytes of data in queue
	drained   chan struct{} // if set, closed when writing ends (see waitDrainedLocked)
	queue     []outMsg
	inline    [1]outMsg // the first queued message needs no allocation
	// The HTTP response attached to the stream, if any, is either pumped
	// (w: a goroutine writes what is queued) or direct (direct: the POST's
	// goroutine is running the handlers, and the goroutine that sends a
	// message writes it, and what others queue meanwhile, at once; see
	// drainDirect). At most one is set. No network write happens under
	// mu: a client that does not read must not block those who only
	// queue, nor a GET that takes the stream over.
	w      *streamWriter
	direct *sseConn
}

// send queues one message on the stream, or writes it at once to a
// direct response.
func (st *outStream) send(m jsonrpc.Message, isResp bool) error {
	h := st.sess.h
	buf := h.getBuf()
	data, err := jsonrpc.AppendMessage(*buf, m)
	if err != nil {
		h.bufs.Put(buf) // *buf is still empty
		return err
	}
	*buf = data
	om := outMsg{data: data, buf: buf, resp: isResp}
	if isResp {
		om.errRes = m.(*jsonrpc.Response).Error != nil
	}
	st.mu.Lock()
	if isResp {
		st.pending--
		if st.pending <= 0 {
			st.done = true
		}
		st.lastErr = om.errRes
	}
	c := st.direct
	if c != nil && !st.sse && !isResp {
		// The handler sent something before its result: switch to SSE.
		st.upgradeDirect()
	}
	if st.sse {
		st.seq++
		om.seq = st.seq
		if st.resumable {
			h.appendEvent(st, om.seq, data)
			om.keep(h)
		}
	}
	drain := false
	switch {
	case c != nil && !st.sse:
		st.queue = append(st.queue, om) // the JSON answer, written when the handlers return
	case (c != nil || st.w != nil) && st.full(len(data)):
		// The client does not read: it loses the connection, and will
		// find this message and those before it in the store.
		st.cutLocked()
		h.releaseMsgs([]outMsg{om})
	case c != nil:
		st.enqueue(om)
		if !st.writing {
			st.writing, drain = true, true
		}
	case st.w != nil:
		st.enqueue(om)
		st.w.signal()
	}
	finished := st.done && st.w == nil && st.direct == nil
	st.mu.Unlock()
	if drain {
		st.drainDirect(c)
	}
	if finished {
		st.retire()
	}
	return nil
}

// full reports whether a message of n bytes would take the queue past
// its bounds. mu is held.
func (st *outStream) full(n int) bool {
	o := &st.sess.h.opts
	return len(st.queue) > 0 && (len(st.queue) >= o.MaxQueuedMessages || st.queued+n > o.MaxQueuedBytes)
}

// enqueue appends m to the queue. mu is held.
func (st *outStream) enqueue(m outMsg) {
	st.queue = append(st.queue, m)
	st.queued += len(m.data)
}

// takeQueue empties the queue and returns what it held. mu is held.
func (st *outStream) takeQueue() []outMsg {
	q := st.queue
	st.queue, st.queued = nil, 0
	return q
}

// setQueue makes q the queue. mu is held.
func (st *outStream) setQueue(q []outMsg) {
	st.queue, st.queued = q, 0
	for _, m := range q {
		st.queued += len(m.data)
	}
}

// cutLocked detaches the stream from its HTTP response, if any, and cuts
// that response's connection (see cutConn), dropping what was queued for
// it: the stream goes on, kept in the event store, for a client to
// resume. mu is held, so the handler serving the response has not
// returned: it clears direct or w under mu before it does.
func (st *outStream) cutLocked() {
	switch {
	case st.direct != nil:
		cutConn(st.direct.w)
		st.direct = nil
	case st.w != nil:
		cutConn(st.w.w)
		st.w.signal()
		st.w = nil
	}
	st.sess.h.releaseMsgs(st.takeQueue())
}

// drainDirect writes the queue of st to its direct response c until the
// queue is empty, c is no longer the stream's response (it was cut, or a
// GET took the stream over) or the connection failed. Its caller set
// st.writing: senders meanwhile only queue, and the messages are written
// in the order sent. No lock is held while writing.
func (st *outStream) drainDirect(c *sseConn) {
	h := st.sess.h
	for {
		st.mu.Lock()
		if st.direct != c || len(st.queue) == 0 {
			st.writing = false
			if st.drained != nil {
				close(st.drained)
				st.drained = nil
			}
			st.mu.Unlock()
			return
		}
		q := st.takeQueue()
		id, streamID, resumable := st.eventStreamID(), st.id, st.resumable
		st.mu.Unlock()
		c.start(streamID, 0, resumable) // after upgradeDirect, the first write
		for _, m := range q {
			c.event(id, m.seq, m.data)
		}
		c.flush()
		h.releaseMsgs(q)
	}
}

// waitDrainedLocked waits, with mu held (and released while it waits),
// until no goroutine is writing to the stream's direct response, which may
// have been cut or taken over meanwhile: the POST's handler must not
// return while another goroutine writes to its ResponseWriter. The wait
// ends when that write does, which a cut or the client's going away
// ends.
func (st *outStream) waitDrainedLocked() {
	for st.writing {
		if st.drained == nil {
			st.drained = make(chan struct{})
		}
		ch := st.drained
		st.mu.Unlock()
		<-ch
		st.mu.Lock()
	}
}

// upgradeDirect turns the JSON answer of a direct stream into an SSE
// stream, whose headers and the responses already queued the sender
// writes (see drainDirect). st.mu is held.
func (st *outStream) upgradeDirect() {
	s := st.sess
	st.sse = true
	st.id = s.newStreamID()
	st.resumable = s.h.store != nil && s.id != ""
	for i := range st.queue {
		st.seq++
		st.queue[i].seq = st.seq
		if st.resumable {
			s.h.appendEvent(st, st.seq, st.queue[i].data)
			st.queue[i].keep(s.h)
		}
	}
	for _, m := range st.queue {
		st.queued += len(m.data)
	}
	if st.resumable {
		s.addStream(st)
	}
}

// eventStreamID is the stream part of the event ids of st: none unless it
// is resumable.
func (st *outStream) eventStreamID() string {
	if st.resumable {
		return st.id
	}
	return ""
}

// appendEvent keeps an event of st in the store.
// st.mu is held. Nothing is kept for a session that has ended: its events
// were deleted, and a late one would stay in the store for good (Close
// takes every stream's lock after it marks the session closed, before it
// deletes the session's events, so no append can slip in between).
func (h *StreamableHTTPHandler) appendEvent(st *outStream, seq int64, data []byte) {
	if st.sess.isClosed() {
		return
	}
	if err := h.store.Append(context.Background(), st.sess.id, st.id, seq, data); err != nil {
		h.log.Warn("mcp: event store append failed", "session", st.sess.id, "stream", st.id, "error", err)
	}
}

// answered marks one request as answered without a response (it was
// cancelled).
func (st *outStream) answered() {
	st.mu.Lock()
	st.pending--
	if st.pending <= 0 {
		st.done = true
	}
	if st.w != nil {
		st.w.signal()
	}
	finished := st.done && st.w == nil && st.direct == nil
	st.mu.Unlock()
	if finished {
		st.retire()
	}
}

// retire forgets a finished stream (its events stay in the store).
func (st *outStream) retire() {
	st.mu.Lock()
	if st.retired {
		st.mu.Unlock()
		return
	}
	st.retired = true
	id, sse := st.id, st.sse
	st.mu.Unlock()
	s := st.sess
	if st.counted {
		s.h.exchanges.Add(-1)
	}
	if sse && !st.standalone {
		s.mu.Lock()
		if s.streams[id] == st {
			delete(s.streams, id)
		}
		s.mu.Unlock()
	}
	if s.stateless {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if !closed {
			s.terminate()
		}
	}
}

// detach releases the stream from the HTTP response sw, which is ending.
func (st *outStream) detach(sw *streamWriter) {
	st.mu.Lock()
	if st.w == sw {
		st.w = nil
		st.takeQueue() // kept in the store, or lost with the connection
	}
	finished := st.done && st.w == nil && st.direct == nil
	st.mu.Unlock()
	if finished {
		st.retire()
	}
}

// sseConn writes one HTTP response: a JSON answer or an SSE stream.
type sseConn struct {
	w             http.ResponseWriter
	sessionHeader string
	prime         bool // start SSE with a priming event (if resumable)
	poll          bool // close after MaxEventsPerConnection messages (if resumable)
	batch         bool // the POST was a batch: a JSON answer is an array
	started       bool
	failed        bool // next to the other flags: a POST's outStream and sseConn fit 256 bytes
	sent          int  // messages sent on this connection
	lastSeq       int64
	buf           []byte
	wt            time.Duration // StreamableHTTPOptions.WriteTimeout: a deadline per event
}

// arm gives the next event WriteTimeout to be written (see
// StreamableHTTPOptions.WriteTimeout).
func (c *sseConn) arm() {
	if c.wt > 0 && !c.failed {
		setWriteDeadline(c.w, time.Now().Add(c.wt))
	}
}

// start writes the headers of an SSE response and, for a resumable stream,
// its priming event, whose id is the stream's position after.
func (c *sseConn) start(stream string, after int64, resumable bool) {
	if c.started {
		return
	}
	c.started = true
	c.arm()
	c.prime = c.prime && resumable
	c.poll = c.poll && resumable
	h := c.w.Header()
	h["Content-Type"] = eventStreamType
	h["Cache-Control"] = noCache
	if c.sessionHeader != "" {
		h.Set(headerSessionID, c.sessionHeader)
	}
	c.w.WriteHeader(http.StatusOK)
	if c.prime {
		c.buf = append(c.buf[:0], "id: "...)
		c.buf = formatEventID(c.buf, stream, after)
		c.buf = append(c.buf, "\ndata: \n\n"...)
		c.write(c.buf)
	}
	c.flush()
}

func (c *sseConn) write(b []byte) {
	if c.failed {
		return
	}
	if _, err := c.w.Write(b); err != nil {
		c.failed = true
	}
}

func (c *sseConn) flush() {
	if c.failed {
		return
	}
	var err error
	if f, ok := c.w.(http.Flusher); ok {
		f.Flush()
	} else {
		err = http.NewResponseController(c.w).Flush()
	}
	if err != nil {
		c.failed = true
	}
}

// directEventMin is the size from which the data of an event on one line
// is written from where it is, rather than copied after the event's
// fields.
const directEventMin = 16 << 10

// event writes one message event. A stream without resumption has no ids.
func (c *sseConn) event(stream string, seq int64, data []byte) {
	c.arm()
	c.buf = c.buf[:0]
	if seq > 0 && stream != "" {
		c.buf = append(c.buf, "id: "...)
		c.buf = formatEventID(c.buf, stream, seq)
		c.buf = append(c.buf, '\n')
	}
	if len(data) >= directEventMin && oneLine(data) {
		// The same bytes as appendSSEEvent's, in three writes.
		c.buf = append(c.buf, "data: "...)
		c.write(c.buf)
		c.write(data)
		c.buf = append(c.buf[:0], '\n', '\n')
	} else {
		c.buf = appendSSEEvent(c.buf, "", "", 0, data)
	}
	c.write(c.buf)
	c.sent++
	c.lastSeq = seq
}

// pump writes the messages of st to the response c until the stream is
// complete, the client goes away, the session ends, another connection
// takes the stream over, or polling asks for a reconnection.
func (h *StreamableHTTPHandler) pump(r *http.Request, st *outStream, sw *streamWriter, c *sseConn) {
	s := st.sess
	sessionDone := s.doneChan()
	for {
		select {
		case <-sw.wake:
		case <-r.Context().Done():
			st.detach(sw)
			return
		case <-sessionDone:
			h.drainOnClose(st, sw, c)
			return
		}
		st.mu.Lock()
		if st.w != sw { // taken over
			st.mu.Unlock()
			return
		}
		if !st.sse {
			upgrade := false
			for _, m := range st.queue {
				if !m.resp {
					upgrade = true
					break
				}
			}
			if !upgrade {
				if !st.done {
					st.mu.Unlock()
					continue
				}
				q := st.takeQueue()
				st.w = nil
				st.mu.Unlock()
				h.writeJSONAnswer(c, q)
				failedInit := len(q) > 0 && q[len(q)-1].errRes && c.sessionHeader != ""
				h.releaseMsgs(q)
				if failedInit {
					s.terminate() // the initialize failed: the session is useless
				}
				st.retire()
				return
			}
			// The handler sent something before its result: switch to SSE.
			st.sse = true
			st.id = s.newStreamID()
			st.resumable = h.store != nil && s.id != ""
			for i := range st.queue {
				st.seq++
				st.queue[i].seq = st.seq
				if st.resumable {
					h.appendEvent(st, st.seq, st.queue[i].data)
					st.queue[i].keep(h)
				}
			}
			if st.resumable {
				s.addStream(st)
			}
			st.mu.Unlock()
			c.start(st.id, 0, st.resumable)
			st.mu.Lock()
			if st.w != sw { // taken over meanwhile
				st.mu.Unlock()
				return
			}
		}
		q := st.takeQueue()
		done := st.done
		st.mu.Unlock()

		streamID := ""
		if st.resumable {
			streamID = st.id
		}
		limit := h.opts.MaxEventsPerConnection
		cut := false
		for i, m := range q {
			c.event(streamID, m.seq, m.data)
			if c.poll && c.sent >= limit && (i < len(q)-1 || !done) {
				cut = true
				break
			}
		}
		if cut {
			c.buf = appendSSERetry(c.buf[:0], h.opts.RetryInterval)
			c.buf = append(c.buf, '\n')
			c.write(c.buf)
		}
		c.flush()
		h.releaseMsgs(q) // those not written, after a cut, are kept in the store
		if c.failed {
			st.detach(sw)
			return
		}
		if st.standalone && c.lastSeq > 0 {
			st.mu.Lock()
			if c.lastSeq > st.delivered {
				st.delivered = c.lastSeq
			}
			st.mu.Unlock()
		}
		if cut {
			st.detach(sw)
			return
		}
		if done {
			st.detach(sw)
			if len(q) > 0 && q[len(q)-1].errRes && c.sessionHeader != "" {
				s.terminate()
			}
			return
		}
	}
}

// drainOnClose ends a response whose session ended: it writes what is
// queued, and answers a JSON exchange still waiting with 404.
func (h *StreamableHTTPHandler) drainOnClose(st *outStream, sw *streamWriter, c *sseConn) {
	st.mu.Lock()
	if st.w != sw { // taken over: the queue is the other connection's
		st.mu.Unlock()
		return
	}
	q := st.takeQueue()
	st.w = nil
	sse, done := st.sse, st.done
	st.mu.Unlock()
	defer st.retire()
	if !sse {
		if done {
			h.writeJSONAnswer(c, q)
			h.releaseMsgs(q)
			return
		}
		h.armWrite(c.w)
		writeHTTPError(c.w, http.StatusNotFound, jsonrpc.ID{}, "Not Found: the session ended")
		return
	}
	streamID := ""
	if st.resumable {
		streamID = st.id
	}
	for _, m := range q {
		c.event(streamID, m.seq, m.data)
	}
	if c.prime && h.closing.Load() {
		// Shutdown: the stream ends here, cleanly; tell the client when to
		// come back (to a server sharing the event store) to resume it.
		c.arm()
		c.buf = appendSSERetry(c.buf[:0], h.opts.RetryInterval)
		c.buf = append(c.buf, '\n')
		c.write(c.buf)
	}
	c.flush()
	h.releaseMsgs(q)
}

// writeJSONAnswer writes the responses of a POST as application/json: one
// response, or an array for a batch. With no response at all (the requests
// were cancelled), it answers 202.
func (h *StreamableHTTPHandler) writeJSONAnswer(c *sseConn, q []outMsg) {
	h.armWrite(c.w) // the handlers may have taken long: a fresh deadline for the answer
	hd := c.w.Header()
	if c.sessionHeader != "" {
		hd.Set(headerSessionID, c.sessionHeader)
	}
	switch {
	case len(q) == 0:
		c.w.WriteHeader(http.StatusAccepted)
		return
	case len(q) == 1 && !c.batch:
		hd["Content-Type"] = jsonType
		setContentLength(hd, len(q[0].data))
		c.w.WriteHeader(http.StatusOK)
		c.write(q[0].data)
		return
	}
	hd.Set("Content-Type", "application/json")
	n := 1
	for _, m := range q {
		n += len(m.data) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, m := range q {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m.data...)
	}
	b = append(b, ']')
	setContentLength(hd, len(b))
	c.w.WriteHeader(http.StatusOK)
	c.write(b)
}

// setContentLength declares the length of a JSON answer, written in one
// Write, so that a large one is not sent chunked. net/http declares it
// itself, without allocating, for an answer that fits its buffer (a
// handler that returns after one Write of at most 2 KiB), so only larger
// ones need the header.
func setContentLength(hd http.Header, n int) {
	if n > 2048 {
		hd["Content-Length"] = []string{strconv.Itoa(n)}
	}
}

// ---- sessions ----

// httpSession is the server side of one Streamable HTTP session: the
// jsonrpc.Stream of its ServerSession, whose push connection POSTs deliver
// their messages to; Write routes each outgoing message to the stream it
// belongs to. An idle session has no goroutine, and its maps, channel,
// standalone stream and timer are made on first use.
type httpSession struct {
	h         *StreamableHTTPHandler
	id        string // "" in stateless mode
	owner     string // Identity of the creator, when the handler binds sessions
	ss        *ServerSession
	closeOnce sync.Once
	stateless bool

	mu         sync.Mutex
	closed     bool
	armed      bool                  // timer is set to fire (see leave and expire)
	done       chan struct{}         // see doneChan
	requests   requestStreams        // in-flight requests
	streams    map[string]*outStream // live resumable POST streams
	standalone *outStream            // see standaloneLocked
	nextStream int64
	active     int           // HTTP requests in progress
	idleSince  time.Duration // when active fell to 0, as time.Since(h.start)
	timer      *time.Timer

	precancelled  []jsonrpc.ID // cancelled before they arrived
	precancelNext int

	// The memory of ss and of its connection: a session is one
	// allocation, of 888 bytes on 64-bit systems, 896 with the header the
	// runtime adds: the most that fits its 896-byte size class (see
	// TestHTTPSessionSize).
	ssMem   ServerSession
	connMem jsonrpc.Conn
}

// SessionID is the session's Mcp-Session-Id, "" for a stateless session;
// ServerSession.ID reports it.
func (s *httpSession) SessionID() string { return s.id }

func (h *StreamableHTTPHandler) newSession(srv *Server) (*httpSession, error) {
	s := &httpSession{h: h, id: rand.Text()}
	ss := srv.connectPush(s, &s.ssMem, &s.connMem)
	s.ss = ss
	h.mu.Lock()
	if h.closed.Load() {
		h.mu.Unlock()
		ss.Close()
		return nil, errors.New("the handler is closed")
	}
	if max := h.opts.MaxSessions; max > 0 && len(h.sessions) >= max {
		h.mu.Unlock()
		ss.Close()
		return nil, errTooManySessions
	}
	h.sessions[s.id] = s
	h.mu.Unlock()
	return s, nil
}

func (h *StreamableHTTPHandler) newStatelessSession(srv *Server) (*httpSession, error) {
	s := &httpSession{h: h, stateless: true}
	s.ss = srv.connectPush(s, &s.ssMem, &s.connMem)
	return s, nil
}

// statelessInitID is the id of the implicit initialize of a stateless
// session; the NUL makes a clash with a client's id unlikely.
var statelessInitID = jsonrpc.StringID("\x00mcpstack-implicit-initialize")

// implicitInit initializes a stateless session at version.
func (s *httpSession) implicitInit(ctx context.Context, version string) error {
	params, err := json.Marshal(&InitializeRequestParams{ProtocolVersion: version, ClientInfo: Implementation{Name: "unknown", Version: "0"}})
	if err != nil {
		return err
	}
	// The stream has a writer, which nothing pumps, only so that send
	// keeps the response.
	st := &outStream{sess: s, pending: 1, w: newStreamWriter(nil)}
	s.register([]jsonrpc.ID{statelessInitID}, st, false)
	conn := s.ss.conn
	conn.Deliver(ctx, &jsonrpc.Request{ID: statelessInitID, Method: MethodInitialize, Params: params})
	st.mu.Lock()
	done, q := st.done, st.queue
	st.mu.Unlock()
	if s.isClosed() {
		return jsonrpc.ErrClosed
	}
	if !done || len(q) == 0 || q[len(q)-1].errRes {
		return fmt.Errorf("the server refused initialize at version %q", version)
	}
	conn.Deliver(ctx, &jsonrpc.Request{Method: NotificationInitialized})
	return nil
}

// closeWhenAnswered ends a stateless session once its POST is answered;
// if the client went away first, the session ends when the answer is
// complete.
func (s *httpSession) closeWhenAnswered() {
	s.mu.Lock()
	pending := s.requests.len()
	s.mu.Unlock()
	if pending == 0 {
		s.terminate()
	}
}

// Connect makes httpSession an mcp Transport for Server.Connect.
func (s *httpSession) Connect(context.Context) (jsonrpc.Stream, error) { return s, nil }

// EncodesMessages makes httpSession a jsonrpc.EncodingStream: Write
// encodes a message (outStream.send) before it returns, so that a tool's
// result is encoded straight into the buffer of its answer.
func (s *httpSession) EncodesMessages() {}

var errNoRead = errors.New("mcp: a Streamable HTTP session is not read: its messages are delivered")

// Read is never called: the session's connection is a push connection
// (see jsonrpc.NewPushConn), to which POSTs deliver their messages.
func (s *httpSession) Read(context.Context) (jsonrpc.Message, error) {
	return nil, errNoRead
}

// Write routes m: a response, and whatever is sent from the context of a
// request's handler, to that request's stream; anything else to the
// standalone stream.
func (s *httpSession) Write(ctx context.Context, m jsonrpc.Message) error {
	var st *outStream
	isResp := false
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return jsonrpc.ErrClosed
	}
	switch m := m.(type) {
	case *jsonrpc.Response:
		isResp = true
		id := m.ID
		if !id.IsValid() {
			id, _ = jsonrpc.RequestIDFromContext(ctx)
		}
		st = s.requests.remove(id, nil)
	case *jsonrpc.Request:
		if id, ok := jsonrpc.RequestIDFromContext(ctx); ok {
			st = s.requests.get(id)
		}
	}
	if st == nil && !isResp {
		st = s.standaloneLocked()
	}
	s.mu.Unlock()
	if st == nil {
		s.h.log.Debug("mcp: message for no stream dropped", "session", s.id)
		return nil
	}
	return st.send(m, isResp)
}

// Close ends the session's streams; the ServerSession's connection calls it
// when it ends.
func (s *httpSession) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		if s.timer != nil {
			s.timer.Stop()
		}
		open := s.requests.appendStreams(nil)
		for _, st := range s.streams {
			open = append(open, st)
		}
		standalone := s.standalone
		if s.done != nil {
			close(s.done)
		}
		s.mu.Unlock()
		if s.ss != nil {
			s.ss.ended()
		}
		// Streams that no response is attached to will never finish.
		// retire takes each one's lock: an append in progress under it
		// ends first, and later ones see the session closed.
		for _, st := range open {
			st.retire()
		}
		if standalone != nil {
			standalone.mu.Lock()
			//lint:ignore SA2001 a barrier, not a critical section: see appendEvent
			standalone.mu.Unlock()
		}
		if s.id != "" {
			h := s.h
			h.mu.Lock()
			if h.sessions[s.id] == s {
				delete(h.sessions, s.id)
			}
			h.mu.Unlock()
			if h.store != nil && !h.keepEvents.Load() {
				if err := h.store.DeleteSession(context.Background(), s.id); err != nil {
					h.log.Warn("mcp: event store cleanup failed", "session", s.id, "error", err)
				}
			}
		}
	})
	return nil
}

// terminate ends the session and its ServerSession.
func (s *httpSession) terminate() {
	if s.ss != nil {
		s.ss.Close()
	}
	s.Close()
}

// deliver hands the POSTed messages to the session's connection in this
// goroutine: notifications and responses in order, the requests of a batch
// concurrently; it returns when every request has been answered.
func (s *httpSession) deliver(ctx context.Context, msgs []jsonrpc.Message) {
	conn := s.ss.conn
	if len(msgs) == 1 {
		conn.Deliver(ctx, msgs[0])
		s.noteCancel(msgs[0])
		return
	}
	// At most MaxBatchConcurrency goroutines: a goroutine per entry
	// would let one POST start as many as its batch is long.
	slots := make(chan struct{}, s.h.opts.MaxBatchConcurrency)
	var wg sync.WaitGroup
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && !req.IsNotification() {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				conn.Deliver(ctx, m)
			})
			continue
		}
		conn.Deliver(ctx, m)
		s.noteCancel(m)
	}
	wg.Wait()
}

// isClosed reports whether the session has ended.
func (s *httpSession) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// doneChan returns a channel closed when the session ends, made on first
// use.
func (s *httpSession) doneChan() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		s.done = make(chan struct{})
		if s.closed {
			close(s.done)
		}
	}
	return s.done
}

// standaloneLocked returns the session's standalone stream, made on first
// use. s.mu is held.
func (s *httpSession) standaloneLocked() *outStream {
	if s.standalone == nil {
		s.standalone = &outStream{sess: s, standalone: true, id: standaloneStreamID, sse: true, resumable: true}
	}
	return s.standalone
}

// noteCancel ends the stream of a request that the client cancelled: the
// session will not answer it.
func (s *httpSession) noteCancel(m jsonrpc.Message) {
	req, ok := m.(*jsonrpc.Request)
	if !ok || req.Method != NotificationCancelled {
		return
	}
	var p CancelledNotificationParams
	if err := strictjson.Unmarshal(req.Params, &p); err != nil || !p.RequestID.IsValid() {
		return
	}
	s.mu.Lock()
	st := s.requests.remove(p.RequestID, nil)
	if st == nil {
		// The cancellation may have overtaken its request, which travels
		// in another POST: remember it for a while.
		if len(s.precancelled) < maxPrecancelled {
			s.precancelled = append(s.precancelled, p.RequestID)
		} else {
			s.precancelled[s.precancelNext] = p.RequestID
			s.precancelNext = (s.precancelNext + 1) % maxPrecancelled
		}
	}
	s.mu.Unlock()
	if st != nil {
		st.answered()
	}
}

// maxPrecancelled bounds the cancellations a session remembers for
// requests it has not seen yet.
const maxPrecancelled = 16

// dropPrecancelled removes from msgs and ids the requests that the client
// cancelled before they arrived.
func (s *httpSession) dropPrecancelled(msgs []jsonrpc.Message, ids []jsonrpc.ID) ([]jsonrpc.Message, []jsonrpc.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.precancelled) == 0 {
		return msgs, ids
	}
	cancelled := func(id jsonrpc.ID) bool {
		for i, c := range s.precancelled {
			if c == id {
				s.precancelled[i] = jsonrpc.ID{}
				return true
			}
		}
		return false
	}
	var keptMsgs []jsonrpc.Message
	var keptIDs []jsonrpc.ID
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && !req.IsNotification() && cancelled(req.ID) {
			continue
		}
		keptMsgs = append(keptMsgs, m)
	}
	for _, m := range keptMsgs {
		if req, ok := m.(*jsonrpc.Request); ok && !req.IsNotification() {
			keptIDs = append(keptIDs, req.ID)
		}
	}
	return keptMsgs, keptIDs
}

// register maps request ids to their stream. An id in flight already, in
// this session or earlier in ids, is never mapped twice (a second mapping
// would lose one of the two responses: see requestStreams). With
// perEntry (a batch), such ids are reported by their index in ids, in
// refused, and the others are mapped; otherwise nothing is mapped and
// register fails, naming the id.
func (s *httpSession) register(ids []jsonrpc.ID, st *outStream, perEntry bool) (dup jsonrpc.ID, refused []int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, id := range ids {
		if s.requests.get(id) == nil {
			s.requests.put(id, st)
			continue
		}
		if perEntry {
			refused = append(refused, i)
			continue
		}
		for _, done := range ids[:i] {
			s.requests.remove(done, st)
		}
		return id, nil, false
	}
	if st.sse && st.resumable {
		if s.streams == nil {
			s.streams = make(map[string]*outStream)
		}
		s.streams[st.id] = st
	}
	return jsonrpc.ID{}, refused, true
}

// refuse answers, on st, each request of a batch whose id register
// refused (by index in ids, the ids of msgs' requests in order) with an
// invalid request error, and returns msgs without them.
func (s *httpSession) refuse(st *outStream, msgs []jsonrpc.Message, ids []jsonrpc.ID, refused []int) []jsonrpc.Message {
	kept := make([]jsonrpc.Message, 0, len(msgs)-len(refused))
	k, r := 0, 0 // index in ids of the next request; in refused of the next refusal
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && !req.IsNotification() {
			k++
			if r < len(refused) && refused[r] == k-1 {
				r++
				continue
			}
		}
		kept = append(kept, m)
	}
	for _, i := range refused {
		id := ids[i]
		resp := &jsonrpc.Response{ID: id, Error: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: id "+string(id.AppendJSON(nil))+" is already in use")}
		if err := st.send(resp, true); err != nil {
			s.h.log.Warn("mcp: cannot answer a batch entry", "session", s.id, "error", err)
		}
	}
	return kept
}

func (s *httpSession) addStream(st *outStream) {
	s.mu.Lock()
	if s.streams == nil {
		s.streams = make(map[string]*outStream)
	}
	s.streams[st.id] = st
	s.mu.Unlock()
}

func (s *httpSession) newStreamID() string {
	s.mu.Lock()
	s.nextStream++
	n := s.nextStream
	s.mu.Unlock()
	return strconv.FormatInt(n, 10)
}

// checkVersion checks the MCP-Protocol-Version header of a request in the
// session. An absent header means the negotiated version, the server's
// only other way to know it; a present one must be the negotiated one.
func (s *httpSession) checkVersion(v string) string {
	if v == "" {
		return ""
	}
	neg := s.ss.ProtocolVersion()
	if neg == "" {
		if containsString(s.ss.server.opts.ProtocolVersions, v) {
			return ""
		}
		return "Bad Request: unsupported " + headerProtocolVersion + " " + strconv.Quote(v)
	}
	if v != neg {
		return "Bad Request: " + headerProtocolVersion + " " + strconv.Quote(v) + " is not the session's protocol version"
	}
	return ""
}

// enter counts an HTTP request in progress; it reports false if the
// session has ended.
func (s *httpSession) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.active++
	return true
}

// leave ends an HTTP request; the last one starts the idle clock.
func (s *httpSession) leave() {
	d := s.h.opts.SessionTimeout
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if s.active > 0 || s.closed || d < 0 || s.stateless {
		return
	}
	s.idleSince = time.Since(s.h.start)
	if s.armed {
		// The timer will fire at or before idleSince+d, and expire then
		// waits out the rest: no need to reset it at every request.
		return
	}
	s.armed = true
	if s.timer == nil {
		s.timer = time.AfterFunc(d, s.expire)
	} else {
		s.timer.Reset(d)
	}
}

// expire ends the session if it is still idle.
func (s *httpSession) expire() {
	d := s.h.opts.SessionTimeout
	s.mu.Lock()
	s.armed = false
	if s.closed || s.active > 0 {
		s.mu.Unlock()
		return
	}
	if rest := d - (time.Since(s.h.start) - s.idleSince); rest > 0 {
		s.armed = true
		s.timer.Reset(rest)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.h.log.Info("mcp: idle session expired", "session", s.id)
	s.terminate()
}

// ---- HTTP helpers ----

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
func readBody(r *http.Request, limit int64) ([]byte, int, error) {
	if r.ContentLength > limit {
		//lint:ignore ST1005 the message is the body of the 413 answer, after its status text
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("Request Entity Too Large: the body exceeds %d bytes", limit)
	}
	if r.ContentLength >= 0 {
		buf := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
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

// acceptsBoth reports whether an Accept header lists both JSON and SSE
// (wildcards count).
func acceptsBoth(values []string) bool {
	j, e := accepts(values)
	return j && e
}

func acceptsEventStream(values []string) bool {
	_, e := accepts(values)
	return e
}

func accepts(values []string) (jsonOK, sseOK bool) {
	if len(values) == 1 && values[0] == "application/json, text/event-stream" {
		return true, true // what most clients send, ours included
	}
	for _, v := range values {
		for v != "" {
			part := v
			if i := strings.IndexByte(v, ','); i >= 0 {
				part, v = v[:i], v[i+1:]
			} else {
				v = ""
			}
			if i := strings.IndexByte(part, ';'); i >= 0 {
				part = part[:i]
			}
			mt := strings.TrimSpace(part)
			switch {
			case equalLower(mt, "application/json"), equalLower(mt, "application/*"):
				jsonOK = true
			case equalLower(mt, "text/event-stream"), equalLower(mt, "text/*"):
				sseOK = true
			case mt == "*/*":
				jsonOK, sseOK = true, true
			}
		}
	}
	return jsonOK, sseOK
}

// equalLower reports whether s, lower-cased, is lower, which is lower
// case ASCII without 'k' (the only ASCII letter that a non-ASCII rune,
// the Kelvin sign, lower-cases to), so that comparing ASCII letters
// case-insensitively agrees with strings.ToLower(s) == lower.
func equalLower(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func isJSONContentType(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// ---- DNS-rebinding defence ----

// hostGuard checks the Host and Origin headers of requests.
type hostGuard struct {
	disabled bool
	hosts    []string // lower case; "host" (any port) or "host:port"; IPv6 without brackets unless with a port
	origins  []string // lower case

	cors *corsPolicy // StreamableHTTPOptions.CORS; its origins pass too
}

func newHostGuard(disabled bool, hosts, origins []string) hostGuard {
	g := hostGuard{disabled: disabled}
	for _, h := range hosts {
		g.hosts = append(g.hosts, normalizeHostEntry(h))
	}
	for _, o := range origins {
		g.origins = append(g.origins, strings.TrimSuffix(strings.ToLower(o), "/"))
	}
	return g
}

func normalizeHostEntry(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, port, err := net.SplitHostPort(h); err == nil {
		return net.JoinHostPort(host, port)
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// check returns why a request is refused, or "".
func (g *hostGuard) check(r *http.Request) string {
	if g.disabled {
		return ""
	}
	host := strings.ToLower(r.Host)
	hostname := host
	if !strings.Contains(host, ":") {
		// No port: SplitHostPort would allocate its error.
	} else if h, _, err := net.SplitHostPort(host); err == nil {
		hostname = h
	} else {
		hostname = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	if len(g.hosts) > 0 {
		ok := false
		for _, e := range g.hosts {
			if e == hostname || e == host {
				ok = true
				break
			}
		}
		if !ok {
			return "Host " + strconv.Quote(r.Host) + " is not allowed"
		}
	} else if localIsLoopback(r) && !isLoopbackName(hostname) {
		return "Host " + strconv.Quote(r.Host) + " is not allowed on a loopback address"
	}
	origin := headerGet(r.Header, "Origin")
	if origin == "" {
		return ""
	}
	if g.cors != nil && g.cors.Allowed(origin) {
		return ""
	}
	lo := strings.TrimSuffix(strings.ToLower(origin), "/")
	if len(g.origins) > 0 {
		for _, e := range g.origins {
			if e == lo {
				return ""
			}
		}
		return "Origin " + strconv.Quote(origin) + " is not allowed"
	}
	u, err := url.Parse(lo)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "Origin " + strconv.Quote(origin) + " is not allowed"
	}
	if u.Host == host || (isLoopbackName(u.Hostname()) && isLoopbackName(hostname)) {
		return ""
	}
	return "Origin " + strconv.Quote(origin) + " is not allowed"
}

// localIsLoopback reports whether the request arrived on a loopback
// address.
func localIsLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	var ip net.IP
	switch a := addr.(type) {
	case *net.TCPAddr:
		ip = a.IP
	default:
		h, _, err := net.SplitHostPort(addr.String())
		if err != nil {
			return false
		}
		ip = net.ParseIP(h)
	}
	return ip != nil && ip.IsLoopback()
}

func isLoopbackName(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h) // unlike net.ParseIP, no allocation
	return err == nil && ip.IsLoopback()
}

// withHTTPValues makes the values of r's context (a verified caller put
// there by authorization middleware, say) and r itself available to the
// handlers of the requests and notifications in m.
func withHTTPValues(m jsonrpc.Message, r *http.Request) jsonrpc.Message {
	switch m := m.(type) {
	case *jsonrpc.Request:
		return m.WithValues(httpValues{r})
	case jsonrpc.Batch:
		for i, e := range m {
			if req, ok := e.(*jsonrpc.Request); ok {
				m[i] = req.WithValues(httpValues{r})
			}
		}
	}
	return m
}

// httpValues is a values-only view of an HTTP request's context that also
// answers HTTPRequestFromContext.
type httpValues struct{ r *http.Request }

type httpRequestKey struct{}

func (v httpValues) Deadline() (time.Time, bool) { return time.Time{}, false }
func (v httpValues) Done() <-chan struct{}       { return nil }
func (v httpValues) Err() error                  { return nil }
func (v httpValues) Value(key any) any {
	if key == (httpRequestKey{}) {
		return v.r
	}
	return v.r.Context().Value(key)
}

// HTTPRequestFromContext returns the HTTP request that delivered the message
// a handler is serving, when it came over Streamable HTTP (nil otherwise).
// Its context's values are also those of ctx, so that what authorization
// middleware stored there reaches tool handlers. Read its header only; its
// body has been consumed, and the exchange may be over.
func HTTPRequestFromContext(ctx context.Context) *http.Request {
	r, _ := ctx.Value(httpRequestKey{}).(*http.Request)
	return r
}

// readPostedMessage checks a POST's Content-Type, reads its body within
// maxBytes and decodes the one message it carries. On failure it has
// answered the request (415, 413, or 400 with the JSON-RPC error) and
// reports false. dec may be nil.
func readPostedMessage(w http.ResponseWriter, r *http.Request, maxBytes int64, dec *jsonrpc.Decoder) (jsonrpc.Message, bool) {
	if !isJSONContentType(headerGet(r.Header, "Content-Type")) {
		writeHTTPError(w, http.StatusUnsupportedMediaType, jsonrpc.ID{}, "Unsupported Media Type: Content-Type must be application/json")
		return nil, false
	}
	body, status, err := readBody(r, maxBytes)
	if err != nil {
		writeHTTPError(w, status, jsonrpc.ID{}, err.Error())
		return nil, false
	}
	m, err := dec.Decode(body)
	if err != nil {
		var de *jsonrpc.DecodeError
		if errors.As(err, &de) {
			writeJSON(w, http.StatusBadRequest, "", de.Response())
			return nil, false
		}
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: "+err.Error())
		return nil, false
	}
	return m, true
}
