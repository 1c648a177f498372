package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// testIssuer is a minimal token issuer: authorization server metadata, a
// JWKS, and tokens signed with its key.
type testIssuer struct {
	srv *httptest.Server
	key *ecdsa.PrivateKey
}

func newTestIssuer(t *testing.T) *testIssuer {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	iss := &testIssuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                           iss.srv.URL,
			"authorization_endpoint":           iss.srv.URL + "/authorize",
			"token_endpoint":                   iss.srv.URL + "/token",
			"jwks_uri":                         iss.srv.URL + "/jwks",
			"response_types_supported":         []string{"code"},
			"code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	})
	iss.srv = httptest.NewServer(mux)
	t.Cleanup(iss.srv.Close)
	return iss
}

func (iss *testIssuer) token(t *testing.T, audience, scope string) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: iss.key, KeyID: "k1"}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tok, err := jwt.Signed(signer).Claims(jwt.Claims{
		Issuer: iss.srv.URL, Subject: "alice", Audience: jwt.Audience{audience},
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(time.Hour)), ID: "t1",
	}).Claims(map[string]any{"scope": scope, "client_id": "test-client"}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestServeProtected runs `mcpstack serve --issuer` and talks to it with
// and without tokens.
func TestServeProtected(t *testing.T) {
	iss := newTestIssuer(t)
	url := startServe(t, "--issuer", iss.srv.URL, "--scope", "mcp:read", "--tool-scope", "fetch=mcp:net")

	r := runCmd(t, "", "client", "--no-login", url, "tools")
	if r.code != exitFailure || !strings.Contains(r.stderr, "401") {
		t.Errorf("no token: exit %d: %s", r.code, r.stderr)
	}

	// The protected resource metadata names the issuer.
	resp, err := http.Get(strings.Replace(url, "/mcp", "/.well-known/oauth-protected-resource/mcp", 1))
	if err != nil {
		t.Fatal(err)
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	json.NewDecoder(resp.Body).Decode(&prm)
	resp.Body.Close()
	if prm.Resource != url || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != iss.srv.URL {
		t.Errorf("metadata %+v", prm)
	}

	read := "Authorization: Bearer " + iss.token(t, url, "mcp:read")
	r = runCmd(t, "", "client", "--no-login", "--header", read, url, "call", "echo", `{"text":"hi"}`)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "hi" {
		t.Errorf("with mcp:read: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	r = runCmd(t, "", "client", "--no-login", "--header", read, url, "call", "fetch", `{"url":"http://127.0.0.1:1/"}`)
	if r.code != exitFailure || !strings.Contains(r.stderr, "403") {
		t.Errorf("fetch without mcp:net: exit %d: %s", r.code, r.stderr)
	}
	other := "Authorization: Bearer " + iss.token(t, "http://127.0.0.1:1/mcp", "mcp:read")
	r = runCmd(t, "", "client", "--no-login", "--header", other, url, "tools")
	if r.code != exitFailure || !strings.Contains(r.stderr, "401") {
		t.Errorf("token for another audience: exit %d: %s", r.code, r.stderr)
	}
}
