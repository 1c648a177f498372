package auth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/auth"
)

// TestAuthorizationServerAnswers: what the resource server takes from an
// authorization server is what the module's one OAuth HTTP client takes
// (internal/oauthhttp): redirects refused, JSON only, metadata validated.
// Before #18.6 package auth followed redirects (re-posting its client
// credentials to wherever a token endpoint pointed), took a token answer
// of any content type, and did not validate metadata.
func TestAuthorizationServerAnswers(t *testing.T) {
	tests := []struct {
		name string
		// token answers the token endpoint; metadata changes the
		// metadata; both nil means a well-behaved server.
		token    func(w http.ResponseWriter, r *http.Request, elsewhere string)
		metadata func(m map[string]any)
		refused  bool
	}{
		{name: "well behaved"},
		{name: "well-behaved metadata", metadata: func(map[string]any) {}},
		{name: "token endpoint redirects", refused: true, token: func(w http.ResponseWriter, r *http.Request, elsewhere string) {
			http.Redirect(w, r, elsewhere, http.StatusTemporaryRedirect)
		}},
		{name: "token answer is HTML", refused: true, token: func(w http.ResponseWriter, r *http.Request, _ string) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`{"access_token":"at","token_type":"Bearer"}`))
		}},
		{name: "token answer without token_type", refused: true, token: func(w http.ResponseWriter, r *http.Request, _ string) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"access_token":"at"}`))
		}},
		{name: "metadata without response_types_supported", refused: true, metadata: func(m map[string]any) { delete(m, "response_types_supported") }},
		{name: "metadata with a plain http endpoint", refused: true, metadata: func(m map[string]any) { m["token_endpoint"] = "http://as.example/token" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stolen, introspected atomic.Int32
			elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				stolen.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"access_token":"at","token_type":"Bearer"}`))
			}))
			defer elsewhere.Close()
			var as *httptest.Server
			as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/.well-known/oauth-authorization-server":
					m := map[string]any{"issuer": as.URL, "authorization_endpoint": as.URL + "/authorize",
						"token_endpoint": as.URL + "/token", "introspection_endpoint": as.URL + "/introspect",
						"response_types_supported": []string{"code"}}
					if tc.metadata != nil {
						tc.metadata(m)
					}
					w.Header().Set("Content-Type", "application/json")
					json.NewEncoder(w).Encode(m)
				case "/token":
					if tc.token != nil {
						tc.token(w, r, elsewhere.URL+"/token")
						return
					}
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(`{"access_token":"at","token_type":"Bearer"}`))
				case "/introspect":
					introspected.Add(1)
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(`{"active":false}`))
				default:
					http.NotFound(w, r)
				}
			}))
			defer as.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var refused bool
			var err error
			if tc.metadata != nil {
				// The introspection endpoint comes from the metadata:
				// reaching it means the metadata was taken.
				v, verr := auth.NewIntrospectionVerifier(auth.IntrospectionOptions{Issuer: as.URL, ClientID: "rs", ClientSecret: "s", AllowAnyAudience: true})
				if verr != nil {
					t.Fatal(verr)
				}
				_, err = v.Verify(ctx, "some-token")
				refused = introspected.Load() == 0
			} else {
				cc := &auth.ClientCredentials{TokenURL: as.URL + "/token", ClientID: "rs", ClientSecret: "s"}
				_, err = cc.Token(ctx)
				refused = err != nil
			}
			if refused != tc.refused {
				t.Fatalf("refused = %v (err %v), want %v", refused, err, tc.refused)
			}
			if n := stolen.Load(); n != 0 {
				t.Fatalf("the redirect target got %d requests", n)
			}
		})
	}
}
