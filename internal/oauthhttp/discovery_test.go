package oauthhttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/internal/httpbody"
	"github.com/mcpstack/mcpstack/oauth"
)

// metadataFor returns valid metadata for issuer.
func metadataFor(issuer string) map[string]any {
	return map[string]any{
		"issuer":                           issuer,
		"authorization_endpoint":           issuer + "/authorize",
		"token_endpoint":                   issuer + "/token",
		"response_types_supported":         []string{"code"},
		"code_challenge_methods_supported": []string{"S256"},
	}
}

// TestDiscoverAuthorizationServer is the table of discovery: which
// locations are tried, which answers stop it, what the metadata must be.
func TestDiscoverAuthorizationServer(t *testing.T) {
	const (
		rfc8414 = "/.well-known/oauth-authorization-server/t1"
		oidc    = "/.well-known/openid-configuration/t1"
		oidcApp = "/t1/.well-known/openid-configuration"
	)
	type edit func(issuer string, m map[string]any)
	tests := []struct {
		name string
		// at maps a path to its answer: a status, or 200 with the
		// metadata changed by edit.
		at      map[string]int
		edit    edit
		issuer  string // "" means the server's URL + "/t1"
		accept  func(string) bool
		tried   []string
		wantErr error
	}{
		{name: "RFC 8414 location", at: map[string]int{rfc8414: 200}, tried: []string{rfc8414}},
		{name: "404 then OIDC", at: map[string]int{rfc8414: 404, oidc: 200}, tried: []string{rfc8414, oidc}},
		{name: "410 and 404 then OIDC appended", at: map[string]int{rfc8414: 410, oidc: 404, oidcApp: 200}, tried: []string{rfc8414, oidc, oidcApp}},
		{name: "a redirect is not followed, the next location is tried", at: map[string]int{rfc8414: 302, oidc: 200}, tried: []string{rfc8414, oidc}},
		{name: "5xx stops discovery", at: map[string]int{rfc8414: 500, oidc: 200}, tried: []string{rfc8414}, wantErr: errStatus},
		{name: "nothing anywhere", at: map[string]int{}, tried: []string{rfc8414, oidc, oidcApp}, wantErr: ErrNoMetadata},
		{name: "issuer mismatch", at: map[string]int{rfc8414: 200}, edit: func(iss string, m map[string]any) { m["issuer"] = iss + "/other" }, tried: []string{rfc8414}, wantErr: oauth.ErrMetadataIssuerMismatch},
		{name: "issuer with a trailing slash is another issuer", at: map[string]int{rfc8414: 200}, edit: func(iss string, m map[string]any) { m["issuer"] = iss + "/" }, tried: []string{rfc8414}, wantErr: oauth.ErrMetadataIssuerMismatch},
		{name: "issuer mismatch accepted by the caller", at: map[string]int{rfc8414: 200}, edit: func(iss string, m map[string]any) { m["issuer"] = iss + "/other" }, accept: func(string) bool { return true }, tried: []string{rfc8414}},
		{name: "invalid metadata", at: map[string]int{rfc8414: 200}, edit: func(_ string, m map[string]any) { delete(m, "response_types_supported") }, tried: []string{rfc8414}, wantErr: oauth.ErrInvalidMetadata},
		{name: "plain http endpoint", at: map[string]int{rfc8414: 200}, edit: func(_ string, m map[string]any) { m["token_endpoint"] = "http://as.example/token" }, tried: []string{rfc8414}, wantErr: oauth.ErrInvalidMetadata},
		{name: "endpoint on a mapped loopback address", at: map[string]int{rfc8414: 200}, edit: func(_ string, m map[string]any) { m["jwks_uri"] = "http://[::ffff:127.0.0.1]/jwks" }, tried: []string{rfc8414}, wantErr: errAny},
		{name: "non-https issuer", issuer: "http://as.example/t1", tried: nil, wantErr: ErrInsecureURL},
		{name: "issuer with userinfo", issuer: "https://u:p@as.example/t1", tried: nil, wantErr: ErrInsecureURL},
		{name: "issuer with a query", issuer: "https://as.example/t1?x=1", tried: nil, wantErr: oauth.ErrInvalidURI},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var tried []string
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				tried = append(tried, r.URL.Path)
				mu.Unlock()
				st, ok := tc.at[r.URL.Path]
				switch {
				case !ok:
					http.NotFound(w, r)
				case st == 200:
					m := metadataFor(srv.URL + "/t1")
					if tc.edit != nil {
						tc.edit(srv.URL+"/t1", m)
					}
					w.Header().Set("Content-Type", "application/json")
					json.NewEncoder(w).Encode(m)
				case st/100 == 3:
					http.Redirect(w, r, oidc, st)
				default:
					http.Error(w, "no", st)
				}
			}))
			defer srv.Close()
			issuer := tc.issuer
			if issuer == "" {
				issuer = srv.URL + "/t1"
			}
			m, err := DiscoverAuthorizationServer(context.Background(), srv.Client(), issuer, DiscoverOptions{AcceptIssuer: tc.accept})
			mu.Lock()
			got := strings.Join(tried, " ")
			mu.Unlock()
			if want := strings.Join(tc.tried, " "); got != want {
				t.Errorf("tried %q, want %q", got, want)
			}
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("err = %v", err)
			case tc.wantErr == nil && m.TokenEndpoint != issuer+"/token":
				t.Fatalf("metadata = %+v", m)
			case tc.wantErr == nil:
			case err == nil:
				t.Fatalf("no error, metadata %+v", m)
			case tc.wantErr == errStatus:
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode/100 != 5 {
					t.Fatalf("err = %v, want a 5xx StatusError", err)
				}
			case tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

// errStatus stands for a 5xx *StatusError in the table.
var errStatus = errors.New("a 5xx StatusError")

// TestFirstJSON: the URL of the document found comes back with it.
func TestFirstJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/b" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"resource":"x"}`))
	}))
	defer srv.Close()
	m, at, err := FirstJSON[oauth.ProtectedResourceMetadata](context.Background(), srv.Client(), []string{srv.URL + "/a", srv.URL + "/b"})
	if err != nil || at != srv.URL+"/b" || m.Resource != "x" {
		t.Fatalf("got %+v at %q, %v", m, at, err)
	}
}

// TestDiscoverMaxBody: a caller's own bound applies to discovery.
func TestDiscoverMaxBody(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(metadataFor(srv.URL))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		max int64
		ok  bool
	}{{0, true}, {4096, true}, {64, false}} {
		_, err := DiscoverAuthorizationServer(context.Background(), srv.Client(), srv.URL, DiscoverOptions{MaxBody: tc.max})
		if (err == nil) != tc.ok || (!tc.ok && !errors.Is(err, httpbody.ErrTooLarge)) {
			t.Errorf("MaxBody %d: %v", tc.max, err)
		}
	}
}
