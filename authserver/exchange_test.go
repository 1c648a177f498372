package authserver_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

const (
	rsClient      = "resource-server"
	rsSecret      = "rs-secret-0123456789abcdef"
	otherResource = "https://other.example.test/mcp"
)

// recordRequests makes prov keep every request it is sent (headers and
// body), so that a test can say what never reached it.
func recordRequests(prov *fakeProvider) func() string {
	var mu sync.Mutex
	var all strings.Builder
	h := prov.ts.Config.Handler
	prov.ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		all.WriteString(r.URL.String() + "\n")
		for k, v := range r.Header {
			all.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
		all.Write(body)
		all.WriteString("\n")
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
	return func() string { mu.Lock(); defer mu.Unlock(); return all.String() }
}

func exchangeForm(subject, audience string) url.Values {
	return url.Values{
		"grant_type":           {oauth.GrantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {oauth.TokenTypeAccessToken},
		"requested_token_type": {oauth.TokenTypeAccessToken},
		"audience":             {audience},
	}
}

// TestUpstreamTokenExchange: a resource server listed in ExchangeClients
// exchanges the access token an MCP client gave it for the user's upstream
// token (RFC 8693), and every other request is refused.
func TestUpstreamTokenExchange(t *testing.T) {
	prov := newFakeProvider(t, false)
	seen := recordRequests(prov)
	clock := &testClock{t: time.Now()}
	a := newUpstreamAS(t, prov, func(c *authserver.Config) {
		c.Now = clock.Now
		c.Upstream.ExchangeClients = []authserver.ExchangeClient{
			{ClientID: rsClient, Resource: testResource},
			{ClientID: "other-rs", Resource: otherResource},
			{ClientID: "public-rs", Resource: testResource},
		}
	})
	addClients(t, a)
	a.addClient(t, rsClient, oauth.AuthMethodClientSecretBasic, rsSecret)
	a.addClient(t, "other-rs", oauth.AuthMethodClientSecretBasic, "other-secret-0123456789")
	a.addClient(t, "unlisted-rs", oauth.AuthMethodClientSecretBasic, "unlisted-secret-0123456789")
	a.addClient(t, "public-rs", oauth.AuthMethodNone, "")

	if m := a.Metadata(); !strings.Contains(strings.Join(m.GrantTypesSupported, " "), oauth.GrantTokenExchange) {
		t.Fatalf("grant_types_supported %v", m.GrantTypesSupported)
	}
	q := newBrowser(t, a).signIn(a, clientA, redirectA)
	tok := redeem(t, a, clientA, redirectA, q.Get("code"))
	at := tok["access_token"].(string)

	status, body := a.post(t, "/token", exchangeForm(at, prov.ts.URL), rsClient, rsSecret)
	if status != 200 || !strings.HasPrefix(body["access_token"].(string), "up-at-user-1-") ||
		body["issued_token_type"] != oauth.TokenTypeAccessToken || body["token_type"] != "Bearer" || body["refresh_token"] != nil {
		t.Fatalf("exchange: %d %v", status, body)
	}
	// resource instead of audience is the same request.
	f := exchangeForm(at, "")
	f.Del("audience")
	f.Set("resource", prov.ts.URL)
	if status, body := a.post(t, "/token", f, rsClient, rsSecret); status != 200 {
		t.Fatalf("exchange by resource: %d %v", status, body)
	}

	with := func(f url.Values, k, v string) url.Values {
		g := url.Values{}
		for kk, vv := range f {
			g[kk] = vv
		}
		if v == "" {
			g.Del(k)
		} else {
			g.Set(k, v)
		}
		return g
	}
	good := exchangeForm(at, prov.ts.URL)
	for _, tc := range []struct {
		name   string
		form   url.Values
		basic  []string
		status int
		code   oauth.ErrorCode
	}{
		{"public client", with(good, "client_id", "public-rs"), nil, 400, oauth.UnauthorizedClient},
		{"unlisted client", good, []string{"unlisted-rs", "unlisted-secret-0123456789"}, 400, oauth.UnauthorizedClient},
		{"wrong secret", good, []string{rsClient, "wrong"}, 401, oauth.InvalidClient},
		{"MCP client itself", with(good, "client_id", clientA), nil, 400, oauth.UnauthorizedClient},
		{"token for another audience", good, []string{"other-rs", "other-secret-0123456789"}, 400, oauth.InvalidRequest},
		{"forged subject token", with(good, "subject_token", at[:len(at)-4]+"AAAA"), []string{rsClient, rsSecret}, 400, oauth.InvalidRequest},
		{"no subject token", with(good, "subject_token", ""), []string{rsClient, rsSecret}, 400, oauth.InvalidRequest},
		{"refresh token as subject", with(good, "subject_token", tok["refresh_token"].(string)), []string{rsClient, rsSecret}, 400, oauth.InvalidRequest},
		{"subject token type", with(good, "subject_token_type", "urn:ietf:params:oauth:token-type:id_token"), []string{rsClient, rsSecret}, 400, oauth.InvalidRequest},
		{"requested refresh token", with(good, "requested_token_type", "urn:ietf:params:oauth:token-type:refresh_token"), []string{rsClient, rsSecret}, 400, oauth.InvalidRequest},
		{"actor token", with(good, "actor_token", at), []string{rsClient, rsSecret}, 400, oauth.InvalidRequest},
		{"scope", with(good, "scope", "admin"), []string{rsClient, rsSecret}, 400, oauth.InvalidScope},
		{"other audience", with(good, "audience", "https://evil.example"), []string{rsClient, rsSecret}, 400, oauth.InvalidTarget},
		{"our own issuer as audience", with(good, "audience", a.ts.URL), []string{rsClient, rsSecret}, 400, oauth.InvalidTarget},
		{"no audience", with(good, "audience", ""), []string{rsClient, rsSecret}, 400, oauth.InvalidTarget},
		{"other resource", with(good, "resource", testResource), []string{rsClient, rsSecret}, 400, oauth.InvalidTarget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := a.post(t, "/token", tc.form, tc.basic...)
			wantError(t, status, body, tc.status, tc.code)
			if body["access_token"] != nil {
				t.Fatal("a token in a refusal")
			}
		})
	}

	t.Run("revoked subject token", func(t *testing.T) {
		q := newBrowser(t, a).signIn(a, clientA, redirectA)
		tok := redeem(t, a, clientA, redirectA, q.Get("code"))
		if st, _ := a.post(t, "/revoke", url.Values{"token": {tok["refresh_token"].(string)}, "client_id": {clientA}}); st != 200 {
			t.Fatalf("revoke: %d", st)
		}
		status, body := a.post(t, "/token", exchangeForm(tok["access_token"].(string), prov.ts.URL), rsClient, rsSecret)
		wantError(t, status, body, 400, oauth.InvalidRequest)
	})
	t.Run("client credentials token as subject", func(t *testing.T) {
		// A token naming a client, not a user, has no upstream grant.
		cc := authserver.Client{SecretHash: authserver.HashSecret("cc-secret-0123456789"), Metadata: oauth.ClientMetadata{
			ClientID: "cc", GrantTypes: []string{oauth.GrantClientCredentials}, TokenEndpointAuthMethod: oauth.AuthMethodClientSecretBasic}}
		if err := a.store.CreateClient(t.Context(), cc); err != nil {
			t.Fatal(err)
		}
		st, ct := a.post(t, "/token", url.Values{"grant_type": {oauth.GrantClientCredentials}, "resource": {testResource}}, "cc", "cc-secret-0123456789")
		if st != 200 {
			t.Fatalf("client credentials: %d %v", st, ct)
		}
		status, body := a.post(t, "/token", exchangeForm(ct["access_token"].(string), prov.ts.URL), rsClient, rsSecret)
		wantError(t, status, body, 400, oauth.InvalidRequest)
	})
	t.Run("expired subject token", func(t *testing.T) {
		clock.add(10*time.Minute + time.Second)
		status, body := a.post(t, "/token", exchangeForm(at, prov.ts.URL), rsClient, rsSecret)
		wantError(t, status, body, 400, oauth.InvalidRequest)
	})
	// The MCP client's token went to its issuer only.
	if all := seen(); strings.Contains(all, at) || strings.Contains(all, tok["refresh_token"].(string)) {
		t.Fatal("the MCP client's token reached the upstream provider")
	}
}

// TestUpstreamTokenExchangeRefreshes: the token handed out is refreshed
// first when it is about to expire, and a user whose upstream grant is
// gone is told to sign in again.
func TestUpstreamTokenExchangeRefreshes(t *testing.T) {
	prov := newFakeProvider(t, false)
	prov.expiresIn = 10 // within the refresh margin
	a := newUpstreamAS(t, prov, func(c *authserver.Config) {
		c.Upstream.ExchangeClients = []authserver.ExchangeClient{{ClientID: rsClient, Resource: testResource}}
	})
	addClients(t, a)
	a.addClient(t, rsClient, oauth.AuthMethodClientSecretBasic, rsSecret)
	q := newBrowser(t, a).signIn(a, clientA, redirectA)
	at := redeem(t, a, clientA, redirectA, q.Get("code"))["access_token"].(string)
	status, body := a.post(t, "/token", exchangeForm(at, prov.ts.URL), rsClient, rsSecret)
	if status != 200 || prov.refreshes != 1 || body["access_token"] != "up-at-user-1-1" {
		t.Fatalf("exchange: %d %v, refreshes %d", status, body, prov.refreshes)
	}
	g, _ := a.store.UpstreamGrant(t.Context(), prov.ts.URL+"#user-1")
	g.Sealed = []byte("garbage")
	if err := a.store.SaveUpstreamGrant(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	status, body = a.post(t, "/token", exchangeForm(at, prov.ts.URL), rsClient, rsSecret)
	wantError(t, status, body, 400, oauth.InvalidGrant)
}

// TestTokenExchangeNotOffered: without ExchangeClients the grant is
// neither advertised nor accepted.
func TestTokenExchangeNotOffered(t *testing.T) {
	prov := newFakeProvider(t, false)
	a := newUpstreamAS(t, prov, nil)
	a.addClient(t, rsClient, oauth.AuthMethodClientSecretBasic, rsSecret)
	if m := a.Metadata(); strings.Contains(strings.Join(m.GrantTypesSupported, " "), "token-exchange") {
		t.Fatalf("grant_types_supported %v", m.GrantTypesSupported)
	}
	status, body := a.post(t, "/token", exchangeForm("x", prov.ts.URL), rsClient, rsSecret)
	wantError(t, status, body, 400, oauth.UnsupportedGrantType)
}

// FuzzTokenExchange posts arbitrary token exchange forms as a listed
// resource server: the user's upstream token comes back only for a form
// carrying the valid subject token, and nothing makes the server fail.
func FuzzTokenExchange(f *testing.F) {
	prov := newFakeProvider(f, false)
	a := newUpstreamAS(f, prov, func(c *authserver.Config) {
		c.Upstream.ExchangeClients = []authserver.ExchangeClient{{ClientID: rsClient, Resource: testResource}}
	})
	a.addClient(f, clientA, oauth.AuthMethodNone, "", redirectA)
	a.addClient(f, rsClient, oauth.AuthMethodClientSecretBasic, rsSecret)
	q := newBrowser(f, a).signIn(a, clientA, redirectA)
	st, tok := a.post(f, "/token", codeForm(clientA, q.Get("code"), redirectA, verifier))
	if st != 200 {
		f.Fatalf("token: %d %v", st, tok)
	}
	at := tok["access_token"].(string)
	f.Add(exchangeForm(at, prov.ts.URL).Encode())
	f.Add(exchangeForm(at, prov.ts.URL+"/").Encode() + "&resource=" + url.QueryEscape(prov.ts.URL))
	f.Add(exchangeForm(at[:len(at)-1], prov.ts.URL).Encode())
	f.Add("grant_type=" + url.QueryEscape(oauth.GrantTokenExchange) + "&subject_token=" + at + "&subject_token=" + at)
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/token", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(rsClient, rsSecret)
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK {
			form, _ := url.ParseQuery(body)
			if form.Get("subject_token") != at || strings.Contains(rec.Body.String(), at) {
				t.Fatalf("form %q answered 200: %s", body, rec.Body.String())
			}
		} else if rec.Code >= 500 || strings.Contains(rec.Body.String(), "up-at-") {
			t.Fatalf("form %q: %d %s", body, rec.Code, rec.Body.String())
		}
	})
}
