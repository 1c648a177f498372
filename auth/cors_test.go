package auth_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

const pageOrigin = "https://inspector.example"

// A browser-based client on another origin, against a real MCP endpoint
// behind the middleware with mcphttp.CORS in front: the preflight is answered
// without a token, and the 401 and 403 challenges are readable.
func TestCORSInFrontOfMiddleware(t *testing.T) {
	as := newTestAS(t)
	co := &mcphttp.CORSOptions{AllowedOrigins: []string{pageOrigin}}
	front := newMCPServer(t, as, mcpConfig{cors: co})
	inside := newMCPServer(t, as, mcpConfig{cors: co, corsInside: true})
	plain := newMCPServer(t, as, mcpConfig{})
	metadata := func(ms *mcpServer) string {
		return strings.Replace(ms.endpoint, "/mcp", "/.well-known/oauth-protected-resource/mcp", 1)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	admin := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"admin","arguments":{}}}`
	preflight := map[string]string{"Origin": pageOrigin, "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version"}
	for _, tc := range []struct {
		name   string
		ms     *mcpServer
		method string
		url    func(*mcpServer) string
		hdr    map[string]string
		token  bool // a valid token with scope mcp
		body   string
		status int
		want   map[string]string // "" means absent; "*?" means present
	}{
		{"preflight", front, "OPTIONS", nil, preflight, false, "", 204,
			map[string]string{"Access-Control-Allow-Origin": pageOrigin, "Access-Control-Allow-Headers": "*?", "Access-Control-Allow-Credentials": ""}},
		{"preflight from another origin", front, "OPTIONS", nil, map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}, false, "", 403,
			map[string]string{"Access-Control-Allow-Origin": ""}},
		{"401 readable", front, "POST", nil, map[string]string{"Origin": pageOrigin}, false, initialize, 401,
			map[string]string{"Access-Control-Allow-Origin": pageOrigin, "WWW-Authenticate": "*?",
				"Access-Control-Expose-Headers": "Mcp-Session-Id, WWW-Authenticate", "Vary": "Origin"}},
		{"initialize with a token", front, "POST", nil, map[string]string{"Origin": pageOrigin}, true, initialize, 200,
			map[string]string{"Access-Control-Allow-Origin": pageOrigin, "Mcp-Session-Id": "*?", "Vary": "Origin"}},
		{"403 step-up readable", front, "POST", nil, map[string]string{"Origin": pageOrigin}, true, admin, 403,
			map[string]string{"Access-Control-Allow-Origin": pageOrigin, "WWW-Authenticate": "*?"}},
		{"another origin with a token", front, "POST", nil, map[string]string{"Origin": "https://evil.example"}, true, initialize, 403,
			map[string]string{"Access-Control-Allow-Origin": ""}},
		{"metadata readable from any page", front, "GET", metadata, map[string]string{"Origin": "https://evil.example"}, false, "", 200,
			map[string]string{"Access-Control-Allow-Origin": "*", "Vary": ""}},
		{"metadata preflight", front, "OPTIONS", metadata, map[string]string{"Origin": pageOrigin, "Access-Control-Request-Method": "GET",
			"Access-Control-Request-Headers": "mcp-protocol-version"}, false, "", 204,
			map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "MCP-Protocol-Version, Accept"}},
		// Why the CORS layer goes in front: behind the middleware, the
		// preflight (which carries no token) and the 401 fail.
		{"preflight behind the middleware", inside, "OPTIONS", nil, preflight, false, "", 401,
			map[string]string{"Access-Control-Allow-Origin": ""}},
		{"401 behind the middleware", inside, "POST", nil, map[string]string{"Origin": pageOrigin}, false, initialize, 401,
			map[string]string{"Access-Control-Allow-Origin": ""}},
		{"no CORS by default", plain, "POST", nil, map[string]string{"Origin": pageOrigin}, true, initialize, 403,
			map[string]string{"Access-Control-Allow-Origin": "", "Vary": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.ms.endpoint
			if tc.url != nil {
				u = tc.url(tc.ms)
			}
			req, _ := http.NewRequest(tc.method, u, strings.NewReader(tc.body))
			if tc.method == "POST" {
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			}
			if tc.token {
				req.Header.Set("Authorization", "Bearer "+as.sign(as.claims("alice", tc.ms.endpoint, "mcp")))
			}
			for k, v := range tc.hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			for k, v := range tc.want {
				got := strings.Join(resp.Header.Values(k), ", ")
				if v == "*?" && got == "" || v != "*?" && got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
}
