package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// The modern leg: requests of revision 2026-07-28 and later, each carrying
// its protocol version and client capabilities in _meta, served
// statelessly beside the legacy sessions (basic/versioning, "Backward
// Compatibility with Initialization-Based Versions": a dual-era server
// picks the era per request). The transport-independent part lives here:
// validation of the request's _meta, the methods the modern leg serves,
// the errors it maps, and the result encoding (resultType, serverInfo,
// ttlMs and cacheScope). The transports (Streamable HTTP, stdio) add their
// own checks and write the answers.

// MissingClientCapabilityError is what a handler returns when serving the
// request needs a client capability the request did not declare. On the
// modern leg it becomes a MissingRequiredClientCapabilityError (code
// -32021, HTTP 400) whose data names Required; on the legacy leg the same
// code and data are sent.
type MissingClientCapabilityError struct {
	// Required are the capabilities the request needs.
	Required ClientCapabilities
}

// Error implements the error interface.
func (e *MissingClientCapabilityError) Error() string {
	b, _ := json.Marshal(&e.Required)
	return "mcp: the request needs client capabilities " + string(b)
}

func (e *MissingClientCapabilityError) rpcError() *jsonrpc.Error {
	return jsonrpc.NewError(CodeMissingRequiredClientCapability, "Missing required client capability").
		WithData(&MissingRequiredClientCapabilityData{RequiredCapabilities: e.Required})
}

// EraFromContext returns the era of the request whose handler owns ctx:
// EraModern for a request that carried its own _meta (revision
// 2026-07-28), EraLegacy otherwise (a session opened by initialize, or a
// context that is no handler's).
func EraFromContext(ctx context.Context) Era {
	if modernFromContext(ctx) != nil {
		return EraModern
	}
	return EraLegacy
}

// RequestMetaFromContext returns the protocol _meta of the modern request
// whose handler owns ctx, or nil on the legacy leg. The caller must not
// modify it.
func RequestMetaFromContext(ctx context.Context) *RequestMeta {
	if m := modernFromContext(ctx); m != nil {
		m.clientInfo()
		return &m.meta
	}
	return nil
}

// ClientCapabilitiesFromContext returns the capabilities the client
// declared for the request whose handler owns ctx: those of the request's
// own _meta on the modern leg, those sent with initialize on the legacy
// leg. It returns nil when none are known. The caller must not modify the
// result.
func ClientCapabilitiesFromContext(ctx context.Context) *ClientCapabilities {
	if m := modernFromContext(ctx); m != nil {
		return m.meta.ClientCapabilities
	}
	if ss := ServerSessionFromContext(ctx); ss != nil {
		if p := ss.InitializeParams(); p != nil {
			return &p.Capabilities
		}
	}
	return nil
}

// Era returns the era the session serves: EraModern for the server's
// stateless modern session (Streamable HTTP) and for a stdio connection
// whose first request was modern, EraLegacy otherwise. Prefer
// EraFromContext in handlers.
func (ss *ServerSession) Era() Era {
	if ss.phase.Load() >= phaseModern {
		return EraModern
	}
	return EraLegacy
}

// Phases of a ServerSession (see ServerSession.phase).
const (
	phaseNew uint32 = iota
	phaseLegacy
	phaseModern
	phaseStateless
)

// stateless reports whether ss is the server's stateless modern session.
func (ss *ServerSession) stateless() bool { return ss.phase.Load() == phaseStateless }

// modernMethodInfos are the methods only the modern leg serves (revision
// 2026-07-28 adds them; the legacy table follows the 2025-11-25 schema).
var modernMethodInfos = map[string]methodInfo[*ServerSession]{
	MethodServerDiscover:      request(0, (*ServerSession).discover),
	MethodSubscriptionsListen: request(0, (*ServerSession).listen),
}

// modernRequest is what a modern request's context carries.
type modernRequest struct {
	id   jsonrpc.ID
	meta RequestMeta
	sink ModernSink // where notifications about the request go
	// Where the fast path (modern_fast.go) keeps what meta points to, and
	// the clientInfo it decodes only when asked for.
	caps     ClientCapabilities
	token    jsonrpc.ID
	info     []byte
	infoOnce sync.Once
}

type modernKey struct{}

// modernContext is the context of a modern request's handling: the
// session (ServerSessionFromContext), the request's _meta and sink, and
// the members of its params that Mcp-Name mirrors. One allocation per
// request. It does not carry the params themselves: a method's handler
// decodes them (callTool with decodeModernCallToolParams).
type modernContext struct {
	context.Context
	ss  *ServerSession
	req modernRequest
	// name and uri are the params' name and uri members, which Mcp-Name
	// mirrors; nil when absent. nameVal is where the fast path
	// (fastCall) keeps the name.
	name, uri *string
	nameVal   string
	// taskID is the tasks extension's params.taskId, which Mcp-Name
	// mirrors on tasks/get, tasks/update and tasks/cancel (SEP-2663).
	taskID *string
	// round is the multi round-trip machinery of tools/call, prompts/get
	// and resources/read (mrtr.go), kept here to spare an allocation.
	round inputRound
}

func (c *modernContext) Value(key any) any {
	switch key.(type) {
	case serverSessionKey:
		return c.ss
	case notificationKey:
		return false
	case modernKey:
		return &c.req
	case inputRoundKey:
		if r := c.inputRound(); r != nil {
			return r
		}
		return nil
	}
	return c.Context.Value(key)
}

func modernFromContext(ctx context.Context) *modernRequest {
	if c, ok := ctx.(*modernContext); ok {
		return &c.req
	}
	m, _ := ctx.Value(modernKey{}).(*modernRequest)
	return m
}

// removedModernMethods are the methods revision 2026-07-28 removed
// (changelog, major changes 2, 4 and 5): the modern leg answers them as
// unknown (-32601; HTTP 404).
var removedModernMethods = map[string]bool{
	MethodInitialize:           true,
	MethodPing:                 true,
	MethodLoggingSetLevel:      true,
	MethodResourcesSubscribe:   true,
	MethodResourcesUnsubscribe: true,
	MethodTasksResult:          true,
	MethodTasksList:            true,
}

// removedMethod is the -32601 of a method revision 2026-07-28 removed.
// For initialize it names the versions the server speaks
// (basic/versioning: a legacy client can show nothing else).
func (s *Server) removedMethod(method string) *jsonrpc.Error {
	if method == MethodInitialize {
		return jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: initialize is not part of protocol version %s (supported versions: %s)",
			ProtocolVersion20260728, strings.Join(s.modern().supported, ", "))
	}
	return errMethodNotFound(method).(*jsonrpc.Error)
}

// cacheableMethods are the methods whose modern results carry ttlMs and
// cacheScope (server/utilities/caching; server/discover).
func cacheableMethod(method string) bool {
	switch method {
	case MethodToolsList, MethodPromptsList, MethodResourcesList, MethodResourcesTemplatesList,
		MethodResourcesRead, MethodServerDiscover:
		return true
	}
	return false
}

// metaError is a -32602 about the request's _meta: on Streamable HTTP it
// is answered with 400 (the conformance suite's
// sep-2575-http-server-meta-invalid-400).
type metaError struct{ msg string }

func (e *metaError) Error() string { return e.msg }

func (e *metaError) rpcError() *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: "+e.msg)
}

// modernParams is what the modern leg reads of any request's params before
// dispatch: the _meta, and the name or uri that Mcp-Name mirrors.
type modernParams struct {
	Meta *RequestMeta `json:"_meta"`
	Name *string      `json:"name"`
	URI  *string      `json:"uri"`
	// TaskID is the tasks extension's routing member: tasks/get,
	// tasks/update and tasks/cancel carry it in Mcp-Name (SEP-2663).
	TaskID *string `json:"taskId"`
}

// parseModernParams decodes the protocol part of a modern request's
// params and checks its required members (basic/index "_meta":
// protocolVersion and clientCapabilities are required; clientInfo is a
// SHOULD and its absence is served).
func parseModernParams(raw json.RawMessage, p *modernParams) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return &metaError{"the request has no params and so no _meta"}
	}
	if err := strictjson.Unmarshal(raw, p); err != nil {
		return &metaError{"params: " + jsonErrorText(err)}
	}
	m := p.Meta
	switch {
	case m == nil:
		return &metaError{"params._meta is required"}
	case m.ProtocolVersion == "":
		return &metaError{"params._meta is missing " + MetaKeyProtocolVersion}
	case m.ClientCapabilities == nil:
		return &metaError{"params._meta is missing " + MetaKeyClientCapabilities}
	}
	if m.LogLevel != "" {
		if err := m.LogLevel.Validate(); err != nil {
			return &metaError{"params._meta " + MetaKeyLogLevel + ": " + err.Error()}
		}
	}
	if err := m.ClientCapabilities.Validate(); err != nil {
		return &metaError{"params._meta " + MetaKeyClientCapabilities + ": " + err.Error()}
	}
	return nil
}

// modernVersions are the modern revisions s serves: those of
// ServerOptions.ProtocolVersions if it names any, else every one this
// package implements (none with DisableModern). Computed once: see
// modernState.versions.
func (s *Server) modernVersions() []string {
	var out []string
	for _, v := range s.opts.ProtocolVersions {
		if IsModernProtocolVersion(v) {
			out = append(out, v)
		}
	}
	if out == nil && !s.opts.DisableModern {
		out = ModernProtocolVersions()
	}
	return out
}

// supportedVersions is every revision s serves, modern first: the
// supportedVersions of server/discover and of -32022.
func (s *Server) supportedVersions() []string {
	out := s.modernVersions()
	for _, v := range s.opts.ProtocolVersions {
		if !IsModernProtocolVersion(v) {
			out = append(out, v)
		}
	}
	return out
}

// checkModernVersion answers -32022 when s does not serve v
// (basic/versioning, "Protocol Version Negotiation").
func (s *Server) checkModernVersion(v string) *jsonrpc.Error {
	m := s.modern()
	if slices.Contains(m.versions, v) {
		return nil
	}
	msg := "Unsupported protocol version"
	if slices.Contains(m.supported, v) {
		// A legacy version the server speaks, sent the modern way: the
		// list names it, so say why it is refused (a client would
		// otherwise retry with it).
		msg += ": " + v + " is served only in a session opened with initialize"
	}
	return jsonrpc.NewError(CodeUnsupportedProtocolVersion, msg).
		WithData(&UnsupportedProtocolVersionData{Supported: m.supported, Requested: v})
}

// modernState is a Server's modern-leg state, made on first use.
type modernState struct {
	once sync.Once
	ss   *ServerSession // the stateless session every modern HTTP request runs in
	// versions are the modern versions served, supported every version
	// served (see modernVersions, supportedVersions); read-only.
	versions, supported []string
	// prefix and cachePrefix open every modern result:
	// {"resultType":"complete","_meta":{serverInfo}, with ttlMs and
	// cacheScope in cachePrefix.
	prefix, cachePrefix []byte
	serverInfo          json.RawMessage
	ttlMs               int64
	scope               CacheScope

	lmu         sync.Mutex
	listeners   map[*listener]struct{}
	listenBytes int64          // held by listeners (MaxListenBytes)
	listenersOf map[string]int // open listeners by principal (MaxListenersPerPrincipal)

	inflight   atomic.Int64 // modern requests being handled (MaxModernRequests)
	cmu        sync.Mutex
	inflightOf map[string]int // of each principal (MaxModernRequestsPerPrincipal); only those with some
}

// DefaultMaxModernRequests is the ServerOptions.MaxModernRequests of a
// server that sets none: each request in progress holds a goroutine and
// its body (at most the transport's body limit, 4 MiB over HTTP by
// default), so 1024 of them hold a few GiB at worst, and as many as
// mcpstack serve's default connection limit admits.
const DefaultMaxModernRequests = 1024

// errModernOverloaded answers a modern request past MaxModernRequests.
var errModernOverloaded = jsonrpc.NewError(jsonrpc.CodeOverloaded, "Server overloaded: too many requests in progress; retry later")

// DefaultMaxModernRequestsPerPrincipal is the
// ServerOptions.MaxModernRequestsPerPrincipal of a server that sets none:
// room for an agent's parallel tool calls, a sixteenth of
// DefaultMaxModernRequests.
const DefaultMaxModernRequestsPerPrincipal = 64

// errCallerOverloaded answers a modern request past
// MaxModernRequestsPerPrincipal.
var errCallerOverloaded = jsonrpc.NewError(jsonrpc.CodeOverloaded, "Server overloaded: this caller has too many requests in progress; retry later")

// takeCaller counts a request of principal p in, within max, and reports
// whether it may run; releaseCaller counts it out.
func (m *modernState) takeCaller(p string, max int) bool {
	m.cmu.Lock()
	defer m.cmu.Unlock()
	if m.inflightOf[p] >= max {
		return false
	}
	if m.inflightOf == nil {
		m.inflightOf = make(map[string]int)
	}
	m.inflightOf[p]++
	return true
}

func (m *modernState) releaseCaller(p string) {
	m.cmu.Lock()
	defer m.cmu.Unlock()
	if m.inflightOf[p]--; m.inflightOf[p] <= 0 {
		delete(m.inflightOf, p) // the map holds busy callers only
	}
}

// modern returns s's modern-leg state.
func (s *Server) modern() *modernState {
	m := &s.modernMem
	m.once.Do(func() {
		ss := &ServerSession{server: s}
		ss.phase.Store(phaseStateless)
		ss.chainModern()
		m.ss = ss
		m.versions, m.supported = s.modernVersions(), s.supportedVersions()
		m.serverInfo, _ = json.Marshal(&s.impl)
		m.ttlMs = s.opts.CacheTTL.Milliseconds()
		m.scope = s.opts.CacheScope
		if m.scope == "" {
			m.scope = DefaultCacheScope
		}
		m.prefix = fmt.Appendf(nil, `{"resultType":"complete","_meta":{%q:%s}`, MetaKeyServerInfo, m.serverInfo)
		m.cachePrefix = fmt.Appendf(nil, `{"resultType":"complete","ttlMs":%d,"cacheScope":%q,"_meta":{%q:%s}`,
			m.ttlMs, m.scope, MetaKeyServerInfo, m.serverInfo)
	})
	return m
}

// DefaultCacheScope is the cacheScope of a modern server that sets no
// ServerOptions.CacheScope: private, the one that cannot leak one
// caller's view to another through a shared cache.
const DefaultCacheScope = CacheScopePrivate

// chainModern sets the receiving chain of the stateless modern session.
func (ss *ServerSession) chainModern() {
	if mws := ss.server.opts.ReceivingMiddleware; len(mws) > 0 {
		ss.recv = chain(ss.dispatch, mws)
	}
}

// prepareModern parses the params of req, a modern request, into c, whose
// Context, ss, req.id and req.sink the caller has set: the fast path for
// a plain tools/call, else the ordinary decoding. It answers a malformed
// _meta with -32602.
func (s *Server) prepareModern(c *modernContext, req *jsonrpc.Request) *jsonrpc.Error {
	if req.Method == MethodToolsCall {
		if c.fastCall(req.Params) {
			return nil
		}
		c.req.meta, c.req.caps, c.req.info = RequestMeta{}, ClientCapabilities{}, nil
	}
	var p modernParams
	if err := parseModernParams(req.Params, &p); err != nil {
		return err.(*metaError).rpcError()
	}
	c.req.meta = *p.Meta
	c.name, c.uri, c.taskID = p.Name, p.URI, p.TaskID
	return nil
}

// serveModern handles one modern request prepared in c whose transport
// checks passed: the version check, then the method. It returns the
// result to encode with appendModernResult, or the error to answer
// (already mapped to the modern codes).
func (s *Server) serveModern(c *modernContext, req *jsonrpc.Request) (any, *jsonrpc.Error) {
	if e := s.checkModernVersion(c.req.meta.ProtocolVersion); e != nil {
		return nil, e
	}
	if removedModernMethods[req.Method] {
		return nil, s.removedMethod(req.Method)
	}
	if req.Method != MethodSubscriptionsListen {
		if max := cmp.Or(s.opts.MaxModernRequests, DefaultMaxModernRequests); max > 0 {
			m := &s.modernMem
			if m.inflight.Add(1) > int64(max) {
				m.inflight.Add(-1)
				return nil, errModernOverloaded
			}
			defer m.inflight.Add(-1)
		}
		if p := principalFromContext(c); p != "" {
			if max := cmp.Or(s.opts.MaxModernRequestsPerPrincipal, DefaultMaxModernRequestsPerPrincipal); max > 0 {
				m := &s.modernMem
				if !m.takeCaller(p, max) {
					return nil, errCallerOverloaded
				}
				defer m.releaseCaller(p)
			}
		}
	}
	res, err := c.ss.receive(c, req.Method, req.Params)
	if err != nil {
		return nil, modernError(err)
	}
	return res, nil
}

// modernError maps a handler's error to the modern leg's JSON-RPC error:
// resource not found is -32602 (changelog, minor change 6), a missing
// client capability -32021.
func modernError(err error) *jsonrpc.Error {
	var me *MissingClientCapabilityError
	if errors.As(err, &me) {
		return me.rpcError()
	}
	var ue *URLElicitationRequiredError
	if errors.As(err, &ue) {
		return ue.rpcError()
	}
	var meta *metaError
	if errors.As(err, &meta) {
		return meta.rpcError()
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		if je.Code == CodeResourceNotFound {
			c := *je
			c.Code = jsonrpc.CodeInvalidParams
			return &c
		}
		return je
	}
	return jsonrpc.ErrInternal
}

// errResultNotObject is returned when a result does not encode as a JSON
// object, which every MCP result is.
var errResultNotObject = errors.New("mcp: a result must encode as a JSON object")

// appendModernResult appends res encoded as a modern result of method:
// res's members with resultType "complete", the server's identity in
// _meta (basic/versioning; ResultMetaObject) and, on cacheable methods,
// ttlMs and cacheScope, each added only where res does not set it. The
// usual result takes the fast path: its encoding is shifted once behind
// a precomputed prefix, with no allocation.
func (m *modernState) appendModernResult(b []byte, res any, method string) ([]byte, error) {
	start := len(b)
	var err error
	switch v := res.(type) {
	case nil:
		b = append(b, "{}"...)
	case json.RawMessage:
		b = append(b, bytes.TrimSpace(v)...)
	case jsonrpc.JSONAppender:
		b, err = v.AppendJSON(b)
	default:
		var raw []byte
		raw, err = json.Marshal(v)
		b = append(b, raw...)
	}
	if err != nil {
		return b[:start], err
	}
	inner := b[start:]
	if len(inner) < 2 || inner[0] != '{' || inner[len(inner)-1] != '}' {
		return b[:start], errResultNotObject
	}
	cacheable := cacheableMethod(method)
	if bytes.Contains(inner, []byte(`"_meta"`)) || bytes.Contains(inner, []byte(`"resultType"`)) ||
		(cacheable && (bytes.Contains(inner, []byte(`"ttlMs"`)) || bytes.Contains(inner, []byte(`"cacheScope"`)))) {
		return m.mergeModernResult(b, start, cacheable)
	}
	prefix := m.prefix
	if cacheable {
		prefix = m.cachePrefix
	}
	if len(inner) == 2 { // {}
		b = append(b[:start], prefix...)
		return append(b, '}'), nil
	}
	n := len(prefix)
	b = append(b, make([]byte, n)...)
	copy(b[start+n:], b[start:start+len(inner)])
	copy(b[start:], prefix)
	b[start+n] = ',' // was the '{' of res
	return b, nil
}

// mergeModernResult is appendModernResult's slow path, for a result that
// names _meta, resultType, ttlMs or cacheScope itself (or holds those
// strings anywhere): its members are decoded and the missing ones added.
func (m *modernState) mergeModernResult(b []byte, start int, cacheable bool) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b[start:], &obj); err != nil {
		return b[:start], err
	}
	if _, ok := obj["resultType"]; !ok {
		obj["resultType"] = json.RawMessage(`"complete"`)
	}
	if cacheable {
		if _, ok := obj["ttlMs"]; !ok {
			obj["ttlMs"] = strconv.AppendInt(nil, m.ttlMs, 10)
		}
		if _, ok := obj["cacheScope"]; !ok {
			obj["cacheScope"] = json.RawMessage(strconv.Quote(string(m.scope)))
		}
	}
	var meta map[string]json.RawMessage
	if raw, ok := obj["_meta"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return b[:start], fmt.Errorf("mcp: result _meta: %w", err)
		}
	}
	if meta == nil {
		meta = make(map[string]json.RawMessage, 1)
	}
	if _, ok := meta[MetaKeyServerInfo]; !ok {
		meta[MetaKeyServerInfo] = m.serverInfo
	}
	raw, err := json.Marshal(meta)
	if err != nil {
		return b[:start], err
	}
	obj["_meta"] = raw
	out, err := json.Marshal(obj)
	if err != nil {
		return b[:start], err
	}
	return append(b[:start], out...), nil
}

// discover answers server/discover (server/discover): the versions,
// capabilities and instructions; the modern encoder adds resultType,
// serverInfo, ttlMs and cacheScope.
func (ss *ServerSession) discover(_ context.Context, _ string, params json.RawMessage) (any, error) {
	var p RequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	s := ss.server
	return &DiscoverResult{
		SupportedVersions: s.supportedVersions(),
		Capabilities:      *s.modernCapabilities(),
		Instructions:      s.opts.Instructions,
	}, nil
}

// modernCapabilities are the capabilities the modern leg advertises: the
// legacy ones without what 2026-07-28 removed (the legacy tasks
// capability moved to an extension; logging/setLevel is gone but the
// logging capability still says the server sends notifications/message
// to requests that ask with a log level).
func (s *Server) modernCapabilities() *ServerCapabilities {
	caps := s.capabilities()
	caps.Tasks = nil
	return caps
}

// logLevelFor returns the level below which no notifications/message is
// sent for the request whose handler owns ctx, and whether the request is
// modern: a modern request sets it in its own _meta (none: no messages,
// server/utilities/logging), a legacy session with logging/setLevel.
func (ss *ServerSession) logLevelFor(ctx context.Context) LoggingLevel {
	if m := modernFromContext(ctx); m != nil {
		return m.meta.LogLevel
	}
	if ss.stateless() {
		return ""
	}
	return ss.LoggingLevel()
}

// errNoClientRequests answers a server-to-client request made while
// serving a modern request: revision 2026-07-28 has none; the server asks
// with an InputRequiredResult instead (basic/patterns/mrtr).
var errNoClientRequests = errors.New("mcp: a modern (2026-07-28) request cannot be answered with a server-to-client request; return an InputRequiredResult instead")

// sendModern sends a message the handler of a modern request sends:
// notifications go to the request's sink; requests are refused.
func (m *modernRequest) send(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if !isNotificationMethod(method) {
		return nil, errNoClientRequests
	}
	if method == NotificationMessage && m.meta.LogLevel == "" {
		return nil, nil // server/utilities/logging: none without logLevel
	}
	return nil, m.sink.Notify(ctx, method, params)
}
