package storetest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// clock is a settable time shared by the servers of a test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var (
	csrfField    = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	requestField = regexp.MustCompile(`name="request" value="([^"]+)"`)
)

// loginServer drives the authorization endpoint of one server.
type loginServer struct {
	t *testing.T
	s *authserver.Server
}

const (
	loginIssuer   = "http://127.0.0.1:9000"
	loginRedirect = "http://127.0.0.1:9/cb"
)

func loginQuery() string {
	return url.Values{"response_type": {"code"}, "client_id": {"app"}, "redirect_uri": {loginRedirect},
		"code_challenge": {strings.Repeat("A", 43)}, "code_challenge_method": {"S256"},
		"resource": {"https://rs.test/mcp"}}.Encode()
}

// get asks for the authorization page with the cookies given.
func (ls loginServer) get(cookies ...*http.Cookie) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, loginIssuer+"/authorize?"+loginQuery(), nil)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	ls.s.ServeHTTP(rec, req)
	return rec
}

// post posts the form of page with the action and cookies given.
func (ls loginServer) post(page string, form url.Values, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	ls.t.Helper()
	csrf, request := csrfField.FindStringSubmatch(page), requestField.FindStringSubmatch(page)
	if csrf == nil || request == nil {
		ls.t.Fatalf("no form in:\n%s", page)
	}
	form.Set("csrf", csrf[1])
	form.Set("request", request[1])
	req := httptest.NewRequest(http.MethodPost, loginIssuer+"/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	ls.s.ServeHTTP(rec, req)
	return rec
}

// signedIn reports whether the session cookie gets the consent page for
// alice rather than the login form.
func (ls loginServer) signedIn(session *http.Cookie) bool {
	ls.t.Helper()
	rec := ls.get(session)
	if rec.Code != http.StatusOK {
		ls.t.Fatalf("authorize: %d %s", rec.Code, rec.Body)
	}
	return strings.Contains(rec.Body.String(), `id="who">alice<`)
}

// login signs alice in and returns her session cookie and the consent
// page with the CSRF cookie it goes with.
func (ls loginServer) login() (session, csrf *http.Cookie, consent string) {
	ls.t.Helper()
	rec := ls.get()
	csrf = cookie(rec, "as_csrf")
	if rec.Code != http.StatusOK || csrf == nil {
		ls.t.Fatalf("login page: %d %s", rec.Code, rec.Body)
	}
	rec = ls.post(rec.Body.String(), url.Values{"action": {"login"}, "username": {"alice"}, "password": {"pw"}}, csrf)
	session = cookie(rec, "as_session")
	if rec.Code != http.StatusOK || session == nil {
		ls.t.Fatalf("login: %d %s", rec.Code, rec.Body)
	}
	return session, csrf, rec.Body.String()
}

func cookie(rec *httptest.ResponseRecorder, name string) *http.Cookie {
	for _, c := range rec.Result().Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// sharedLogins checks that the keys signing login sessions, CSRF tokens and
// forms live in the store (#17.17): two servers on one store accept each
// other's cookies and forms, also after one of them rotated the key, and a
// rotated key verifies until Config.CookieKeyRetention has passed, not
// after.
func sharedLogins(t *testing.T, st authserver.Store) {
	ctx := context.Background()
	if err := st.CreateClient(ctx, authserver.Client{Metadata: oauth.ClientMetadata{ClientID: "app",
		RedirectURIs: []string{loginRedirect}, TokenEndpointAuthMethod: "none"}}); err != nil {
		t.Fatal(err)
	}
	hash, err := authserver.HashPassword("pw")
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now()}
	const retention = 2 * time.Hour
	newServer := func() loginServer {
		s, err := authserver.NewServer(ctx, authserver.Config{Issuer: loginIssuer, Store: st,
			Users: authserver.PasswordUsers{"alice": hash}, Now: clk.now,
			SessionTTL: 10 * retention, CookieKeyRetention: retention,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return loginServer{t, s}
	}
	a, b := newServer(), newServer()

	// Signed in at a: signed in at b, and a's consent form is good at b.
	oldSession, csrf, consent := a.login()
	if !b.signedIn(oldSession) {
		t.Fatal("b does not honour a's session")
	}
	rec := b.post(consent, url.Values{"action": {"allow"}}, oldSession, csrf)
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || !strings.Contains(loc, "code=") {
		t.Fatalf("a's consent form posted to b: %d %s %s", rec.Code, loc, rec.Body)
	}
	// A restarted server honours the session too.
	if !newServer().signedIn(oldSession) {
		t.Fatal("a new server on the store does not honour the session")
	}

	// a rotates: a's new sessions are honoured by b (which has not seen
	// the new key yet: its minutely reread is not due), and the old
	// session still is, by both.
	clk.add(time.Second)
	if err := a.s.RotateCookieKey(ctx); err != nil {
		t.Fatal(err)
	}
	newSession, _, _ := a.login()
	for name, s := range map[string]loginServer{"a": a, "b": b} {
		if !s.signedIn(newSession) {
			t.Errorf("%s does not honour the session signed with the new key", name)
		}
		if !s.signedIn(oldSession) {
			t.Errorf("%s does not honour the session signed with the rotated key", name)
		}
	}

	// Just before the retention ends the rotated key verifies; after it,
	// it does not, while the new key does.
	clk.add(retention - time.Second)
	for name, s := range map[string]loginServer{"a": a, "b": b} {
		if !s.signedIn(oldSession) {
			t.Errorf("%s refuses the rotated key before its retention ended", name)
		}
	}
	clk.add(2 * time.Second)
	for name, s := range map[string]loginServer{"a": a, "b": b} {
		if s.signedIn(oldSession) {
			t.Errorf("%s honours the rotated key after its retention ended", name)
		}
		if !s.signedIn(newSession) {
			t.Errorf("%s refuses the current key", name)
		}
	}
}

// sharedSigningKeys checks that a signing key one server rotated in is
// followed by the other servers on the store within a minute: it is in
// their JWKS and signs their tokens.
func sharedSigningKeys(t *testing.T, st authserver.Store) {
	ctx := context.Background()
	if err := st.CreateClient(ctx, authserver.Client{Metadata: oauth.ClientMetadata{ClientID: "svc",
		GrantTypes: []string{oauth.GrantClientCredentials}, TokenEndpointAuthMethod: oauth.AuthMethodClientSecretBasic},
		SecretHash: authserver.HashSecret("s3cret")}); err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now()}
	newServer := func() *authserver.Server {
		s, err := authserver.NewServer(ctx, authserver.Config{Issuer: loginIssuer, Store: st, DevUser: "alice", Now: clk.now,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b, c := newServer(), newServer(), newServer()
	issue := func(s *authserver.Server) (token, kid string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, loginIssuer+"/token", strings.NewReader(url.Values{
			"grant_type": {"client_credentials"}, "resource": {"https://rs.test/mcp"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("svc", "s3cret")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		var tr oauth.TokenResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &tr); err != nil || tr.AccessToken == "" {
			t.Fatalf("token: %d %s", rec.Code, rec.Body)
		}
		head, _, _ := strings.Cut(tr.AccessToken, ".")
		raw, err := base64.RawURLEncoding.DecodeString(head)
		var h struct {
			Kid string `json:"kid"`
		}
		if err != nil || json.Unmarshal(raw, &h) != nil {
			t.Fatalf("token header %q", head)
		}
		return tr.AccessToken, h.Kid
	}
	kid := func(s *authserver.Server) string {
		t.Helper()
		_, k := issue(s)
		return k
	}
	servedJWKS := func(s *authserver.Server) string {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, loginIssuer+"/jwks.json", nil))
		return rec.Body.String()
	}
	inJWKS := func(s *authserver.Server, kid string) bool {
		for _, k := range s.JWKS().Keys {
			if k.KeyID == kid {
				return true
			}
		}
		return false
	}
	first := kid(a)
	if kid(b) != first {
		t.Fatal("the servers sign with different keys")
	}
	clk.add(time.Second) // keys are ordered by creation time
	if err := a.RotateKey(ctx); err != nil {
		t.Fatal(err)
	}
	tok, second := issue(a)
	if second == first {
		t.Fatal("a still signs with the old key")
	}
	// Before their minutely reread, the other servers verify what a
	// signs with the new key (introspection, user info and token
	// exchange there, behind a load balancer), and their JWKS endpoint
	// serves it (a resource server may fetch the JWKS from any).
	if jwks := servedJWKS(b); !strings.Contains(jwks, `"kid":"`+second+`"`) {
		t.Errorf("b's JWKS endpoint lacks a's new key %s: %s", second, jwks)
	}
	if _, err := c.VerifyAccessToken(ctx, tok); err != nil {
		t.Errorf("c refuses a token a signed with its new key: %v", err)
	}
	clk.add(time.Minute - time.Second)
	if got := kid(b); got != second {
		t.Errorf("a minute after a's rotation, b signs with %s, want %s", got, second)
	}
	if !inJWKS(b, second) || !inJWKS(b, first) {
		t.Errorf("b's JWKS %v lacks %s or %s", b.JWKS().Keys, first, second)
	}
}
