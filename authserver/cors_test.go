package authserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/memory"
)

const browserApp = "https://inspector.example"

// do sends one request to a with the given headers and returns the answer,
// its body read.
func (a *testAS) do(t *testing.T, method, path string, hdr map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, a.ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestCORS(t *testing.T) {
	plain := newAS(t, nil, nil)
	listed := newAS(t, func(c *authserver.Config) { c.CORSOrigins = []string{browserApp} }, nil)
	anyOrigin := newAS(t, func(c *authserver.Config) { c.CORSOrigins = []string{"*"} }, nil)
	preflight := func(origin, method string) map[string]string {
		return map[string]string{"Origin": origin, "Access-Control-Request-Method": method,
			"Access-Control-Request-Headers": "content-type, mcp-protocol-version"}
	}
	form := map[string]string{"Origin": browserApp, "Content-Type": "application/x-www-form-urlencoded"}
	for _, tc := range []struct {
		name         string
		as           *testAS
		method, path string
		hdr          map[string]string
		body         string
		status       int
		want         map[string]string // "" means absent
	}{
		// Public documents: any origin, by default.
		{"metadata GET", plain, "GET", "/.well-known/oauth-authorization-server", map[string]string{"Origin": browserApp}, "", 200,
			map[string]string{"Access-Control-Allow-Origin": "*", "Vary": "", "Access-Control-Allow-Credentials": ""}},
		{"OIDC metadata GET", plain, "GET", "/.well-known/openid-configuration", nil, "", 200,
			map[string]string{"Access-Control-Allow-Origin": "*"}},
		{"metadata preflight", plain, "OPTIONS", "/.well-known/oauth-authorization-server", preflight("https://anyone.example", "GET"), "", 204,
			map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, HEAD",
				"Access-Control-Allow-Headers": "Accept, MCP-Protocol-Version", "Access-Control-Max-Age": "7200"}},
		{"metadata OPTIONS, no preflight", plain, "OPTIONS", "/.well-known/oauth-authorization-server", nil, "", 204,
			map[string]string{"Allow": "GET, HEAD, OPTIONS", "Access-Control-Allow-Methods": ""}},
		{"JWKS GET", plain, "GET", "/jwks.json", map[string]string{"Origin": browserApp}, "", 200,
			map[string]string{"Access-Control-Allow-Origin": "*", "Content-Type": "application/jwk-set+json"}},
		{"JWKS preflight", plain, "OPTIONS", "/jwks.json", preflight(browserApp, "GET"), "", 204,
			map[string]string{"Access-Control-Allow-Origin": "*"}},

		// Client endpoints: nothing by default.
		{"token, by default", plain, "POST", "/token", form, "grant_type=nope", 401,
			map[string]string{"Access-Control-Allow-Origin": "", "Vary": ""}},
		{"token preflight, by default", plain, "OPTIONS", "/token", preflight(browserApp, "POST"), "", 405,
			map[string]string{"Access-Control-Allow-Origin": ""}},
		{"register preflight, by default", plain, "OPTIONS", "/register", preflight(browserApp, "POST"), "", 405,
			map[string]string{"Access-Control-Allow-Origin": ""}},

		// Client endpoints with listed origins.
		{"token preflight", listed, "OPTIONS", "/token", preflight(browserApp, "POST"), "", 204,
			map[string]string{"Access-Control-Allow-Origin": browserApp, "Access-Control-Allow-Methods": "POST",
				"Access-Control-Allow-Headers": "Content-Type, Accept, Authorization", "Vary": "Origin",
				"Access-Control-Allow-Credentials": ""}},
		{"token preflight, origin not listed", listed, "OPTIONS", "/token", preflight("https://evil.example", "POST"), "", 403,
			map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": ""}},
		{"token error readable", listed, "POST", "/token", form, "grant_type=nope", 401,
			map[string]string{"Access-Control-Allow-Origin": browserApp, "Access-Control-Expose-Headers": "WWW-Authenticate, Retry-After", "Vary": "Origin"}},
		{"token, origin not listed", listed, "POST", "/token", map[string]string{"Origin": "https://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, "grant_type=nope", 401,
			map[string]string{"Access-Control-Allow-Origin": "", "Vary": "Origin"}},
		{"register preflight", listed, "OPTIONS", "/register", preflight(browserApp, "POST"), "", 204,
			map[string]string{"Access-Control-Allow-Origin": browserApp}},
		{"register", listed, "POST", "/register", map[string]string{"Origin": browserApp, "Content-Type": "application/json"},
			`{"redirect_uris":["https://inspector.example/cb"],"token_endpoint_auth_method":"none","client_name":"page"}`, 201,
			map[string]string{"Access-Control-Allow-Origin": browserApp}},
		{"revoke preflight", listed, "OPTIONS", "/revoke", preflight(browserApp, "POST"), "", 204,
			map[string]string{"Access-Control-Allow-Origin": browserApp}},
		{"introspection stays closed", listed, "OPTIONS", "/introspect", preflight(browserApp, "POST"), "", 405,
			map[string]string{"Access-Control-Allow-Origin": ""}},
		{"authorization endpoint needs none", listed, "OPTIONS", "/authorize", preflight(browserApp, "GET"), "", 405,
			map[string]string{"Access-Control-Allow-Origin": ""}},
		{"metadata still public", listed, "GET", "/.well-known/oauth-authorization-server", map[string]string{"Origin": "https://evil.example"}, "", 200,
			map[string]string{"Access-Control-Allow-Origin": "*"}},

		// "*": any origin, answered with *.
		{"token preflight, any origin", anyOrigin, "OPTIONS", "/token", preflight("https://anyone.example", "POST"), "", 204,
			map[string]string{"Access-Control-Allow-Origin": "*", "Vary": "", "Access-Control-Allow-Credentials": ""}},
		{"token, any origin", anyOrigin, "POST", "/token", map[string]string{"Origin": "https://anyone.example", "Content-Type": "application/x-www-form-urlencoded"}, "grant_type=nope", 401,
			map[string]string{"Access-Control-Allow-Origin": "*"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := tc.as.do(t, tc.method, tc.path, tc.hdr, tc.body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			for k, v := range tc.want {
				if got := strings.Join(resp.Header.Values(k), ", "); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
}

// A public client in a page exchanges its code and refreshes its token
// across origins: every answer is readable.
func TestCORSBrowserTokenFlow(t *testing.T) {
	a := newAS(t, func(c *authserver.Config) {
		trustAll(c)
		c.CORSOrigins = []string{browserApp}
	}, nil)
	const redirect = browserApp + "/callback"
	a.addClient(t, "page-app", oauth.AuthMethodNone, "", redirect)
	verifier := strings.Repeat("v", 43)
	code := a.code(t, "page-app", redirect, verifier)
	hdr := map[string]string{"Origin": browserApp, "Content-Type": "application/x-www-form-urlencoded"}
	resp, body := a.do(t, "POST", "/token", hdr, codeForm("page-app", code, redirect, verifier).Encode())
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != browserApp {
		t.Fatalf("code exchange: %d %q: %s", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), body)
	}
	var tok oauth.TokenResponse
	if err := json.Unmarshal([]byte(body), &tok); err != nil || tok.RefreshToken == "" {
		t.Fatalf("token response %s: %v", body, err)
	}
	resp, body = a.do(t, "POST", "/token", hdr, url.Values{"grant_type": {"refresh_token"}, "client_id": {"page-app"},
		"refresh_token": {tok.RefreshToken}}.Encode())
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != browserApp {
		t.Fatalf("refresh: %d %q: %s", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), body)
	}
	resp, body = a.do(t, "POST", "/revoke", hdr, url.Values{"client_id": {"page-app"}, "token": {tok.AccessToken}}.Encode())
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != browserApp {
		t.Fatalf("revoke: %d %q: %s", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), body)
	}
}

func TestCORSOriginsRefused(t *testing.T) {
	for _, origins := range [][]string{{"https://a.example/path"}, {"null"}, {"*", "https://a.example"}, {"a.example"}} {
		_, err := authserver.NewServer(context.Background(), authserver.Config{
			Issuer: "http://127.0.0.1:9000", Store: memory.New(), DevUser: "alice", CORSOrigins: origins,
		})
		if err == nil {
			t.Errorf("CORSOrigins %q accepted", origins)
		}
	}
}
