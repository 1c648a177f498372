package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/jsonschema"
)

// ClientOptions configure a Client. The zero value is usable.
type ClientOptions struct {
	// Logger receives the client's diagnostics. Nil discards them.
	Logger *slog.Logger
	// ProtocolVersion is the version asked for in initialize; empty means
	// the first legacy version of ProtocolVersions.
	ProtocolVersion string
	// ProtocolVersions are the versions the client speaks, preferred
	// first: the legacy ones it accepts from initialize and the modern
	// ones (revision 2026-07-28 and later) it puts in each request's
	// _meta. Nil means SupportedProtocolVersions and
	// ModernProtocolVersions; a list without a modern version makes the
	// client legacy-only.
	ProtocolVersions []string
	// EraPolicy says how Connect finds out whether the server is modern or
	// legacy; the zero value probes over Streamable HTTP only (see
	// EraPolicyDefault).
	EraPolicy EraPolicy
	// PriorDiscover is a cached verdict: the DiscoverResult of an earlier
	// session with the same server (ClientSession.DiscoverResult). When it
	// lists a modern version the client speaks, Connect sends nothing and
	// the session is modern at once; unless EraPolicy is EraPolicyModern,
	// a result listing none makes Connect open with initialize. For the
	// cached verdict "legacy", set EraPolicyLegacy.
	PriorDiscover *DiscoverResult
	// ProbeTimeout bounds the wait for the answer to the era probe on a
	// transport other than Streamable HTTP (no answer means legacy); zero
	// means DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// MaxInputRounds bounds the retries of one request that a modern
	// server answers with InputRequiredResult (multi round-trip requests,
	// basic/patterns/mrtr): after that many rounds the call fails with
	// ErrTooManyInputRounds. Zero means DefaultMaxInputRounds.
	MaxInputRounds int
	// MaxInputRequests bounds the input requests of one
	// InputRequiredResult (or of one input_required state of a task of the
	// tasks extension) that the client answers: each runs one of the
	// client's handlers, which may ask the user, so a server that asks for
	// thousands at once gets ErrTooManyInputRequests instead. Zero means
	// DefaultMaxInputRequests.
	MaxInputRequests int
	// ResultCacheEntries bounds the results a modern session keeps for the
	// time their ttlMs allows (server/discover, tools/list, prompts/list,
	// resources/list, resources/templates/list, resources/read; see
	// server/utilities/caching): a repeated request within that time is
	// answered from the cache, without a round trip, and a list_changed or
	// updated notification drops what it makes stale. The cache belongs to
	// the session (one authorization context), so results of either
	// cacheScope are kept. Zero means DefaultResultCacheEntries;
	// negative turns the cache off.
	ResultCacheEntries int
	// ResultCacheBytes bounds the bytes that cache holds, results and the
	// params they are kept under; a result that with its params is over a
	// quarter of it is not kept. Zero means DefaultResultCacheBytes.
	ResultCacheBytes int
	// TasksExtension declares the tasks extension
	// (io.modelcontextprotocol/tasks) in every modern request's
	// capabilities. A modern server may then answer a request with a task
	// instead of its result; the call that made the request follows the
	// task to its end (tasks/get every pollIntervalMs, the server's
	// inputRequests answered with tasks/update, tasks/cancel when the
	// caller's context ends) and returns the result as if it had come at
	// once. Legacy sessions run tasks with CallToolAsTask and CallToolTask.
	TasksExtension bool
	// TaskPollInterval is how often a task is polled when the server
	// suggests no interval; zero means DefaultTaskPollInterval. A
	// server's suggestion is kept within 50ms and one minute.
	TaskPollInterval time.Duration
	// Capabilities, if set, are advertised in addition to those the
	// handlers below imply.
	Capabilities *ClientCapabilities
	// KeepAlive, if positive, makes a legacy session ping the server at
	// this interval and close when a ping fails. A modern session has no
	// connection state to keep (revision 2026-07-28 removed ping) and is
	// not pinged.
	KeepAlive time.Duration
	// RequestTimeout bounds requests whose context has no deadline; zero
	// means none.
	RequestTimeout time.Duration
	// MaxConcurrency bounds the server requests handled at once; zero
	// means 64.
	MaxConcurrency int
	// CancelTimeout bounds the sending of notifications/cancelled when a
	// request's context ends before its response came; the request's
	// caller waits for it. Zero means DefaultCancelTimeout.
	CancelTimeout time.Duration
	// StrictMeta refuses server messages whose params carry an invalid
	// _meta key, with -32602 naming the key.
	StrictMeta bool
	// SchemaLimits bound every schema the server sends, compiled by the
	// client: the input and output schemas of tools/list, the tools of a
	// sampling request and the requestedSchema of an elicitation. A schema
	// over a limit is refused before it is compiled, with a
	// *jsonschema.LimitError (errors.Is jsonschema.ErrLimit): in ListTools
	// inside that tool's *ToolSchemaError, the other tools staying usable;
	// in a server request, as -32602 naming the limit. The zero value
	// gives jsonschema's defaults.
	SchemaLimits jsonschema.Limits

	// CreateMessageHandler answers sampling/createMessage; setting it
	// advertises the sampling capability.
	CreateMessageHandler func(context.Context, *ClientSession, *CreateMessageRequestParams) (*CreateMessageResult, error)
	// ElicitationHandler answers elicitation/create; setting it advertises
	// the elicitation capability in form mode, and in URL mode too when
	// ElicitationURLMode is set. A form's requested schema is compiled
	// before the handler runs: one in an unsupported dialect is refused
	// with -32602 saying so. The defaults the schema gives are filled into
	// accepted content that lacks them.
	ElicitationHandler func(context.Context, *ClientSession, ElicitRequestParams) (*ElicitResult, error)
	// ElicitationURLMode declares support for URL-mode elicitation.
	ElicitationURLMode bool
	// ProgressNotificationHandler receives progress on the client's
	// requests. It runs on the read loop: do not block.
	ProgressNotificationHandler func(context.Context, *ClientSession, *ProgressNotificationParams)
	// LoggingMessageHandler receives the server's log messages. It runs on
	// the read loop: do not block.
	LoggingMessageHandler func(context.Context, *ClientSession, *LoggingMessageNotificationParams)
	// ToolListChangedHandler is called, on its own goroutine, when the
	// server's tool list changes.
	ToolListChangedHandler func(context.Context, *ClientSession)
	// ResourceListChangedHandler is called, on its own goroutine, when the
	// server's resource list changes.
	ResourceListChangedHandler func(context.Context, *ClientSession)
	// PromptListChangedHandler is called, on its own goroutine, when the
	// server's prompt list changes.
	PromptListChangedHandler func(context.Context, *ClientSession)
	// ResourceUpdatedHandler receives notifications/resources/updated for
	// the resources the session subscribed to. It runs on the read loop:
	// do not block.
	ResourceUpdatedHandler func(context.Context, *ClientSession, *ResourceUpdatedNotificationParams)
	// ElicitationCompleteHandler is told that a URL-mode elicitation
	// finished (notifications/elicitation/complete). It is called only for
	// an elicitation this session received (as a request, or in the data
	// of a CodeURLElicitationRequired error) and only once per id: unknown
	// and repeated ids are ignored, as the protocol requires. It runs on the
	// read loop: do not block.
	ElicitationCompleteHandler func(context.Context, *ClientSession, *ElicitationCompleteNotificationParams)
	// TaskStatusHandler receives notifications/tasks/status about tasks the
	// client created on the server (from a modern server: the tasks
	// extension's notifications/tasks, in the same Task shape). The notifications are optional: keep
	// polling with GetTask or wait with TaskResult. It runs on the read
	// loop: do not block.
	TaskStatusHandler func(context.Context, *ClientSession, *TaskStatusNotificationParams)

	// Roots are the client's initial roots, answered to roots/list. The
	// client declares roots (with listChanged) unless DisableRoots is set;
	// change the roots with Client.AddRoots and Client.RemoveRoots.
	Roots []*Root
	// DisableRoots stops the client from declaring the roots capability;
	// roots/list is then answered with -32601.
	DisableRoots bool

	// ReceivingMiddleware wraps the handling of every request and
	// notification the session receives from the server. The first in the
	// list is outermost. The handler's context carries the session
	// (ClientSessionFromContext).
	ReceivingMiddleware []Middleware
	// SendingMiddleware wraps every request and notification the session
	// sends, initialize included. Params are the marshalled JSON; the
	// result of a request is a json.RawMessage. The first in the list is
	// outermost; the context carries the session.
	SendingMiddleware []Middleware
}

// Client is an MCP client: it connects to servers, one session each. A
// Client is safe for concurrent use.
type Client struct {
	impl Implementation
	opts ClientOptions
	log  *slog.Logger
	// versionsGiven records that ClientOptions.ProtocolVersions was set:
	// then only the modern versions it lists are spoken.
	versionsGiven bool
	// legacyVersions are the versions of ProtocolVersions that initialize
	// may negotiate.
	legacyVersions []string

	mu       sync.Mutex
	roots    []Root // in insertion order, unique by URI
	sessions map[*ClientSession]struct{}
}

// NewClient returns a client that introduces itself as impl.
func NewClient(impl *Implementation, opts *ClientOptions) *Client {
	c := &Client{}
	if impl != nil {
		c.impl = *impl
	}
	if opts != nil {
		c.opts = *opts
	}
	c.versionsGiven = len(c.opts.ProtocolVersions) > 0
	if !c.versionsGiven {
		c.opts.ProtocolVersions = SupportedProtocolVersions()
	}
	for _, v := range c.opts.ProtocolVersions {
		if !IsModernProtocolVersion(v) {
			c.legacyVersions = append(c.legacyVersions, v)
		}
	}
	if c.opts.ProtocolVersion == "" && len(c.legacyVersions) > 0 {
		c.opts.ProtocolVersion = c.legacyVersions[0]
	}
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.sessions = make(map[*ClientSession]struct{})
	for _, r := range c.opts.Roots {
		if r == nil {
			continue
		}
		if err := checkRoot(r); err != nil {
			c.log.Warn("mcp: invalid root ignored", "uri", r.URI, "error", err)
			continue
		}
		c.roots = upsertRoot(c.roots, *r)
	}
	return c
}

// capabilities returns what the client declares in initialize: those of
// ClientOptions.Capabilities, and those its handlers imply (MCP 2025-11-25
// basic/lifecycle#capability-negotiation). An elicitation handler declares
// form mode, and URL mode only when asked (client/elicitation#capabilities).
func (c *Client) capabilities() *ClientCapabilities {
	caps := &ClientCapabilities{}
	if c.opts.Capabilities != nil {
		cc := *c.opts.Capabilities
		caps = &cc
	}
	if c.opts.CreateMessageHandler != nil && caps.Sampling == nil {
		caps.Sampling = &SamplingCapability{}
	}
	if c.opts.ElicitationHandler != nil && caps.Elicitation == nil {
		caps.Elicitation = &ElicitationCapability{Form: &Capability{}}
		if c.opts.ElicitationURLMode {
			caps.Elicitation.URL = &Capability{}
		}
	}
	if !c.opts.DisableRoots && caps.Roots == nil {
		caps.Roots = &RootsCapability{ListChanged: true}
	}
	return caps
}

// Connect connects to a server over t and opens the session in the era the
// server speaks (ClientOptions.EraPolicy). A modern session (revision
// 2026-07-28) needs no handshake: Connect at most sends server/discover
// (none with ClientOptions.PriorDiscover), and every request then carries
// the protocol version, the client's capabilities and its Implementation
// in _meta. A legacy session is initialized: Connect sends initialize,
// checks the server's protocol version, and sends
// notifications/initialized. If the server answers with a version the
// client does not support, Connect disconnects and returns an
// *UnsupportedVersionError. ClientSession.Era tells which era it is.
func (c *Client) Connect(ctx context.Context, t Transport) (*ClientSession, error) {
	stream, err := t.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcp: connect: %w", err)
	}
	cs := &ClientSession{client: c, transport: t, stream: stream, ready: make(chan struct{}), urlElicitations: make(map[string]struct{})}
	cs.recv = chain(cs.dispatch, c.opts.ReceivingMiddleware)
	cs.sendH = chain(cs.sendRaw, c.opts.SendingMiddleware)
	var initID jsonrpc.ID
	cs.conn = jsonrpc.NewConn(stream, jsonrpc.ConnOptions{
		Handler:        jsonrpc.HandlerFunc(cs.handle),
		Logger:         c.log,
		MaxConcurrency: c.opts.MaxConcurrency,
		Inline:         clientInline,
		Timeout:        c.opts.RequestTimeout,
		// The client must never cancel initialize; over HTTP a modern
		// request is cancelled by closing its stream, with no message.
		OnCancel: sendCancel(func() *jsonrpc.Conn { return cs.conn }, func(id jsonrpc.ID) bool { return id == initID || cs.modernHTTP() }, c.opts.CancelTimeout),
	})
	initID = cs.conn.NewID()
	cs.initID = initID
	close(cs.ready) // the read loop may already have a message for handle
	modern, err := cs.negotiateEra(ctx)
	if err != nil {
		cs.conn.Close()
		return nil, err
	}
	if modern {
		c.track(cs)
		return cs, nil
	}
	if len(c.legacyVersions) == 0 {
		cs.conn.Close()
		return nil, fmt.Errorf("%w: the server is legacy and ClientOptions.ProtocolVersions holds no legacy version", ErrNoCommonVersion)
	}
	params := &InitializeRequestParams{
		ProtocolVersion: c.opts.ProtocolVersion,
		Capabilities:    *c.capabilities(),
		ClientInfo:      c.impl,
	}
	var res InitializeResult
	if err := cs.send(ctx, MethodInitialize, params, &res); err != nil {
		cs.conn.Close()
		return nil, fmt.Errorf("mcp: initialize: %w", err)
	}
	if !slices.Contains(c.legacyVersions, res.ProtocolVersion) {
		cs.conn.Close()
		return nil, &UnsupportedVersionError{Requested: c.opts.ProtocolVersion, Offered: res.ProtocolVersion, Supported: c.legacyVersions}
	}
	cs.mu.Lock()
	cs.initResult = &res
	cs.mu.Unlock()
	if res.ProtocolVersion == ProtocolVersion20250326 {
		cs.conn.SetBatchEnabled(true)
	}
	if err := cs.Notify(ctx, NotificationInitialized, nil); err != nil {
		cs.conn.Close()
		return nil, fmt.Errorf("mcp: initialized: %w", err)
	}
	c.track(cs)
	if c.opts.KeepAlive > 0 {
		go keepAlive(cs.conn, cs.conn.Close, c.opts.KeepAlive, c.log, nil)
	}
	return cs, nil
}

// track adds a connected session to the client's, until it ends.
func (c *Client) track(cs *ClientSession) {
	c.mu.Lock()
	c.sessions[cs] = struct{}{}
	c.mu.Unlock()
	go func() {
		<-cs.conn.Done()
		c.mu.Lock()
		delete(c.sessions, cs)
		c.mu.Unlock()
	}()
}

// ClientSession is the client's side of one server connection.
type ClientSession struct {
	client *Client
	conn   *jsonrpc.Conn
	stream jsonrpc.Stream // the transport's, for its era hooks
	// transport is what Connect was given: EraPolicyProbeSibling starts a
	// second process of a CommandTransport's command.
	transport Transport
	ready     chan struct{} // closed once conn and initID are set
	initID    jsonrpc.ID    // the id of initialize, which is never cancelled
	recv      MethodHandler // the receiving chain
	sendH     MethodHandler // the sending chain

	mu              sync.Mutex
	initResult      *InitializeResult
	outputSchemas   map[string]compiledTool // by tool name, from ListTools
	taskSupport     map[string]TaskSupport  // by tool name, from ListTools
	urlElicitations map[string]struct{}     // URL elicitations not yet completed
	modernVersion   string                  // "" for a legacy session
	discover        *DiscoverResult         // a modern server's, or PriorDiscover
	metaCache       map[string]json.RawMessage
	logLevel        LoggingLevel                           // a modern session's, for each request's _meta
	headerParams    map[string][]paramHeader               // by tool name: x-mcp-header annotations
	listens         map[jsonrpc.ID]chan SubscriptionFilter // Listen calls awaiting their acknowledgement
	cache           *resultCache                           // a modern session's cacheable results; nil when off
	taskWatch       map[string]chan extTaskState           // by task id: awaitExtTask calls, for pushed task states
	taskEarly       []extTaskState                         // pushed states of tasks not awaited yet, bounded (maxEarlyTaskStates)
}

// maxURLElicitations bounds the URL elicitations a session remembers while
// it waits for their completion notifications.
const maxURLElicitations = 1024

// call sends a request through the session and decodes its result. A
// CodeURLElicitationRequired error (MCP 2025-11-25
// client/elicitation#url-elicitation-required-error) comes back as a
// *URLElicitationRequiredError whose elicitations the session remembers,
// so that their completion notifications reach
// ClientOptions.ElicitationCompleteHandler.
func (cs *ClientSession) call(ctx context.Context, method string, params, result any) error {
	err := cs.send(ctx, method, params, result)
	if err == nil {
		return nil
	}
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != CodeURLElicitationRequired {
		return err
	}
	var data struct {
		Elicitations *[]ElicitRequestURLParams `json:"elicitations"`
	}
	if len(je.Data) == 0 || strictjson.Unmarshal(je.Data, &data) != nil || data.Elicitations == nil {
		return err
	}
	for i := range *data.Elicitations {
		cs.rememberURLElicitation((*data.Elicitations)[i].ElicitationID)
	}
	return &URLElicitationRequiredError{Message: je.Message, Data: URLElicitationRequiredData{Elicitations: *data.Elicitations}}
}

// send passes a request through the sending chain and decodes its result.
func (cs *ClientSession) send(ctx context.Context, method string, params, result any) error {
	raw, err := marshalParamsRaw(params)
	if err != nil {
		return fmt.Errorf("mcp: call %s: %w", method, err)
	}
	if meta, ok := cs.requestMeta(); ok {
		return cs.sendModern(ctx, method, raw, meta, result)
	}
	res, err := cs.sendH(withClientSession(ctx, cs), method, raw)
	if err != nil {
		return err
	}
	return decodeResult(method, res, result)
}

// sendRaw is the innermost sending handler: it writes the message.
func (cs *ClientSession) sendRaw(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if isNotificationMethod(method) {
		return nil, cs.conn.Notify(ctx, method, params)
	}
	if method == MethodInitialize {
		var res json.RawMessage
		if err := cs.conn.CallID(ctx, cs.initID, method, params, &res); err != nil {
			return nil, err
		}
		return res, nil
	}
	if id, ok := ctx.Value(listenIDKey{}).(jsonrpc.ID); ok && method == MethodSubscriptionsListen {
		var res json.RawMessage
		if err := cs.conn.CallID(ctx, id, method, params, &res); err != nil {
			return nil, err
		}
		return res, nil
	}
	res, err := cs.conn.CallRaw(ctx, method, params)
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (cs *ClientSession) rememberURLElicitation(id string) {
	if id == "" {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if len(cs.urlElicitations) < maxURLElicitations {
		cs.urlElicitations[id] = struct{}{}
	}
}

// completeURLElicitation reports whether id was a pending URL elicitation,
// forgetting it.
func (cs *ClientSession) completeURLElicitation(id string) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	_, ok := cs.urlElicitations[id]
	delete(cs.urlElicitations, id)
	return ok
}

// InitializeResult returns the server's answer to initialize: its
// capabilities, its Implementation, its instructions and the negotiated
// protocol version.
func (cs *ClientSession) InitializeResult() *InitializeResult {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.initResult
}

// ProtocolVersion returns the negotiated protocol version.
func (cs *ClientSession) ProtocolVersion() string {
	if r := cs.InitializeResult(); r != nil {
		return r.ProtocolVersion
	}
	return ""
}

// Close ends the session; for a command transport, it shuts the server
// process down.
func (cs *ClientSession) Close() error { return cs.conn.Close() }

// Wait blocks until the session has ended.
func (cs *ClientSession) Wait() error { return cs.conn.Wait() }

// Ping sends a ping to the server and waits for its answer. Revision
// 2026-07-28 removed ping: a modern session sends server/discover, the
// one request every modern server answers, instead.
func (cs *ClientSession) Ping(ctx context.Context) error {
	if cs.modern() {
		return cs.call(context.WithValue(ctx, noCacheKey{}, true), MethodServerDiscover, nil, nil)
	}
	return cs.call(ctx, MethodPing, nil, nil)
}

// Call sends a request of any method to the server and decodes its result
// into result. A CodeURLElicitationRequired error is returned as a
// *URLElicitationRequiredError.
func (cs *ClientSession) Call(ctx context.Context, method string, params, result any) error {
	return cs.call(ctx, method, params, result)
}

// Notify sends a notification of any method to the server, through
// ClientOptions.SendingMiddleware.
func (cs *ClientSession) Notify(ctx context.Context, method string, params any) error {
	raw, err := marshalParamsRaw(params)
	if err != nil {
		return fmt.Errorf("mcp: notify %s: %w", method, err)
	}
	_, err = cs.sendH(withClientSession(ctx, cs), method, raw)
	return err
}

// NotifyProgress reports progress on the server request whose handler owns
// ctx.
func (cs *ClientSession) NotifyProgress(ctx context.Context, p *ProgressNotificationParams) error {
	if !p.ProgressToken.IsValid() {
		return errors.New("mcp: progress notification without a progress token")
	}
	return cs.Notify(ctx, NotificationProgress, p)
}

// ListTools lists the server's tools, one page at a time.
//
// Each tool's schemas are compiled as they arrive. If some cannot be used
// (invalid in their dialect, an unsupported dialect, not an object),
// ListTools returns the whole page together with an error joining one
// *ToolSchemaError per such tool, so that a caller can still use the others.
// The output schemas of the valid tools are kept, and CallTool checks
// structured results against them. On a modern session over Streamable
// HTTP, a tool whose x-mcp-header annotations are invalid is left out of
// the result (with a warning in the log), as revision 2026-07-28 requires.
func (cs *ClientSession) ListTools(ctx context.Context, p *PaginatedRequestParams) (*ListToolsResult, error) {
	if p == nil {
		p = &PaginatedRequestParams{}
	}
	var res ListToolsResult
	if err := cs.call(ctx, MethodToolsList, p, &res); err != nil {
		return nil, err
	}
	cs.filterHeaderTools(&res)
	var errs []error
	for i := range res.Tools {
		t := &res.Tools[i]
		ct, err := compileTool(t, cs.client.opts.SchemaLimits)
		cs.mu.Lock()
		if cs.outputSchemas == nil {
			cs.outputSchemas = make(map[string]compiledTool)
			cs.taskSupport = make(map[string]TaskSupport)
		}
		if t.Execution != nil {
			cs.taskSupport[t.Name] = t.Execution.TaskSupport
		} else {
			delete(cs.taskSupport, t.Name)
		}
		if err != nil {
			delete(cs.outputSchemas, t.Name)
			errs = append(errs, err)
		} else {
			cs.outputSchemas[t.Name] = ct
		}
		cs.mu.Unlock()
	}
	return &res, errors.Join(errs...)
}

// StructuredContentError reports a tool result whose structured content
// does not match the tool's output schema.
type StructuredContentError struct {
	Tool string
	Err  error
}

func (e *StructuredContentError) Error() string {
	return fmt.Sprintf("mcp: tool %q: structured content does not match the output schema: %v", e.Tool, e.Err)
}

func (e *StructuredContentError) Unwrap() error { return e.Err }

// CallTool calls a tool. If the tool was listed with an output schema, a
// successful result's structured content is checked against it; a mismatch
// (or missing structured content) returns the result with a
// *StructuredContentError. A server that needs the user to complete URL
// elicitations first answers with a *URLElicitationRequiredError (use
// errors.As); the call may be retried once they are done.
//
// CallTool does not run the tool as a task (p.Task must be nil); use
// CallToolAsTask or CallToolTask for that.
func (cs *ClientSession) CallTool(ctx context.Context, p *CallToolRequestParams) (*CallToolResult, error) {
	if p != nil && p.Task != nil {
		return nil, errors.New("mcp: CallTool with task metadata; use CallToolAsTask")
	}
	var res CallToolResult
	if err := cs.call(ctx, MethodToolsCall, p, &res); err != nil {
		return nil, err
	}
	return cs.checkToolResult(p.Name, &res)
}

// checkToolResult checks a result of tool name against its output schema.
func (cs *ClientSession) checkToolResult(name string, res *CallToolResult) (*CallToolResult, error) {
	p := struct{ Name string }{name}
	cs.mu.Lock()
	ct, ok := cs.outputSchemas[p.Name]
	cs.mu.Unlock()
	if ok && ct.output != nil && (res.IsError == nil || !*res.IsError) {
		if len(res.StructuredContent) == 0 {
			return res, &StructuredContentError{Tool: p.Name, Err: errors.New("the result has none")}
		}
		if err := ct.output.ValidateJSON(res.StructuredContent); err != nil {
			return res, &StructuredContentError{Tool: p.Name, Err: err}
		}
	}
	return res, nil
}

func (cs *ClientSession) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	<-cs.ready
	c := cs.client
	if c.opts.StrictMeta {
		if err := checkMeta(req.Params); err != nil {
			return nil, err
		}
	}
	ctx = withClientSession(ctx, cs)
	if req.IsNotification() {
		if _, err := cs.recv(ctx, req.Method, req.Params); err != nil {
			c.log.Debug("mcp: notification handling failed", "method", req.Method, "error", err)
		}
		return nil, nil
	}
	return cs.recv(ctx, req.Method, req.Params)
}

// dispatch is the innermost receiving handler: it answers a server request
// or handles a notification.
func (cs *ClientSession) dispatch(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case NotificationSubscriptionsAcknowledged:
		// Revision 2026-07-28's only new server notification; the table
		// holds the 2025-11-25 ServerRequest and ServerNotification unions.
		cs.subscriptionAcknowledged(ctx, params)
		return nil, nil
	case notificationTasks: // the tasks extension's (client_tasks_ext.go)
		if cs.modern() {
			cs.extTaskNotified(ctx, params)
		}
		return nil, nil
	}
	notif := isNotificationMethod(method)
	info, ok := clientMethodInfos[method]
	if !ok || info.handler == nil || info.flags.has(methodNotification) != notif {
		if notif {
			cs.client.log.Debug("mcp: notification ignored", "method", method)
			return nil, nil
		}
		return nil, errMethodNotFound(method)
	}
	return info.handler(cs, ctx, method, params)
}

// clientMethodInfos is the client's method table: every request and
// notification a server may send (the schema's ServerRequest and
// ServerNotification unions), with its handler and flags.
var clientMethodInfos = map[string]methodInfo[*ClientSession]{
	MethodPing:                  request(methodInline, answerPing[*ClientSession]),
	MethodRootsList:             request(0, (*ClientSession).listRoots),
	MethodSamplingCreateMessage: request(0, (*ClientSession).createMessageIfHandled),
	MethodElicitationCreate:     request(0, (*ClientSession).elicitIfHandled),
	// The tasks/* requests are answered by the client's task middleware,
	// when it has one.
	MethodTasksGet:    request[*ClientSession](0, nil),
	MethodTasksResult: request[*ClientSession](0, nil),
	MethodTasksList:   request[*ClientSession](0, nil),
	MethodTasksCancel: request[*ClientSession](0, nil),

	NotificationCancelled:            notification((*ClientSession).cancelled),
	NotificationProgress:             notification((*ClientSession).progressed),
	NotificationMessage:              notification((*ClientSession).logged),
	NotificationToolsListChanged:     notification((*ClientSession).toolsListChanged),
	NotificationResourcesListChanged: notification((*ClientSession).resourcesListChanged),
	NotificationPromptsListChanged:   notification((*ClientSession).promptsListChanged),
	NotificationResourcesUpdated:     notification((*ClientSession).resourceUpdated),
	NotificationElicitationComplete:  notification((*ClientSession).elicitationCompleted),
	NotificationTasksStatus:          notification((*ClientSession).taskStatus),
}

// clientInline is the jsonrpc.ConnOptions.Inline of a client session.
func clientInline(method string) bool {
	return clientMethodInfos[method].flags.has(methodInline)
}

// listRoots answers roots/list, unless ClientOptions.DisableRoots (MCP
// 2025-11-25 client/roots#listing-roots; without the roots capability the
// request is not one the client serves: -32601, client/roots#error-handling).
func (cs *ClientSession) listRoots(_ context.Context, method string, _ json.RawMessage) (any, error) {
	c := cs.client
	if c.opts.DisableRoots {
		return nil, errMethodNotFound(method)
	}
	return &ListRootsResult{Roots: c.Roots()}, nil
}

// createMessageIfHandled answers sampling/createMessage when the client
// has a ClientOptions.CreateMessageHandler.
func (cs *ClientSession) createMessageIfHandled(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if cs.client.opts.CreateMessageHandler == nil {
		return nil, errMethodNotFound(method)
	}
	return cs.createMessage(ctx, params)
}

// elicitIfHandled answers elicitation/create when the client has a
// ClientOptions.ElicitationHandler.
func (cs *ClientSession) elicitIfHandled(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if cs.client.opts.ElicitationHandler == nil {
		return nil, errMethodNotFound(method)
	}
	return cs.elicit(ctx, params)
}

// cancelled handles notifications/cancelled: the named request's context
// ends. MCP 2025-11-25 basic/utilities/cancellation#error-handling: a
// malformed notification, or one naming an unknown or finished request,
// is ignored.
func (cs *ClientSession) cancelled(_ context.Context, params json.RawMessage) {
	var p CancelledNotificationParams
	if err := strictjson.Unmarshal(params, &p); err != nil || !p.RequestID.IsValid() {
		return
	}
	cs.conn.CancelInbound(p.RequestID)
}

// progressed handles notifications/progress with
// ClientOptions.ProgressNotificationHandler.
func (cs *ClientSession) progressed(ctx context.Context, params json.RawMessage) {
	c := cs.client
	var p ProgressNotificationParams
	if err := strictjson.Unmarshal(params, &p); err == nil && c.opts.ProgressNotificationHandler != nil {
		c.opts.ProgressNotificationHandler(ctx, cs, &p)
	}
}

// logged handles notifications/message with
// ClientOptions.LoggingMessageHandler.
func (cs *ClientSession) logged(ctx context.Context, params json.RawMessage) {
	c := cs.client
	var p LoggingMessageNotificationParams
	if err := strictjson.Unmarshal(params, &p); err == nil && c.opts.LoggingMessageHandler != nil {
		c.opts.LoggingMessageHandler(ctx, cs, &p)
	}
}

// toolsListChanged handles notifications/tools/list_changed with
// ClientOptions.ToolListChangedHandler.
func (cs *ClientSession) toolsListChanged(ctx context.Context, _ json.RawMessage) {
	cs.cache.invalidate(MethodToolsList)
	if h := cs.client.opts.ToolListChangedHandler; h != nil {
		go h(ctx, cs)
	}
}

// resourcesListChanged handles notifications/resources/list_changed with
// ClientOptions.ResourceListChangedHandler.
func (cs *ClientSession) resourcesListChanged(ctx context.Context, _ json.RawMessage) {
	cs.cache.invalidate(MethodResourcesList, MethodResourcesTemplatesList)
	if h := cs.client.opts.ResourceListChangedHandler; h != nil {
		go h(ctx, cs)
	}
}

// promptsListChanged handles notifications/prompts/list_changed with
// ClientOptions.PromptListChangedHandler.
func (cs *ClientSession) promptsListChanged(ctx context.Context, _ json.RawMessage) {
	cs.cache.invalidate(MethodPromptsList)
	if h := cs.client.opts.PromptListChangedHandler; h != nil {
		go h(ctx, cs)
	}
}

// resourceUpdated handles notifications/resources/updated with
// ClientOptions.ResourceUpdatedHandler.
func (cs *ClientSession) resourceUpdated(ctx context.Context, params json.RawMessage) {
	cs.cache.invalidate(MethodResourcesRead)
	c := cs.client
	var p ResourceUpdatedNotificationParams
	if err := parseParams(params, &p); err != nil {
		c.log.Debug("mcp: malformed resource update ignored", "error", err)
		return
	}
	if h := c.opts.ResourceUpdatedHandler; h != nil {
		h(ctx, cs, &p)
	}
}

// elicitationCompleted handles notifications/elicitation/complete: only
// the completion of a URL elicitation the session still waits for reaches
// ClientOptions.ElicitationCompleteHandler (MCP 2025-11-25
// client/elicitation#completion-notifications-for-url-mode-elicitation:
// unknown and already completed ids are ignored).
func (cs *ClientSession) elicitationCompleted(ctx context.Context, params json.RawMessage) {
	c := cs.client
	var p ElicitationCompleteNotificationParams
	if err := parseParams(params, &p); err != nil {
		c.log.Debug("mcp: malformed elicitation completion ignored", "error", err)
		return
	}
	if !cs.completeURLElicitation(p.ElicitationID) {
		c.log.Debug("mcp: completion of an unknown or completed elicitation ignored", "elicitationId", p.ElicitationID)
		return
	}
	if h := c.opts.ElicitationCompleteHandler; h != nil {
		h(ctx, cs, &p)
	}
}

// taskStatus handles notifications/tasks/status with
// ClientOptions.TaskStatusHandler.
func (cs *ClientSession) taskStatus(ctx context.Context, params json.RawMessage) {
	if cs.modern() { // the tasks extension's shape (client_tasks_ext.go)
		cs.extTaskNotified(ctx, params)
		return
	}
	c := cs.client
	var p TaskStatusNotificationParams
	if err := parseParams(params, &p); err != nil {
		c.log.Debug("mcp: malformed task status ignored", "error", err)
		return
	}
	if h := c.opts.TaskStatusHandler; h != nil {
		h(ctx, cs, &p)
	}
}
