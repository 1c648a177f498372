package authserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// upTestAS is an authorization server over TLS delegating sign-in to prov.
func newUpstreamAS(t testing.TB, prov *fakeProvider, configure func(*authserver.Config)) *testAS {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	ts.TLS = &tls.Config{}
	return newAS(t, func(c *authserver.Config) {
		c.DevUser = ""
		up := &authserver.UpstreamConfig{Issuer: prov.ts.URL, ClientID: upClientID, ClientSecret: upClientSecret}
		if prov.github {
			up.AuthorizationURL, up.TokenURL, up.UserInfoURL = prov.ts.URL+"/authorize", prov.ts.URL+"/token", prov.ts.URL+"/user"
			up.Scopes, up.SubjectClaim = []string{"read:user"}, "id"
		}
		c.Upstream = up
		if configure != nil {
			configure(c)
		}
	}, ts)
}

// browser is a stand-in for a person's browser: a cookie jar, redirects
// followed one at a time so that tests can look at each.
type browser struct {
	t testing.TB
	c *http.Client
	// setCookies lists every Set-Cookie header the browser received.
	setCookies []string
}

func newBrowser(t testing.TB, a *testAS) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, c: &http.Client{Transport: a.ts.Client().Transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(req *http.Request) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	b.setCookies = append(b.setCookies, resp.Header.Values("Set-Cookie")...)
	return resp, string(body)
}

func (b *browser) get(u string) (*http.Response, string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	return b.do(req)
}

// follow follows redirects until one leads to the client's redirect URI
// (returned as a URL, not visited) or a page is shown.
func (b *browser) follow(u, clientRedirect string) (final *url.URL, resp *http.Response, body string) {
	b.t.Helper()
	for range 10 {
		resp, body = b.get(u)
		if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
			return nil, resp, body
		}
		next, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
		if err != nil {
			b.t.Fatal(err)
		}
		if strings.HasPrefix(next.String(), clientRedirect+"?") {
			return next, resp, body
		}
		u = next.String()
	}
	b.t.Fatal("too many redirects")
	return nil, nil, ""
}

var (
	csrfRE    = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	requestRE = regexp.MustCompile(`name="request" value="([^"]+)"`)
)

// answer posts the consent form of page with the action, from origin.
func (b *browser) answer(a *testAS, page, action, origin string) (*http.Response, string) {
	b.t.Helper()
	cs, rq := csrfRE.FindStringSubmatch(page), requestRE.FindStringSubmatch(page)
	if cs == nil || rq == nil {
		b.t.Fatalf("no consent form in %s", page)
	}
	form := url.Values{"csrf": {unescapeHTML(cs[1])}, "request": {unescapeHTML(rq[1])}, "action": {action}}
	req, _ := http.NewRequest(http.MethodPost, a.ts.URL+"/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return b.do(req)
}

func unescapeHTML(s string) string {
	return strings.NewReplacer("&#43;", "+", "&#61;", "=", "&amp;", "&").Replace(s)
}

const (
	clientA   = "client-a"
	clientB   = "client-b-malicious"
	redirectA = "http://127.0.0.1:7001/cb"
	redirectB = "http://127.0.0.1:7002/cb"
)

// addClients registers two public clients, as Dynamic Client Registration
// would.
func addClients(t *testing.T, a *testAS) {
	a.addClient(t, clientA, oauth.AuthMethodNone, "", redirectA)
	a.addClient(t, clientB, oauth.AuthMethodNone, "", redirectB)
}

// consentPage opens the authorization request of a client and wants our
// consent page.
func (b *browser) consentPage(a *testAS, clientID, redirect string) string {
	b.t.Helper()
	resp, page := b.get(a.ts.URL + "/authorize?" + authParams(clientID, redirect, verifier).Encode())
	if resp.StatusCode != 200 || !strings.Contains(page, `id="redirect-uri"`) {
		b.t.Fatalf("want the consent page, got %d %s %s", resp.StatusCode, resp.Header.Get("Location"), page)
	}
	return page
}

// signIn runs consent and the upstream sign-in and returns the client's
// authorization response.
func (b *browser) signIn(a *testAS, clientID, redirect string) url.Values {
	b.t.Helper()
	page := b.consentPage(a, clientID, redirect)
	resp, _ := b.answer(a, page, "allow", a.ts.URL)
	if resp.StatusCode != http.StatusSeeOther {
		b.t.Fatalf("allow: status %d", resp.StatusCode)
	}
	final, resp, body := b.follow(resp.Header.Get("Location"), redirect)
	if final == nil {
		b.t.Fatalf("sign-in ended on %d %s", resp.StatusCode, body)
	}
	return final.Query()
}

func redeem(t *testing.T, a *testAS, clientID, redirect, code string) map[string]any {
	t.Helper()
	status, body := a.post(t, "/token", codeForm(clientID, code, redirect, verifier))
	if status != 200 {
		t.Fatalf("token: %d %v", status, body)
	}
	return body
}

func TestUpstreamOIDCSignIn(t *testing.T) {
	prov := newFakeProvider(t, false)
	a := newUpstreamAS(t, prov, nil)
	addClients(t, a)
	b := newBrowser(t, a)

	page := b.consentPage(a, clientA, redirectA)
	for _, want := range []string{"Test App " + clientA, redirectA, "mcp:read", "openid", strings.TrimPrefix(prov.ts.URL, "http://")} {
		if !strings.Contains(page, want) {
			t.Errorf("consent page does not show %q", want)
		}
	}
	if n := prov.authorizeCount(); n != 0 {
		t.Fatalf("the provider was visited %d times before consent", n)
	}
	q := b.signIn(a, clientA, redirectA)
	if q.Get("code") == "" || q.Get("state") != "st-123" {
		t.Fatalf("authorization response %v", q)
	}
	up := prov.authorize[0]
	if up.Get("code_challenge_method") != "S256" || up.Get("nonce") == "" || up.Get("redirect_uri") != a.ts.URL+"/upstream/callback" {
		t.Fatalf("upstream request %v", up)
	}
	tok := redeem(t, a, clientA, redirectA, q.Get("code"))
	claims := decodeJWT(t, tok["access_token"].(string))
	wantSub := prov.ts.URL + "#user-1"
	if claims["sub"] != wantSub {
		t.Fatalf("sub %v, want %s", claims["sub"], wantSub)
	}
	if strings.Contains(tok["access_token"].(string), "up-at-") || tok["upstream_token"] != nil {
		t.Fatal("upstream token sent to the MCP client")
	}
	got, err := a.UpstreamAccessToken(context.Background(), wantSub)
	if err != nil || !strings.HasPrefix(got, "up-at-user-1-") {
		t.Fatalf("UpstreamAccessToken = %q, %v", got, err)
	}

	// The same user and client again: approved in this browser, no consent.
	resp, _ := b.get(a.ts.URL + "/authorize?" + authParams(clientA, redirectA, verifier).Encode())
	if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, redirectA+"?code=") {
		t.Fatalf("approved client: %d %s", resp.StatusCode, loc)
	}
	// A second client of the same user is asked about again.
	b.consentPage(a, clientB, redirectB)
	if n := prov.authorizeCount(); n != 1 {
		t.Fatalf("provider visited %d times", n)
	}
}

func TestUpstreamGitHubStyleSignIn(t *testing.T) {
	prov := newFakeProvider(t, true)
	a := newUpstreamAS(t, prov, nil)
	addClients(t, a)
	q := newBrowser(t, a).signIn(a, clientA, redirectA)
	claims := decodeJWT(t, redeem(t, a, clientA, redirectA, q.Get("code"))["access_token"].(string))
	if want := prov.ts.URL + "#4242"; claims["sub"] != want {
		t.Fatalf("sub %v, want %s", claims["sub"], want)
	}
	if prov.authorize[0].Get("nonce") != "" || prov.authorize[0].Get("scope") != "read:user" {
		t.Fatalf("upstream request %v", prov.authorize[0])
	}
}

// The attack of the MCP security best practices: the user approved client
// A; a malicious client B, registered dynamically, sends the same user to
// the authorization endpoint. The provider remembers its consent for the
// static client id, so without our own per-client consent B would get a
// code. It must get our consent page instead, whatever cookies it reuses.
func TestUpstreamConfusedDeputyConsentCookieReuse(t *testing.T) {
	prov := newFakeProvider(t, false)
	a := newUpstreamAS(t, prov, nil)
	addClients(t, a)
	b := newBrowser(t, a)
	b.signIn(a, clientA, redirectA)
	u, _ := url.Parse(a.ts.URL)
	var consentA *http.Cookie
	for _, c := range b.c.Jar.Cookies(u) {
		if strings.HasPrefix(c.Name, "__Host-mcp_consent_") {
			consentA = c
		}
	}
	if consentA == nil {
		t.Fatal("no __Host- consent cookie after approval")
	}
	for _, tc := range []struct {
		name   string
		cookie func() *http.Cookie // an extra cookie the attacker plants, or nil
	}{
		{"session and A's consent cookie", func() *http.Cookie { return nil }},
		{"A's consent value under B's cookie name", func() *http.Cookie {
			return &http.Cookie{Name: consentCookieNameFor(t, a, b, clientB), Value: consentA.Value}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, a.ts.URL+"/authorize?"+authParams(clientB, redirectB, verifier).Encode(), nil)
			if c := tc.cookie(); c != nil {
				req.AddCookie(c)
			}
			before := prov.authorizeCount()
			resp, page := b.do(req)
			if resp.StatusCode != 200 || !strings.Contains(page, `id="redirect-uri"`) {
				t.Fatalf("client B got %d %s, want the consent page", resp.StatusCode, resp.Header.Get("Location"))
			}
			if prov.authorizeCount() != before {
				t.Fatal("client B's request reached the provider before consent")
			}
		})
	}
}

// consentCookieNameFor learns the consent cookie name of a client by
// approving it in a scratch browser.
func consentCookieNameFor(t *testing.T, a *testAS, _ *browser, clientID string) string {
	scratch := newBrowser(t, a)
	redirect := redirectA
	if clientID == clientB {
		redirect = redirectB
	}
	scratch.signIn(a, clientID, redirect)
	u, _ := url.Parse(a.ts.URL)
	for _, c := range scratch.c.Jar.Cookies(u) {
		if strings.HasPrefix(c.Name, "__Host-mcp_consent_") {
			return c.Name
		}
	}
	t.Fatal("no consent cookie")
	return ""
}

// The per-user registry is checked, not only the cookie: a session and a
// consent cookie signed with the right key but presented to a server whose
// store has no approval (as after the approval was removed) get the
// consent page.
func TestUpstreamRegistryChecked(t *testing.T) {
	prov := newFakeProvider(t, false)
	key := []byte("0123456789abcdef0123456789abcdef")
	withKey := func(c *authserver.Config) { c.CookieKey = key }
	a1 := newUpstreamAS(t, prov, withKey)
	a2 := newUpstreamAS(t, prov, withKey)
	addClients(t, a1)
	addClients(t, a2)
	b1 := newBrowser(t, a1)
	b1.signIn(a1, clientA, redirectA)
	u, _ := url.Parse(a1.ts.URL)
	req, _ := http.NewRequest(http.MethodGet, a2.ts.URL+"/authorize?"+authParams(clientA, redirectA, verifier).Encode(), nil)
	for _, c := range b1.c.Jar.Cookies(u) {
		req.AddCookie(c)
	}
	resp, page := newBrowser(t, a2).do(req)
	if resp.StatusCode != 200 || !strings.Contains(page, `id="redirect-uri"`) {
		t.Fatalf("no approval in the store: got %d %s, want the consent page", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// startSignIn consents and returns the provider's redirect back to our
// callback, not yet visited.
func startSignIn(t *testing.T, a *testAS, b *browser, prov *fakeProvider) string {
	t.Helper()
	resp, _ := b.answer(a, b.consentPage(a, clientA, redirectA), "allow", a.ts.URL)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), prov.ts.URL+"/authorize?") {
		t.Fatalf("allow: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = b.get(resp.Header.Get("Location"))
	cb := resp.Header.Get("Location")
	if !strings.HasPrefix(cb, a.ts.URL+"/upstream/callback?") {
		t.Fatalf("provider redirected to %q", cb)
	}
	return cb
}

func TestUpstreamStateRules(t *testing.T) {
	prov := newFakeProvider(t, false)
	clock := &testClock{t: time.Now()}
	a := newUpstreamAS(t, prov, func(c *authserver.Config) { c.Now = clock.Now })
	addClients(t, a)
	wantRefused := func(t *testing.T, b *browser, cb string) {
		t.Helper()
		final, resp, body := b.follow(cb, redirectA)
		if final != nil || resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "invalid_request") {
			t.Fatalf("callback: %v %d %s", final, resp.StatusCode, body)
		}
	}
	t.Run("replayed", func(t *testing.T) {
		b := newBrowser(t, a)
		cb := startSignIn(t, a, b, prov)
		if final, _, body := b.follow(cb, redirectA); final == nil || final.Query().Get("code") == "" {
			t.Fatalf("first callback: %s", body)
		}
		wantRefused(t, b, cb)
	})
	t.Run("foreign browser", func(t *testing.T) {
		cb := startSignIn(t, a, newBrowser(t, a), prov)
		wantRefused(t, newBrowser(t, a), cb)
	})
	t.Run("forged", func(t *testing.T) {
		b := newBrowser(t, a)
		cb, _ := url.Parse(startSignIn(t, a, b, prov))
		q := cb.Query()
		q.Set("state", "forged-"+q.Get("state"))
		cb.RawQuery = q.Encode()
		wantRefused(t, b, cb.String())
	})
	t.Run("missing", func(t *testing.T) {
		b := newBrowser(t, a)
		cb, _ := url.Parse(startSignIn(t, a, b, prov))
		q := cb.Query()
		q.Del("state")
		cb.RawQuery = q.Encode()
		wantRefused(t, b, cb.String())
	})
	t.Run("expired", func(t *testing.T) {
		b := newBrowser(t, a)
		cb := startSignIn(t, a, b, prov)
		clock.add(10*time.Minute + time.Second)
		wantRefused(t, b, cb)
	})
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestUpstreamRedirectURIExact(t *testing.T) {
	prov := newFakeProvider(t, false)
	a := newUpstreamAS(t, prov, nil)
	a.addClient(t, clientA, oauth.AuthMethodNone, "", redirectA, "https://app.example.com/cb")
	b := newBrowser(t, a)
	for _, ru := range []string{
		"http://127.0.0.1:7009/cb",         // another loopback port
		"http://127.0.0.1/cb",              // no port
		"http://127.0.0.1:7001/cb/",        // trailing slash
		"http://127.0.0.1:7001/CB",         // case of the path
		"http://127.0.0.1:7001/cb?x=1",     // added query
		"http://127.0.0.1:7001/%63b",       // percent-encoding
		"http://localhost:7001/cb",         // another host spelling
		"https://APP.example.com/cb",       // case of the host
		"https://app.example.com:443/cb",   // explicit default port
		"https://app.example.com/cb#frag",  // fragment
		"https://app.example.com.evil/cb",  // another host
		"https://app.example.com/cb/../cb", // dot segments
	} {
		t.Run(ru, func(t *testing.T) {
			resp, body := b.get(a.ts.URL + "/authorize?" + authParams(clientA, ru, verifier).Encode())
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(body, "invalid_request") {
				t.Fatalf("got %d %q", resp.StatusCode, resp.Header.Get("Location"))
			}
		})
	}
	if prov.authorizeCount() != 0 {
		t.Fatal("provider reached")
	}
}

func TestUpstreamConsentPageDefences(t *testing.T) {
	prov := newFakeProvider(t, false)
	a := newUpstreamAS(t, prov, nil)
	addClients(t, a)
	b := newBrowser(t, a)
	resp, page := b.get(a.ts.URL + "/authorize?" + authParams(clientA, redirectA, verifier).Encode())
	if resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Fatalf("consent page is frameable: %v", resp.Header)
	}
	for _, tc := range []struct {
		name, origin string
		dropCSRF     bool
	}{
		{"cross-site origin", "https://evil.example", false},
		{"no CSRF cookie", a.ts.URL, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bb := b
			if tc.dropCSRF {
				bb = newBrowser(t, a) // a browser that never saw the page
			}
			resp, _ := bb.answer(a, page, "allow", tc.origin)
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("status %d, want 403", resp.StatusCode)
			}
		})
	}
	if prov.authorizeCount() != 0 {
		t.Fatal("provider reached")
	}
	// The consent is answered once.
	if resp, _ := b.answer(a, page, "allow", a.ts.URL); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("allow: %d", resp.StatusCode)
	}
	if resp, _ := b.answer(a, page, "allow", a.ts.URL); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("second allow: %d", resp.StatusCode)
	}
}

func TestUpstreamIDTokenChecks(t *testing.T) {
	other, _ := newFakeProvider(t, false), 0
	for _, tc := range []struct {
		name   string
		claims func(map[string]any)
		key    bool
	}{
		{"wrong audience", func(c map[string]any) { c["aud"] = "someone-else" }, false},
		{"wrong issuer", func(c map[string]any) { c["iss"] = "https://evil.example" }, false},
		{"wrong nonce", func(c map[string]any) { c["nonce"] = "replayed" }, false},
		{"no nonce", func(c map[string]any) { delete(c, "nonce") }, false},
		{"expired", func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() }, false},
		{"no sub", func(c map[string]any) { delete(c, "sub") }, false},
		{"several audiences, no azp", func(c map[string]any) { c["aud"] = []string{upClientID, "other"} }, false},
		{"signed by another key", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prov := newFakeProvider(t, false)
			prov.idClaims = tc.claims
			if tc.key {
				prov.signWith = other.key
			}
			a := newUpstreamAS(t, prov, nil)
			addClients(t, a)
			q := newBrowser(t, a).signIn(a, clientA, redirectA)
			if q.Get("code") != "" || q.Get("error") != "access_denied" {
				t.Fatalf("authorization response %v", q)
			}
		})
	}
}

// RFC 9207 at the callback: an iss naming another provider is refused, and
// so is a missing one when the provider advertises that it sends it.
func TestUpstreamCallbackIssuerMismatch(t *testing.T) {
	prov := newFakeProvider(t, false)
	a := newUpstreamAS(t, prov, nil)
	addClients(t, a)
	for _, tc := range []struct {
		name string
		set  func(url.Values)
	}{
		{"another issuer", func(q url.Values) { q.Set("iss", "https://evil.example") }},
		{"two issuers", func(q url.Values) { q.Add("iss", prov.ts.URL) }},
		{"no issuer though advertised", func(q url.Values) { q.Del("iss") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBrowser(t, a)
			cb, _ := url.Parse(startSignIn(t, a, b, prov))
			q := cb.Query()
			tc.set(q)
			cb.RawQuery = q.Encode()
			final, _, _ := b.follow(cb.String(), redirectA)
			if final == nil || final.Query().Get("error") != "access_denied" || final.Query().Get("code") != "" {
				t.Fatalf("got %v", final)
			}
		})
	}
}

func TestUpstreamMapClaims(t *testing.T) {
	prov := newFakeProvider(t, false)
	a := newUpstreamAS(t, prov, func(c *authserver.Config) {
		c.Upstream.MapClaims = func(_ context.Context, claims map[string]any) (string, []string, error) {
			groups, _ := claims["groups"].([]any)
			if len(groups) == 0 {
				return "", nil, errors.New("no groups")
			}
			return "", []string{"mcp:read"}, nil // readers may not write
		}
	})
	addClients(t, a)
	p := authParams(clientA, redirectA, verifier)
	p.Set("scope", "mcp:read mcp:write")
	b := newBrowser(t, a)
	resp, page := b.get(a.ts.URL + "/authorize?" + p.Encode())
	if resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	resp, _ = b.answer(a, page, "allow", a.ts.URL)
	final, _, _ := b.follow(resp.Header.Get("Location"), redirectA)
	tok := redeem(t, a, clientA, redirectA, final.Query().Get("code"))
	if s := decodeJWT(t, tok["access_token"].(string))["scope"]; s != "mcp:read" {
		t.Fatalf("scope %v", s)
	}
	prov.idClaims = func(c map[string]any) { delete(c, "groups") }
	q := newBrowser(t, a).signIn(a, clientA, redirectA)
	if q.Get("error") != "access_denied" {
		t.Fatalf("got %v", q)
	}
}

func TestUpstreamTokensEncryptedAndRefreshed(t *testing.T) {
	prov := newFakeProvider(t, false)
	prov.expiresIn = 10 // within the 30 s refresh margin: refreshed at once
	a := newUpstreamAS(t, prov, nil)
	addClients(t, a)
	newBrowser(t, a).signIn(a, clientA, redirectA)
	sub := prov.ts.URL + "#user-1"
	g, err := a.store.UpstreamGrant(context.Background(), sub)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(g.Sealed), "up-at-") || strings.Contains(string(g.Sealed), "up-rt-") {
		t.Fatal("upstream tokens stored in the clear")
	}
	tok, err := a.UpstreamAccessToken(context.Background(), sub)
	if err != nil || prov.refreshes != 1 || !strings.HasPrefix(tok, "up-at-user-1-") {
		t.Fatalf("token %q, err %v, refreshes %d", tok, err, prov.refreshes)
	}
	// A record moved to another user does not decrypt.
	g.Subject = prov.ts.URL + "#mallory"
	if err := a.store.SaveUpstreamGrant(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if _, err := a.UpstreamAccessToken(context.Background(), g.Subject); !errors.Is(err, authserver.ErrNoUpstreamToken) {
		t.Fatalf("moved record: %v", err)
	}
	if _, err := a.UpstreamAccessToken(context.Background(), "nobody"); !errors.Is(err, authserver.ErrNoUpstreamToken) {
		t.Fatalf("unknown user: %v", err)
	}
}

func TestUpstreamConfigRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		up   authserver.UpstreamConfig
		dev  string
	}{
		{"no client id", authserver.UpstreamConfig{Issuer: "https://idp.example", ClientSecret: "s"}, ""},
		{"no secret", authserver.UpstreamConfig{Issuer: "https://idp.example", ClientID: "c"}, ""},
		{"http issuer", authserver.UpstreamConfig{Issuer: "http://idp.example", ClientID: "c", ClientSecret: "s"}, ""},
		{"state TTL over 10 minutes", authserver.UpstreamConfig{Issuer: "https://idp.example", ClientID: "c", ClientSecret: "s", StateTTL: 11 * time.Minute}, ""},
		{"resource with a fragment", authserver.UpstreamConfig{Issuer: "https://idp.example", ClientID: "c", ClientSecret: "s", Resource: "https://idp.example/userinfo#x"}, ""},
		{"with DevUser", authserver.UpstreamConfig{Issuer: "https://idp.example", ClientID: "c", ClientSecret: "s"}, "alice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := tc.up
			_, err := authserver.NewServer(context.Background(), authserver.Config{Issuer: "https://as.example", Store: newMemStore(), Upstream: &up, DevUser: tc.dev})
			if err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// The cookies of the confused-deputy defences carry the __Host- prefix and
// what it requires (Secure, Path=/, no Domain), and are HttpOnly and
// SameSite=Lax.
func TestUpstreamCookieAttributes(t *testing.T) {
	prov := newFakeProvider(t, false)
	a := newUpstreamAS(t, prov, nil)
	addClients(t, a)
	b := newBrowser(t, a)
	b.signIn(a, clientA, redirectA)
	seen := map[string]bool{}
	for _, sc := range b.setCookies {
		name, _, _ := strings.Cut(sc, "=")
		for _, want := range []string{"__Host-mcp_consent_", "__Host-mcp_upstream"} {
			if !strings.HasPrefix(name, want) {
				continue
			}
			seen[want] = true
			for _, attr := range []string{"; Path=/", "; Secure", "; HttpOnly", "; SameSite=Lax"} {
				if !strings.Contains(sc, attr) {
					t.Errorf("%s lacks %q", sc, attr)
				}
			}
			if strings.Contains(strings.ToLower(sc), "domain=") {
				t.Errorf("%s has a Domain", sc)
			}
		}
	}
	if len(seen) != 2 {
		t.Fatalf("cookies seen: %v in %q", seen, b.setCookies)
	}
}

// A first-party client (Config.TrustedClient) goes to the provider with no
// consent page; the others still get it.
func TestUpstreamTrustedClient(t *testing.T) {
	prov := newFakeProvider(t, false)
	a := newUpstreamAS(t, prov, func(c *authserver.Config) {
		c.TrustedClient = func(c authserver.Client) bool { return c.ID() == clientA }
	})
	addClients(t, a)
	b := newBrowser(t, a)
	final, resp, body := b.follow(a.ts.URL+"/authorize?"+authParams(clientA, redirectA, verifier).Encode(), redirectA)
	if final == nil || final.Query().Get("code") == "" {
		t.Fatalf("trusted client: %d %s", resp.StatusCode, body)
	}
	b.consentPage(a, clientB, redirectB)
}

// A provider answer larger than MaxResponseBytes fails the sign-in.
func TestUpstreamResponseBound(t *testing.T) {
	prov := newFakeProvider(t, false)
	a := newUpstreamAS(t, prov, func(c *authserver.Config) { c.Upstream.MaxResponseBytes = 64 })
	addClients(t, a)
	b := newBrowser(t, a)
	resp, _ := b.answer(a, b.consentPage(a, clientA, redirectA), "allow", a.ts.URL)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc == nil || loc.Query().Get("error") != "temporarily_unavailable" || prov.authorizeCount() != 0 {
		t.Fatalf("got %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// The static client authenticates upstream with private_key_jwt; a wrong
// key is refused by the provider and the sign-in fails.
func TestUpstreamPrivateKeyJWT(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	wrong, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, tc := range []struct {
		name string
		key  *ecdsa.PrivateKey
		ok   bool
	}{{"right key", key, true}, {"wrong key", wrong, false}} {
		t.Run(tc.name, func(t *testing.T) {
			prov := newFakeProvider(t, false)
			prov.assertionKey = &key.PublicKey
			a := newUpstreamAS(t, prov, func(c *authserver.Config) {
				c.Upstream.ClientSecret, c.Upstream.PrivateKey, c.Upstream.KeyID = "", tc.key, "k1"
			})
			addClients(t, a)
			q := newBrowser(t, a).signIn(a, clientA, redirectA)
			if got := q.Get("code") != ""; got != tc.ok {
				t.Fatalf("authorization response %v", q)
			}
		})
	}
}

// A user who approved a client but whose upstream tokens are gone (or
// unreadable) is sent to the provider again, without a new consent, instead
// of being given a code whose tools cannot reach the upstream API.
func TestUpstreamApprovedWithoutTokensSignsInAgain(t *testing.T) {
	prov := newFakeProvider(t, false)
	a := newUpstreamAS(t, prov, nil)
	addClients(t, a)
	b := newBrowser(t, a)
	b.signIn(a, clientA, redirectA)
	sub := prov.ts.URL + "#user-1"
	if err := a.store.SaveUpstreamGrant(context.Background(), authserver.UpstreamGrant{Subject: sub, Sealed: []byte("lost"), UpdatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	resp, _ := b.get(a.ts.URL + "/authorize?" + authParams(clientA, redirectA, verifier).Encode())
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), prov.ts.URL+"/authorize?") {
		t.Fatalf("got %d %s, want the provider", resp.StatusCode, resp.Header.Get("Location"))
	}
	final, _, body := b.follow(resp.Header.Get("Location"), redirectA)
	if final == nil || final.Query().Get("code") == "" {
		t.Fatalf("sign-in again: %s", body)
	}
	if _, err := a.UpstreamAccessToken(context.Background(), sub); err != nil {
		t.Fatalf("tokens after signing in again: %v", err)
	}
}

// Discovery: OpenID Connect first, RFC 8414 second; metadata naming another
// issuer is refused (mix-up), and the sign-in does not start.
func TestUpstreamDiscovery(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rfc8414    bool
		metaIssuer string
		ok         bool
	}{
		{"OpenID Connect discovery", false, "", true},
		{"RFC 8414 metadata", true, "", true},
		{"another issuer", false, "https://evil.example", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prov := newFakeProvider(t, false)
			prov.rfc8414, prov.metaIssuer = tc.rfc8414, tc.metaIssuer
			a := newUpstreamAS(t, prov, nil)
			addClients(t, a)
			b := newBrowser(t, a)
			resp, _ := b.answer(a, b.consentPage(a, clientA, redirectA), "allow", a.ts.URL)
			started := strings.HasPrefix(resp.Header.Get("Location"), prov.ts.URL+"/authorize?")
			if started != tc.ok {
				t.Fatalf("allow: %d %s", resp.StatusCode, resp.Header.Get("Location"))
			}
		})
	}
}

// #23: UpstreamConfig.Resource is sent, canonical, as the RFC 8707
// resource of the authorization and token requests to the provider (what
// another mcpstack authserver requires); without it no resource is sent.
func TestUpstreamResource(t *testing.T) {
	for _, tc := range []struct{ name, resource, want string }{
		{"none", "", ""},
		{"set", "HTTPS://IdP.example/userinfo", "https://idp.example/userinfo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prov := newFakeProvider(t, true)
			a := newUpstreamAS(t, prov, func(c *authserver.Config) { c.Upstream.Resource = tc.resource })
			addClients(t, a)
			newBrowser(t, a).signIn(a, clientA, redirectA)
			prov.mu.Lock()
			defer prov.mu.Unlock()
			if len(prov.authorize) != 1 || len(prov.tokenForm) != 1 {
				t.Fatalf("%d authorization and %d token requests upstream", len(prov.authorize), len(prov.tokenForm))
			}
			for what, v := range map[string]url.Values{"authorization": prov.authorize[0], "token": prov.tokenForm[0]} {
				if got := v["resource"]; (tc.want == "" && got != nil) || (tc.want != "" && (len(got) != 1 || got[0] != tc.want)) {
					t.Errorf("%s request resource %q, want %q", what, got, tc.want)
				}
			}
		})
	}
}

// The provider's metadata is taken where discovery looks for it, never
// through a redirect to another server (#18.6: the module's one OAuth HTTP
// client refuses redirects): the sign-in fails and the provider is never
// asked to authorize.
func TestUpstreamMetadataRedirectRefused(t *testing.T) {
	prov := newFakeProvider(t, false)
	var elsewhereHits atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhereHits.Add(1)
		prov.serveMetadata(w, r) // the right document, for the right issuer
	}))
	defer elsewhere.Close()
	mux := prov.ts.Config.Handler
	prov.ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusFound)
			return
		}
		mux.ServeHTTP(w, r)
	})
	a := newUpstreamAS(t, prov, nil)
	addClients(t, a)
	b := newBrowser(t, a)
	resp, _ := b.answer(a, b.consentPage(a, clientA, redirectA), "allow", a.ts.URL)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc == nil || loc.Query().Get("error") != "temporarily_unavailable" || prov.authorizeCount() != 0 || elsewhereHits.Load() != 0 {
		t.Fatalf("got %d %s; provider authorizations %d, redirect target hits %d", resp.StatusCode, resp.Header.Get("Location"), prov.authorizeCount(), elsewhereHits.Load())
	}
}
