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
	// StrictMeta refuses server messages whose params carry an invalid
	// _meta key, with -32602 naming the key.
	StrictMeta bool

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
}

// Client is an MCP client: it connects to servers, one session each.
type Client struct {
	impl Implementation
	opts ClientOptions
	log  *slog.Logger
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
	cs := &ClientSession{client: c, ready: make(chan struct{})}
	var initID jsonrpc.ID
	cs.conn = jsonrpc.NewConn(stream, jsonrpc.ConnOptions{
		Handler:        jsonrpc.HandlerFunc(cs.handle),
		Logger:         c.log,
		MaxConcurrency: c.opts.MaxConcurrency,
		Inline:         isInline,
		Timeout:        c.opts.RequestTimeout,
		// The client must never cancel initialize.
		OnCancel: sendCancel(func() *jsonrpc.Conn { return cs.conn }, func(id jsonrpc.ID) bool { return id == initID }),
	})
	close(cs.ready) // the read loop may already have a message for handle
	initID = cs.conn.NewID()
	params := &InitializeRequestParams{
		ProtocolVersion: c.opts.ProtocolVersion,
		Capabilities:    *c.capabilities(),
		ClientInfo:      c.impl,
	}
	var res InitializeResult
	if err := cs.conn.CallID(ctx, initID, MethodInitialize, params, &res); err != nil {
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
	if err := cs.conn.Notify(ctx, NotificationInitialized, nil); err != nil {
		cs.conn.Close()
		return nil, fmt.Errorf("mcp: initialized: %w", err)
	}
	if c.opts.KeepAlive > 0 {
		go keepAlive(cs.conn, c.opts.KeepAlive, c.log)
	}
	return cs, nil
}

// ClientSession is the client's side of one server connection.
type ClientSession struct {
	client *Client
	conn   *jsonrpc.Conn
	ready  chan struct{} // closed once conn is set

	mu            sync.Mutex
	initResult    *InitializeResult
	outputSchemas map[string]compiledTool // by tool name, from ListTools
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
	return cs.conn.Call(ctx, MethodPing, nil, nil)
}

// Call sends a request of any method to the server and decodes its result
// into result.
func (cs *ClientSession) Call(ctx context.Context, method string, params, result any) error {
	return cs.conn.Call(ctx, method, params, result)
}

// Notify sends a notification of any method to the server.
func (cs *ClientSession) Notify(ctx context.Context, method string, params any) error {
	return cs.conn.Notify(ctx, method, params)
}

// NotifyProgress reports progress on the server request whose handler owns
// ctx.
func (cs *ClientSession) NotifyProgress(ctx context.Context, p *ProgressNotificationParams) error {
	return notifyProgress(ctx, cs.conn, p)
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
	if err := cs.conn.Call(ctx, MethodToolsList, p, &res); err != nil {
		return nil, err
	}
	var errs []error
	for i := range res.Tools {
		t := &res.Tools[i]
		ct, err := compileTool(t)
		cs.mu.Lock()
		if cs.outputSchemas == nil {
			cs.outputSchemas = make(map[string]compiledTool)
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
// *StructuredContentError.
func (cs *ClientSession) CallTool(ctx context.Context, p *CallToolRequestParams) (*CallToolResult, error) {
	var res CallToolResult
	if err := cs.conn.Call(ctx, MethodToolsCall, p, &res); err != nil {
		return nil, err
	}
	cs.mu.Lock()
	ct, ok := cs.outputSchemas[p.Name]
	cs.mu.Unlock()
	if ok && ct.output != nil && (res.IsError == nil || !*res.IsError) {
		if len(res.StructuredContent) == 0 {
			return &res, &StructuredContentError{Tool: p.Name, Err: errors.New("the result has none")}
		}
		if err := ct.output.ValidateJSON(res.StructuredContent); err != nil {
			return &res, &StructuredContentError{Tool: p.Name, Err: err}
		}
	}
	return &res, nil
}

func (cs *ClientSession) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	<-cs.ready
	c := cs.client
	if c.opts.StrictMeta {
		if err := checkMeta(req.Params); err != nil {
			return nil, err
		}
	}
	if req.IsNotification() {
		cs.handleNotification(ctx, req)
		return nil, nil
	}
	switch req.Method {
	case MethodPing:
		return emptyResult, nil
	case MethodSamplingCreateMessage:
		if c.opts.CreateMessageHandler == nil {
			break
		}
		var p CreateMessageRequestParams
		if err := parseParams(req.Params, &p); err != nil {
			return nil, err
		}
		for i := range p.Tools {
			if _, err := compileTool(&p.Tools[i]); err != nil {
				var tse *ToolSchemaError
				errors.As(err, &tse)
				return nil, schemaError(fmt.Sprintf("tools[%d] (%q) %s", i, p.Tools[i].Name, tse.Field), tse.Err)
			}
		}
		return c.opts.CreateMessageHandler(ctx, cs, &p)
	case MethodElicitationCreate:
		if c.opts.ElicitationHandler == nil {
			break
		}
		return cs.elicit(ctx, req.Params)
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s", req.Method)
}

func (cs *ClientSession) handleNotification(ctx context.Context, req *jsonrpc.Request) {
	c := cs.client
	switch req.Method {
	case NotificationCancelled:
		var p CancelledNotificationParams
		if err := json.Unmarshal(req.Params, &p); err != nil || !p.RequestID.IsValid() {
			return
		}
		cs.conn.CancelInbound(p.RequestID)
	case NotificationProgress:
		var p ProgressNotificationParams
		if err := json.Unmarshal(req.Params, &p); err == nil && c.opts.ProgressNotificationHandler != nil {
			c.opts.ProgressNotificationHandler(ctx, cs, &p)
		}
	case NotificationMessage:
		var p LoggingMessageNotificationParams
		if err := json.Unmarshal(req.Params, &p); err == nil && c.opts.LoggingMessageHandler != nil {
			c.opts.LoggingMessageHandler(ctx, cs, &p)
		}
	case NotificationToolsListChanged:
		if h := c.opts.ToolListChangedHandler; h != nil {
			go h(ctx, cs)
		}
	default:
		c.log.Debug("mcp: notification ignored", "method", req.Method)
	}
}

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
		if caps.URL == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: this client does not support URL-mode elicitation")
		}
	case *ElicitRequestFormParams:
		if !caps.SupportsForm() {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: this client does not support form-mode elicitation")
		}
		b, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: requestedSchema: %v", err)
		}
		if schema, err = jsonschema.Compile(b); err != nil {
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
	if form != nil && res.Action == ElicitActionAccept {
		if res.Content == nil {
			res.Content = map[string]any{}
		}
		res.Content = jsonschema.ApplyDefaults(schema, res.Content)
	}
	return res, nil
}
