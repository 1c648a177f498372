package authserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// userInfoToken runs a trusted code flow for resource and returns the
// access token.
func userInfoToken(t testing.TB, a *testAS, resource string) string {
	t.Helper()
	const verifier = "userinfo-verifier-0123456789-0123456789-0123456789"
	q := authParams("ui-app", loopbackRedirect, verifier)
	q.Set("resource", resource)
	p := redirectParams(t, a.authorize(t, q), loopbackRedirect)
	f := codeForm("ui-app", p.Get("code"), loopbackRedirect, verifier)
	f.Set("resource", resource)
	status, body := a.post(t, "/token", f)
	tok, _ := body["access_token"].(string)
	if status != http.StatusOK || tok == "" {
		t.Fatalf("token for %s: %d %v", resource, status, body)
	}
	return tok
}

// #23: the user-info endpoint (OpenID Connect Core §5.3) answers a token
// issued for it, and refuses every other with RFC 6750 §3 challenges.
func TestUserInfo(t *testing.T) {
	clk := &clock{t: time.Now()}
	a := newAS(t, func(c *authserver.Config) { trustAll(c); c.Now = clk.now }, nil)
	a.addClient(t, "ui-app", "none", "", loopbackRedirect)
	ui := a.UserInfoURL()
	if got := a.Metadata().UserinfoEndpoint; got != ui || ui != a.ts.URL+"/userinfo" {
		t.Fatalf("userinfo_endpoint %q, UserInfoURL %q", got, ui)
	}
	valid := userInfoToken(t, a, ui)
	mcpToken := userInfoToken(t, a, testResource)
	revoked := userInfoToken(t, a, ui)
	if status, body := a.post(t, "/revoke", url.Values{"client_id": {"ui-app"}, "token": {revoked}}); status != http.StatusOK {
		t.Fatalf("revoke: %d %v", status, body)
	}
	expiring := userInfoToken(t, a, ui)

	bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	tests := []struct {
		name       string
		method     string
		query      string
		hdr        http.Header
		before     func()
		wantStatus int
		wantError  string // in WWW-Authenticate; "" with a 401 means no error code
	}{
		{"valid GET", "GET", "", bearer(valid), nil, 200, ""},
		{"valid POST", "POST", "", bearer(valid), nil, 200, ""},
		{"scheme case-insensitive", "GET", "", http.Header{"Authorization": {"bearer " + valid}}, nil, 200, ""},
		{"token for an MCP server", "GET", "", bearer(mcpToken), nil, 401, "invalid_token"},
		{"revoked", "GET", "", bearer(revoked), nil, 401, "invalid_token"},
		{"garbage", "GET", "", bearer("a.b.c"), nil, 401, "invalid_token"},
		{"tampered", "GET", "", bearer(valid[:len(valid)-4] + "AAAA"), nil, 401, "invalid_token"},
		{"missing", "GET", "", nil, nil, 401, ""},
		{"basic scheme", "GET", "", http.Header{"Authorization": {"Basic " + valid}}, nil, 401, "invalid_request"},
		{"empty bearer", "GET", "", http.Header{"Authorization": {"Bearer "}}, nil, 401, "invalid_request"},
		{"two tokens", "GET", "", http.Header{"Authorization": {"Bearer " + valid + " " + valid}}, nil, 401, "invalid_request"},
		{"token in query", "GET", "access_token=" + url.QueryEscape(valid), nil, nil, 400, "invalid_request"},
		{"token in query and header", "GET", "access_token=" + url.QueryEscape(valid), bearer(valid), nil, 400, "invalid_request"},
		// Last: moves the clock past every token's expiry.
		{"expired", "GET", "", bearer(expiring), func() { clk.add(11 * time.Minute) }, 401, "invalid_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			target := a.ts.URL + "/userinfo"
			if tt.query != "" {
				target += "?" + tt.query
			}
			req, _ := http.NewRequest(tt.method, target, nil)
			for k, v := range tt.hdr {
				req.Header[k] = v
			}
			resp, err := a.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, b)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q", cc)
			}
			if tt.wantStatus == 200 {
				var info authserver.UserInfo
				if err := json.Unmarshal(b, &info); err != nil || info.Subject != "alice" || info.Scope != "mcp:read" {
					t.Fatalf("answer %s (%v)", b, err)
				}
				return
			}
			ch := resp.Header.Get("WWW-Authenticate")
			if !strings.HasPrefix(ch, "Bearer ") {
				t.Fatalf("WWW-Authenticate %q", ch)
			}
			if tt.wantError == "" && strings.Contains(ch, "error=") || tt.wantError != "" && !strings.Contains(ch, `error="`+tt.wantError+`"`) {
				t.Fatalf("WWW-Authenticate %q, want error %q", ch, tt.wantError)
			}
			if strings.Contains(string(b), "alice") {
				t.Fatalf("refused answer names the user: %s", b)
			}
		})
	}
}

// #23: the user-info endpoint is a resource a client may always ask for,
// even when Config.Resources lists only MCP servers; others stay refused.
func TestUserInfoResourceAllowed(t *testing.T) {
	a := newAS(t, trustAll, nil)
	a.addClient(t, "ui-app", "none", "", loopbackRedirect)
	for _, tt := range []struct {
		resource string
		want     string
	}{
		{a.UserInfoURL(), ""},
		{testResource, ""},
		{a.ts.URL + "/userinfo/other", string(oauth.InvalidTarget)},
		{"https://elsewhere.example/mcp", string(oauth.InvalidTarget)},
	} {
		q := authParams("ui-app", loopbackRedirect, "v-0123456789-0123456789-0123456789-0123456789")
		q.Set("resource", tt.resource)
		p := redirectParams(t, a.authorize(t, q), loopbackRedirect)
		if p.Get("error") != tt.want {
			t.Errorf("resource %s: %v, want error %q", tt.resource, p, tt.want)
		}
	}
}
