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

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// TestUpstreamConsentInBrowser drives the upstream sign-in in headless
// Chromium: our consent page (client, exact redirect URI, provider) comes
// first; Allow goes through the provider and back to the application with
// a code, which the page's CSP form-action must let the browser follow; a
// second client of the same user gets the consent page again.
func TestUpstreamConsentInBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("MCPSTACK_REQUIRE_BROWSER") == "1" {
			t.Fatalf("%s is missing (run scripts/install-browser.sh)", chromiumPath)
		}
		t.Skipf("%s is missing (run scripts/install-browser.sh; MCPSTACK_REQUIRE_BROWSER=1 makes this fail)", chromiumPath)
	}
	prov := newFakeProvider(t, false)
	// On http (a loopback issuer) the cookies carry no __Host- prefix,
	// which browsers refuse without Secure: the documented fallback.
	a := newAS(t, func(c *authserver.Config) {
		c.DevUser = ""
		c.Upstream = &authserver.UpstreamConfig{Issuer: prov.ts.URL, ClientID: upClientID, ClientSecret: upClientSecret}
	}, nil)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>callback</title><p id="cb">back at the application</p>`)
	}))
	t.Cleanup(cb.Close)
	redirect1, redirect2 := cb.URL+"/one", cb.URL+"/two"
	a.addClient(t, "app-one", oauth.AuthMethodNone, "", redirect1)
	a.addClient(t, "app-two", oauth.AuthMethodNone, "", redirect2)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(900, 1000),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	text := func(id string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(id)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	consent := func(client, redirect string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(a.ts.URL+"/authorize?"+authParams(client, redirect, verifier).Encode()),
			chromedp.WaitVisible(chromedp.ID("allow"))); err != nil {
			t.Fatal(err)
		}
		if got := text("client-name"); got != "Test App "+client {
			t.Fatalf("consent page names %q", got)
		}
		if got := text("redirect-uri"); got != redirect {
			t.Fatalf("consent page shows redirect URI %q", got)
		}
		if got := text("upstream-host"); got != strings.TrimPrefix(prov.ts.URL, "http://") {
			t.Fatalf("consent page names the provider %q", got)
		}
	}

	consent("app-one", redirect1)
	if prov.authorizeCount() != 0 {
		t.Fatal("the provider was visited before consent")
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(artifactDir(t), "upstream-consent.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("upstream consent page screenshot: %s", path)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("allow")), chromedp.WaitVisible(chromedp.ID("cb"))); err != nil {
		t.Fatal(err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(loc)
	if !strings.HasPrefix(loc, redirect1+"?") || u.Query().Get("code") == "" || prov.authorizeCount() != 1 {
		t.Fatalf("Allow landed on %s after %d upstream visits", loc, prov.authorizeCount())
	}
	// Signed in, and app-one approved: a second client still asks.
	consent("app-two", redirect2)
	if prov.authorizeCount() != 1 {
		t.Fatal("the second client's request reached the provider before consent")
	}
}
