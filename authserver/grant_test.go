package authserver_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// grantFor runs a trusted authorization for scope and redeems the code,
// returning the token response.
func (a *testAS) grantFor(t *testing.T, clientID, scope string) map[string]any {
	t.Helper()
	q := authParams(clientID, loopbackRedirect, verifier)
	q.Set("scope", scope)
	got := redirectParams(t, a.authorize(t, q), loopbackRedirect)
	if got.Get("code") == "" {
		t.Fatalf("authorization: %v", got)
	}
	st, tok := a.post(t, "/token", codeForm(clientID, got.Get("code"), loopbackRedirect, verifier))
	if st != http.StatusOK || tok["refresh_token"] == nil {
		t.Fatalf("code exchange: %d %v", st, tok)
	}
	return tok
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func refreshForm(clientID, rt string, extra ...string) url.Values {
	f := url.Values{"grant_type": {"refresh_token"}, "client_id": {clientID}, "refresh_token": {rt}}
	for i := 0; i+1 < len(extra); i += 2 {
		f.Set(extra[i], extra[i+1])
	}
	return f
}

// #17.2: a refused refresh spends nothing; only a successful one rotates.
func TestRefusedRefreshSpendsNothing(t *testing.T) {
	a := newAS(t, trustAll, nil)
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	a.addClient(t, "other", oauth.AuthMethodNone, "", loopbackRedirect)
	tests := []struct {
		name   string
		form   func(rt string) url.Values
		status int
		code   oauth.ErrorCode
	}{
		{"another resource", func(rt string) url.Values { return refreshForm("pub", rt, "resource", "https://evil.example/mcp") },
			400, oauth.InvalidTarget},
		{"two resources", func(rt string) url.Values {
			f := refreshForm("pub", rt, "resource", testResource)
			f.Add("resource", testResource)
			return f
		}, 400, oauth.InvalidTarget},
		{"wider scope", func(rt string) url.Values { return refreshForm("pub", rt, "scope", "mcp:read mcp:write") },
			400, oauth.InvalidScope},
		{"another client", func(rt string) url.Values { return refreshForm("other", rt) }, 400, oauth.InvalidGrant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := a.grantFor(t, "pub", "mcp:read")
			rt := tok["refresh_token"].(string)
			st, body := a.post(t, "/token", tt.form(rt))
			wantError(t, st, body, tt.status, tt.code)
			st, body = a.post(t, "/token", refreshForm("pub", rt))
			if st != http.StatusOK || body["refresh_token"] == nil {
				t.Fatalf("the rightful refresh after the refusal: %d %v", st, body)
			}
		})
	}
}

// #17.3: a narrower scope narrows the access token, not the grant (RFC 6749
// §6: the new refresh token's scope is identical to the old one's).
func TestNarrowerRefreshKeepsTheGrant(t *testing.T) {
	a := newAS(t, trustAll, nil)
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	tok := a.grantFor(t, "pub", "mcp:read mcp:write")
	steps := []struct {
		scope, want string
	}{
		{"mcp:read", "mcp:read"},
		{"", "mcp:read mcp:write"},
		{"mcp:write", "mcp:write"},
		{"mcp:read mcp:write", "mcp:read mcp:write"},
	}
	rt := tok["refresh_token"].(string)
	for _, s := range steps {
		var f url.Values
		if s.scope != "" {
			f = refreshForm("pub", rt, "scope", s.scope)
		} else {
			f = refreshForm("pub", rt)
		}
		st, body := a.post(t, "/token", f)
		if st != http.StatusOK || body["scope"] != s.want {
			t.Fatalf("refresh with scope %q: %d %v, want scope %q", s.scope, st, body, s.want)
		}
		ac, err := a.VerifyAccessToken(t.Context(), body["access_token"].(string))
		if err != nil || ac.Scope != s.want {
			t.Fatalf("access token scope %q, %v; want %q", ac.Scope, err, s.want)
		}
		rt = body["refresh_token"].(string)
	}
}

// #17.4: a scope registered by DCR does not forbid a later, consented
// request for more of the server's scopes, unless a policy says so.
func TestStepUpBeyondRegisteredScope(t *testing.T) {
	tests := []struct {
		name   string
		policy func(*authserver.Config)
		scope  string
		want   oauth.ErrorCode // "" for a code
	}{
		{"no policy, wider scope", nil, "mcp:read mcp:write", ""},
		{"no policy, unknown scope", nil, "admin", oauth.InvalidScope},
		{"registered only, registered scope", func(c *authserver.Config) { c.ScopePolicy = authserver.RegisteredScopesOnly }, "mcp:read", ""},
		{"registered only, wider scope", func(c *authserver.Config) { c.ScopePolicy = authserver.RegisteredScopesOnly }, "mcp:read mcp:write", oauth.InvalidScope},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAS(t, func(c *authserver.Config) {
				trustAll(c)
				if tt.policy != nil {
					tt.policy(c)
				}
			}, nil)
			if err := a.store.CreateClient(t.Context(), authserver.Client{Metadata: oauth.ClientMetadata{
				ClientID: "dcr", RedirectURIs: []string{loopbackRedirect}, Scope: "mcp:read",
				GrantTypes:              []string{oauth.GrantAuthorizationCode, oauth.GrantRefreshToken},
				TokenEndpointAuthMethod: oauth.AuthMethodNone}}); err != nil {
				t.Fatal(err)
			}
			q := authParams("dcr", loopbackRedirect, verifier)
			q.Set("scope", tt.scope)
			got := redirectParams(t, a.authorize(t, q), loopbackRedirect)
			if got.Get("error") != string(tt.want) || (tt.want == "") != (got.Get("code") != "") {
				t.Fatalf("authorization response %v, want error %q", got, tt.want)
			}
		})
	}
}

// #17.10: revoking another client's token is refused (RFC 7009 §2.1) and
// changes nothing; unknown tokens are still answered 200 (§2.2).
func TestRevokeOtherClientsToken(t *testing.T) {
	a := newAS(t, trustAll, nil)
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	a.addClient(t, "other", oauth.AuthMethodNone, "", loopbackRedirect)
	tests := []struct {
		name   string
		client string
		token  func(tok map[string]any) string
		status int
		code   oauth.ErrorCode
		works  bool // the grant still works after
	}{
		{"refresh token of another client", "other", func(m map[string]any) string { return m["refresh_token"].(string) }, 400, oauth.UnauthorizedClient, true},
		{"access token of another client", "other", func(m map[string]any) string { return m["access_token"].(string) }, 400, oauth.UnauthorizedClient, true},
		{"unknown token", "other", func(map[string]any) string { return "garbage" }, 200, "", true},
		{"own refresh token", "pub", func(m map[string]any) string { return m["refresh_token"].(string) }, 200, "", false},
		{"own access token", "pub", func(m map[string]any) string { return m["access_token"].(string) }, 200, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := a.grantFor(t, "pub", "mcp:read")
			st, body := a.post(t, "/revoke", url.Values{"token": {tt.token(tok)}, "client_id": {tt.client}})
			if tt.code != "" {
				wantError(t, st, body, tt.status, tt.code)
			} else if st != tt.status {
				t.Fatalf("revoke: %d %v, want %d", st, body, tt.status)
			}
			st, _ = a.post(t, "/token", refreshForm("pub", tok["refresh_token"].(string)))
			if (st == http.StatusOK) != tt.works {
				t.Fatalf("refresh after the revocation request: %d, want working %v", st, tt.works)
			}
		})
	}
}

// consentForm fetches the consent page of an authorization request and
// returns the form that answers it with action.
func consentForm(t *testing.T, a *testAS, q url.Values, action string) url.Values {
	t.Helper()
	if a.http.Jar == nil {
		jar, _ := cookiejar.New(nil)
		a.http.Jar = jar
	}
	resp := a.authorize(t, q)
	page := readAll(t, resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `value="allow"`) {
		t.Fatalf("consent page: %d %s", resp.StatusCode, page)
	}
	form := url.Values{"action": {action}}
	for _, m := range hiddenRE.FindAllStringSubmatch(page, -1) {
		form.Set(m[1], strings.ReplaceAll(m[2], "&#43;", "+"))
	}
	return form
}

// postConsent posts a consent form with an Origin header.
func postConsent(t *testing.T, a *testAS, form url.Values, origin string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.ts.URL+"/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", origin)
	resp, err := a.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// #17.14 (the class): the Origin of a consent post is compared with the
// issuer's origin canonically, as browsers serialize it.
func TestConsentOriginComparedCanonically(t *testing.T) {
	var port string
	a := newAS(t, func(c *authserver.Config) {
		u, _ := url.Parse(c.Issuer)
		port = u.Port()
		c.Issuer = "http://LocalHost:" + port
	}, nil)
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	tests := []struct {
		origin string
		status int
	}{
		{"http://localhost:" + port, http.StatusSeeOther},
		{"http://evil.example", http.StatusForbidden},
		{"https://localhost:" + port, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.origin, func(t *testing.T) {
			resp := postConsent(t, a, consentForm(t, a, authParams("pub", loopbackRedirect, verifier), "allow"), tt.origin)
			if resp.StatusCode != tt.status {
				t.Fatalf("consent post from %s: %d, want %d", tt.origin, resp.StatusCode, tt.status)
			}
		})
	}
}

// #17.11: a consent page is answered once; posting the decision again gets
// an error page, not another code.
func TestConsentAnsweredOnce(t *testing.T) {
	for _, action := range []string{"allow", "deny"} {
		t.Run(action, func(t *testing.T) {
			a := newAS(t, nil, nil)
			a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
			form := consentForm(t, a, authParams("pub", loopbackRedirect, verifier), action)
			post := func() *http.Response { return postConsent(t, a, form, a.ts.URL) }
			got := redirectParams(t, post(), loopbackRedirect)
			if (action == "allow") != (got.Get("code") != "") {
				t.Fatalf("first answer: %v", got)
			}
			wantPageError(t, post(), http.StatusBadRequest, oauth.InvalidRequest)
		})
	}
}

// #17.14: the resource is canonicalized once, at the authorization
// endpoint, and the access token's aud is the canonical form whatever the
// spelling; the token endpoint compares canonically.
func TestResourceCanonicalized(t *testing.T) {
	a := newAS(t, trustAll, nil)
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	for _, spelling := range []string{testResource, "https://MCP.EXAMPLE.TEST/mcp/", "HTTPS://mcp.example.test:443/mcp", "https://mcp.example.test/./mcp"} {
		t.Run(spelling, func(t *testing.T) {
			q := authParams("pub", loopbackRedirect, verifier)
			q.Set("resource", spelling)
			got := redirectParams(t, a.authorize(t, q), loopbackRedirect)
			f := codeForm("pub", got.Get("code"), loopbackRedirect, verifier)
			f.Set("resource", spelling)
			st, tok := a.post(t, "/token", f)
			if st != http.StatusOK {
				t.Fatalf("exchange: %d %v", st, tok)
			}
			ac, err := a.VerifyAccessToken(t.Context(), tok["access_token"].(string))
			if err != nil || !slices.Equal([]string(ac.Audience), []string{testResource}) {
				t.Fatalf("aud %q, %v; want %q", ac.Audience, err, testResource)
			}
			// Any spelling of the same resource refreshes; the aud stays canonical.
			st, tok = a.post(t, "/token", refreshForm("pub", tok["refresh_token"].(string), "resource", "https://mcp.example.test/MCP/../mcp/"))
			if st != http.StatusOK {
				t.Fatalf("refresh: %d %v", st, tok)
			}
			ac, err = a.VerifyAccessToken(t.Context(), tok["access_token"].(string))
			if err != nil || !slices.Equal([]string(ac.Audience), []string{testResource}) {
				t.Fatalf("aud after refresh %q, %v", ac.Audience, err)
			}
		})
	}
}
