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
	// LatestProtocolVersion.
	ProtocolVersion string
	// ProtocolVersions are the versions the client accepts from the
	// server; nil means SupportedProtocolVersions.
	ProtocolVersions []string
	// Capabilities, if set, are advertised in addition to those the
	// handlers below imply.
	Capabilities *ClientCapabilities
	// KeepAlive, if positive, makes the session ping the server at this
	// interval and close when a ping fails.
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
	// client created on the server. The notifications are optional: keep
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
	if len(c.opts.ProtocolVersions) == 0 {
		c.opts.ProtocolVersions = SupportedProtocolVersions()
	}
	if c.opts.ProtocolVersion == "" {
		c.opts.ProtocolVersion = c.opts.ProtocolVersions[0]
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

// Connect connects to a server over t and initializes the session: it
// sends initialize, checks the server's protocol version, and sends
// notifications/initialized. If the server answers with a version the
// client does not support, Connect disconnects and returns an
// *UnsupportedVersionError.
func (c *Client) Connect(ctx context.Context, t Transport) (*ClientSession, error) {
	stream, err := t.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcp: connect: %w", err)
	}
	cs := &ClientSession{client: c, ready: make(chan struct{}), urlElicitations: make(map[string]struct{})}
	cs.recv = chain(cs.dispatch, c.opts.ReceivingMiddleware)
	cs.sendH = chain(cs.sendRaw, c.opts.SendingMiddleware)
	var initID jsonrpc.ID
	cs.conn = jsonrpc.NewConn(stream, jsonrpc.ConnOptions{
		Handler:        jsonrpc.HandlerFunc(cs.handle),
		Logger:         c.log,
		MaxConcurrency: c.opts.MaxConcurrency,
		Inline:         clientInline,
		Timeout:        c.opts.RequestTimeout,
		// The client must never cancel initialize.
		OnCancel: sendCancel(func() *jsonrpc.Conn { return cs.conn }, func(id jsonrpc.ID) bool { return id == initID }, c.opts.CancelTimeout),
	})
	initID = cs.conn.NewID()
	cs.initID = initID
	close(cs.ready) // the read loop may already have a message for handle
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
	if !slices.Contains(c.opts.ProtocolVersions, res.ProtocolVersion) {
		cs.conn.Close()
		return nil, &UnsupportedVersionError{Requested: c.opts.ProtocolVersion, Offered: res.ProtocolVersion, Supported: c.opts.ProtocolVersions}
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
	c.mu.Lock()
	c.sessions[cs] = struct{}{}
	c.mu.Unlock()
	go func() {
		<-cs.conn.Done()
		c.mu.Lock()
		delete(c.sessions, cs)
		c.mu.Unlock()
	}()
	if c.opts.KeepAlive > 0 {
		go keepAlive(cs.conn, cs.conn.Close, c.opts.KeepAlive, c.log)
	}
	return cs, nil
}

// ClientSession is the client's side of one server connection.
type ClientSession struct {
	client *Client
	conn   *jsonrpc.Conn
	ready  chan struct{} // closed once conn and initID are set
	initID jsonrpc.ID    // the id of initialize, which is never cancelled
	recv   MethodHandler // the receiving chain
	sendH  MethodHandler // the sending chain

	mu              sync.Mutex
	initResult      *InitializeResult
	outputSchemas   map[string]compiledTool // by tool name, from ListTools
	taskSupport     map[string]TaskSupport  // by tool name, from ListTools
	urlElicitations map[string]struct{}     // URL elicitations not yet completed
}

// maxURLElicitations bounds the URL elicitations a session remembers while
// it waits for their completion notifications.
const maxURLElicitations = 1024

// call sends a request through the session and decodes its result. A
// CodeURLElicitationRequired error comes back as a
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

// Ping sends a ping to the server and waits for its answer.
func (cs *ClientSession) Ping(ctx context.Context) error {
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
// structured results against them.
func (cs *ClientSession) ListTools(ctx context.Context, p *PaginatedRequestParams) (*ListToolsResult, error) {
	if p == nil {
		p = &PaginatedRequestParams{}
	}
	var res ListToolsResult
	if err := cs.call(ctx, MethodToolsList, p, &res); err != nil {
		return nil, err
	}
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

// listRoots answers roots/list, unless ClientOptions.DisableRoots.
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
// ends (spec: basic/utilities/cancellation).
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
	if h := cs.client.opts.ToolListChangedHandler; h != nil {
		go h(ctx, cs)
	}
}

// resourcesListChanged handles notifications/resources/list_changed with
// ClientOptions.ResourceListChangedHandler.
func (cs *ClientSession) resourcesListChanged(ctx context.Context, _ json.RawMessage) {
	if h := cs.client.opts.ResourceListChangedHandler; h != nil {
		go h(ctx, cs)
	}
}

// promptsListChanged handles notifications/prompts/list_changed with
// ClientOptions.PromptListChangedHandler.
func (cs *ClientSession) promptsListChanged(ctx context.Context, _ json.RawMessage) {
	if h := cs.client.opts.PromptListChangedHandler; h != nil {
		go h(ctx, cs)
	}
}

// resourceUpdated handles notifications/resources/updated with
// ClientOptions.ResourceUpdatedHandler.
func (cs *ClientSession) resourceUpdated(ctx context.Context, params json.RawMessage) {
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
// ClientOptions.ElicitationCompleteHandler.
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

// createMessage answers sampling/createMessage. Tools and toolChoice are
// refused with -32602 unless the client declared sampling.tools; the tool
// loop rules of the conversation are checked before the handler runs.
func (cs *ClientSession) createMessage(ctx context.Context, raw json.RawMessage) (any, error) {
	c := cs.client
	var p CreateMessageRequestParams
	if err := parseParams(raw, &p); err != nil {
		return nil, err
	}
	caps := c.capabilities().Sampling
	if (len(p.Tools) > 0 || p.ToolChoice != nil) && (caps == nil || caps.Tools == nil) {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: tools and toolChoice need the sampling.tools capability, which this client did not declare")
	}
	for i := range p.Tools {
		if _, err := compileTool(&p.Tools[i], c.opts.SchemaLimits); err != nil {
			var tse *ToolSchemaError
			errors.As(err, &tse)
			return nil, schemaError(fmt.Sprintf("tools[%d] (%q) %s", i, p.Tools[i].Name, tse.Field), tse.Err)
		}
	}
	if err := CheckToolLoop(p.Messages); err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %v", err)
	}
	res, err := c.opts.CreateMessageHandler(ctx, cs, &p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, errors.New("mcp: sampling handler returned no result")
	}
	if err := res.Validate(); err != nil {
		return nil, fmt.Errorf("mcp: sampling handler: %w", err)
	}
	if len(p.Tools) == 0 && hasContent(res.Content, ContentTypeToolUse) {
		return nil, errors.New("mcp: sampling handler returned tool_use content for a request that offered no tools")
	}
	return res, nil
}

func hasContent(cs []Content, typ string) bool {
	for _, c := range cs {
		if contentTypeOf(c) == typ {
			return true
		}
	}
	return false
}

func contentTypeOf(c Content) string {
	if t, ok := c.(interface{ contentType() string }); ok {
		return t.contentType()
	}
	return ""
}

// ToolLoopError reports a sampling conversation that breaks the tool loop
// rules: a user message holding tool_result blocks must hold nothing else,
// and every tool_use of an assistant message must be answered, by id, in
// the user message that follows it.
type ToolLoopError struct {
	// Message is the index of the offending message.
	Message int
	// Reason says what is wrong.
	Reason string
}

func (e *ToolLoopError) Error() string {
	return fmt.Sprintf("mcp: messages[%d]: %s", e.Message, e.Reason)
}

// CheckToolLoop checks the tool loop rules of a sampling conversation; it
// returns a *ToolLoopError for the first message that breaks them.
func CheckToolLoop(msgs []SamplingMessage) error {
	var pending []string // tool_use ids the next message must answer
	pendingAt := -1
	for i, m := range msgs {
		var uses, results []string
		other := 0
		for _, c := range m.Content {
			switch b := c.(type) {
			case *ToolUseContent:
				uses = append(uses, b.ID)
			case *ToolResultContent:
				results = append(results, b.ToolUseID)
			default:
				other++
			}
		}
		if len(results) > 0 && other > 0 {
			return &ToolLoopError{Message: i, Reason: "a message with tool_result blocks must hold only tool results"}
		}
		if len(results) > 0 && m.Role != RoleUser {
			return &ToolLoopError{Message: i, Reason: "tool_result blocks belong in a user message"}
		}
		if len(uses) > 0 && m.Role != RoleAssistant {
			return &ToolLoopError{Message: i, Reason: "tool_use blocks belong in an assistant message"}
		}
		if pending != nil {
			for _, id := range pending {
				if !slices.Contains(results, id) {
					return &ToolLoopError{Message: i, Reason: fmt.Sprintf("tool_use %q of messages[%d] has no tool_result", id, pendingAt)}
				}
			}
			for _, id := range results {
				if !slices.Contains(pending, id) {
					return &ToolLoopError{Message: i, Reason: fmt.Sprintf("tool_result for %q answers no tool_use of messages[%d]", id, pendingAt)}
				}
			}
			pending = nil
		} else if len(results) > 0 {
			return &ToolLoopError{Message: i, Reason: "tool_result blocks without a preceding tool_use"}
		}
		if len(uses) > 0 {
			pending, pendingAt = uses, i
		}
	}
	return nil
}

// ElicitationContentError reports an elicitation handler's accepted
// content that does not match the form's requested schema. The server is
// answered with -32603 and the detail is logged.
type ElicitationContentError struct {
	Err error
}

func (e *ElicitationContentError) Error() string {
	return "mcp: elicitation content does not match the requested schema: " + e.Err.Error()
}

func (e *ElicitationContentError) Unwrap() error { return e.Err }

func (cs *ClientSession) elicit(ctx context.Context, raw json.RawMessage) (any, error) {
	c := cs.client
	p, err := decodeElicitRequestParams(raw)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %s", jsonErrorText(err))
	}
	if v, ok := p.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %v", err)
		}
	}
	caps := c.capabilities().Elicitation
	var form *ElicitRequestFormParams
	var schema *jsonschema.Schema
	switch p := p.(type) {
	case *ElicitRequestURLParams:
		if !caps.SupportsURL() {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: this client does not support URL-mode elicitation")
		}
		cs.rememberURLElicitation(p.ElicitationID)
	case *ElicitRequestFormParams:
		if !caps.SupportsForm() {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: this client does not support form-mode elicitation")
		}
		b, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: requestedSchema: %v", err)
		}
		if schema, err = jsonschema.Compile(b, jsonschema.WithLimits(c.opts.SchemaLimits)); err != nil {
			return nil, schemaError("requestedSchema", err)
		}
		form = p
	}
	res, err := c.opts.ElicitationHandler(ctx, cs, p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, errors.New("mcp: elicitation handler returned no result")
	}
	if err := res.Action.Validate(); err != nil {
		return nil, fmt.Errorf("mcp: elicitation handler: %w", err)
	}
	if res.Action != ElicitActionAccept || form == nil {
		// Content belongs only to an accepted form.
		r := *res
		r.Content = nil
		return &r, nil
	}
	if res.Content == nil {
		res.Content = map[string]any{}
	}
	res.Content = jsonschema.ApplyDefaults(schema, res.Content)
	normalizeContent(res.Content)
	if err := res.Validate(); err != nil {
		return nil, &ElicitationContentError{Err: err}
	}
	b, err := json.Marshal(res.Content)
	if err != nil {
		return nil, &ElicitationContentError{Err: err}
	}
	if err := schema.ValidateJSON(b); err != nil {
		return nil, &ElicitationContentError{Err: err}
	}
	return res, nil
}
