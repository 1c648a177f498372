package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/oauth"
)

// mcpServer is a real MCP server on Streamable HTTP behind the middleware,
// with sessions bound to the principal, on a loopback listener.
type mcpServer struct {
	srv      *httptest.Server
	endpoint string
	calls    atomic.Int32 // tool calls that ran
}

// mcpConfig varies the server: no middleware at all, or no token cache;
// cors lets pages on other origins in (with mcphttp.CORS in front of the
// middleware unless corsInside).
type mcpConfig struct {
	noAuth, noCache bool
	cors            *mcphttp.CORSOptions
	corsInside      bool
}

func newMCPServer(t testing.TB, as *testAS, cfg mcpConfig) *mcpServer {
	t.Helper()
	ms := &mcpServer{}
	ms.srv = httptest.NewUnstartedServer(nil)
	ms.endpoint = "http://" + ms.srv.Listener.Addr().String() + "/mcp"
	s := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	whoami := func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		ms.calls.Add(1)
		pr, ok := auth.PrincipalFromContext(ctx)
		if !ok {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "nobody"}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: pr.Subject + " " + strings.Join(pr.Scopes, ",")}}}, nil
	}
	for _, name := range []string{"whoami", "admin"} {
		if err := s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, whoami); err != nil {
			t.Fatal(err)
		}
	}
	v, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.issuer, Audience: ms.endpoint})
	if err != nil {
		t.Fatal(err)
	}
	var verifier auth.Verifier = v
	if !cfg.noCache {
		verifier = auth.NewCache(v, auth.CacheOptions{})
	}
	m, err := auth.New(auth.Options{Resource: ms.endpoint, Verifier: verifier, Scopes: []string{"mcp"},
		ToolScopes: map[string][]string{"admin": {"admin"}}})
	if err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s }, &mcphttp.Options{Identity: auth.SessionIdentity, CORS: cfg.cors})
	mux := http.NewServeMux()
	switch {
	case cfg.noAuth:
		mux.Handle("/mcp", h)
	case cfg.cors != nil && !cfg.corsInside:
		mux.Handle("/mcp", mcphttp.CORS(m.Wrap(h), cfg.cors))
	default:
		mux.Handle("/mcp", m.Wrap(h))
	}
	if err := auth.RegisterMetadata(mux, oauth.ProtectedResourceMetadata{
		Resource: ms.endpoint, AuthorizationServers: []string{as.issuer}, ScopesSupported: []string{"mcp", "admin"},
	}); err != nil {
		t.Fatal(err)
	}
	ms.srv.Config.Handler = mux
	ms.srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		h.Shutdown(ctx)
		ms.srv.Close()
	})
	return ms
}

// bearer is a RoundTripper adding a fixed token.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func post(t *testing.T, url, token, session, body string) *http.Response {
	t.Helper()
	r, _ := http.NewRequest("POST", url, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		r.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// The handler sees the principal; a session created by alice cannot be
// used with bob's token, even a perfectly valid one.
func TestSessionBoundToPrincipal(t *testing.T) {
	as := newTestAS(t)
	ms := newMCPServer(t, as, mcpConfig{})
	alice := as.sign(as.claims("alice", ms.endpoint, "mcp"))
	bob := as.sign(as.claims("bob", ms.endpoint, "mcp"))

	resp := post(t, ms.endpoint, alice, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	resp = post(t, ms.endpoint, alice, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	if resp.StatusCode != 202 {
		t.Fatalf("initialized: %d", resp.StatusCode)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	resp = post(t, ms.endpoint, bob, sid, call)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || ms.calls.Load() != 0 || strings.Contains(string(body), "result") {
		t.Fatalf("bob on alice's session: %d %q, tool calls %d", resp.StatusCode, body, ms.calls.Load())
	}
	// Without a token at all: 401 from the middleware, before the session
	// is looked up.
	resp = post(t, ms.endpoint, "", sid, call)
	resp.Body.Close()
	want := `Bearer resource_metadata="` + strings.Replace(ms.endpoint, "/mcp", "/.well-known/oauth-protected-resource/mcp", 1) + `", scope="mcp"`
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != want {
		t.Fatalf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	resp = post(t, ms.endpoint, alice, sid, call)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `alice mcp`) || ms.calls.Load() != 1 {
		t.Fatalf("alice: %d %q", resp.StatusCode, body)
	}
	// A new token for alice (same principal) keeps the session.
	alice2 := as.sign(as.claims("alice", ms.endpoint, "mcp", "extra"))
	resp = post(t, ms.endpoint, alice2, sid, strings.Replace(call, `"id":2`, `"id":3`, 1))
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `alice mcp,extra`) {
		t.Fatalf("alice's new token: %d %q", resp.StatusCode, body)
	}
}

// Our own client over Streamable HTTP: the tool handler sees the
// principal; a tool needing more scope gets a 403 with the step-up
// challenge, which the client reports with the header.
func TestMCPClientThroughMiddleware(t *testing.T) {
	as := newTestAS(t)
	ms := newMCPServer(t, as, mcpConfig{})
	tok := as.sign(as.claims("carol", ms.endpoint, "mcp"))
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: ms.endpoint, HTTPClient: &http.Client{Transport: bearer{tok, http.DefaultTransport}}, DisableStandaloneSSE: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "whoami"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "carol mcp" {
		t.Fatalf("whoami: %q", got)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "admin"})
	var he *mcphttp.StatusError
	if !errors.As(err, &he) || he.StatusCode != 403 {
		t.Fatalf("admin: %v", err)
	}
	bc, ok := oauth.ParseBearerChallenge(he.Header.Values("WWW-Authenticate"))
	if !ok || bc.Error != oauth.InsufficientScope || oauth.JoinScope(bc.Scope) != "mcp admin" {
		t.Fatalf("challenge %+v", bc)
	}
}
