package authclient

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcpstack/mcpstack/oauth"
)

// checkProof verifies a DPoP proof with the key in its header and returns
// its claims.
func checkProof(t *testing.T, proof string) (map[string]any, error) {
	t.Helper()
	sig, err := jose.ParseSignedCompact(proof, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return nil, err
	}
	h := sig.Signatures[0].Protected
	if h.ExtraHeaders["typ"] != "dpop+jwt" || h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		return nil, fmt.Errorf("bad header %+v", h)
	}
	payload, err := sig.Verify(h.JSONWebKey)
	if err != nil {
		return nil, err
	}
	var c map[string]any
	return c, json.Unmarshal(payload, &c)
}

func TestDPoP(t *testing.T) {
	const asNonce, rsNonce = "as-nonce", "rs-nonce"
	var mu sync.Mutex
	var problems []string
	fail := func(f string, a ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(f, a...))
		mu.Unlock()
	}
	jtis := map[string]bool{}
	var asURL string
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case oauth.WellKnownAuthorizationServer:
			writeJSON(w, 200, map[string]any{
				"issuer": asURL, "authorization_endpoint": asURL + "/authorize", "token_endpoint": asURL + "/token",
				"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
				"token_endpoint_auth_methods_supported": []string{"none"},
				"dpop_signing_alg_values_supported":     []string{"ES256"},
			})
		case "/authorize":
			q := r.URL.Query()
			http.Redirect(w, r, q.Get("redirect_uri")+"?code=c&state="+q.Get("state"), http.StatusFound)
		case "/token":
			c, err := checkProof(t, r.Header.Get("DPoP"))
			if err != nil {
				fail("token request proof: %v", err)
				writeJSON(w, 400, map[string]string{"error": "invalid_dpop_proof"})
				return
			}
			if c["htm"] != "POST" || c["htu"] != asURL+"/token" {
				fail("token proof claims %v", c)
			}
			if c["nonce"] != asNonce {
				w.Header().Set("DPoP-Nonce", asNonce)
				writeJSON(w, 400, map[string]string{"error": "use_dpop_nonce"})
				return
			}
			writeJSON(w, 200, map[string]any{"access_token": "dpop-token", "token_type": "DPoP"})
		}
	}))
	defer as.Close()
	asURL = as.URL
	var rsURL string
	rsCalls := 0
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp" {
			writeJSON(w, 200, map[string]any{"resource": rsURL + "/mcp", "authorization_servers": []string{asURL}})
			return
		}
		rsCalls++
		auth := r.Header.Get("Authorization")
		if auth == "" {
			w.Header().Set("WWW-Authenticate", `DPoP resource_metadata="`+rsURL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(401)
			return
		}
		if auth != "DPoP dpop-token" {
			fail("Authorization %q", auth)
		}
		c, err := checkProof(t, r.Header.Get("DPoP"))
		if err != nil {
			fail("request proof: %v", err)
			w.WriteHeader(401)
			return
		}
		sum := sha256.Sum256([]byte("dpop-token"))
		if c["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) || c["htm"] != "POST" || c["htu"] != rsURL+"/mcp" {
			fail("request proof claims %v", c)
		}
		jti, _ := c["jti"].(string)
		if jtis[jti] {
			fail("proof reused: jti %s", jti)
		}
		jtis[jti] = true
		if c["nonce"] != rsNonce {
			w.Header().Set("DPoP-Nonce", rsNonce)
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			w.WriteHeader(401)
			return
		}
		w.WriteHeader(200)
	}))
	defer rs.Close()
	rsURL = rs.URL
	tr := NewTransport(Config{Authorizer: follower(), DPoP: true, PreRegistered: func(string) (ClientRegistration, bool) {
		return ClientRegistration{ClientID: "public"}, true
	}})
	for i := range 2 {
		if st, err := call(t, tr.Client(), rs.URL+"/mcp?q=1", `{}`); err != nil || st != 200 {
			t.Fatalf("call %d: %d %v", i, st, err)
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
	// no token, nonce challenge, with nonce; then one more with nonce.
	if rsCalls != 4 || len(jtis) != 3 {
		t.Fatalf("%d calls, %d proofs", rsCalls, len(jtis))
	}
}
