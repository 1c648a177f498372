package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// The Streamable HTTP client's binding of revision 2026-07-28 (the
// "modern" era): no session, no GET stream, and the request metadata
// mirrored into headers (basic/transports/streamable-http, "Request
// Metadata"). The client session (mcp.Client.Connect) switches the era
// with SetModernVersion before it sends anything in it, and finds the
// binding through MirrorsRequestHeaders.

// The header names of revision 2026-07-28 are in modern.go.

// modernHeadersKey is the context key of the standard headers of one
// modern POST (Mcp-Method, Mcp-Name), set by Write for newRequest.
type modernHeadersKey struct{}

// MirrorsRequestHeaders tells mcp.Client.Connect that this binding
// mirrors request metadata into headers (so it probes the era, and
// mirrors x-mcp-header arguments).
func (c *streamableClientConn) MirrorsRequestHeaders() bool { return true }

// SetModernVersion makes the connection send modern requests at version v
// (its MCP-Protocol-Version header), or legacy ones when v is "". The
// client session calls it before the first message of each era.
func (c *streamableClientConn) SetModernVersion(v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.modern = v
	if v != "" {
		c.version, c.versionHdr = v, []string{v}
		c.needVersion.Store(false)
		return
	}
	c.version, c.versionHdr = "", nil
	c.needVersion.Store(true)
}

// modernVersion returns the modern version the connection speaks, or "".
func (c *streamableClientConn) modernVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.modern
}

// withStandardHeaders returns ctx carrying the Mcp-Method header of m and,
// for the methods mcp.NameHeaderMember names a member for (tools/call,
// prompts/get, resources/read, the tasks extension's tasks/get, update
// and cancel), its Mcp-Name header (base64-encoded when it is not a plain
// header value).
func withStandardHeaders(ctx context.Context, m jsonrpc.Message) context.Context {
	req, ok := m.(*jsonrpc.Request)
	if !ok {
		return ctx
	}
	h := http.Header{headerMcpMethod: {req.Method}}
	if field := mcp.NameHeaderMember(req.Method); field != "" {
		var p map[string]json.RawMessage
		var name string
		if json.Unmarshal(req.Params, &p) == nil && json.Unmarshal(p[field], &name) == nil {
			h[headerMcpName] = []string{mcp.EncodeHeaderValue(name)}
		}
	}
	return context.WithValue(ctx, modernHeadersKey{}, h)
}

// addModernHeaders copies the per-request headers ctx carries (the
// standard ones and a tools/call's Mcp-Param-* ones) into h.
func addModernHeaders(ctx context.Context, h http.Header) {
	if std, ok := ctx.Value(modernHeadersKey{}).(http.Header); ok {
		for k, v := range std {
			h[k] = v
		}
	}
	for k, v := range mcp.ParamHeaders(ctx) {
		h[http.CanonicalHeaderKey(k)] = []string{v}
	}
}

// modernErrorAnswer delivers the JSON-RPC error in the body of a modern
// server's non-2xx answer to request id as that request's response, so
// that the caller sees its code and data (UnsupportedProtocolVersionError
// comes with 400, an unknown method with 404). It reports false, leaving
// the body readable again, when the body holds no such error.
func (c *streamableClientConn) modernErrorAnswer(resp *http.Response, id jsonrpc.ID) bool {
	return c.modernErrorAnswerAs(resp, id, id)
}

// modernErrorAnswerAs is modernErrorAnswer for a request sent as wire (a
// re-issue, client_reissue.go) that the client knows as id.
func (c *streamableClientConn) modernErrorAnswerAs(resp *http.Response, wire, id jsonrpc.ID) bool {
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(min(c.maxMsg, 64<<10))))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return false
	}
	m, err := jsonrpc.Decode(b)
	if err != nil {
		return false
	}
	r, ok := m.(*jsonrpc.Response)
	if !ok || r.Error == nil {
		return false
	}
	if r.ID.IsValid() && r.ID != wire {
		return false
	}
	r.ID = id // or an error the server could not tie to the request
	c.queueForRead(r)
	return true
}
