package mcphttp

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// ErrSessionExpired is returned (wrapped) when the server answers 404 to a
// request that carries a session id: it no longer knows the session, which
// it ended or forgot. The session is over; connect again (Client.Connect
// with the same transport) to start a new one, as MCP 2025-11-25
// basic/transports#session-management requires. ClientSession.Wait
// returns it too.
var ErrSessionExpired = errors.New("mcphttp: the server ended the session (HTTP 404)")

// StatusError reports an HTTP answer that the client transport could
// not use.
type StatusError struct {
	// Method is the HTTP method of the request.
	Method string
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Message is the message of the JSON-RPC error in the body, or the
	// start of the body.
	Message string
	// Header is the answer's header, where a 401 or 403 carries
	// WWW-Authenticate.
	Header http.Header
}

// Error describes the answer.
func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("mcphttp: %s answered %d %s", e.Method, e.StatusCode, http.StatusText(e.StatusCode))
	}
	return fmt.Sprintf("mcphttp: %s answered %d %s: %s", e.Method, e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}

// HTTPStatus returns StatusCode; mcp.Client.Connect reads it to tell an
// answer that says the server is legacy (400, 404, 405) from one that
// says nothing of its era (401, 403, 5xx).
func (e *StatusError) HTTPStatus() int { return e.StatusCode }

// ClientTransport is the client side of the Streamable HTTP
// transport. Each Connect starts a new session at Endpoint.
//
// Every message is POSTed with Accept listing application/json and
// text/event-stream, the session id the server issued, and, after
// initialize, the MCP-Protocol-Version header with the negotiated version.
// Answers come as JSON or as SSE streams; once the session is initialized
// the transport also opens the standalone GET stream, unless the server
// answers 405. Sending notifications/initialized waits (up to a second)
// for the server to answer that GET, so that a server that answers with
// JSON, and so can send its own requests only on that stream, finds it
// open as soon as the session is. A dropped SSE stream is resumed with GET and Last-Event-ID,
// after the delay the server asked for with the retry field or else with
// exponential backoff. Closing the session sends DELETE.
//
// If the initialize POST gets 400, 404 or 405, the transport tries the
// 2024-11-05 HTTP+SSE transport at the same URL: it GETs it, and if the
// first event is "endpoint", it POSTs to that endpoint from then on.
//
// The rules are those of MCP 2025-11-25 basic/transports: the headers of
// basic/transports#sending-messages-to-the-server,
// basic/transports#session-management and
// basic/transports#protocol-version-header; resumption by
// basic/transports#resumability-and-redelivery; the fallback by
// basic/transports#backwards-compatibility.
type ClientTransport struct {
	// Endpoint is the URL of the server's MCP endpoint.
	Endpoint string
	// HTTPClient sends the requests; nil means http.DefaultClient. Give a
	// client whose Transport adds credentials to authorize the requests.
	// Its Timeout, if any, also bounds SSE streams: leave it zero.
	HTTPClient *http.Client
	// Header holds extra headers sent with every request.
	Header http.Header
	// MaxRetries bounds the reconnection attempts in a row that bring
	// nothing new on an SSE stream (a failed GET, or a connection that ends
	// without a new event and without a retry field); the stream is then
	// abandoned, and a request waiting on it fails. Zero means 5, negative
	// means no reconnection.
	MaxRetries int
	// RetryDelay is the delay before the first reconnection attempt when
	// the server gave no retry field; it doubles with each failure, up to
	// 30 seconds. Zero means 500ms.
	RetryDelay time.Duration
	// MinServerRetry and MaxServerRetry bound the reconnection delay a
	// server sets with an SSE retry field: a server may make the client
	// poll a slow request for as long as it runs, but not reconnect in a
	// busy loop ("retry: 1"), nor wait for years. Zero means
	// DefaultMinServerRetry and DefaultMaxServerRetry.
	MinServerRetry, MaxServerRetry time.Duration
	// MaxReissues bounds how many times a request of a modern
	// (2026-07-28) session whose response stream broke before the
	// response is re-issued under a new id, as the revision requires
	// (client_reissue.go); past it, the request fails. Zero means
	// DefaultMaxReissues, negative means never (the first break fails the
	// request).
	MaxReissues int
	// DisableStandaloneSSE stops the transport from opening the GET stream.
	DisableStandaloneSSE bool
	// DisableLegacyFallback stops the transport from trying the 2024-11-05
	// HTTP+SSE transport.
	DisableLegacyFallback bool
	// MaxMessageSize bounds one message received; zero means
	// jsonrpc.DefaultMaxMessageSize.
	MaxMessageSize int
	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
}

// Connect returns the message stream of a new session. No request is made
// until the client writes its first message (initialize).
func (t *ClientTransport) Connect(ctx context.Context) (jsonrpc.Stream, error) {
	u, err := url.Parse(t.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("mcphttp: endpoint: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("mcphttp: endpoint %q is not an http or https URL", t.Endpoint)
	}
	c := &streamableClientConn{
		endpoint:    u,
		endpointURL: u.String(),
		client:      t.HTTPClient,
		header:      t.Header.Clone(),
		maxRetries:  t.MaxRetries,
		maxReissues: maxReissuesFor(t.MaxReissues),
		retryDelay:  t.RetryDelay,
		minRetry:    cmp.Or(t.MinServerRetry, DefaultMinServerRetry),
		maxRetry:    cmp.Or(t.MaxServerRetry, DefaultMaxServerRetry),
		noGET:       t.DisableStandaloneSSE,
		noLegacy:    t.DisableLegacyFallback,
		maxMsg:      t.MaxMessageSize,
		log:         t.Logger,
		incoming:    make(chan jsonrpc.Message, 64),
		failed:      make(chan struct{}),
		closed:      make(chan struct{}),
	}
	if c.client == nil {
		c.client = http.DefaultClient
	}
	if c.maxRetries == 0 {
		c.maxRetries = 5
	}
	if c.retryDelay <= 0 {
		c.retryDelay = 500 * time.Millisecond
	}
	if c.maxMsg <= 0 {
		c.maxMsg = jsonrpc.DefaultMaxMessageSize
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.needVersion.Store(true)
	return c, nil
}

// streamableClientConn is the jsonrpc.Stream of one client session.
type streamableClientConn struct {
	endpoint    *url.URL
	endpointURL string
	client      *http.Client
	header      http.Header
	maxRetries  int
	maxReissues int // resolved: >= 0
	retryDelay  time.Duration
	minRetry    time.Duration // of a server's retry field
	maxRetry    time.Duration
	noGET       bool
	noLegacy    bool
	maxMsg      int
	log         *slog.Logger

	ctx      context.Context // the session's lifetime
	cancel   context.CancelFunc
	incoming chan jsonrpc.Message
	failed   chan struct{} // closed on a fatal error, failErr
	failErr  error
	failOnce sync.Once
	closed   chan struct{}

	closeOnce   sync.Once
	wg          sync.WaitGroup
	needVersion atomic.Bool
	reissueSeq  atomic.Int64 // numbers the ids of re-issued requests

	mu         sync.Mutex
	isClosed   bool
	sessionID  string
	sessionHdr []string // {sessionID}
	version    string
	versionHdr []string // {version}
	initID     jsonrpc.ID
	getStarted bool
	legacyURL  string
	modern     string // the modern version spoken, "" for legacy (client_modern.go)
}

// Read returns the next message from the server.
func (c *streamableClientConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.incoming:
		return m, nil
	default:
	}
	select {
	case m := <-c.incoming:
		return m, nil
	case <-c.failed:
		select {
		case m := <-c.incoming:
			return m, nil
		default:
		}
		return nil, c.failErr
	case <-c.closed:
		return nil, jsonrpc.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write sends m in a POST. For a request, it returns once the server has
// started to answer, or when ctx ends (the request stays on its way, and
// its answer is still read, so that a cancellation can follow it).
func (c *streamableClientConn) Write(ctx context.Context, m jsonrpc.Message) error {
	select {
	case <-c.failed:
		return c.failErr
	default:
	}
	data, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	var reqID jsonrpc.ID
	isInit, isInitialized := false, false
	if req, ok := m.(*jsonrpc.Request); ok {
		if !req.IsNotification() {
			reqID = req.ID
			isInit = req.Method == mcp.MethodInitialize
		} else {
			isInitialized = req.Method == mcp.NotificationInitialized
		}
	}
	c.mu.Lock()
	if c.isClosed {
		c.mu.Unlock()
		return jsonrpc.ErrClosed
	}
	if isInit {
		c.initID = reqID
	}
	legacy, modern := c.legacyURL, c.modern != ""
	c.wg.Add(1)
	c.mu.Unlock()
	if modern {
		ctx = withStandardHeaders(ctx, m)
	}
	if legacy != "" {
		defer c.wg.Done()
		return c.legacyPost(ctx, legacy, data)
	}
	if !reqID.IsValid() {
		defer c.wg.Done()
		err := c.postNoAnswer(ctx, data)
		if err == nil && isInitialized {
			// Wait, briefly, for the GET stream to be answered: a server
			// that answers requests with JSON can send its own requests
			// (sampling, elicitation, roots) only on that stream, and may
			// do so as soon as the session is initialized.
			t := time.NewTimer(standaloneWait)
			select {
			case <-c.startStandalone():
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
		return err
	}
	if err := ctx.Err(); err != nil {
		c.wg.Done()
		return err
	}
	res := make(chan error, 1)
	go c.postRequest(ctx, data, reqID, isInit, res)
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return nil
	}
}

// Close ends the session: DELETE tells the server, then every stream is
// closed.
func (c *streamableClientConn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.isClosed = true
		sid, legacy := c.sessionID, c.legacyURL
		c.mu.Unlock()
		close(c.closed)
		expired := false
		select {
		case <-c.failed:
			expired = errors.Is(c.failErr, ErrSessionExpired)
		default:
		}
		if sid != "" && legacy == "" && !expired {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			req, err := c.newRequest(ctx, http.MethodDelete, nil, "")
			if err == nil {
				if resp, err := c.client.Do(req); err == nil {
					drain(resp)
				} else {
					c.log.Debug("mcphttp: DELETE failed", "error", err)
				}
			}
			cancel()
		}
		c.cancel()
		c.wg.Wait()
	})
	return nil
}

// fail ends the session with err.
func (c *streamableClientConn) fail(err error) {
	c.failOnce.Do(func() {
		c.failErr = err
		close(c.failed)
	})
}

func (c *streamableClientConn) done() bool {
	select {
	case <-c.closed:
		return true
	case <-c.failed:
		return true
	default:
		return false
	}
}

// newRequest builds a request to the endpoint with the session's headers:
// a POST accepts JSON and SSE, a GET SSE
// (basic/transports#sending-messages-to-the-server and
// basic/transports#listening-for-messages-from-the-server); once known, the
// session id and the negotiated version go on every request (MCP
// 2025-11-25 basic/transports#session-management and
// basic/transports#protocol-version-header).
func (c *streamableClientConn) newRequest(ctx context.Context, method string, body []byte, lastEventID string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpointURL, rd)
	if err != nil {
		return nil, err
	}
	// Header values are shared slices: nothing modifies them.
	h := req.Header
	for k, v := range c.header {
		h[k] = v
	}
	switch method {
	case http.MethodPost:
		h["Content-Type"] = jsonType
		h["Accept"] = acceptBoth
	case http.MethodGet:
		h["Accept"] = eventStreamType
	}
	c.mu.Lock()
	if c.sessionHdr != nil {
		h[headerSessionID] = c.sessionHdr
	}
	if c.versionHdr != nil {
		h[headerProtocolVersion] = c.versionHdr
	}
	modern := c.modern != ""
	c.mu.Unlock()
	if modern {
		addModernHeaders(ctx, h)
	}
	if lastEventID != "" {
		h.Set(headerLastEventID, lastEventID)
	}
	return req, nil
}

var acceptBoth = []string{"application/json, text/event-stream"}

// postNoAnswer POSTs a notification or a response; the server answers 202.
func (c *streamableClientConn) postNoAnswer(ctx context.Context, data []byte) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	req, err := c.newRequest(ctx, http.MethodPost, data, "")
	if err != nil {
		return err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return c.requestError(err)
	}
	if resp.StatusCode/100 == 2 {
		drain(resp)
		return nil
	}
	return c.statusFailure(resp)
}

// statusFailure turns a non-2xx answer into an error, ending the session on
// a 404 for a known session.
func (c *streamableClientConn) statusFailure(resp *http.Response) error {
	err := statusError(resp)
	if resp.StatusCode == http.StatusNotFound && resp.Request.Header.Get(headerSessionID) != "" {
		ferr := fmt.Errorf("%w: %w", ErrSessionExpired, err)
		c.fail(ferr)
		return ferr
	}
	return err
}

// requestError reports a failed HTTP exchange: as the session's failure if
// it has failed (the exchange was cut short because of it).
func (c *streamableClientConn) requestError(err error) error {
	select {
	case <-c.failed:
		return c.failErr
	default:
	}
	return fmt.Errorf("mcphttp: %w", err)
}

// callerValues is the context of a POSTed request: it ends with the
// connection (a request outlives its caller's context, so that a
// cancellation can follow it), but it carries the caller's values, so that
// an HTTP client's instrumentation (a tracing RoundTripper, say) sees the
// caller's span.
type callerValues struct {
	context.Context                 // the connection's: Done, Err, Deadline
	values          context.Context // the caller's
}

func (c *callerValues) Value(key any) any {
	if v := c.values.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}

// postRequest POSTs a request and reads its answer, reporting on res once
// the server has started to answer.
//
// Until the server starts to answer, the exchange ends when ctx (the
// caller's) ends: what the HTTP client does before the request is sent,
// such as a login that the server's 401 or 403 asks for and that waits for
// the user's browser, must not outlive a caller who gave up, nor send the
// request later. Once the answer has started, the exchange lives as long as
// the session, so that the answer is read and a cancellation can follow.
// Throughout, it carries the caller's values (see callerValues).
func (c *streamableClientConn) postRequest(ctx context.Context, data []byte, id jsonrpc.ID, isInit bool, res chan<- error) {
	defer c.wg.Done()
	var rctx context.Context = &callerValues{Context: c.ctx, values: ctx}
	stop := alwaysTrue
	if ctx.Done() != nil { // a context that cannot end costs nothing
		var cancel context.CancelFunc
		rctx, cancel = context.WithCancel(rctx)
		defer cancel()
		stop = context.AfterFunc(ctx, cancel)
	}
	req, err := c.newRequest(rctx, http.MethodPost, data, "")
	if err != nil {
		stop()
		res <- err
		return
	}
	resp, err := c.client.Do(req)
	if !stop() {
		// The caller left before the answer started (and was told so by
		// Write); the answer, if one came at that moment, is dropped.
		if err == nil {
			resp.Body.Close()
		}
		res <- context.Cause(ctx)
		return
	}
	if err != nil {
		res <- c.requestError(err)
		return
	}
	if isInit && resp.StatusCode/100 == 2 {
		if sid := resp.Header.Get(headerSessionID); sid != "" {
			c.mu.Lock()
			if c.sessionID == "" {
				c.sessionID, c.sessionHdr = sid, []string{sid}
			}
			c.mu.Unlock()
		}
	}
	if resp.StatusCode/100 != 2 {
		if isInit && !c.noLegacy && req.Header.Get(headerSessionID) == "" &&
			(resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed) {
			herr := statusError(resp)
			if lerr := c.tryLegacy(data); lerr != nil {
				c.log.Debug("mcphttp: no 2024-11-05 HTTP+SSE fallback", "error", lerr)
				res <- herr
				return
			}
			res <- nil
			return
		}
		if c.modernVersion() != "" && c.modernErrorAnswer(resp, id) {
			res <- nil
			return
		}
		res <- c.statusFailure(resp)
		return
	}
	mt := mediaType(resp.Header.Get("Content-Type"))
	if c.modernVersion() != "" {
		// A modern request is cancelled by closing its stream
		// (basic/transports/streamable-http, "Cancellation").
		defer context.AfterFunc(ctx, func() { resp.Body.Close() })()
		if mt == "text/event-stream" || mt == "application/json" {
			res <- nil
			c.followModern(ctx, resp.Body, mt, data, id)
			return
		}
	}
	switch mt {
	case "text/event-stream":
		res <- nil
		c.readStream(resp.Body, id)
	case "application/json":
		res <- nil
		c.readJSON(resp.Body, id)
	default:
		drain(resp)
		if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
			res <- fmt.Errorf("mcphttp: POST: the server answered %d to a request, without a response", resp.StatusCode)
			return
		}
		res <- fmt.Errorf("mcphttp: POST: unexpected Content-Type %q", resp.Header.Get("Content-Type"))
	}
}

func alwaysTrue() bool { return true }

// readJSON delivers a JSON answer: one response, or an array of them.
func (c *streamableClientConn) readJSON(body io.ReadCloser, id jsonrpc.ID) {
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, int64(c.maxMsg)+1))
	if err == nil && len(data) > c.maxMsg {
		err = fmt.Errorf("the answer exceeds %d bytes", c.maxMsg)
	}
	if err != nil {
		c.abandon(id, "reading the answer: "+err.Error())
		return
	}
	m, err := jsonrpc.Decode(data)
	if err != nil {
		c.abandon(id, "malformed answer: "+err.Error())
		return
	}
	c.queueForRead(m)
}

// queueForRead hands a message from the server to Read.
func (c *streamableClientConn) queueForRead(m jsonrpc.Message) {
	if b, ok := m.(jsonrpc.Batch); ok {
		for _, e := range b {
			if _, bad := e.(*jsonrpc.DecodeError); !bad {
				c.queueForRead(e)
			}
		}
		return
	}
	if c.needVersion.Load() {
		if resp, ok := m.(*jsonrpc.Response); ok && resp.Result != nil {
			c.learnVersion(resp)
		}
	}
	select {
	case c.incoming <- m:
	case <-c.closed:
	}
}

// learnVersion takes the negotiated protocol version from the result of
// initialize, for the MCP-Protocol-Version header.
func (c *streamableClientConn) learnVersion(resp *jsonrpc.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.initID.IsValid() || resp.ID != c.initID {
		return
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if strictjson.Unmarshal(resp.Result, &r) == nil && r.ProtocolVersion != "" {
		c.version, c.versionHdr = r.ProtocolVersion, []string{r.ProtocolVersion}
		c.needVersion.Store(false)
	}
}

// abandon gives up on the answer to request id: the caller gets an error
// response, so that it does not wait forever.
func (c *streamableClientConn) abandon(id jsonrpc.ID, reason string) {
	if !id.IsValid() {
		c.log.Debug("mcphttp: GET stream ended", "reason", reason)
		return
	}
	if c.done() {
		return
	}
	c.log.Warn("mcphttp: no answer to a request", "id", id.String(), "reason", reason)
	c.queueForRead(&jsonrpc.Response{ID: id, Error: jsonrpc.Errorf(jsonrpc.CodeInternalError, "mcphttp: no answer from the server: %s", reason)})
}

// standaloneWait bounds how long the initialized notification waits for
// the server to answer the GET stream (see Write).
const standaloneWait = time.Second

// startStandalone opens the GET stream once, in the background. The
// returned channel is closed once the server has answered the GET (with
// the stream or with a refusal), or at once when no GET is made.
func (c *streamableClientConn) startStandalone() <-chan struct{} {
	answered := make(chan struct{})
	c.mu.Lock()
	if c.noGET || c.getStarted || c.isClosed {
		c.mu.Unlock()
		close(answered)
		return answered
	}
	c.getStarted = true
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		req, err := c.newRequest(c.ctx, http.MethodGet, nil, "")
		if err != nil {
			close(answered)
			return
		}
		resp, err := c.client.Do(req)
		close(answered)
		if err != nil {
			c.log.Debug("mcphttp: GET stream", "error", err)
			return
		}
		if resp.StatusCode != http.StatusOK || mediaType(resp.Header.Get("Content-Type")) != "text/event-stream" {
			// 405: the server offers no GET stream.
			if err := c.statusFailure(resp); resp.StatusCode != http.StatusMethodNotAllowed {
				c.log.Debug("mcphttp: no GET stream", "error", err)
			}
			return
		}
		c.readStream(resp.Body, jsonrpc.ID{})
	}()
	return answered
}

// readStream delivers the messages of an SSE stream: the answer to request
// want, or the standalone stream when want is the zero ID. When the
// connection drops before the stream is complete, it reconnects with GET
// and Last-Event-ID.
func (c *streamableClientConn) readStream(body io.ReadCloser, want jsonrpc.ID) {
	var (
		lastID   string
		retry    time.Duration
		failures int
	)
	for {
		r := newSSEReader(body, c.maxMsg)
		r.lastID, r.idBuf = lastID, lastID
		finished := false
		for !finished {
			ev, err := r.next()
			if err != nil {
				break
			}
			if len(ev.data) == 0 || (ev.name != "" && ev.name != "message") {
				continue
			}
			m, err := jsonrpc.Decode(ev.data)
			if err != nil {
				c.log.Warn("mcphttp: malformed message on an SSE stream", "error", err)
				continue
			}
			c.queueForRead(m)
			if resp, ok := m.(*jsonrpc.Response); ok && want.IsValid() && resp.ID == want {
				finished = true
			}
		}
		body.Close()
		progressed := r.lastID != lastID
		lastID = r.lastID
		if r.retry > 0 {
			retry = min(max(r.retry, c.minRetry), c.maxRetry)
		}
		if finished || c.done() {
			return
		}
		if lastID == "" && want.IsValid() {
			c.abandon(want, "the stream ended before the response, without an event id to resume from")
			return
		}
		if progressed || r.retry > 0 {
			failures = 0
		} else {
			failures++
		}
		var ok bool
		if body, ok = c.reconnect(lastID, want, retry, &failures); !ok {
			return
		}
	}
}

// reconnect GETs the stream again, retrying within the limits; it reports
// false when it gave up (having told the caller of want).
func (c *streamableClientConn) reconnect(lastID string, want jsonrpc.ID, retry time.Duration, failures *int) (io.ReadCloser, bool) {
	for {
		if c.maxRetries < 0 || *failures >= c.maxRetries {
			c.abandon(want, "the stream dropped and could not be resumed")
			return nil, false
		}
		delay := retry
		if delay <= 0 {
			delay = c.retryDelay << min(*failures, 6)
			delay = min(delay, 30*time.Second)
		}
		if !c.sleep(delay) {
			return nil, false
		}
		req, err := c.newRequest(c.ctx, http.MethodGet, nil, lastID)
		if err != nil {
			c.abandon(want, err.Error())
			return nil, false
		}
		resp, err := c.client.Do(req)
		if err != nil {
			*failures++
			continue
		}
		if resp.StatusCode == http.StatusOK && mediaType(resp.Header.Get("Content-Type")) == "text/event-stream" {
			return resp.Body, true
		}
		serr := c.statusFailure(resp)
		if c.done() {
			return nil, false
		}
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			*failures++
			continue
		}
		c.abandon(want, "resuming the stream: "+serr.Error())
		return nil, false
	}
}

// Defaults of ClientTransport.MinServerRetry and MaxServerRetry, the
// bounds on the reconnection time a server sets with an SSE retry field
// (WHATWG HTML, "Server-sent events"). A retry field counts as progress,
// so that a server may make the client poll a slow request for as long
// as it runs; one that sends "retry: 1" and ends the stream, again and
// again, made the client reconnect in a busy loop.
const (
	DefaultMinServerRetry = 100 * time.Millisecond
	DefaultMaxServerRetry = 10 * time.Minute
)

// sleep waits d, or until the session ends; it reports whether d passed.
func (c *streamableClientConn) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.closed:
		return false
	case <-c.failed:
		return false
	}
}

// statusError reads the start of a failed answer's body and closes it.
func statusError(resp *http.Response) *StatusError {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	e := &StatusError{Method: resp.Request.Method, StatusCode: resp.StatusCode, Header: resp.Header}
	if m, err := jsonrpc.Decode(b); err == nil {
		if r, ok := m.(*jsonrpc.Response); ok && r.Error != nil {
			e.Message = r.Error.Message
			return e
		}
	}
	e.Message = strings.TrimSpace(string(b))
	if len(e.Message) > 200 {
		e.Message = e.Message[:200] + "…"
	}
	return e
}

// drain reads and closes a body so that the connection can be reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

func mediaType(ct string) string {
	switch ct {
	case "application/json", "text/event-stream":
		return ct
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return mt
}
