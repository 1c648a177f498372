package auth_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/oauth"
)

// staticVerifier accepts the token "good" with the scope "mcp" only.
var staticVerifier = auth.VerifierFunc(func(ctx context.Context, token string) (*auth.Principal, error) {
	if token != "good" {
		return nil, &auth.TokenError{Reason: "unknown token"}
	}
	return &auth.Principal{Subject: "alice", Scopes: []string{"mcp"}, Expiry: time.Now().Add(time.Hour)}, nil
})

// The middleware's answers: no token, a bad token, a token in the query
// string, a token lacking the scope a tool needs, and a good request.
func ExampleMiddleware() {
	m, err := auth.New(auth.Options{
		Resource:   "https://mcp.example.com/mcp",
		Verifier:   staticVerifier,
		Scopes:     []string{"mcp"},
		ToolScopes: map[string][]string{"deploy": {"deploy"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.PrincipalFromContext(r.Context())
		fmt.Println("handler sees", p.Subject)
	}))
	try := func(target, authz, body string) {
		r := httptest.NewRequest("POST", target, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	try("/mcp", "", list)
	try("/mcp", "Bearer bad", list)
	try("/mcp?access_token=good", "", list)
	try("/mcp", "Bearer good", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy"}}`)
	try("/mcp", "Bearer good", list)
	// Output:
	// 401 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp"
	// 401 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp", error="invalid_token", error_description="unknown token"
	// 400 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error="invalid_request", error_description="access tokens are accepted in the Authorization header only"
	// 403 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp deploy", error="insufficient_scope", error_description="the request needs scope deploy"
	// handler sees alice
	// 200
}

// The protected resource metadata document, as clients fetch it.
func ExampleMetadataHandler() {
	h, err := auth.MetadataHandler(oauth.ProtectedResourceMetadata{
		Resource:             "https://mcp.example.com/mcp",
		AuthorizationServers: []string{"https://auth.example.com"},
		ScopesSupported:      []string{"mcp", "deploy"},
	})
	if err != nil {
		log.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/.well-known/oauth-protected-resource/mcp", nil))
	fmt.Println(w.Header().Get("Cache-Control"), w.Header().Get("Access-Control-Allow-Origin"))
	fmt.Println(w.Body.String())
	// Output:
	// public, max-age=3600 *
	// {"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["mcp","deploy"],"bearer_methods_supported":["header"]}
}

// The scope strategies on one refused request: the token has mcp and
// email, the tool needs mcp and deploy, and deploy goes with deploy:read.
func ExampleScopeStrategy() {
	for _, s := range []auth.ScopeStrategy{auth.ScopeMinimum, auth.ScopeRecommended, auth.ScopeExtended} {
		m, _ := auth.New(auth.Options{
			Resource: "https://mcp.example.com/mcp",
			Verifier: auth.VerifierFunc(func(context.Context, string) (*auth.Principal, error) {
				return &auth.Principal{Subject: "a", Scopes: []string{"mcp", "email", "files"}}, nil
			}),
			Scopes:          []string{"mcp"},
			ToolScopes:      map[string][]string{"deploy": {"deploy"}},
			ScopesSupported: []string{"mcp", "files", "deploy", "deploy:read"},
			RelatedScopes:   map[string][]string{"deploy": {"deploy:read"}},
			Strategy:        s,
		})
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy"}}`))
		r.Header.Set("Authorization", "Bearer t")
		w := httptest.NewRecorder()
		m.Wrap(http.NotFoundHandler()).ServeHTTP(w, r)
		c, _ := oauth.ParseBearerChallenge(w.Header().Values("WWW-Authenticate"))
		fmt.Printf("%-11s %s\n", s, oauth.JoinScope(c.Scope))
	}
	// Output:
	// minimum     mcp deploy
	// recommended mcp files deploy
	// extended    mcp files deploy deploy:read
}

// Wiring an MCP server: metadata at its well-known paths, the endpoint
// guarded by the middleware with a cached JWT verifier, and sessions bound
// to the principal that created them.
func ExampleSessionIdentity() {
	const endpoint = "https://mcp.example.com/mcp"
	jwt, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: "https://auth.example.com", Audience: endpoint})
	if err != nil {
		log.Fatal(err)
	}
	m, err := auth.New(auth.Options{Resource: endpoint, Verifier: auth.NewCache(jwt, auth.CacheOptions{}), Scopes: []string{"mcp"}})
	if err != nil {
		log.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "example", Version: "1.0.0"}, nil)
	handler := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return server },
		&mcphttp.Options{Identity: auth.SessionIdentity, AllowedHosts: []string{"mcp.example.com"}})
	mux := http.NewServeMux()
	mux.Handle("/mcp", m.Wrap(handler))
	if err := auth.RegisterMetadata(mux, oauth.ProtectedResourceMetadata{
		Resource:             endpoint,
		AuthorizationServers: []string{"https://auth.example.com"},
		ScopesSupported:      []string{"mcp"},
	}); err != nil {
		log.Fatal(err)
	}
	_ = mux // serve it with http.Server over TLS
}

// Calling an upstream API from a tool handler: with a token exchanged for
// the caller's (RFC 8693), never with the caller's own token.
func ExampleTokenExchange() {
	upstream := auth.UpstreamClient(&auth.TokenExchange{
		TokenURL:     "https://auth.example.com/token",
		ClientID:     "mcp-server",
		ClientSecret: "secret",
		Resource:     "https://api.example.com",
		Scopes:       []string{"files:read"},
	}, nil)
	tool := func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", "https://api.example.com/files", nil)
		if err != nil {
			return nil, err
		}
		resp, err := upstream.Do(req) // carries the exchanged token
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: resp.Status}}}, nil
	}
	_ = tool
}
