package authserver_test

import (
	"context"
	"fmt"
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
)

const chromiumPath = "/usr/bin/chromium"

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

// TestConsentInBrowser drives the login and consent pages in headless
// Chromium: sign in, see the client name and the redirect host, Allow and
// land on the redirect URI with a code; then Deny and land with
// access_denied.
func TestConsentInBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("MCPSTACK_REQUIRE_BROWSER") == "1" {
			t.Fatalf("%s is missing (run scripts/install-browser.sh)", chromiumPath)
		}
		t.Skipf("%s is missing (run scripts/install-browser.sh; MCPSTACK_REQUIRE_BROWSER=1 makes this fail)", chromiumPath)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte("wonderland"), bcrypt.MinCost) // fast for the test
	if err != nil {
		t.Fatal(err)
	}
	a := newAS(t, func(c *authserver.Config) {
		c.DevUser = ""
		c.Users = authserver.PasswordUsers{"alice": hash}
	}, nil)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>callback</title><p id="cb">back at the application</p>`)
	}))
	t.Cleanup(cb.Close)
	redirect := cb.URL + "/callback"
	a.addClient(t, "browser-app", oauth.AuthMethodNone, "", redirect)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(900, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	authURL := a.ts.URL + "/authorize?" + authParams("browser-app", redirect, verifier).Encode()
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
	text := func(id string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(id)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	name, host, warning := text("client-name"), text("redirect-host"), text("local-warning")
	if who := text("who"); who != "alice" {
		t.Fatalf("consent page names the user %q", who)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if name != "Test App browser-app" || host != strings.TrimPrefix(cb.URL, "http://") || warning == "" {
		t.Fatalf("consent page shows name %q, host %q, warning %q", name, host, warning)
	}
	path := filepath.Join(artifactDir(t), "consent.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("consent page screenshot: %s", path)

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
	if q.Get("code") == "" || q.Get("state") != "st-123" || q.Get("iss") != a.ts.URL {
		t.Fatalf("Allow landed with %v", q)
	}
	st, tok := a.post(t, "/token", codeForm("browser-app", q.Get("code"), redirect, verifier))
	if st != 200 || tok["access_token"] == nil {
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
