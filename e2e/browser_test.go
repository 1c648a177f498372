package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/memory"
)

// The consent pages of authserver in a real browser. They live here, not
// in package authserver, so that a module importing authserver does not
// find chromedp in its go.sum (TestUserModuleDependencies), and they use
// only authserver's public API.

const chromiumPath = "/usr/bin/chromium"

// needBrowser skips the test when Chromium is missing, or fails it when
// MCPSTACK_REQUIRE_BROWSER=1 (as CI sets it: scripts/test.sh installs
// Chromium).
func needBrowser(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("MCPSTACK_REQUIRE_BROWSER") == "1" {
			t.Fatalf("%s is missing (run scripts/install-browser.sh)", chromiumPath)
		}
		t.Skipf("%s is missing (run scripts/install-browser.sh; MCPSTACK_REQUIRE_BROWSER=1 makes this fail)", chromiumPath)
	}
}

// browser starts headless Chromium for one test; the context ends with
// the test or after two minutes.
func browser(t *testing.T, width, height int) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancel(); cancelBrowser(); cancelAlloc() })
	return ctx
}

// artifactDir returns where to keep screenshots: $MCPSTACK_ARTIFACTS/<test>
// when set, else t.ArtifactDir when the Go release has it (kept with go test
// -artifacts), else a new temporary directory that is kept.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("MCPSTACK_ARTIFACTS"); d != "" {
		d = filepath.Join(d, t.Name())
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	if ad, ok := any(t).(interface{ ArtifactDir() string }); ok {
		return ad.ArtifactDir()
	}
	d, err := os.MkdirTemp("", "mcpstack-artifacts-")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// screenshot keeps a full-page screenshot as an artifact.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(artifactDir(t), name)
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// pageText returns the text of the element with this id.
func pageText(t *testing.T, ctx context.Context, id string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(id)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// browserAS is an authorization server on a loopback http server (its
// cookies then carry no __Host- prefix, which browsers refuse without
// Secure: the documented fallback) with clients registered in its store.
type browserAS struct {
	url   string
	store *memory.Store
}

const (
	browserResource = "https://mcp.example.test/mcp"
	browserVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-0123456789"
)

func startBrowserAS(t *testing.T, configure func(*authserver.Config)) *browserAS {
	t.Helper()
	var h http.Handler = http.NotFoundHandler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	st := memory.New()
	cfg := authserver.Config{Issuer: ts.URL, Store: st, Resources: []string{browserResource},
		Scopes: []string{"mcp:read", "mcp:write"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	configure(&cfg)
	s, err := authserver.NewServer(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	h = s
	return &browserAS{url: ts.URL, store: st}
}

// addClient registers a public client named "Test App <id>".
func (a *browserAS) addClient(t *testing.T, id string, redirects ...string) {
	t.Helper()
	if err := a.store.CreateClient(context.Background(), authserver.Client{Metadata: oauth.ClientMetadata{
		ClientID: id, ClientName: "Test App " + id, RedirectURIs: redirects,
		GrantTypes:              []string{oauth.GrantAuthorizationCode, oauth.GrantRefreshToken},
		TokenEndpointAuthMethod: oauth.AuthMethodNone,
	}}); err != nil {
		t.Fatal(err)
	}
}

// authorizeURL is a valid authorization request of a client.
func (a *browserAS) authorizeURL(client, redirect string) string {
	return a.url + "/authorize?" + url.Values{
		"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect}, "state": {"st-123"},
		"code_challenge": {oauth.S256Challenge(browserVerifier)}, "code_challenge_method": {"S256"},
		"resource": {browserResource}, "scope": {"mcp:read"},
	}.Encode()
}

// redeem exchanges a code at the token endpoint and returns the status and
// the answer.
func (a *browserAS) redeem(t *testing.T, client, code, redirect string) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(a.url+"/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {client},
		"code": {code}, "redirect_uri": {redirect}, "code_verifier": {browserVerifier}, "resource": {browserResource}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// callbackServer is the application's redirect target: a page with an
// element #cb.
func callbackServer(t *testing.T) *httptest.Server {
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>callback</title><p id="cb">back at the application</p>`)
	}))
	t.Cleanup(cb.Close)
	return cb
}

// TestConsentInBrowser drives the login and consent pages in headless
// Chromium: sign in, see the client name and the redirect host, Allow and
// land on the redirect URI with a code; then Deny and land with
// access_denied.
func TestConsentInBrowser(t *testing.T) {
	needBrowser(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("wonderland"), bcrypt.MinCost) // fast for the test
	if err != nil {
		t.Fatal(err)
	}
	a := startBrowserAS(t, func(c *authserver.Config) { c.Users = authserver.PasswordUsers{"alice": hash} })
	cb := callbackServer(t)
	redirect := cb.URL + "/callback"
	a.addClient(t, "browser-app", redirect)
	ctx := browser(t, 900, 900)

	authURL := a.authorizeURL("browser-app", redirect)
	for i, step := range []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(authURL),
		chromedp.WaitVisible(chromedp.ID("username")),
		chromedp.SendKeys(chromedp.ID("username"), "alice"),
		chromedp.SendKeys(chromedp.ID("password"), "wonderland"),
		chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("allow")),
	} {
		if err := chromedp.Do(ctx, step); err != nil {
			t.Fatalf("login step %d: %v", i, err)
		}
	}
	name, host, warning := pageText(t, ctx, "client-name"), pageText(t, ctx, "redirect-host"), pageText(t, ctx, "local-warning")
	if who := pageText(t, ctx, "who"); who != "alice" {
		t.Fatalf("consent page names the user %q", who)
	}
	screenshot(t, ctx, "consent.png")
	if name != "Test App browser-app" || host != strings.TrimPrefix(cb.URL, "http://") || warning == "" {
		t.Fatalf("consent page shows name %q, host %q, warning %q", name, host, warning)
	}

	landed := func(click string) url.Values {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID(click)), chromedp.WaitVisible(chromedp.ID("cb"))); err != nil {
			t.Fatal(err)
		}
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(loc, redirect+"?") {
			t.Fatalf("landed on %s", loc)
		}
		u, _ := url.Parse(loc)
		return u.Query()
	}
	q := landed("allow")
	if q.Get("code") == "" || q.Get("state") != "st-123" || q.Get("iss") != a.url {
		t.Fatalf("Allow landed with %v", q)
	}
	if st, tok := a.redeem(t, "browser-app", q.Get("code"), redirect); st != 200 || tok["access_token"] == nil {
		t.Fatalf("the code from the browser did not redeem: %d %v", st, tok)
	}

	// Signed in now: the consent page comes straight away; Deny.
	if err := chromedp.Do(ctx, chromedp.Navigate(authURL), chromedp.WaitVisible(chromedp.ID("deny"))); err != nil {
		t.Fatal(err)
	}
	q = landed("deny")
	if q.Get("error") != string(oauth.AccessDenied) || q.Get("code") != "" || q.Get("state") != "st-123" {
		t.Fatalf("Deny landed with %v", q)
	}
}

// TestUpstreamConsentInBrowser drives the upstream sign-in in headless
// Chromium: our consent page (client, exact redirect URI, provider) comes
// first; Allow goes through the provider and back to the application with
// a code, which the page's CSP form-action must let the browser follow; a
// second client of the same user gets the consent page again.
func TestUpstreamConsentInBrowser(t *testing.T) {
	needBrowser(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	prov := &oidcProvider{key: key, codes: map[string]url.Values{}, tokens: map[string]string{}}
	up := httptest.NewServer(prov)
	t.Cleanup(up.Close)
	prov.url = up.URL
	a := startBrowserAS(t, func(c *authserver.Config) {
		c.Upstream = &authserver.UpstreamConfig{Issuer: up.URL, ClientID: e2eUpClient, ClientSecret: e2eUpSecret}
	})
	cb := callbackServer(t)
	redirect1, redirect2 := cb.URL+"/one", cb.URL+"/two"
	a.addClient(t, "app-one", redirect1)
	a.addClient(t, "app-two", redirect2)
	ctx := browser(t, 900, 1000)

	consent := func(client, redirect string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(a.authorizeURL(client, redirect)), chromedp.WaitVisible(chromedp.ID("allow"))); err != nil {
			t.Fatal(err)
		}
		if got := pageText(t, ctx, "client-name"); got != "Test App "+client {
			t.Fatalf("consent page names %q", got)
		}
		if got := pageText(t, ctx, "redirect-uri"); got != redirect {
			t.Fatalf("consent page shows redirect URI %q", got)
		}
		if got := pageText(t, ctx, "upstream-host"); got != strings.TrimPrefix(up.URL, "http://") {
			t.Fatalf("consent page names the provider %q", got)
		}
	}

	consent("app-one", redirect1)
	if prov.signIns() != 0 {
		t.Fatal("the provider was visited before consent")
	}
	screenshot(t, ctx, "upstream-consent.png")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("allow")), chromedp.WaitVisible(chromedp.ID("cb"))); err != nil {
		t.Fatal(err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(loc)
	if !strings.HasPrefix(loc, redirect1+"?") || u.Query().Get("code") == "" || prov.signIns() != 1 {
		t.Fatalf("Allow landed on %s after %d upstream visits", loc, prov.signIns())
	}
	// Signed in, and app-one approved: a second client still asks.
	consent("app-two", redirect2)
	if prov.signIns() != 1 {
		t.Fatal("the second client's request reached the provider before consent")
	}
}
