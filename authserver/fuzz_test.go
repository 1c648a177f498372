package authserver_test

import (
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/time/rate"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// FuzzAuthorize sends arbitrary authorization requests: the server must
// never redirect anywhere but the registered redirect URI, and must never
// issue a code without a valid S256 challenge and resource.
func FuzzAuthorize(f *testing.F) {
	f.Add(authParams("pub", loopbackRedirect, verifier).Encode())
	f.Add("client_id=pub&redirect_uri=http://127.0.0.1:1/callback&response_type=code")
	f.Add("client_id=pub&redirect_uri=https://evil.example/&code_challenge_method=plain")
	f.Add("client_id=pub&client_id=x&redirect_uri=" + url.QueryEscape(loopbackRedirect))
	// No rate limit: every input comes from the same address.
	a := newAS(f, func(c *authserver.Config) { trustAll(c); c.AuthorizeRate = -1 }, nil)
	a.addClient(f, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	f.Fuzz(func(t *testing.T, rawQuery string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/authorize", nil)
		req.URL.RawQuery = rawQuery
		a.ServeHTTP(rec, req)
		loc := rec.Header().Get("Location")
		if loc == "" {
			return
		}
		u, err := url.Parse(loc)
		if err != nil {
			t.Fatalf("bad Location %q", loc)
		}
		base := *u
		base.RawQuery = ""
		if !oauth.RedirectURIMatches(loopbackRedirect, base.String()) {
			t.Fatalf("redirected to %q", loc)
		}
		q := u.Query()
		if q.Get("code") != "" {
			in, _ := url.ParseQuery(rawQuery)
			if in.Get("code_challenge_method") != "S256" || len(in.Get("code_challenge")) != 43 || !oauth.SameResource(in.Get("resource"), testResource) {
				t.Fatalf("code issued for %q", rawQuery)
			}
		}
	})
}

// FuzzCheckAddress checks that an IPv4-mapped address is judged exactly as
// the IPv4 address it carries.
func FuzzCheckAddress(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "10.0.0.1", "169.254.169.254", "8.8.8.8", "100.64.0.1"} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != 4 {
			return
		}
		v4 := netip.AddrFrom4([4]byte(b))
		mapped := netip.AddrFrom16(v4.As16())
		e1, e2 := authserver.CheckAddress(v4, false), authserver.CheckAddress(mapped, false)
		if (e1 == nil) != (e2 == nil) {
			t.Fatalf("%s: %v, mapped: %v", v4, e1, e2)
		}
		if e1 == nil && (v4.IsLoopback() || v4.IsPrivate() || strings.HasPrefix(v4.String(), "169.254.")) {
			t.Fatalf("%s allowed", v4)
		}
	})
}

// FuzzRefreshRefusalSpendsNothing sends refresh requests with arbitrary
// extra parameters: a refused one must leave the refresh token usable
// (#17.2), and a granted one must not widen the grant or move its audience.
func FuzzRefreshRefusalSpendsNothing(f *testing.F) {
	for _, s := range []string{"", "scope=mcp:read", "scope=mcp:write", "scope=mcp:read+mcp:write", "resource=https://evil.example/mcp",
		"resource=https://MCP.EXAMPLE.TEST/mcp/", "client_id=other", "scope=admin", "resource=x&resource=y", "client_secret=s"} {
		f.Add(s)
	}
	// Every input makes a grant through /authorize: its per-address limit
	// would refuse them after a burst, and the target would report that.
	a := newAS(f, func(c *authserver.Config) { trustAll(c); c.AuthorizeRate = -1 }, nil)
	a.addClient(f, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	a.addClient(f, "other", oauth.AuthMethodNone, "", loopbackRedirect)
	serve := func(form url.Values) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		return rec
	}
	grant := func(t *testing.T) string {
		q := authParams("pub", loopbackRedirect, verifier)
		q.Set("scope", "mcp:read")
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/authorize?"+q.Encode(), nil))
		u, _ := url.Parse(rec.Header().Get("Location"))
		rec = serve(codeForm("pub", u.Query().Get("code"), loopbackRedirect, verifier))
		var tr oauth.TokenResponse
		if rec.Code != http.StatusOK || tr.UnmarshalJSON(rec.Body.Bytes()) != nil {
			t.Fatalf("grant: %d %s", rec.Code, rec.Body)
		}
		return tr.RefreshToken
	}
	f.Fuzz(func(t *testing.T, extra string) {
		form, err := url.ParseQuery(extra)
		if err != nil {
			return
		}
		rt := grant(t)
		form.Set("grant_type", "refresh_token")
		form.Set("refresh_token", rt)
		if _, ok := form["client_id"]; !ok {
			form.Set("client_id", "pub")
		}
		rec := serve(form)
		if rec.Code != http.StatusOK {
			if again := serve(url.Values{"grant_type": {"refresh_token"}, "client_id": {"pub"}, "refresh_token": {rt}}); again.Code != http.StatusOK {
				t.Fatalf("refused %q (%d %s) spent the token: %d %s", extra, rec.Code, rec.Body, again.Code, again.Body)
			}
			return
		}
		var tr oauth.TokenResponse
		if err := tr.UnmarshalJSON(rec.Body.Bytes()); err != nil {
			t.Fatal(err)
		}
		ac, err := a.VerifyAccessToken(t.Context(), tr.AccessToken)
		if err != nil || ac.ClientID != "pub" || ac.Scope != "mcp:read" || len(ac.Audience) != 1 || ac.Audience[0] != testResource {
			t.Fatalf("refresh with %q granted %+v, %v", extra, ac, err)
		}
	})
}

func BenchmarkCodeFlow(b *testing.B) {
	a := newAS(b, trustAll, nil)
	a.addClient(b, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	q := authParams("pub", loopbackRedirect, verifier).Encode()
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/authorize?"+q, nil))
		u, _ := url.Parse(rec.Header().Get("Location"))
		form := codeForm("pub", u.Query().Get("code"), loopbackRedirect, verifier)
		req := httptest.NewRequest(http.MethodPost, "/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec = httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Body.String())
		}
	}
}

// FuzzRegister posts arbitrary registrations: a Content-Type is refused
// (415) exactly when it does not parse as application/json, and whatever
// is accepted is stored within Config.MaxClientMetadataBytes, with no
// member the server does not understand.
func FuzzRegister(f *testing.F) {
	f.Add("application/json", goodRegistration)
	f.Add("Application/JSON; charset=utf-8", `{"redirect_uris":["https://a.test/cb"],"x":1}`)
	f.Add("application/jsonx", goodRegistration)
	f.Add("application/json", `{"redirect_uris":["https://a.test/cb"],"contacts":["a","a"]}`)
	f.Add("application/json", `{"redirect_uris":["https://a.test/cb"],"software_id":"<<<<<<<<"}`)
	a := newAS(f, func(c *authserver.Config) { c.RegistrationRate = rate.Inf }, nil)
	f.Fuzz(func(t *testing.T, ctype, body string) {
		rec := serveAs(a, http.MethodPost, "/register", ctype, body, "192.0.2.1:1", nil)
		mt, _, err := mime.ParseMediaType(ctype)
		if json := err == nil && mt == "application/json"; json == (rec.Code == http.StatusUnsupportedMediaType) {
			t.Fatalf("Content-Type %q: status %d", ctype, rec.Code)
		}
		if rec.Code != http.StatusCreated {
			return
		}
		var info struct {
			ClientID string `json:"client_id"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &info); err != nil {
			t.Fatal(err)
		}
		c, err := a.store.Client(t.Context(), info.ClientID)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(c.Metadata)
		if len(b) > authserver.DefaultMaxClientMetadataBytes || len(c.Metadata.Extra) > 0 {
			t.Fatalf("stored %d bytes, %d unknown members", len(b), len(c.Metadata.Extra))
		}
	})
}
