package authserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/memory"
)

// fakeProvider is a small upstream OpenID Connect (or, with github set,
// plain OAuth with a user-info endpoint) provider on loopback. Like a real
// provider that remembers the user's consent for our static client id, it
// answers every authorization request at once with a code: exactly the
// situation in which a proxy without its own consent is a confused deputy.
type fakeProvider struct {
	ts     *httptest.Server
	key    *ecdsa.PrivateKey
	github bool // no discovery, no id_token; user-info at /user

	mu        sync.Mutex
	sub       string // who signs in
	codes     map[string]url.Values
	tokens    map[string]bool
	refreshes int
	authorize []url.Values // every authorization request seen
	tokenForm []url.Values // every token request's form
	expiresIn int
	// idClaims, if set, alters the ID token claims before signing.
	idClaims func(map[string]any)
	// signWith, if set, signs ID tokens with another key.
	signWith *ecdsa.PrivateKey
	// rfc8414 serves the metadata at the RFC 8414 address only;
	// metaIssuer, if set, is the issuer the metadata claims.
	rfc8414    bool
	metaIssuer string
	// assertionKey, if set, is the key our client authenticates with
	// (private_key_jwt) instead of the secret.
	assertionKey *ecdsa.PublicKey
}

const (
	upClientID     = "mcp-proxy"
	upClientSecret = "upstream-secret-0123456789"
)

func newFakeProvider(t testing.TB, github bool) *fakeProvider {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := &fakeProvider{key: k, github: github, sub: "user-1", codes: map[string]url.Values{},
		tokens: map[string]bool{}, expiresIn: 3600}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.serveMetadata)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", p.serveMetadata)
	mux.HandleFunc("GET /authorize", p.serveAuthorize)
	mux.HandleFunc("POST /token", p.serveToken)
	mux.HandleFunc("GET /jwks", p.serveJWKS)
	mux.HandleFunc("GET /user", p.serveUser)
	p.ts = httptest.NewServer(mux)
	t.Cleanup(p.ts.Close)
	return p
}

func (p *fakeProvider) serveMetadata(w http.ResponseWriter, r *http.Request) {
	if p.github || p.rfc8414 != (r.URL.Path == "/.well-known/oauth-authorization-server") {
		http.NotFound(w, r)
		return
	}
	iss := p.ts.URL
	if p.metaIssuer != "" {
		iss = p.metaIssuer
	}
	writeTestJSON(w, 200, map[string]any{
		"issuer": iss, "authorization_endpoint": p.ts.URL + "/authorize", "token_endpoint": p.ts.URL + "/token",
		"jwks_uri": p.ts.URL + "/jwks", "response_types_supported": []string{"code"},
		"code_challenge_methods_supported": []string{"S256"}, "userinfo_endpoint": p.ts.URL + "/user",
		"authorization_response_iss_parameter_supported": true,
	})
}

func writeTestJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (p *fakeProvider) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.authorize = append(p.authorize, q)
	if q.Get("client_id") != upClientID || q.Get("code_challenge_method") != "S256" || q.Get("state") == "" ||
		q.Get("response_type") != "code" {
		http.Error(w, "bad request", 400)
		return
	}
	code := fmt.Sprintf("up-code-%d", len(p.authorize))
	q.Set("sub", p.sub)
	p.codes[code] = q
	u, _ := url.Parse(q.Get("redirect_uri"))
	rq := url.Values{"code": {code}, "state": {q.Get("state")}}
	if !p.github {
		rq.Set("iss", p.ts.URL)
	}
	u.RawQuery = rq.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (p *fakeProvider) serveToken(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	p.mu.Lock()
	p.tokenForm = append(p.tokenForm, r.PostForm)
	p.mu.Unlock()
	if !p.clientAuthenticated(r) {
		writeTestJSON(w, 401, map[string]string{"error": "invalid_client"})
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var sub, nonce string
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		q, ok := p.codes[r.PostForm.Get("code")]
		delete(p.codes, r.PostForm.Get("code"))
		if !ok || q.Get("redirect_uri") != r.PostForm.Get("redirect_uri") ||
			!oauth.VerifyS256(r.PostForm.Get("code_verifier"), q.Get("code_challenge")) {
			writeTestJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		sub, nonce = q.Get("sub"), q.Get("nonce")
	case "refresh_token":
		if !strings.HasPrefix(r.PostForm.Get("refresh_token"), "up-rt-") {
			writeTestJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		p.refreshes++
		sub = strings.TrimPrefix(r.PostForm.Get("refresh_token"), "up-rt-")
	default:
		writeTestJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	at := fmt.Sprintf("up-at-%s-%d", sub, len(p.tokens))
	p.tokens[at] = true
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": p.expiresIn, "refresh_token": "up-rt-" + sub}
	if !p.github && r.PostForm.Get("grant_type") == "authorization_code" {
		resp["id_token"] = p.idToken(sub, nonce)
	}
	writeTestJSON(w, 200, resp)
}

func (p *fakeProvider) idToken(sub, nonce string) string {
	now := time.Now()
	c := map[string]any{"iss": p.ts.URL, "sub": sub, "aud": upClientID, "nonce": nonce,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "groups": []string{"readers"}}
	if p.idClaims != nil {
		p.idClaims(c)
	}
	k := p.key
	if p.signWith != nil {
		k = p.signWith
	}
	sig, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: k, KeyID: "k1"}}, nil)
	s, _ := jwt.Signed(sig).Claims(c).Serialize()
	return s
}

func (p *fakeProvider) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	writeTestJSON(w, 200, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
}

func (p *fakeProvider) serveUser(w http.ResponseWriter, r *http.Request) {
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	p.mu.Lock()
	ok := p.tokens[tok]
	p.mu.Unlock()
	if !ok {
		w.WriteHeader(401)
		return
	}
	sub := strings.TrimSuffix(strings.TrimPrefix(tok, "up-at-"), tok[strings.LastIndex(tok, "-"):])
	writeTestJSON(w, 200, map[string]any{"id": 4242, "login": "octo-" + sub})
}

func (p *fakeProvider) authorizeCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.authorize)
}

// decodeJWT returns a JWT's claims without verifying it (the token came
// from the server under test, over the test's own connection).
func decodeJWT(t *testing.T, s string) map[string]any {
	t.Helper()
	tok, err := jwt.ParseSigned(s, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := tok.UnsafeClaimsWithoutVerification(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func newMemStore() authserver.Store { return memory.New() }

// clientAuthenticated checks the secret (HTTP Basic) or, with
// assertionKey, a private_key_jwt client assertion (RFC 7523).
func (p *fakeProvider) clientAuthenticated(r *http.Request) bool {
	if p.assertionKey == nil {
		id, secret, ok := r.BasicAuth()
		return ok && id == upClientID && secret == upClientSecret
	}
	if r.PostForm.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		return false
	}
	tok, err := jwt.ParseSigned(r.PostForm.Get("client_assertion"), []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return false
	}
	var c jwt.Claims
	if tok.Claims(p.assertionKey, &c) != nil {
		return false
	}
	return c.Issuer == upClientID && c.Subject == upClientID && c.ID != "" &&
		c.ValidateWithLeeway(jwt.Expected{AnyAudience: jwt.Audience{p.ts.URL + "/token"}, Time: time.Now()}, 0) == nil
}
