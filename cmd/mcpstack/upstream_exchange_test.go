package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/store/memory"
)

func TestUpstreamExchangeFlags(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	must(t, os.WriteFile(secret, []byte("s3cret\n"), 0o600))
	up := []string{"--upstream-issuer", "https://idp.example", "--upstream-client-id", "x", "--upstream-client-secret-file", secret}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"authserver: exchange without upstream", []string{"authserver", "--user", "a:b", "--upstream-exchange-client-id", "rs", "--upstream-exchange-secret-file", secret, "--upstream-exchange-resource", "https://rs.example/mcp"}, "needs --upstream-issuer"},
		{"authserver: no secret", append(append([]string{"authserver"}, up...), "--upstream-exchange-client-id", "rs", "--upstream-exchange-resource", "https://rs.example/mcp"), "--upstream-exchange-secret-file"},
		{"authserver: no resource", append(append([]string{"authserver"}, up...), "--upstream-exchange-client-id", "rs", "--upstream-exchange-secret-file", secret), "--upstream-exchange-resource"},
		{"authserver: bad resource", append(append([]string{"authserver"}, up...), "--upstream-exchange-client-id", "rs", "--upstream-exchange-secret-file", secret, "--upstream-exchange-resource", "rs#frag"), "--upstream-exchange-resource"},
		{"authserver: secret without id", append(append([]string{"authserver"}, up...), "--upstream-exchange-secret-file", secret), "need --upstream-exchange-client-id"},
		{"serve: without --issuer", []string{"serve", "--addr", "127.0.0.1:0", "--upstream-issuer", "https://idp.example", "--upstream-exchange-client-id", "rs", "--upstream-exchange-secret-file", secret}, "need --issuer"},
		{"serve: no client", []string{"serve", "--addr", "127.0.0.1:0", "--issuer", "https://as.example", "--upstream-issuer", "https://idp.example"}, "go together"},
		{"serve: plain http upstream", []string{"serve", "--addr", "127.0.0.1:0", "--issuer", "https://as.example", "--upstream-issuer", "http://idp.example", "--upstream-exchange-client-id", "rs", "--upstream-exchange-secret-file", secret}, "https"},
		{"serve: plain http user-info", []string{"serve", "--addr", "127.0.0.1:0", "--issuer", "https://as.example", "--upstream-issuer", "https://idp.example", "--upstream-userinfo-url", "http://api.example/user", "--upstream-exchange-client-id", "rs", "--upstream-exchange-secret-file", secret}, "https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, "", tc.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
		})
	}
	for cmd, flags := range map[string][]string{
		"authserver": {"-upstream-exchange-client-id ID", "-upstream-exchange-secret-file FILE", "-upstream-exchange-resource URI"},
		"serve":      {"-upstream-issuer URL", "-upstream-userinfo-url URL", "-upstream-exchange-client-id ID", "-upstream-exchange-secret-file FILE", "whoami_upstream"},
	} {
		r := runCmd(t, "", cmd, "--help")
		for _, f := range flags {
			if !strings.Contains(r.stdout+r.stderr, f) {
				t.Errorf("%s --help lacks %q", cmd, f)
			}
		}
	}
}

// The exchange client is created once, and a restart with another secret
// (or over a public client of that id) is refused, not silently applied.
func TestEnsureConfidentialClient(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	must(t, ensureConfidentialClient(ctx, st, "rs", "secret-1"))
	must(t, ensureConfidentialClient(ctx, st, "rs", "secret-1"))
	c, err := st.Client(ctx, "rs")
	if err != nil || c.AuthMethod() != "client_secret_basic" || len(c.SecretHash) == 0 {
		t.Fatalf("%+v %v", c, err)
	}
	if err := ensureConfidentialClient(ctx, st, "rs", "secret-2"); err == nil {
		t.Fatal("another secret accepted")
	}
	pub := c.Metadata
	pub.ClientID, pub.TokenEndpointAuthMethod = "pub", "none"
	must(t, st.CreateClient(ctx, authserver.Client{Metadata: pub}))
	if err := ensureConfidentialClient(ctx, st, "pub", "secret-1"); err == nil {
		t.Fatal("a public client taken as the exchange client")
	}
}

type tokenFunc func(ctx context.Context) (string, error)

func (f tokenFunc) Token(ctx context.Context) (string, error) { return f(ctx) }

// whoami_upstream sends the upstream token, and only it, to the user-info
// endpoint, found in the provider's metadata, and returns its answer; a
// failure to get the token is a tool error that does not leak it.
func TestWhoamiUpstream(t *testing.T) {
	var gotAuth []string
	var idp *httptest.Server
	idp = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"issuer": idp.URL, "userinfo_endpoint": idp.URL + "/me",
				"authorization_endpoint": idp.URL + "/a", "token_endpoint": idp.URL + "/t", "response_types_supported": []string{"code"}})
		case "/me":
			gotAuth = append(gotAuth, r.Header.Get("Authorization"))
			w.Write([]byte(`{"sub":"u-1"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(idp.Close)
	ok := &upstreamTool{src: tokenFunc(func(context.Context) (string, error) { return "upstream-token", nil }),
		issuer: idp.URL, http: idp.Client()}
	res, err := ok.call(t.Context(), nil, &mcp.CallToolRequestParams{Name: "whoami_upstream"})
	if err != nil || isErr(res) || res.Content[0].(*mcp.TextContent).Text != `{"sub":"u-1"}` {
		t.Fatalf("%+v %v", res, err)
	}
	if len(gotAuth) != 1 || gotAuth[0] != "Bearer upstream-token" {
		t.Fatalf("user-info saw %q", gotAuth)
	}
	failing := &upstreamTool{src: tokenFunc(func(context.Context) (string, error) { return "", context.DeadlineExceeded }),
		issuer: idp.URL, userInfo: idp.URL + "/me", http: idp.Client()}
	res, err = failing.call(t.Context(), nil, &mcp.CallToolRequestParams{Name: "whoami_upstream"})
	if err != nil || !isErr(res) || len(gotAuth) != 1 {
		t.Fatalf("%+v %v, user-info called %d times", res, err, len(gotAuth))
	}
}

func isErr(r *mcp.CallToolResult) bool { return r.IsError != nil && *r.IsError }
