package authclient

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// A 2025-03-26 server: no protected resource metadata, no authorization
// server metadata, default endpoints on its own origin.
func TestLegacyDiscovery(t *testing.T) {
	var seen []string
	var tokenForm url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.Path)
		switch r.URL.Path {
		case "/mcp":
			if r.Header.Get("Authorization") != "Bearer legacy-token" {
				w.Header().Set("WWW-Authenticate", `Bearer realm="x"`)
				w.WriteHeader(401)
				return
			}
			w.WriteHeader(200)
		case "/register":
			writeJSON(w, 201, map[string]any{"client_id": "legacy-client"})
		case "/authorize":
			q := r.URL.Query()
			http.Redirect(w, r, q.Get("redirect_uri")+"?code=c&state="+q.Get("state"), http.StatusFound)
		case "/token":
			r.ParseForm()
			tokenForm = r.PostForm
			writeJSON(w, 200, map[string]any{"access_token": "legacy-token", "token_type": "Bearer"})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	_, err := call(t, NewTransport(Config{Authorizer: follower()}).Client(), srv.URL+"/mcp", `{}`)
	if !errors.Is(err, ErrNoMetadata) {
		t.Fatalf("without LegacyDiscovery: err = %v, want ErrNoMetadata", err)
	}
	seen = nil
	st, err := call(t, NewTransport(Config{Authorizer: follower(), LegacyDiscovery: true}).Client(), srv.URL+"/mcp", `{}`)
	if err != nil || st != 200 {
		t.Fatalf("legacy: %d %v", st, err)
	}
	want := []string{
		"POST /mcp",
		"GET /.well-known/oauth-protected-resource/mcp",
		"GET /.well-known/oauth-protected-resource",
		"GET /.well-known/oauth-authorization-server",
		"GET /.well-known/openid-configuration",
		"POST /register",
		"GET /authorize",
		"POST /token",
		"POST /mcp",
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	if tokenForm.Get("code_verifier") == "" || tokenForm.Get("client_id") != "legacy-client" {
		t.Fatalf("token request %v", tokenForm)
	}
}
