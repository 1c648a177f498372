package sqlite_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/sqlite"
	"github.com/mcpstack/mcpstack/store/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) authserver.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "as.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestMigrationsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "as.db")
	for range 2 {
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := s.Version(t.Context()); err != nil || v != 4 {
			t.Fatalf("version %d, %v", v, err)
		}
		s.Close()
	}
}

// TestSurvivesRestart issues tokens from a server on one store, closes it,
// and checks that a new server on the reopened file has the same keys, the
// client, and honours (and rotates) the refresh token.
func TestSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "as.db")
	const redirect = "http://127.0.0.1:9/cb"
	verifier, _ := oauth.NewVerifier()

	var h http.Handler = http.NotFoundHandler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer ts.Close()
	hc := ts.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	start := func() (*sqlite.Store, *authserver.Server) {
		st, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := authserver.NewServer(context.Background(), authserver.Config{Issuer: ts.URL, Store: st, DevUser: "alice",
			TrustedClient: func(authserver.Client) bool { return true },
			Logger:        slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		h = s
		return st, s
	}
	token := func(form url.Values) oauth.TokenResponse {
		resp, err := hc.PostForm(ts.URL+"/token", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var tr oauth.TokenResponse
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || tr.UnmarshalJSON(b) != nil {
			t.Fatalf("token: %d %s", resp.StatusCode, b)
		}
		return tr
	}

	st1, s1 := start()
	if err := st1.CreateClient(t.Context(), authserver.Client{Metadata: oauth.ClientMetadata{ClientID: "app",
		RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none",
		GrantTypes: []string{"authorization_code", "refresh_token"}}}); err != nil {
		t.Fatal(err)
	}
	q := url.Values{"response_type": {"code"}, "client_id": {"app"}, "redirect_uri": {redirect},
		"code_challenge": {oauth.S256Challenge(verifier)}, "code_challenge_method": {"S256"}, "resource": {"https://rs.test/mcp"}}
	resp, err := hc.Get(ts.URL + "/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	tr := token(url.Values{"grant_type": {"authorization_code"}, "client_id": {"app"}, "code": {loc.Query().Get("code")},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {"https://rs.test/mcp"}})
	kid1 := s1.JWKS().Keys[0].KeyID
	st1.Close()

	st2, s2 := start()
	defer st2.Close()
	if got := s2.JWKS(); len(got.Keys) != 1 || got.Keys[0].KeyID != kid1 {
		t.Fatalf("keys after restart: %+v, want %s", got.Keys, kid1)
	}
	if _, err := s2.VerifyAccessToken(t.Context(), tr.AccessToken); err != nil {
		t.Fatalf("access token after restart: %v", err)
	}
	tr2 := token(url.Values{"grant_type": {"refresh_token"}, "client_id": {"app"}, "refresh_token": {tr.RefreshToken}})
	if tr2.RefreshToken == tr.RefreshToken {
		t.Fatal("refresh token not rotated")
	}
	resp, err = hc.PostForm(ts.URL+"/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {"app"}, "refresh_token": {tr.RefreshToken}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), `"invalid_grant"`) {
		t.Fatalf("reuse after restart: %d %s", resp.StatusCode, b)
	}
}

// TestReplicas runs two authorization servers on one database file, each
// with its own handle, and races them for single-use records.
func TestReplicas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "as.db")
	var stores []authserver.Store
	for range 2 {
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	storetest.RunReplicas(t, [2]authserver.Store{stores[0], stores[1]})
	storetest.RunRace(t, stores)
}
