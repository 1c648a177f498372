package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/jsonschema"
	"github.com/mcpstack/mcpstack/seal"
)

// ServerOptions configure a Server. The zero value is usable.
type ServerOptions struct {
	// Instructions tell the client how to use the server; a client may put
	// them into its model's system prompt.
	Instructions string
	// Logger receives the server's diagnostics. Nil discards them.
	Logger *slog.Logger
	// ProtocolVersions are the versions the server speaks, newest first;
	// nil means SupportedProtocolVersions.
	ProtocolVersions []string
	// Capabilities, if set, are advertised in addition to those the
	// server's registered features imply (for example Logging, or
	// Experimental keys).
	Capabilities *ServerCapabilities
	// KeepAlive, if positive, makes each session ping its client at this
	// interval and close the session when a ping fails (MCP 2025-11-25
	// basic/utilities/ping#implementation-considerations: periodic pings,
	// at a configurable frequency, detect a dead connection).
	KeepAlive time.Duration
	// RequestTimeout bounds requests the server sends to the client (ping,
	// sampling, elicitation, roots) whose context has no deadline; zero
	// means none.
	RequestTimeout time.Duration
	// MaxConcurrency bounds the requests one session handles at once; zero
	// means 64.
	MaxConcurrency int
	// MaxQueuedRequests bounds the requests of one session that wait for
	// one of its MaxConcurrency handler slots; zero or less means
	// DefaultMaxQueuedRequests. A request beyond them is answered at once
	// with a JSON-RPC error, code jsonrpc.CodeOverloaded, and not handled,
	// over every transport: a client that floods a session holds at most
	// this many waiting POSTs, and over stdio the session goes on reading
	// (its handlers may wait for the answers to their own requests).
	MaxQueuedRequests int
	// CancelTimeout bounds the sending of notifications/cancelled when a
	// request the server sent is abandoned (its context ended); the
	// requesting handler waits for it. Zero means DefaultCancelTimeout.
	CancelTimeout time.Duration
	// StrictMeta refuses requests and notifications whose params carry a
	// _meta key that breaks the key-name grammar, with -32602 naming the
	// key. Off by default: the protocol asks receivers to assume nothing
	// about others' _meta values.
	StrictMeta bool
	// InitializedHandler is called, on its own goroutine, when the client
	// sends notifications/initialized.
	InitializedHandler func(context.Context, *ServerSession)
	// RootsListChangedHandler is called, on its own goroutine, when the
	// client reports that its roots changed.
	RootsListChangedHandler func(context.Context, *ServerSession)
	// ProgressNotificationHandler is called for progress the client reports
	// on requests the server sent. It runs on the read loop: do not block.
	ProgressNotificationHandler func(context.Context, *ServerSession, *ProgressNotificationParams)
	// ReceivingMiddleware wraps the handling of every request and
	// notification the session receives, after the lifecycle checks (a
	// request before initialize is refused first). The first in the list is
	// outermost. The handler's context carries the session
	// (ServerSessionFromContext).
	ReceivingMiddleware []Middleware
	// SendingMiddleware wraps every request and notification the session
	// sends to the client. Params are the marshalled JSON; the result of a
	// request is a json.RawMessage. The first in the list is outermost.
	SendingMiddleware []Middleware
	// PageSize is the most items one page of tools/list, resources/list,
	// resources/templates/list or prompts/list holds; zero means no paging
	// (every list in one page). Cursors are opaque; an invalid one gets
	// -32602.
	PageSize int
	// CompletionHandler answers completion/complete; setting it advertises
	// the completions capability.
	CompletionHandler CompletionHandler
	// SchemaLimits bound the tool schemas AddTool compiles and, above all,
	// the arguments of tools/call checked against them: arguments nested
	// deeper than SchemaLimits.MaxInstanceDepth, or whose validation would
	// cost more than SchemaLimits.MaxValidationWork (#16.12), get a result
	// with IsError set naming the limit, before any validation. The zero
	// value gives jsonschema's defaults.
	SchemaLimits jsonschema.Limits
	// MaxSubscriptions bounds the resource subscriptions one session holds
	// at once; a resources/subscribe past it gets -32602. Zero means
	// DefaultMaxSubscriptions; negative means no bound.
	MaxSubscriptions int
	// MaxSubscriptionURILength bounds, in bytes, the URI of a
	// resources/subscribe; a longer one gets -32602. Zero means
	// DefaultMaxSubscriptionURILength; negative means no bound.
	MaxSubscriptionURILength int
	// StateSealer seals the requestState of 2026-07-28 requests that
	// answer InputRequiredResult (basic/patterns/mrtr): authenticated
	// encryption, so that the client can neither read nor forge it. The
	// retry may reach any replica: give every replica the same ring. Nil
	// means a ring with a random key made for this Server, good only
	// within this process. Its MaxSize bounds the state (and so what a
	// handler carries between rounds).
	StateSealer *seal.Ring
	// RequestStateTTL is how long a requestState stays good; a retry
	// after it gets -32602. Zero means DefaultRequestStateTTL.
	RequestStateTTL time.Duration
	// DisableModern turns the modern leg (revision 2026-07-28: requests
	// carrying their version and capabilities in _meta, no session) off:
	// they get -32022 naming the legacy versions.
	DisableModern bool
	// CacheTTL and CacheScope are the ttlMs and cacheScope of the modern
	// leg's cacheable results (the lists, resources/read, server/discover)
	// that set none (server/utilities/caching); zero means 0 ms (clients
	// re-fetch and rely on list-changed notifications), empty means
	// DefaultCacheScope (private).
	CacheTTL   time.Duration
	CacheScope CacheScope
	// MaxListeners bounds the subscriptions/listen streams open at once; one
	// past it gets CodeOverloaded. Zero means DefaultMaxListeners; negative
	// means no bound.
	MaxListeners int
	// MaxListenBytes bounds what the open listen streams hold together
	// (each its request and filter, while open); one past it gets
	// CodeOverloaded. Zero means DefaultMaxListenBytes, negative no bound.
	MaxListenBytes int64
	// MaxListenersPerPrincipal bounds the listen streams of one caller
	// (WithPrincipal), so that none takes all of MaxListeners; one past it
	// gets CodeOverloaded. Zero means DefaultMaxListenersPerPrincipal,
	// negative no bound. Requests naming no principal are not counted.
	MaxListenersPerPrincipal int
	// MaxModernRequests bounds the modern requests (no session) handled at
	// once, listen streams aside, as MaxConcurrency and MaxQueuedRequests
	// bound a session; one past it gets CodeOverloaded at once. Zero means
	// DefaultMaxModernRequests; negative means no bound.
	MaxModernRequests int
	// MaxModernRequestsPerPrincipal is MaxModernRequests for one caller
	// (WithPrincipal), so that none takes all the slots. Zero means
	// DefaultMaxModernRequestsPerPrincipal, negative no bound. Requests
	// naming no principal are not counted.
	MaxModernRequestsPerPrincipal int
	// ListenKeepAlive is how often an idle listen stream gets an SSE
	// comment, so that proxies keep it open; zero means
	// DefaultListenKeepAlive, negative never.
	ListenKeepAlive time.Duration
	// ListenQueue bounds the change notifications waiting for one listen
	// stream; one that falls this far behind is ended (the client listens
	// again). Zero means DefaultListenQueue.
	ListenQueue int
}

// Default bounds on resource subscriptions (see ServerOptions). A client
// subscribes to the resources it shows, a handful at a time, while every
// subscription is kept for the session's life: with these, a session's
// subscriptions hold at most about 1 MiB, as much as an eventstore.Memory
// keeps for it. 4096 bytes is PATH_MAX on Linux, the longest file path a
// file: URI names.
const (
	DefaultMaxSubscriptions         = 256
	DefaultMaxSubscriptionURILength = 4096
)

// ToolHandler handles a tools/call of one tool. A failure of the tool itself
// is reported in the result, with IsError set; a returned error becomes a
// JSON-RPC error response.
type ToolHandler func(ctx context.Context, ss *ServerSession, params *CallToolRequestParams) (*CallToolResult, error)

// Server is an MCP server: the features it offers and the sessions it
// serves. A Server is safe for concurrent use; features may be added while
// sessions run.
type Server struct {
	impl Implementation
	opts ServerOptions
	log  *slog.Logger

	mu           sync.RWMutex
	tools        map[string]*serverTool
	toolList     []string // names in insertion order
	resources    map[string]*serverResource
	resourceList []string // URIs in insertion order
	templates    []*serverTemplate
	prompts      map[string]*serverPrompt
	promptList   []string // names in insertion order
	sessions     map[*ServerSession]struct{}

	// subMu guards subscribers and the sessions' subs. Taken after mu
	// when both are.
	subMu sync.Mutex
	// subscribers indexes the sessions subscribed to a URI, so that a
	// change visits only those.
	subscribers map[string]map[*ServerSession]struct{}

	sealOnce  sync.Once
	ownSealer *seal.Ring                    // the ring made when ServerOptions.StateSealer is nil
	modernMem modernState                   // see modern
	shared    atomic.Pointer[sharedChanges] // see ShareChanges (bus.go)
}

type serverTool struct {
	tool    *Tool
	handler ToolHandler
	schemas compiledTool
	headers []paramHeader // x-mcp-header annotations (modern_headers.go)
}

// NewServer returns a server that introduces itself as impl.
func NewServer(impl *Implementation, opts *ServerOptions) *Server {
	s := &Server{
		sessions:  make(map[*ServerSession]struct{}),
		tools:     make(map[string]*serverTool),
		resources: make(map[string]*serverResource),
		prompts:   make(map[string]*serverPrompt),
	}
	if impl != nil {
		s.impl = *impl
	}
	if opts != nil {
		s.opts = *opts
	}
	if len(s.opts.ProtocolVersions) == 0 {
		s.opts.ProtocolVersions = SupportedProtocolVersions()
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// AddTool adds or replaces a tool. Its name must follow the tool-name rules
// (ValidToolName). Its input schema (and output schema, if
// any) are compiled first: a schema that is invalid in its dialect, names an
// unsupported dialect or does not describe an object is refused with a
// *ToolSchemaError, and the tool is not added. Sessions that are already
// running are told with notifications/tools/list_changed (MCP 2025-11-25
// server/tools#list-changed-notification; the tools capability this server
// advertises declares listChanged).
//
// Its x-mcp-header annotations (parameters mirrored into Mcp-Param-*
// headers, revision 2026-07-28) must follow the revision's rules, or the
// tool is refused with a *ToolSchemaError; on the modern HTTP leg, calls
// whose headers do not match the arguments get -32020.
//
// Calls are checked against the input schema before the handler runs: bad
// arguments get a result with IsError set that says what is wrong. A
// result's StructuredContent is checked against the output schema before it
// is sent.
func (s *Server) AddTool(t *Tool, h ToolHandler) error {
	if t == nil || h == nil {
		return errors.New("mcp: AddTool needs a tool and a handler")
	}
	if err := ValidToolName(t.Name); err != nil {
		return err
	}
	ct, err := compileTool(t, s.opts.SchemaLimits)
	if err != nil {
		return err
	}
	headers, err := toolParamHeaders(t.InputSchema)
	if err != nil {
		return &ToolSchemaError{Tool: t.Name, Field: "inputSchema", Err: err}
	}
	s.mu.Lock()
	if _, ok := s.tools[t.Name]; !ok {
		s.toolList = append(s.toolList, t.Name)
	}
	s.tools[t.Name] = &serverTool{tool: t, handler: h, schemas: ct, headers: headers}
	sessions := s.sessionList()
	s.mu.Unlock()
	s.notifyAll(sessions, NotificationToolsListChanged)
	return nil
}

// RemoveTools removes the named tools.
func (s *Server) RemoveTools(names ...string) {
	s.mu.Lock()
	for _, n := range names {
		delete(s.tools, n)
	}
	s.toolList = slices.DeleteFunc(s.toolList, func(n string) bool { return slices.Contains(names, n) })
	sessions := s.sessionList()
	s.mu.Unlock()
	s.notifyAll(sessions, NotificationToolsListChanged)
}

func (s *Server) sessionList() []*ServerSession {
	out := make([]*ServerSession, 0, len(s.sessions))
	for ss := range s.sessions {
		out = append(out, ss)
	}
	return out
}

func (s *Server) notifyAll(sessions []*ServerSession, method string) {
	s.notifyListeners(method, "")
	for _, ss := range sessions {
		if ss.isOperational() {
			_ = ss.Notify(context.Background(), method, nil)
		}
	}
}

// capabilities returns what the server advertises: those of
// ServerOptions.Capabilities, and those its registered features imply. MCP
// 2025-11-25 basic/lifecycle#capability-negotiation: a client uses only
// the features the server declared in its initialize result.
func (s *Server) capabilities() *ServerCapabilities {
	caps := &ServerCapabilities{}
	if s.opts.Capabilities != nil {
		c := *s.opts.Capabilities
		caps = &c
	}
	s.mu.RLock()
	hasTools := len(s.tools) > 0
	hasResources := len(s.resources) > 0 || len(s.templates) > 0
	hasPrompts := len(s.prompts) > 0
	s.mu.RUnlock()
	if hasTools && caps.Tools == nil {
		caps.Tools = &ToolsCapability{ListChanged: true}
	}
	if hasResources && caps.Resources == nil {
		caps.Resources = &ResourcesCapability{Subscribe: true, ListChanged: true}
	}
	if hasPrompts && caps.Prompts == nil {
		caps.Prompts = &PromptsCapability{ListChanged: true}
	}
	if s.opts.CompletionHandler != nil && caps.Completions == nil {
		caps.Completions = &CompletionsCapability{}
	}
	return caps
}

// Connect starts a session over t. The session is served in the
// background until the client disconnects or the session is closed; use
// ServerSession.Wait to wait for that.
func (s *Server) Connect(ctx context.Context, t Transport) (*ServerSession, error) {
	stream, err := t.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcp: connect: %w", err)
	}
	ss := &ServerSession{server: s, done: make(chan struct{}), ready: make(chan struct{})}
	ss.chainMiddleware()
	s.mu.Lock()
	s.sessions[ss] = struct{}{}
	s.mu.Unlock()
	ss.conn = jsonrpc.NewConn(stream, s.connOptions(ss))
	close(ss.ready) // the read loop may already have a message for handle
	go func() {
		<-ss.conn.Done()
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
		s.unsubscribeAll(ss)
		close(ss.done)
	}()
	if s.opts.KeepAlive > 0 {
		go keepAlive(ss.conn, ss.conn.Close, s.opts.KeepAlive, s.log, nil)
	}
	return ss, nil
}

// chainMiddleware sets the receiving and sending chains of ss, which
// stay nil (and cost nothing) when the server has no middleware.
func (ss *ServerSession) chainMiddleware() {
	opts := &ss.server.opts
	if len(opts.ReceivingMiddleware) > 0 {
		ss.recv = chain(ss.dispatch, opts.ReceivingMiddleware)
	}
	if len(opts.SendingMiddleware) > 0 {
		ss.sendH = chain(ss.sendRaw, opts.SendingMiddleware)
	}
}

// receive passes an inbound message through the receiving chain.
func (ss *ServerSession) receive(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if ss.recv == nil {
		return ss.dispatch(ctx, method, params)
	}
	return ss.recv(ctx, method, params)
}

// send passes an outbound message through the sending chain.
func (ss *ServerSession) send(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if ss.sendH == nil {
		return ss.sendRaw(ctx, method, params)
	}
	return ss.sendH(ctx, method, params)
}

// sessionHandler is a ServerSession as the jsonrpc.Handler of its
// connection: a conversion, where the method value ss.handle would be an
// allocation per session.
type sessionHandler ServerSession

func (h *sessionHandler) Handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	return (*ServerSession)(h).handle(ctx, req)
}

// DefaultMaxQueuedRequests is the ServerOptions.MaxQueuedRequests of a
// server that sets none: with the default 64 handler slots, a session
// holds at most 320 requests (about 8 MiB of waiting POSTs over HTTP).
const DefaultMaxQueuedRequests = 256

// maxQueued is MaxQueuedRequests with its default.
func (o *ServerOptions) maxQueued() int {
	if o.MaxQueuedRequests <= 0 {
		return DefaultMaxQueuedRequests
	}
	return o.MaxQueuedRequests
}

// connOptions are the options of the connection of ss.
func (s *Server) connOptions(ss *ServerSession) jsonrpc.ConnOptions {
	return jsonrpc.ConnOptions{
		Handler:        (*sessionHandler)(ss),
		Logger:         s.log,
		MaxConcurrency: s.opts.MaxConcurrency,
		MaxQueued:      s.opts.maxQueued(),
		Inline:         serverInline,
		Timeout:        s.opts.RequestTimeout,
		OnCancel:       ss.onCancel,
	}
}

// onCancel is the jsonrpc.ConnOptions.OnCancel of the session's
// connection (see sendCancel).
func (ss *ServerSession) onCancel(id jsonrpc.ID, cause error) {
	sendCancel(func() *jsonrpc.Conn { return ss.conn }, neverSkip, ss.server.opts.CancelTimeout)(id, cause)
}

func neverSkip(jsonrpc.ID) bool { return false }

// Run serves one session over t until the client disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t Transport) error {
	ss, err := s.Connect(ctx, t)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		ss.Close()
		ss.Wait()
		return ctx.Err()
	case <-ss.done:
		return ss.Wait()
	}
}

// keepAlive pings the peer of conn every so often, and ends the session
// with closeFn when a ping fails (MCP 2025-11-25
// basic/utilities/ping#behavior-requirements: a sender whose ping gets no
// answer in time may take the connection for stale and end it).
func keepAlive(conn *jsonrpc.Conn, closeFn func() error, every time.Duration, log *slog.Logger, pings func() bool) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-conn.Done():
			return
		case <-t.C:
			if pings != nil && !pings() {
				continue // another process pings this client (see ConnectPush)
			}
			ctx, cancel := context.WithTimeout(context.Background(), every)
			err := conn.Call(ctx, MethodPing, nil, nil)
			cancel()
			if err != nil && !errors.Is(err, jsonrpc.ErrClosed) {
				log.Warn("mcp: keep-alive ping failed; closing the session", "error", err)
				closeFn()
				return
			}
		}
	}
}

// session states
const (
	stateNew          = iota // nothing received
	stateInitializing        // initialize answered, initialized not yet received
	stateOperational         // notifications/initialized received
)

// ServerSession is the server's side of one client connection.
type ServerSession struct {
	server *Server
	conn   *jsonrpc.Conn
	done   chan struct{} // closed when the session has ended; nil for push sessions
	ready  chan struct{} // closed once conn is set; nil when set from the start
	recv   MethodHandler // the receiving chain; nil without middleware (see receive)
	sendH  MethodHandler // the sending chain; nil without middleware (see send)

	// phase is phaseNew until the first request decides the session's
	// era: phaseLegacy once initialize is answered (state has left
	// stateNew: version is set for good), phaseModern for a connection
	// whose first request was modern; phaseStateless marks the server's
	// stateless modern session, which has no conn.
	phase atomic.Uint32

	mu         sync.Mutex
	state      int32                    // int32, beside mu: the session fits its size class (TestHTTPSessionSize)
	initParams *InitializeRequestParams // &initMem once initialized
	initMem    InitializeRequestParams  // kept in the session: one allocation fewer
	version    string
	logLevel   LoggingLevel
	subs       map[string]struct{} // resource subscriptions; guarded by server.subMu
}

// ID-less helpers ---------------------------------------------------------

func (ss *ServerSession) isOperational() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.state == stateOperational
}

// InitializeParams returns what the client sent with initialize, or nil
// before initialization and on the 2026-07-28 leg, which has no
// initialize: handlers that serve both eras read the client's
// capabilities with ClientCapabilitiesFromContext or CanAsk instead.
func (ss *ServerSession) InitializeParams() *InitializeRequestParams {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.initParams
}

// ProtocolVersion returns the negotiated protocol version, or "" before
// initialization. A 2026-07-28 request negotiates nothing and belongs to
// no initialized session: a handler learns its version from the request,
// RequestMetaFromContext(ctx).ProtocolVersion (see EraFromContext).
func (ss *ServerSession) ProtocolVersion() string {
	if ss.phase.Load() == phaseLegacy { // version is set for good
		return ss.version
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.version
}

// ID returns the session's identifier at the transport, such as the
// Mcp-Session-Id of a Streamable HTTP session, or "" when the transport
// has none (stdio, stateless HTTP). It is safe to call at any time,
// from any goroutine.
func (ss *ServerSession) ID() string {
	if ss.stateless() {
		return ""
	}
	if ss.ready != nil {
		select {
		case <-ss.ready: // conn is set
		default:
			return "" // still connecting: no transport yet
		}
	}
	if s, ok := ss.conn.Stream().(interface{ SessionID() string }); ok {
		return s.SessionID()
	}
	return ""
}

// Close ends the session. It may be called more than once, from any
// goroutine.
func (ss *ServerSession) Close() error {
	if ss.stateless() {
		return nil // nothing to close: each request is its own
	}
	err := ss.conn.Close()
	if ss.done == nil { // made by ConnectPush: no goroutine waits for the end
		ss.ended()
	}
	return err
}

// Wait blocks until the session has ended and returns why: nil when the
// client disconnected cleanly.
func (ss *ServerSession) Wait() error {
	if ss.stateless() {
		return nil
	}
	return ss.conn.Wait()
}

// Ping sends a ping to the client and waits for its answer.
func (ss *ServerSession) Ping(ctx context.Context) error {
	return ss.Call(ctx, MethodPing, nil, nil)
}

// NotifyProgress reports progress on the request whose handler owns ctx.
// Pass the handler's context, so that the notification travels with the
// request on transports that route by request.
func (ss *ServerSession) NotifyProgress(ctx context.Context, p *ProgressNotificationParams) error {
	if !p.ProgressToken.IsValid() {
		return errors.New("mcp: progress notification without a progress token")
	}
	return ss.Notify(ctx, NotificationProgress, p)
}

// Call sends a request of any method to the client and decodes its result
// into result (nil discards it; a *json.RawMessage receives it as is).
// Typed methods such as ListRoots are easier to use. The request passes
// through ServerOptions.SendingMiddleware.
func (ss *ServerSession) Call(ctx context.Context, method string, params, result any) error {
	raw, err := marshalParamsRaw(params)
	if err != nil {
		return fmt.Errorf("mcp: call %s: %w", method, err)
	}
	ctx = withServerSession(ctx, ss)
	res, err := ss.send(ctx, method, raw)
	if err != nil {
		return err
	}
	return decodeResult(method, res, result)
}

// Notify sends a notification of any method to the client. It passes
// through ServerOptions.SendingMiddleware.
func (ss *ServerSession) Notify(ctx context.Context, method string, params any) error {
	raw, err := marshalParamsRaw(params)
	if err != nil {
		return fmt.Errorf("mcp: notify %s: %w", method, err)
	}
	_, err = ss.send(withServerSession(ctx, ss), method, raw)
	return err
}

// sendRaw is the innermost sending handler: it writes the message.
func (ss *ServerSession) sendRaw(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if m := modernFromContext(ctx); m != nil {
		return m.send(ctx, method, params)
	}
	if ss.stateless() {
		return nil, errNoModernRequest
	}
	if isNotificationMethod(method) {
		return nil, ss.conn.Notify(ctx, method, params)
	}
	var res json.RawMessage
	if err := ss.conn.Call(ctx, method, params, &res); err != nil {
		return nil, err
	}
	return res, nil
}

type notificationKey struct{}

// handle is the session's jsonrpc.Handler: the lifecycle checks, then the
// receiving middleware around dispatch.
func (ss *ServerSession) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if ss.ready != nil {
		<-ss.ready
	}
	if ss.server.opts.StrictMeta {
		if err := checkMeta(req.Params); err != nil {
			return nil, err
		}
	}
	if p := ss.phase.Load(); p >= phaseModern || (p == phaseNew && ss.startsModern(req)) {
		return ss.handleModernConn(ctx, req)
	}
	if req.IsNotification() {
		ctx = &sessionContext{Context: ctx, ss: ss, notification: true}
		if _, err := ss.receive(ctx, req.Method, req.Params); err != nil {
			ss.server.log.Debug("mcp: notification handling failed", "method", req.Method, "error", err)
		}
		return nil, nil
	}
	ctx = &sessionContext{Context: ctx, ss: ss}
	if ss.phase.Load() != phaseLegacy && !serverMethodInfos[req.Method].flags.has(methodBeforeInit) {
		ss.mu.Lock()
		state := ss.state
		ss.mu.Unlock()
		if state == stateNew {
			return nil, errNotInitialized
		}
	}
	res, err := ss.receive(ctx, req.Method, req.Params)
	if err != nil {
		var ue *URLElicitationRequiredError // declared here: its address escapes
		if errors.As(err, &ue) {
			return nil, ue.rpcError()
		}
	}
	return res, err
}

// sessionContext is the context of an inbound message's handling: ctx
// with the session (ServerSessionFromContext) and whether the message is a
// notification (notificationKey). One allocation where two
// context.WithValue would be two.
type sessionContext struct {
	context.Context
	ss           *ServerSession
	notification bool
}

func (c *sessionContext) Value(key any) any {
	switch key.(type) {
	case serverSessionKey:
		return c.ss
	case notificationKey:
		return c.notification
	case modernKey:
		// A session's request is never a modern one; answering here spares
		// the lookup through the request's context, which would make
		// jsonrpc build its cancelable context (two allocations per call).
		return nil
	}
	return c.Context.Value(key)
}

// dispatch is the innermost receiving handler.
func (ss *ServerSession) dispatch(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if ServerSessionFromContext(ctx) != ss { // a middleware replaced the context
		ctx = withServerSession(ctx, ss)
	}
	notif, known := ctx.Value(notificationKey{}).(bool)
	if !known { // a middleware replaced the context
		notif = isNotificationMethod(method)
	}
	info, ok := serverMethodInfos[method]
	if !ok && modernFromContext(ctx) != nil {
		info, ok = modernMethodInfos[method]
	}
	if !ok || info.handler == nil || info.flags.has(methodNotification) != notif {
		if notif {
			ss.server.log.Debug("mcp: unknown notification ignored", "method", method)
			return nil, nil
		}
		return nil, errMethodNotFound(method)
	}
	return info.handler(ss, ctx, method, params)
}

// serverMethodInfos is the server's method table: every request and
// notification a client may send (the schema's ClientRequest and
// ClientNotification unions), with its handler and flags.
var serverMethodInfos = map[string]methodInfo[*ServerSession]{
	MethodInitialize:             request(methodInline|methodBeforeInit, (*ServerSession).initialize),
	MethodPing:                   request(methodInline|methodBeforeInit, answerPing[*ServerSession]),
	MethodToolsList:              request(0, (*ServerSession).listTools),
	MethodToolsCall:              request(0, (*ServerSession).callTool),
	MethodLoggingSetLevel:        request(0, (*ServerSession).setLevel),
	MethodResourcesList:          request(0, (*ServerSession).listResources),
	MethodResourcesTemplatesList: request(0, (*ServerSession).listResourceTemplates),
	MethodResourcesRead:          request(0, (*ServerSession).readResource),
	MethodResourcesSubscribe:     request(0, (*ServerSession).subscribe),
	MethodResourcesUnsubscribe:   request(0, (*ServerSession).unsubscribe),
	MethodPromptsList:            request(0, (*ServerSession).listPrompts),
	MethodPromptsGet:             request(0, (*ServerSession).getPrompt),
	MethodCompletionComplete:     request(0, (*ServerSession).complete),
	// The tasks/* requests are answered by Tasks.Middleware, when the
	// server has one.
	MethodTasksGet:    request[*ServerSession](0, nil),
	MethodTasksResult: request[*ServerSession](0, nil),
	MethodTasksList:   request[*ServerSession](0, nil),
	MethodTasksCancel: request[*ServerSession](0, nil),

	NotificationInitialized:      notification((*ServerSession).initialized),
	NotificationCancelled:        notification((*ServerSession).cancelled),
	NotificationProgress:         notification((*ServerSession).progressed),
	NotificationRootsListChanged: notification((*ServerSession).rootsListChanged),
	NotificationTasksStatus:      notification[*ServerSession](nil),
}

// serverInline is the jsonrpc.ConnOptions.Inline of a server session.
func serverInline(method string) bool {
	return serverMethodInfos[method].flags.has(methodInline)
}

// initialize answers initialize: the negotiated version (MCP 2025-11-25
// basic/lifecycle#version-negotiation), the server's capabilities and
// information (basic/lifecycle#initialization). It is answered once per
// session; a second one is refused.
func (ss *ServerSession) initialize(_ context.Context, _ string, params json.RawMessage) (any, error) {
	var p InitializeRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	s := ss.server
	version := negotiate(p.ProtocolVersion, s.opts.ProtocolVersions)
	ss.mu.Lock()
	if ss.state != stateNew {
		ss.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: the session is already initialized")
	}
	ss.state = stateInitializing
	ss.initMem = p
	ss.initParams = &ss.initMem
	ss.version = version
	ss.phase.Store(phaseLegacy)
	ss.mu.Unlock()
	if version == ProtocolVersion20250326 {
		ss.conn.SetBatchEnabled(true)
	}
	impl := s.impl
	return &InitializeResult{
		ProtocolVersion: version,
		Capabilities:    *s.capabilities(),
		ServerInfo:      impl,
		Instructions:    s.opts.Instructions,
	}, nil
}

// initialized handles notifications/initialized: the session becomes
// operational (MCP 2025-11-25 basic/lifecycle#initialization: the client
// sends it once initialize has succeeded; until then the server sends
// no list_changed notification, see notifyAll).
func (ss *ServerSession) initialized(ctx context.Context, _ json.RawMessage) {
	s := ss.server
	ss.mu.Lock()
	if ss.state == stateNew {
		ss.mu.Unlock()
		s.log.Warn("mcp: notifications/initialized before initialize; ignored")
		return
	}
	ss.state = stateOperational
	ss.mu.Unlock()
	if h := s.opts.InitializedHandler; h != nil {
		go h(ctx, ss)
	}
}

// cancelled handles notifications/cancelled: the named request's context
// ends. MCP 2025-11-25 basic/utilities/cancellation#error-handling: a
// malformed notification, or one naming an unknown or finished request,
// is ignored.
func (ss *ServerSession) cancelled(_ context.Context, params json.RawMessage) {
	var p CancelledNotificationParams
	if err := strictjson.Unmarshal(params, &p); err != nil || !p.RequestID.IsValid() {
		ss.server.log.Debug("mcp: malformed cancellation ignored", "params", string(params))
		return
	}
	ss.conn.CancelInbound(p.RequestID)
}

// progressed handles notifications/progress with
// ServerOptions.ProgressNotificationHandler (MCP 2025-11-25
// basic/utilities/progress#progress-flow).
func (ss *ServerSession) progressed(ctx context.Context, params json.RawMessage) {
	var p ProgressNotificationParams
	if err := strictjson.Unmarshal(params, &p); err != nil {
		return
	}
	if h := ss.server.opts.ProgressNotificationHandler; h != nil {
		h(ctx, ss, &p)
	}
}

// rootsListChanged handles notifications/roots/list_changed with
// ServerOptions.RootsListChangedHandler.
func (ss *ServerSession) rootsListChanged(ctx context.Context, _ json.RawMessage) {
	if h := ss.server.opts.RootsListChangedHandler; h != nil {
		go h(ctx, ss)
	}
}

func (ss *ServerSession) listTools(ctx context.Context, method string, params json.RawMessage) (any, error) {
	s := ss.server
	var p PaginatedRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	if len(s.tools) == 0 && (s.opts.Capabilities == nil || s.opts.Capabilities.Tools == nil) {
		s.mu.RUnlock()
		// MCP 2025-11-25 basic/lifecycle#operation: only negotiated
		// capabilities are used; a server without tools has none.
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s (the server has no tools)", method)
	}
	all := make([]Tool, 0, len(s.toolList))
	for _, n := range s.toolList {
		all = append(all, *s.tools[n].tool)
	}
	s.mu.RUnlock()
	if modernFromContext(ctx) != nil {
		// Deterministic, whatever order the tools were added in, so that
		// replicas agree and clients can cache (changelog, minor change 3).
		slices.SortFunc(all, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	}
	items, next, err := page("tools", all, p.Cursor, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	return &ListToolsResult{Tools: items, NextCursor: next}, nil
}

func (ss *ServerSession) setLevel(_ context.Context, method string, params json.RawMessage) (any, error) {
	caps := ss.server.capabilities()
	// MCP 2025-11-25 server/utilities/logging#setting-log-level: the level
	// is the least severe of the messages Log sends from now on, for a
	// server that declared logging (server/utilities/logging#capabilities).
	if caps.Logging == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s (the server has no logging capability)", method)
	}
	var p SetLevelRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	ss.mu.Lock()
	ss.logLevel = p.Level
	ss.mu.Unlock()
	return emptyResult, nil
}
