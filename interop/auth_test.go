package interop

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/memory"
)

// listen serves h on a free loopback port and returns its base URL.
func listen(t *testing.T, h func(base string) http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	srv := &http.Server{Handler: h(base), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return base
}

// TestGoSDKOAuthStepUp runs the go-sdk's OAuth client (v1.8.0,
// auth.AuthorizationCodeHandler, a pre-registered public client) against
// our resource server and our authorization server: challenged with 401,
// it authorizes with the challenge's scope; calling a tool that needs
// more, it gets our 403 insufficient_scope challenge, steps up to the
// union of its scopes and the challenged ones, and the retried call
// succeeds on the same session.
func TestGoSDKOAuthStepUp(t *testing.T) {
	st := memory.New()
	const redirect = "http://127.0.0.1:1/callback"
	err := st.CreateClient(t.Context(), authserver.Client{Metadata: oauth.ClientMetadata{
		ClientID: "public-client", ClientName: "go-sdk", RedirectURIs: []string{redirect},
		GrantTypes:              []string{oauth.GrantAuthorizationCode, oauth.GrantRefreshToken},
		TokenEndpointAuthMethod: oauth.AuthMethodNone,
	}})
	if err != nil {
		t.Fatal(err)
	}
	issuer := listen(t, func(base string) http.Handler {
		as, err := authserver.New(t.Context(), authserver.Config{
			Issuer:        base,
			Store:         st,
			DevUser:       "user-1",
			Scopes:        []string{"mcp", "admin"},
			TrustedClient: func(authserver.Client) bool { return true }, // no consent page
			Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		return as
	})

	var calls atomic.Int32
	mcpBase := listen(t, func(base string) http.Handler {
		resource := base + "/mcp"
		s := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
		whoami := func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams, in struct{}) (*mcp.CallToolResult, any, error) {
			calls.Add(1)
			pr, _ := auth.PrincipalFromContext(ctx)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: pr.Subject + " " + strings.Join(pr.Scopes, ",")}}}, nil, nil
		}
		mcp.AddTool(s, &mcp.Tool{Name: "whoami"}, whoami)
		mcp.AddTool(s, &mcp.Tool{Name: "admin"}, whoami)
		v, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: issuer, Audience: resource})
		if err != nil {
			t.Fatal(err)
		}
		bearer, err := auth.New(auth.Options{Resource: resource, Verifier: v, Scopes: []string{"mcp"},
			ToolScopes: map[string][]string{"admin": {"admin"}}})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		if err := auth.RegisterMetadata(mux, oauth.ProtectedResourceMetadata{
			Resource: resource, AuthorizationServers: []string{issuer}, ScopesSupported: []string{"mcp", "admin"},
		}); err != nil {
			t.Fatal(err)
		}
		mux.Handle("/mcp", bearer.Wrap(mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s },
			&mcphttp.Options{Identity: auth.SessionIdentity})))
		return mux
	})

	var authorizations atomic.Int32
	var scopesAsked []string
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// The browser: the development user is signed in and the client is
	// trusted, so the authorization endpoint redirects straight back.
	fetch := func(ctx context.Context, args *sdkauth.AuthorizationArgs) (*sdkauth.AuthorizationResult, error) {
		authorizations.Add(1)
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, err
		}
		scopesAsked = append(scopesAsked, u.Query().Get("scope"))
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
		resp, err := noRedirect.Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || resp.StatusCode/100 != 3 || loc.Query().Get("code") == "" {
			return nil, errors.New("authorization refused: " + resp.Status + " " + resp.Header.Get("Location"))
		}
		return &sdkauth.AuthorizationResult{Code: loc.Query().Get("code"), State: loc.Query().Get("state"), Iss: loc.Query().Get("iss")}, nil
	}
	h, err := sdkauth.NewAuthorizationCodeHandler(&sdkauth.AuthorizationCodeHandlerConfig{
		PreregisteredClient:      &oauthex.ClientCredentials{ClientID: "public-client"},
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: fetch,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := sdk.NewClient(&sdk.Implementation{Name: "go-sdk", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: mcpBase + "/mcp", OAuthHandler: h, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	text := func(name string) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res.Content[0].(*sdk.TextContent).Text
	}
	if got := text("whoami"); got != "user-1 mcp" || authorizations.Load() != 1 {
		t.Fatalf("whoami: %q after %d authorizations", got, authorizations.Load())
	}
	// The go-sdk builds the union of scopes in no fixed order.
	if got := text("admin"); got != "user-1 mcp,admin" && got != "user-1 admin,mcp" {
		t.Fatalf("admin after step-up: %q", got)
	}
	if n := authorizations.Load(); n != 2 {
		t.Fatalf("%d authorizations, want 2", n)
	}
	sorted := func(s []string) []string { slices.Sort(s); return s }
	if len(scopesAsked) != 2 || scopesAsked[0] != "mcp" || !slices.Equal(sorted(strings.Fields(scopesAsked[1])), []string{"admin", "mcp"}) {
		t.Fatalf("scopes asked %q", scopesAsked)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("the tool ran %d times, want 2", n)
	}
}
