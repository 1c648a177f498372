package auth_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// BenchmarkToolsCallAuth measures tools/call over a real Streamable HTTP
// server on loopback, with our client: without authorization, with ES256
// JWT verification behind the verified-token cache, and with a signature
// check on every request.
func BenchmarkToolsCallAuth(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  mcpConfig
	}{
		{"none", mcpConfig{noAuth: true}},
		{"jwt-cache", mcpConfig{}},
		{"jwt-nocache", mcpConfig{noCache: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			as := newTestAS(b)
			ms := newMCPServer(b, as, bc.cfg)
			tok := as.sign(as.claims("bench", ms.endpoint, "mcp"))
			ctx := context.Background()
			tr := &http.Transport{MaxIdleConnsPerHost: 4}
			defer tr.CloseIdleConnections()
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: ms.endpoint, HTTPClient: &http.Client{Transport: bearer{tok, tr}}, DisableStandaloneSSE: true})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			p := &mcp.CallToolRequestParams{Name: "whoami"}
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(ctx, p)
				if err != nil {
					b.Fatal(err)
				}
				if bc.name != "none" && res.Content[0].(*mcp.TextContent).Text != "bench mcp" {
					b.Fatal("principal lost")
				}
			}
		})
	}
}

// BenchmarkMiddleware is the middleware alone in front of a handler that
// does nothing: the per-request cost of the header check, the verifier
// (cached or not), the body peek for per-tool scopes and the context.
func BenchmarkMiddleware(b *testing.B) {
	as := newTestAS(b)
	v, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.issuer, Audience: resource})
	if err != nil {
		b.Fatal(err)
	}
	tok := as.sign(as.claims("bench", resource, "mcp"))
	for _, bc := range []struct {
		name string
		v    auth.Verifier
	}{
		{"none", nil},
		{"jwt-cache", auth.NewCache(v, auth.CacheOptions{})},
		{"jwt-nocache", v},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) })
			if bc.v != nil {
				m, err := auth.New(auth.Options{Resource: resource, Verifier: bc.v, Scopes: []string{"mcp"}, ToolScopes: map[string][]string{"admin": {"admin"}}})
				if err != nil {
					b.Fatal(err)
				}
				h = m.Wrap(h)
			}
			body := []byte(toolsCall)
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest("POST", "/mcp", bytes.NewReader(body))
				r.Header.Set("Authorization", "Bearer "+tok)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatal(w.Code)
				}
			}
		})
	}
}
