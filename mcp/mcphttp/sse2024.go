package mcphttp

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// The HTTP+SSE transport of protocol revision 2024-11-05, which Streamable
// HTTP replaced. A client GETs an SSE stream; its first event, "endpoint",
// gives the URL to POST messages to (here: the same path with a sessionId
// query parameter). Each POST is answered 202, and every server message,
// responses included, arrives on the stream as a "message" event. The
// session lasts as long as the stream.

// SSEOptions configure an SSEHandler. The zero value is usable.
type SSEOptions struct {
	// Endpoint is the path (or URL) that the endpoint event tells clients
	// to POST to, without the sessionId parameter. Empty means the path of
	// the GET request: serve POSTs with the same handler there.
	Endpoint string
	// MaxBodyBytes bounds a POST body; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// ReadTimeout, WriteTimeout and MaxSessions work as in
	// Options, with the same defaults: a deadline for a POST
	// body, one for every event of a stream, and a bound on the sessions
	// (streams) open at once, past which a GET gets 503.
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	MaxSessions  int
	// MaxQueuedBytes bounds the bytes of the messages waiting to be
	// written to a session's stream, for a client that reads more slowly
	// than the server sends; a message that would go past it ends the
	// session (this transport cannot resume a stream). One message is
	// always let through, whatever its size. Zero means
	// DefaultMaxQueuedBytes. At most sseQueueLength messages wait: past
	// that, the sender waits for room (or for its context to end).
	MaxQueuedBytes int
	// AllowedHosts, AllowedOrigins and DisableDNSRebindingProtection work
	// as in Options.
	AllowedHosts                  []string
	AllowedOrigins                []string
	DisableDNSRebindingProtection bool
	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
}

// SSEHandler serves the 2024-11-05 HTTP+SSE transport, for old clients.
// Serve it on paths of its own, next to a Handler: GET opens
// a session, POST with the sessionId parameter delivers a message to it.
type SSEHandler struct {
	getServer func(*http.Request) *mcp.Server
	opts      SSEOptions
	guard     hostGuard
	log       *slog.Logger

	mu       sync.Mutex
	sessions map[string]*sseSession
	closed   atomic.Bool
}

// NewSSEHandler returns a handler that serves one session of the server
// that getServer returns per GET. If it returns nil, the GET gets 400.
func NewSSEHandler(getServer func(*http.Request) *mcp.Server, opts *SSEOptions) *SSEHandler {
	h := &SSEHandler{getServer: getServer, sessions: make(map[string]*sseSession)}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.MaxBodyBytes <= 0 {
		h.opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	h.opts.ReadTimeout = defaultBound(h.opts.ReadTimeout, DefaultReadTimeout)
	h.opts.WriteTimeout = defaultBound(h.opts.WriteTimeout, DefaultWriteTimeout)
	h.opts.MaxSessions = defaultBound(h.opts.MaxSessions, DefaultMaxSessions)
	if h.opts.MaxQueuedBytes <= 0 {
		h.opts.MaxQueuedBytes = DefaultMaxQueuedBytes
	}
	h.log = h.opts.Logger
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.guard = newHostGuard(h.opts.DisableDNSRebindingProtection, h.opts.AllowedHosts, h.opts.AllowedOrigins)
	return h
}

// ServeHTTP answers one HTTP request.
func (h *SSEHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	armWrite(w, h.opts.WriteTimeout)
	if err := h.guard.check(r); err != "" {
		writeHTTPError(w, http.StatusForbidden, jsonrpc.ID{}, "Forbidden: "+err)
		return
	}
	switch r.Method {
	case http.MethodGet:
		h.serveStream(w, r)
	case http.MethodPost:
		h.serveMessage(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		writeHTTPError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, "Method Not Allowed: "+r.Method)
	}
}

// Close ends every session; their streams end.
func (h *SSEHandler) Close() error {
	h.closed.Store(true)
	h.mu.Lock()
	list := make([]*sseSession, 0, len(h.sessions))
	for _, s := range h.sessions {
		list = append(list, s)
	}
	h.mu.Unlock()
	for _, s := range list {
		s.ss.Close()
	}
	return nil
}

func (h *SSEHandler) serveStream(w http.ResponseWriter, r *http.Request) {
	if !acceptsEventStream(r.Header.Values("Accept")) {
		writeHTTPError(w, http.StatusNotAcceptable, jsonrpc.ID{}, "Not Acceptable: Accept must list text/event-stream")
		return
	}
	if h.closed.Load() {
		writeHTTPError(w, http.StatusServiceUnavailable, jsonrpc.ID{}, "Service Unavailable: the server is shutting down")
		return
	}
	srv := h.getServer(r)
	if srv == nil {
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: no server for this request")
		return
	}
	s := &sseSession{
		h:        h,
		id:       rand.Text(),
		incoming: make(chan jsonrpc.Message, 16),
		out:      make(chan []byte, sseQueueLength),
		done:     make(chan struct{}),
	}
	endpoint := h.opts.Endpoint
	if endpoint == "" {
		endpoint = r.URL.Path
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		writeHTTPError(w, http.StatusInternalServerError, jsonrpc.ID{}, "Internal Server Error: bad endpoint")
		return
	}
	q := u.Query()
	q.Set("sessionId", s.id)
	u.RawQuery = q.Encode()

	ss, err := srv.Connect(context.Background(), s)
	if err != nil {
		writeHTTPError(w, http.StatusInternalServerError, jsonrpc.ID{}, "Internal Server Error: cannot start a session")
		return
	}
	s.ss = ss
	h.mu.Lock()
	if max := h.opts.MaxSessions; max > 0 && len(h.sessions) >= max {
		h.mu.Unlock()
		ss.Close()
		w.Header().Set("Retry-After", "1")
		writeHTTPError(w, http.StatusServiceUnavailable, jsonrpc.ID{}, tooManySessions)
		return
	}
	h.sessions[s.id] = s
	h.mu.Unlock()
	defer ss.Close()
	clearRead(w, h.opts.ReadTimeout) // the stream must outlive any read deadline

	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	buf := appendSSEEvent(nil, "endpoint", "", 0, []byte(u.String()))
	armWrite(w, h.opts.WriteTimeout)
	if _, err := w.Write(buf); err != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}
	for {
		select {
		case data := <-s.out:
			armWrite(w, h.opts.WriteTimeout)
			s.queued.Add(-int64(len(data)))
			buf = appendSSEEvent(buf[:0], "message", "", 0, data)
			if _, err := w.Write(buf); err != nil {
				return
			}
			// Write what else is queued before flushing.
			for more := true; more; {
				select {
				case data := <-s.out:
					armWrite(w, h.opts.WriteTimeout)
					s.queued.Add(-int64(len(data)))
					buf = appendSSEEvent(buf[:0], "message", "", 0, data)
					if _, err := w.Write(buf); err != nil {
						return
					}
				default:
					more = false
				}
			}
			if rc.Flush() != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}

func (h *SSEHandler) serveMessage(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("sessionId")
	if id == "" {
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: missing sessionId parameter")
		return
	}
	h.mu.Lock()
	s := h.sessions[id]
	h.mu.Unlock()
	if s == nil {
		writeHTTPError(w, http.StatusNotFound, jsonrpc.ID{}, "Not Found: unknown or ended session")
		return
	}
	armRead(w, h.opts.ReadTimeout)
	m, ok := readPostedMessage(w, r, h.opts.MaxBodyBytes, nil)
	if !ok {
		return // the deadline stays: net/http may read on, to skip the body
	}
	clearRead(w, h.opts.ReadTimeout)
	m = withHTTPValues(m, r)
	select {
	case s.incoming <- m:
	case <-s.done:
		writeHTTPError(w, http.StatusNotFound, jsonrpc.ID{}, "Not Found: the session ended")
		return
	case <-r.Context().Done():
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// sseSession is the jsonrpc.Stream of one 2024-11-05 session.
type sseSession struct {
	h         *SSEHandler
	id        string
	ss        *mcp.ServerSession
	incoming  chan jsonrpc.Message
	out       chan []byte
	queued    atomic.Int64 // bytes in out
	done      chan struct{}
	closeOnce sync.Once
}

// sseQueueLength is how many messages wait for a 2024-11-05 stream.
const sseQueueLength = 64

// Connect makes sseSession an mcp Transport.
func (s *sseSession) Connect(context.Context) (jsonrpc.Stream, error) { return s, nil }

func (s *sseSession) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-s.incoming:
		return m, nil
	case <-s.done:
		return nil, jsonrpc.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write queues m for the stream, waiting while sseQueueLength messages
// are queued; past SSEOptions.MaxQueuedBytes it ends the session instead.
func (s *sseSession) Write(ctx context.Context, m jsonrpc.Message) error {
	data, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	select {
	case <-s.done:
		return jsonrpc.ErrClosed
	default:
	}
	n := int64(len(data))
	if q := s.queued.Add(n); q > n && q > int64(s.h.opts.MaxQueuedBytes) {
		// The client does not read: it loses its session rather than
		// have the server hold what it does not read.
		s.queued.Add(-n)
		s.h.log.Warn("mcphttp: a 2024-11-05 client is too far behind its stream; session ended", "session", s.id, "queued", q-n)
		s.Close()
		return fmt.Errorf("%w: the client is %d bytes behind its stream", jsonrpc.ErrClosed, q-n)
	}
	select {
	case s.out <- data:
		return nil
	case <-s.done:
		s.queued.Add(-n)
		return jsonrpc.ErrClosed
	case <-ctx.Done():
		s.queued.Add(-n)
		return ctx.Err()
	}
}

func (s *sseSession) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		s.h.mu.Lock()
		if s.h.sessions[s.id] == s {
			delete(s.h.sessions, s.id)
		}
		s.h.mu.Unlock()
	})
	return nil
}

// ---- client side ----

// errLegacyStreamEnded ends a 2024-11-05 session whose stream closed.
var errLegacyStreamEnded = errors.New("mcphttp: the server closed the HTTP+SSE stream")

// tryLegacy switches to the 2024-11-05 transport if the endpoint offers
// it, and POSTs initData (the initialize request) there.
func (c *streamableClientConn) tryLegacy(initData []byte) error {
	req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.endpoint.String(), nil)
	if err != nil {
		return err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || mediaType(resp.Header.Get("Content-Type")) != "text/event-stream" {
		return statusError(resp)
	}
	r := newSSEReader(resp.Body, c.maxMsg)
	ev, err := r.next()
	if err != nil || ev.name != "endpoint" {
		resp.Body.Close()
		return fmt.Errorf("mcphttp: the GET stream did not start with an endpoint event")
	}
	u, err := c.endpoint.Parse(string(ev.data))
	if err != nil {
		resp.Body.Close()
		return fmt.Errorf("mcphttp: endpoint event: %w", err)
	}
	if u.Scheme != c.endpoint.Scheme || u.Host != c.endpoint.Host {
		resp.Body.Close()
		return fmt.Errorf("mcphttp: the endpoint event names another origin: %s", u.Redacted())
	}
	c.mu.Lock()
	c.legacyURL = u.String()
	c.wg.Add(1)
	c.mu.Unlock()
	go c.readLegacy(resp, r)
	return c.legacyPost(c.ctx, u.String(), initData)
}

// readLegacy delivers the messages of a 2024-11-05 stream; the session ends
// with it.
func (c *streamableClientConn) readLegacy(resp *http.Response, r *sseReader) {
	defer c.wg.Done()
	defer resp.Body.Close()
	for {
		ev, err := r.next()
		if err != nil {
			break
		}
		if ev.name != "" && ev.name != "message" {
			continue
		}
		m, err := jsonrpc.Decode(ev.data)
		if err != nil {
			c.log.Warn("mcphttp: malformed message on the HTTP+SSE stream", "error", err)
			continue
		}
		c.deliver(m)
	}
	if !c.done() {
		c.fail(errLegacyStreamEnded)
	}
}

// legacyPost POSTs one message to the 2024-11-05 endpoint.
func (c *streamableClientConn) legacyPost(ctx context.Context, endpoint string, data []byte) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(data))
	if err != nil {
		return err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("mcphttp: POST: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return statusError(resp)
	}
	drain(resp)
	return nil
}
