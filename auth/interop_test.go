package auth_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The official go-sdk client (v1.8.0, auth.AuthorizationCodeHandler)
// against our server: it is challenged with 401, authorizes with the scope
// of the challenge, then, calling a tool that needs more, gets our 403
// insufficient_scope challenge and steps up to the union of its scopes and
// the challenged ones, and the retried call succeeds on the same session.
func TestGoSDKStepUp(t *testing.T) {
	as := newTestAS(t)
	ms := newMCPServer(t, as, mcpConfig{})

	var authorizations atomic.Int32
	var scopesAsked []string
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	fetch := func(ctx context.Context, args *sdkauth.AuthorizationArgs) (*sdkauth.AuthorizationResult, error) {
		authorizations.Add(1)
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, err
		}
		scopesAsked = append(scopesAsked, u.Query().Get("scope"))
		req, _ := http.NewRequestWithContext(ctx, "GET", args.URL, nil)
		resp, err := noRedirect.Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || resp.StatusCode != http.StatusFound {
			return nil, errors.New("authorization refused")
		}
		return &sdkauth.AuthorizationResult{Code: loc.Query().Get("code"), State: loc.Query().Get("state")}, nil
	}
	h, err := sdkauth.NewAuthorizationCodeHandler(&sdkauth.AuthorizationCodeHandlerConfig{
		PreregisteredClient:      &oauthex.ClientCredentials{ClientID: "public-client"},
		RedirectURL:              "http://127.0.0.1:1/callback",
		AuthorizationCodeFetcher: fetch,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := sdk.NewClient(&sdk.Implementation{Name: "go-sdk", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ms.endpoint, OAuthHandler: h, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	text := func(name string) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name})
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
	if len(scopesAsked) != 2 || scopesAsked[0] != "mcp" || !slices.Equal(sorted(strings.Fields(scopesAsked[1])), []string{"admin", "mcp"}) {
		t.Fatalf("scopes asked %q", scopesAsked)
	}
	if n := ms.calls.Load(); n != 2 {
		t.Fatalf("tool ran %d times", n)
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }
