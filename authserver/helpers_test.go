package authserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/memory"
)

// testAS is an authorization server on a loopback httptest server.
type testAS struct {
	*authserver.Server
	ts    *httptest.Server
	store *memory.Store
	http  *http.Client // follows no redirects
}

const testResource = "https://mcp.example.test/mcp"

// newAS starts a server; configure may change the config before New. With
// tlsServer set the server speaks TLS with that config.
func newAS(t testing.TB, configure func(*authserver.Config), tlsServer *httptest.Server) *testAS {
	t.Helper()
	var h http.Handler = http.NotFoundHandler()
	ts := tlsServer
	if ts == nil {
		ts = httptest.NewUnstartedServer(nil)
	}
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) })
	if ts.TLS != nil {
		ts.StartTLS()
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	st := memory.New()
	cfg := authserver.Config{
		Issuer:    ts.URL,
		Store:     st,
		DevUser:   "alice",
		Resources: []string{testResource},
		Scopes:    []string{"mcp:read", "mcp:write"},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if configure != nil {
		configure(&cfg)
	}
	s, err := authserver.NewServer(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	h = s
	c := ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &testAS{Server: s, ts: ts, store: st, http: c}
}

// trustAll makes every client trusted, so codes come without consent.
func trustAll(c *authserver.Config) { c.TrustedClient = func(authserver.Client) bool { return true } }

const loopbackRedirect = "http://127.0.0.1:8765/callback"

// addClient registers a client directly in the store.
func (a *testAS) addClient(t testing.TB, id, method, secret string, redirects ...string) {
	t.Helper()
	c := authserver.Client{Metadata: oauth.ClientMetadata{
		ClientID: id, ClientName: "Test App " + id, RedirectURIs: redirects,
		GrantTypes:              []string{oauth.GrantAuthorizationCode, oauth.GrantRefreshToken},
		TokenEndpointAuthMethod: method,
	}}
	if secret != "" {
		c.SecretHash = authserver.HashSecret(secret)
	}
	if err := a.store.CreateClient(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

// authParams returns a valid authorization request for a client.
func authParams(clientID, redirect, verifier string) url.Values {
	return url.Values{
		"response_type":         {"code"},
		"client_id":             {clientID},
		"redirect_uri":          {redirect},
		"state":                 {"st-123"},
		"code_challenge":        {oauth.S256Challenge(verifier)},
		"code_challenge_method": {"S256"},
		"resource":              {testResource},
		"scope":                 {"mcp:read"},
	}
}

func (a *testAS) authorize(t testing.TB, q url.Values) *http.Response {
	t.Helper()
	resp, err := a.http.Get(a.ts.URL + "/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// redirectParams checks for a redirect to the expected URI and returns its
// query.
func redirectParams(t testing.TB, resp *http.Response, wantPrefix string) url.Values {
	t.Helper()
	if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, want a redirect; body %s", resp.StatusCode, b)
	}
	loc := resp.Header.Get("Location")
	if !strings.HasPrefix(loc, wantPrefix+"?") {
		t.Fatalf("redirect to %q, want %q", loc, wantPrefix)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// code runs a trusted authorization request and returns the code.
func (a *testAS) code(t *testing.T, clientID, redirect, verifier string) string {
	t.Helper()
	q := redirectParams(t, a.authorize(t, authParams(clientID, redirect, verifier)), redirect)
	if q.Get("error") != "" || q.Get("code") == "" || q.Get("state") != "st-123" || q.Get("iss") != a.ts.URL {
		t.Fatalf("authorization response %v", q)
	}
	return q.Get("code")
}

// post posts a form and decodes the JSON answer.
func (a *testAS) post(t testing.TB, path string, form url.Values, basic ...string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if len(basic) == 2 {
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	resp, err := a.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if len(b) > 0 {
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: not JSON: %s", path, b)
		}
	}
	return resp.StatusCode, m
}

func codeForm(clientID, code, redirect, verifier string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "client_id": {clientID}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {testResource}}
}

// wantError checks an OAuth error answer.
func wantError(t *testing.T, status int, body map[string]any, wantStatus int, wantCode oauth.ErrorCode) {
	t.Helper()
	if status != wantStatus || body["error"] != string(wantCode) {
		t.Fatalf("got %d %v, want %d %s", status, body, wantStatus, wantCode)
	}
}

var errorCodeRE = regexp.MustCompile(`<code id="error">([a-z_]+)</code>`)

// wantPageError checks an error page that was shown instead of redirecting.
func wantPageError(t *testing.T, resp *http.Response, wantStatus int, wantCode oauth.ErrorCode) {
	t.Helper()
	b, _ := io.ReadAll(resp.Body)
	m := errorCodeRE.FindSubmatch(b)
	if resp.StatusCode != wantStatus || m == nil || string(m[1]) != string(wantCode) {
		t.Fatalf("got %d %s (Location %q), want %d page with %s", resp.StatusCode, b, resp.Header.Get("Location"), wantStatus, wantCode)
	}
	if resp.Header.Get("Location") != "" {
		t.Fatal("error page redirected")
	}
}

const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-0123456789"
