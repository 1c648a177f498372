package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// The seam of the modern leg for transports that receive requests
// themselves (mcphttp's Streamable HTTP handler): a request of revision
// 2026-07-28 carries its own _meta, so it needs no session. The transport
// prepares it (PrepareModern), makes its own checks (headers against the
// body), then serves it (ModernRequest.Serve) and encodes the result
// (ModernRequest.AppendResult). Nothing is allocated per request but the
// ModernRequest, which the transport may embed in a larger allocation of
// its own.

// ModernSink receives what the handler of one modern request sends about
// it. Notify is called from the handler's goroutines, possibly several at
// once; it must be safe for concurrent use.
type ModernSink interface {
	// Notify sends a notification about the request (progress, log
	// messages, and on a subscriptions/listen stream the change
	// notifications) on the request's own response stream.
	Notify(ctx context.Context, method string, params json.RawMessage) error
	// KeepAlive writes something that carries no message (an SSE
	// comment), so that a long-lived listen stream survives idle
	// timeouts.
	KeepAlive() error
	// Done is closed when the transport stops serving: a
	// subscriptions/listen stream then ends with its result.
	Done() <-chan struct{}
}

// ModernRequest is one modern request in the hands of a transport. Its
// zero value is ready for PrepareModern; it must not be copied after
// that, nor reused.
type ModernRequest struct {
	c   modernContext
	req *jsonrpc.Request
	s   *Server
}

// PrepareModern parses the params of req, a modern request (not a
// notification), into r: its _meta is checked (protocolVersion and
// clientCapabilities present, every member of the right type) and the
// handler will run with ctx's values and cancellation, sending what it
// sends about the request to sink. It returns -32602 for a malformed
// _meta, which a transport answers at once (HTTP 400). The version is not
// checked yet: see ModernRequest.CheckVersion.
//
// A server that serves no modern revision (ServerOptions.DisableModern) is
// a legacy server to a modern client: PrepareModern then returns -32600,
// not a modern error, so that a dual-era client falls back to initialize
// (basic/versioning, "Backward Compatibility": a modern error such as
// -32022 would tell it the server is modern, and not to fall back).
func (s *Server) PrepareModern(ctx context.Context, r *ModernRequest, req *jsonrpc.Request, sink ModernSink) *jsonrpc.Error {
	if m := s.modern(); len(m.versions) == 0 {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "Invalid Request: this server speaks no stateless revision; send initialize first (supported versions: %s)",
			strings.Join(m.supported, ", "))
	}
	r.s, r.req = s, req
	c := &r.c
	c.Context, c.ss, c.req.id, c.req.sink = ctx, s.modern().ss, req.ID, sink
	return s.prepareModern(c, req)
}

// ProtocolVersion returns the protocol version of the request's _meta.
func (r *ModernRequest) ProtocolVersion() string { return r.c.req.meta.ProtocolVersion }

// Meta returns the request's protocol _meta. The caller must not modify
// it.
func (r *ModernRequest) Meta() *RequestMeta {
	r.c.req.clientInfo()
	return &r.c.req.meta
}

// NameHeaderMember returns the params member whose value the Mcp-Name
// header of a 2026-07-28 request of method mirrors, or "" when the method
// has none: "name" for tools/call and prompts/get, "uri" for
// resources/read (basic/transports/streamable-http, "Standard Request
// Headers"), "taskId" for the tasks extension's tasks/get, tasks/update
// and tasks/cancel (SEP-2663, "Streamable HTTP: Routing Headers", a client
// MUST). Clients set the header from it; MirroredName is the server's
// reading of the same table.
func NameHeaderMember(method string) string {
	switch method {
	case MethodToolsCall, MethodPromptsGet:
		return "name"
	case MethodResourcesRead:
		return "uri"
	case MethodTasksGet, MethodTasksUpdate, MethodTasksCancel:
		return "taskId"
	}
	return ""
}

// MirroredName returns the body value the Mcp-Name header mirrors
// (basic/transports/streamable-http, "Standard Request Headers"):
// params.name of tools/call and prompts/get, params.uri of
// resources/read, params.taskId of the tasks extension's tasks/get,
// tasks/update and tasks/cancel; ok is false for other methods and when the member is
// absent.
func (r *ModernRequest) MirroredName() (name string, ok bool) {
	var p *string
	switch r.req.Method {
	case MethodToolsCall, MethodPromptsGet:
		p = r.c.name
	case MethodResourcesRead:
		p = r.c.uri
	case MethodTasksGet, MethodTasksUpdate, MethodTasksCancel:
		p = r.c.taskID // the tasks extension (SEP-2663 "Routing Headers")
	}
	if p == nil {
		return "", false
	}
	return *p, true
}

// CheckVersion returns the -32022 error (data: the versions the server
// speaks and the one requested) when the server does not speak the
// request's protocol version, nil when it does.
func (r *ModernRequest) CheckVersion() *jsonrpc.Error {
	return r.s.checkModernVersion(r.c.req.meta.ProtocolVersion)
}

// CheckParamHeaders checks the Mcp-Param-* headers of a tools/call
// against the arguments of the x-mcp-header parameters of the tool it
// names (basic/transports/streamable-http, "Custom Headers from Tool
// Parameters"): header returns the single value of a header, by its
// canonical name (Mcp-Param-Region), with optional white space trimmed,
// and false when there is none or more than one. It returns -32020 when
// a header is missing for an argument present, malformed, or different
// from the argument; nil otherwise, and for other methods.
func (r *ModernRequest) CheckParamHeaders(header func(key string) (string, bool)) *jsonrpc.Error {
	if r.req.Method != MethodToolsCall || r.c.name == nil {
		return nil
	}
	return r.s.checkParamHeaders(header, *r.c.name, r.req.Params)
}

// Serve runs the request: the version check, then its handler, through
// ServerOptions.ReceivingMiddleware, in the caller's goroutine. It
// returns the result, for AppendResult, or the error to answer, already
// in the modern codes (-32602 for a resource not found, -32021 for a
// MissingClientCapabilityError, -32601 for a method the revision
// removed or the server does not have).
func (r *ModernRequest) Serve() (any, *jsonrpc.Error) {
	return r.s.serveModern(&r.c, r.req)
}

// AppendResult appends res, a result Serve returned, encoded as a modern
// result: with resultType, the server's identity in _meta and, for the
// cacheable methods, ttlMs and cacheScope (ServerOptions.CacheTTL,
// CacheScope), each unless res sets it.
func (r *ModernRequest) AppendResult(b []byte, res any) ([]byte, error) {
	return r.s.modern().appendModernResult(b, res, r.req.Method)
}

// Markers of a Base64-encoded header value
// (basic/transports/streamable-http, "Value Encoding"); case-sensitive.
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// DecodeHeaderValue decodes the value of an Mcp-Name or Mcp-Param-*
// header (basic/transports/streamable-http, "Value Encoding"): the Base64
// sentinel form =?base64?…?= is decoded (strict standard Base64 with
// padding: wrong padding or characters are malformed); any other value is
// taken literally and must consist of visible ASCII, space and tab (RFC
// 9110 field values). It reports false for a malformed value.
func DecodeHeaderValue(v string) (string, bool) {
	if len(v) >= len(base64Prefix)+len(base64Suffix) && strings.HasPrefix(v, base64Prefix) && strings.HasSuffix(v, base64Suffix) {
		raw, err := base64.StdEncoding.Strict().DecodeString(v[len(base64Prefix) : len(v)-len(base64Suffix)])
		if err != nil {
			return "", false
		}
		return string(raw), true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return "", false
		}
	}
	return v, true
}

// EncodeHeaderValue returns s as the value of an Mcp-Name or
// Mcp-Param-* header (basic/transports/streamable-http, "Value
// Encoding"): as it is when it is printable ASCII without leading or
// trailing spaces, else, and when it looks like the sentinel itself, in
// the =?base64?…?= form. Tabs and other control characters are always
// encoded. A client transport that mirrors request metadata into headers
// calls it; it is safe for concurrent use.
func EncodeHeaderValue(s string) string {
	plain := s == "" || (s[0] != ' ' && s[len(s)-1] != ' ')
	for i := 0; plain && i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			plain = false
		}
	}
	if plain && !(strings.HasPrefix(s, base64Prefix) && strings.HasSuffix(s, base64Suffix)) {
		return s
	}
	return base64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + base64Suffix
}
