package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpstack/mcpstack/oauth"
)

// testAS is a small authorization server for the tests: RFC 8414 metadata,
// a JWKS of ES256 keys that can rotate, an authorization endpoint that
// grants every request at once, a token endpoint (authorization_code with
// PKCE, client_credentials, token exchange), and introspection.
type testAS struct {
	t      testing.TB
	srv    *httptest.Server
	issuer string

	clientID, clientSecret string

	mu         sync.Mutex
	keys       []signingKey // published; the last one signs
	generation int
	codes      map[string]codeGrant
	intro      map[string]map[string]any // token -> introspection answer
	grants     []url.Values              // token endpoint requests received

	jwksFetches     atomic.Int32
	metadataFetches atomic.Int32
	introCalls      atomic.Int32
}

type signingKey struct {
	kid  string
	priv *ecdsa.PrivateKey
}

type codeGrant struct {
	challenge, resource, scope, clientID string
}

func newTestAS(t testing.TB) *testAS {
	a := &testAS{t: t, clientID: "mcp-server", clientSecret: "s3cret",
		codes: map[string]codeGrant{}, intro: map[string]map[string]any{}}
	a.rotate()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", a.metadata)
	mux.HandleFunc("GET /jwks", a.jwks)
	mux.HandleFunc("GET /authorize", a.authorize)
	mux.HandleFunc("POST /token", a.token)
	mux.HandleFunc("POST /introspect", a.introspect)
	a.srv = httptest.NewServer(mux)
	a.issuer = a.srv.URL
	t.Cleanup(a.srv.Close)
	return a
}

// rotate adds a new signing key and returns its kid; older keys stay
// published until drop.
func (a *testAS) rotate() string {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		a.t.Fatal(err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.generation++
	kid := fmt.Sprintf("k%d", a.generation)
	a.keys = append(a.keys, signingKey{kid: kid, priv: priv})
	return kid
}

// dropOld unpublishes every key but the current one.
func (a *testAS) dropOld() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.keys = a.keys[len(a.keys)-1:]
}

func (a *testAS) current() signingKey {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.keys[len(a.keys)-1]
}

func (a *testAS) metadata(w http.ResponseWriter, r *http.Request) {
	a.metadataFetches.Add(1)
	writeJSON(w, oauth.AuthorizationServerMetadata{
		Issuer:                            a.issuer,
		AuthorizationEndpoint:             a.issuer + "/authorize",
		TokenEndpoint:                     a.issuer + "/token",
		IntrospectionEndpoint:             a.issuer + "/introspect",
		JWKSURI:                           a.issuer + "/jwks",
		ResponseTypesSupported:            []string{"code"},
		GrantTypesSupported:               []string{"authorization_code", "client_credentials"},
		CodeChallengeMethodsSupported:     []string{"S256"},
		TokenEndpointAuthMethodsSupported: []string{"client_secret_basic", "client_secret_post"},
	})
}

func (a *testAS) jwks(w http.ResponseWriter, r *http.Request) {
	a.jwksFetches.Add(1)
	a.mu.Lock()
	var set jose.JSONWebKeySet
	for _, k := range a.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.kid, Algorithm: "ES256", Use: "sig"})
	}
	a.mu.Unlock()
	// A key of an unknown type must not spoil the set.
	raw, _ := json.Marshal(set)
	var doc map[string][]json.RawMessage
	json.Unmarshal(raw, &doc)
	doc["keys"] = append([]json.RawMessage{json.RawMessage(`{"kty":"unknown","kid":"x"}`)}, doc["keys"]...)
	writeJSON(w, doc)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// claims returns the claims of a valid token for sub, audience aud and
// scopes; tests change them to break one rule at a time.
func (a *testAS) claims(sub string, aud any, scopes ...string) map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": a.issuer, "sub": sub, "aud": aud, "client_id": "client-" + sub,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"jti": fmt.Sprint(now.UnixNano()), "scope": strings.Join(scopes, " "),
	}
}

// sign signs claims with the current key as an at+jwt.
func (a *testAS) sign(claims map[string]any) string {
	return a.signWith(a.current(), "at+jwt", claims)
}

func (a *testAS) signWith(k signingKey, typ string, claims map[string]any) string {
	opts := (&jose.SignerOptions{}).WithType(jose.ContentType(typ))
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}}, opts)
	if err != nil {
		a.t.Fatal(err)
	}
	s, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		a.t.Fatal(err)
	}
	return s
}

// unsigned returns a token with alg "none".
func (a *testAS) unsigned(claims map[string]any) string {
	return b64json(map[string]any{"alg": "none", "typ": "at+jwt", "kid": a.current().kid}) + "." + b64json(claims) + "."
}

// hmacWithPublicKey returns a token signed with HS256 using the published
// public key (its JWK JSON and its DER encoding are both common choices of
// the attack; the JWK is used here) as the secret.
func (a *testAS) hmacWithPublicKey(claims map[string]any) string {
	k := a.current()
	pub, _ := json.Marshal(jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.kid, Algorithm: "ES256", Use: "sig"})
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: pub}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", k.kid))
	if err != nil {
		a.t.Fatal(err)
	}
	s, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		a.t.Fatal(err)
	}
	return s
}

func b64json(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (a *testAS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("client_id") != "public-client" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	code := fmt.Sprint(time.Now().UnixNano())
	a.mu.Lock()
	a.codes[code] = codeGrant{challenge: q.Get("code_challenge"), resource: q.Get("resource"), scope: q.Get("scope"), clientID: q.Get("client_id")}
	a.mu.Unlock()
	u := q.Get("redirect_uri") + "?code=" + code + "&state=" + q.Get("state")
	http.Redirect(w, r, u, http.StatusFound)
}

// token implements the grants; issued tokens are JWTs with aud = resource.
func (a *testAS) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	a.grants = append(a.grants, r.PostForm)
	a.mu.Unlock()
	fail := func(code oauth.ErrorCode) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(oauth.ErrorResponse{Code: code})
	}
	var sub, aud, scope string
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		a.mu.Lock()
		g, ok := a.codes[r.PostForm.Get("code")]
		delete(a.codes, r.PostForm.Get("code"))
		a.mu.Unlock()
		if !ok || !oauth.VerifyS256(r.PostForm.Get("code_verifier"), g.challenge) || r.PostForm.Get("resource") != g.resource {
			fail(oauth.InvalidGrant)
			return
		}
		sub, aud, scope = "user-1", g.resource, g.scope
	case "client_credentials", "urn:ietf:params:oauth:grant-type:token-exchange":
		if id, secret, ok := r.BasicAuth(); !ok || id != a.clientID || secret != a.clientSecret {
			fail(oauth.InvalidClient)
			return
		}
		sub, aud, scope = a.clientID, r.PostForm.Get("resource"), r.PostForm.Get("scope")
		if aud == "" {
			aud = r.PostForm.Get("audience")
		}
	default:
		fail(oauth.UnsupportedGrantType)
		return
	}
	c := a.claims(sub, aud)
	c["scope"] = scope
	writeJSON(w, map[string]any{"access_token": a.sign(c), "token_type": "Bearer", "expires_in": 3600, "scope": scope})
}

// setIntrospection sets the answer for token.
func (a *testAS) setIntrospection(token string, ans map[string]any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.intro[token] = ans
}

func (a *testAS) introspect(w http.ResponseWriter, r *http.Request) {
	a.introCalls.Add(1)
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != a.clientID || secret != a.clientSecret || (basic && r.PostForm.Has("client_secret")) {
		w.Header().Set("WWW-Authenticate", `Basic realm="introspection"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	a.mu.Lock()
	ans, ok := a.intro[r.PostForm.Get("token")]
	a.mu.Unlock()
	if !ok {
		ans = map[string]any{"active": false}
	}
	writeJSON(w, ans)
}

func mustKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
