package authclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/oauth"
)

// TestAuthorizationServerAnswers: what the client takes from an
// authorization server is what the module's one OAuth HTTP client takes
// (internal/oauthhttp). Before #18.6 the client followed redirects (a
// token request re-posted to wherever the endpoint pointed), took
// metadata of any content type, and went on to the next discovery
// location after a 5xx.
func TestAuthorizationServerAnswers(t *testing.T) {
	const rfc8414 = "/.well-known/oauth-authorization-server"
	tests := []struct {
		name string
		// serve answers a path, or returns false for the default.
		serve   func(w http.ResponseWriter, r *http.Request, elsewhere string) bool
		refused bool
	}{
		{name: "well behaved", serve: func(http.ResponseWriter, *http.Request, string) bool { return false }},
		{name: "metadata as HTML", refused: true, serve: func(w http.ResponseWriter, r *http.Request, _ string) bool {
			if r.URL.Path != rfc8414 {
				return false
			}
			w.Header().Set("Content-Type", "text/html")
			json.NewEncoder(w).Encode(asMetadata(r))
			return true
		}},
		{name: "5xx at the first location stops discovery", refused: true, serve: func(w http.ResponseWriter, r *http.Request, _ string) bool {
			switch r.URL.Path {
			case rfc8414:
				http.Error(w, "down", http.StatusBadGateway)
			case "/.well-known/openid-configuration":
				writeJSON(w, 200, asMetadata(r))
			default:
				return false
			}
			return true
		}},
		{name: "metadata redirected elsewhere", refused: true, serve: func(w http.ResponseWriter, r *http.Request, elsewhere string) bool {
			if r.URL.Path != rfc8414 && r.URL.Path != "/.well-known/openid-configuration" {
				return false
			}
			http.Redirect(w, r, elsewhere+r.URL.Path, http.StatusFound)
			return true
		}},
		{name: "token endpoint redirects", refused: true, serve: func(w http.ResponseWriter, r *http.Request, elsewhere string) bool {
			if r.URL.Path != "/token" {
				return false
			}
			http.Redirect(w, r, elsewhere+"/token", http.StatusTemporaryRedirect)
			return true
		}},
		{name: "token answer without token_type", refused: true, serve: func(w http.ResponseWriter, r *http.Request, _ string) bool {
			if r.URL.Path != "/token" {
				return false
			}
			writeJSON(w, 200, map[string]any{"access_token": "at"})
			return true
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var elsewhereHits atomic.Int32
			// elsewhere is a second, well-behaved server for issuer
			// "as": taking anything from it means a redirect was
			// followed.
			var as *httptest.Server
			elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				elsewhereHits.Add(1)
				defaultAS(w, r, as.URL)
			}))
			defer elsewhere.Close()
			as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !tc.serve(w, r, elsewhere.URL) {
					defaultAS(w, r, as.URL)
				}
			}))
			defer as.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			hc := as.Client()
			md, err := discoverAuthorizationServer(ctx, hc, as.URL, false, false)
			if err == nil {
				client := ClientRegistration{ClientID: "c", ClientSecret: "s"}
				_, err = requestToken(ctx, hc, md, client, url.Values{"grant_type": {"client_credentials"}}, time.Now(), nil)
			}
			if (err != nil) != tc.refused {
				t.Fatalf("err = %v, want refused = %v", err, tc.refused)
			}
			if n := elsewhereHits.Load(); n != 0 {
				t.Fatalf("a redirect was followed: %d requests elsewhere", n)
			}
		})
	}
}

// asMetadata is the metadata of the authorization server answering r.
func asMetadata(r *http.Request) map[string]any {
	iss := "http://" + r.Host
	return map[string]any{"issuer": iss, "authorization_endpoint": iss + "/authorize", "token_endpoint": iss + "/token",
		"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{oauth.MethodS256}}
}

// defaultAS answers as a well-behaved authorization server whose issuer
// is issuer.
func defaultAS(w http.ResponseWriter, r *http.Request, issuer string) {
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		m := asMetadata(r)
		m["issuer"], m["token_endpoint"] = issuer, issuer+"/token"
		writeJSON(w, 200, m)
	case "/token":
		writeJSON(w, 200, map[string]any{"access_token": "at", "token_type": "Bearer"})
	default:
		http.NotFound(w, r)
	}
}
