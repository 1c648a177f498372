package authserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

func TestMetadataPaths(t *testing.T) {
	withCIMD := func(c *authserver.Config) { c.CIMD = authserver.NewCIMDFetcher() }
	a := newAS(t, withCIMD, nil)
	// A second server whose issuer has a path.
	b := newAS(t, func(c *authserver.Config) { withCIMD(c); c.Issuer += "/tenant1" }, nil)
	tests := []struct {
		as     *testAS
		path   string
		status int
	}{
		{a, "/.well-known/oauth-authorization-server", 200},
		{a, "/.well-known/openid-configuration", 200},
		{b, "/.well-known/oauth-authorization-server/tenant1", 200},
		{b, "/.well-known/openid-configuration/tenant1", 200},
		{b, "/tenant1/.well-known/openid-configuration", 200},
		{b, "/.well-known/oauth-authorization-server", 404},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, err := tt.as.http.Get(tt.as.ts.URL + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status != 200 {
				return
			}
			var m oauth.AuthorizationServerMetadata
			if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatal(err, resp.Header.Get("Content-Type"))
			}
			if err := m.CheckIssuer(tt.as.Issuer()); err != nil || m.Validate() != nil {
				t.Fatalf("issuer: %v %v", err, m.Validate())
			}
			if !m.SupportsS256() || !m.ClientIDMetadataDocumentSupported || m.RegistrationEndpoint == "" ||
				m.IntrospectionEndpoint == "" || m.RevocationEndpoint == "" || m.JWKSURI == "" ||
				!strings.HasPrefix(m.TokenEndpoint, tt.as.Issuer()+"/") {
				t.Fatalf("metadata %+v", m)
			}
		})
	}
}

func TestConsentFormProtections(t *testing.T) {
	a := newAS(t, nil, nil) // DevUser alice, clients not trusted: consent shown
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	jar, _ := cookiejar.New(nil)
	a.http.Jar = jar
	resp := a.authorize(t, authParams("pub", loopbackRedirect, verifier))
	page, _ := io.ReadAll(resp.Body)
	h := resp.Header
	if resp.StatusCode != 200 || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
		strings.Contains(h.Get("Content-Security-Policy"), "unsafe-inline") || h.Get("X-Frame-Options") != "DENY" ||
		strings.Contains(string(page), "<script") || !strings.Contains(string(page), "127.0.0.1:8765") {
		t.Fatalf("consent page %d %v", resp.StatusCode, h)
	}
	form := url.Values{"action": {"allow"}}
	for _, m := range hiddenRE.FindAllStringSubmatch(string(page), -1) {
		form.Set(m[1], strings.ReplaceAll(m[2], "&#43;", "+"))
	}
	post := func(f url.Values, origin string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, a.ts.URL+"/authorize", strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := a.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	noCSRF := url.Values{"action": {"allow"}, "request": {form.Get("request")}}
	wantPageError(t, post(noCSRF, ""), http.StatusForbidden, oauth.InvalidRequest)
	badCSRF := url.Values{"action": {"allow"}, "request": {form.Get("request")}, "csrf": {"AAAA"}}
	wantPageError(t, post(badCSRF, ""), http.StatusForbidden, oauth.InvalidRequest)
	wantPageError(t, post(form, "https://evil.example"), http.StatusForbidden, oauth.InvalidRequest)
	tampered := url.Values{"action": {"allow"}, "csrf": {form.Get("csrf")}, "request": {form.Get("request") + "x"}}
	wantPageError(t, post(tampered, ""), http.StatusBadRequest, oauth.InvalidRequest)
	q := redirectParams(t, post(form, a.ts.URL), loopbackRedirect)
	if q.Get("code") == "" {
		t.Fatalf("allow: %v", q)
	}
}

func TestLoginRateLimit(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("right"), bcrypt.MinCost) // fast for the test
	if err != nil {
		t.Fatal(err)
	}
	frozen := time.Now() // the limiter must not refill while the test runs
	a := newAS(t, func(c *authserver.Config) {
		c.DevUser = ""
		c.Users = authserver.PasswordUsers{"alice": hash}
		c.Now = func() time.Time { return frozen }
	}, nil)
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	jar, _ := cookiejar.New(nil)
	a.http.Jar = jar
	page, _ := io.ReadAll(a.authorize(t, authParams("pub", loopbackRedirect, verifier)).Body)
	form := url.Values{"action": {"login"}, "username": {"alice"}, "password": {"wrong"}}
	for _, m := range hiddenRE.FindAllStringSubmatch(string(page), -1) {
		form.Set(m[1], strings.ReplaceAll(m[2], "&#43;", "+"))
	}
	login := func(password string) string {
		form.Set("password", password)
		resp, err := a.http.PostForm(a.ts.URL+"/authorize", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	for i := range 10 {
		if b := login("wrong"); !strings.Contains(b, "Wrong user name or password") {
			t.Fatalf("attempt %d: %s", i, b)
		}
	}
	if b := login("right"); !strings.Contains(b, "Too many attempts") || strings.Contains(b, `id="allow"`) {
		t.Fatalf("11th attempt was not limited: %s", b)
	}
}
