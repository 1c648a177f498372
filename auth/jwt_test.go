package auth_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/internal/oauthtest"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func reason(err error) string {
	var te *auth.TokenError
	if errors.As(err, &te) {
		return te.Reason
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return ""
}

// A rotation: a token signed with a new key makes the verifier fetch the
// JWKS again; tokens with unknown key ids cannot make it fetch more often
// than the refresh interval allows.
func TestJWKSRotation(t *testing.T) {
	as := newTestAS(t)
	clk := &clock{t: time.Now()}
	v, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer(), Audience: resource, Now: clk.Now, KeyRefreshInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	claims := as.Claims("alice", resource, "mcp")
	claims["iat"] = clk.Now().Unix()
	old := as.Sign(claims)
	if _, err := v.Verify(ctx, old); err != nil {
		t.Fatal(err)
	}
	if n := as.JWKSFetches.Load(); n != 1 || as.MetadataFetches.Load() != 1 {
		t.Fatalf("jwks fetches %d, metadata fetches %d", n, as.MetadataFetches.Load())
	}

	// The AS rotates and drops the old key at once; the first token with
	// the new kid, after the interval, triggers one fetch.
	as.Rotate()
	as.DropOld()
	clk.Add(2 * time.Minute)
	fresh := as.Sign(claims)
	if _, err := v.Verify(ctx, fresh); err != nil {
		t.Fatalf("new key: %v", err)
	}
	if n := as.JWKSFetches.Load(); n != 2 {
		t.Fatalf("jwks fetches %d after rotation", n)
	}
	// The old key is gone: refused, and the refresh is rate limited.
	for range 5 {
		if _, err := v.Verify(ctx, old); reason(err) != "unknown signing key" {
			t.Fatalf("old key: %v", err)
		}
	}
	// A burst of invented kids does not reach the JWKS endpoint either.
	for range 20 {
		forged := as.SignWith(oauthtest.SigningKey{KID: "forged", Priv: mustKey(t)}, "at+jwt", claims)
		if _, err := v.Verify(ctx, forged); reason(err) != "unknown signing key" {
			t.Fatalf("forged: %v", err)
		}
	}
	if n := as.JWKSFetches.Load(); n != 2 {
		t.Fatalf("jwks fetches %d: not rate limited", n)
	}
	// After the interval a rotation is picked up again.
	as.Rotate()
	clk.Add(61 * time.Second)
	if _, err := v.Verify(ctx, as.Sign(claims)); err != nil {
		t.Fatalf("second rotation: %v", err)
	}
	if n := as.JWKSFetches.Load(); n != 3 {
		t.Fatalf("jwks fetches %d", n)
	}
	// The metadata was discovered once.
	if n := as.MetadataFetches.Load(); n != 1 {
		t.Fatalf("metadata fetches %d", n)
	}
	// Keys older than KeySetMaxAge are fetched again on the next token.
	clk.Add(auth.DefaultKeySetMaxAge)
	claims["iat"] = clk.Now().Unix()
	claims["exp"] = clk.Now().Add(time.Hour).Unix()
	if _, err := v.Verify(ctx, as.Sign(claims)); err != nil {
		t.Fatal(err)
	}
	if n := as.JWKSFetches.Load(); n != 4 {
		t.Fatalf("jwks fetches %d after max age", n)
	}
}

func TestJWTOptions(t *testing.T) {
	for name, o := range map[string]auth.JWTOptions{
		"no issuer":     {Audience: resource},
		"no audience":   {Issuer: "https://as"},
		"HS256 allowed": {Issuer: "https://as", Audience: resource, Algorithms: []string{"ES256", "HS256"}},
		"none allowed":  {Issuer: "https://as", Audience: resource, Algorithms: []string{"none"}},
		"leeway":        {Issuer: "https://as", Audience: resource, Leeway: time.Hour},
		"http jwks":     {Issuer: "https://as", Audience: resource, JWKSURL: "http://as.example.com/jwks"},
		"audience frag": {Issuer: "https://as", Audience: resource + "#f"},
		"negative skew": {Issuer: "https://as", Audience: resource, Leeway: -time.Second},
		"unknown alg":   {Issuer: "https://as", Audience: resource, Algorithms: []string{"ES257"}},
	} {
		if _, err := auth.NewJWTVerifier(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: "https://as", AllowAnyAudience: true}); err != nil {
		t.Errorf("AllowAnyAudience: %v", err)
	}
}

// Skew: exp, nbf and iat are checked with the leeway, no more.
func TestJWTLeeway(t *testing.T) {
	as := newTestAS(t)
	clk := &clock{t: time.Now()}
	v, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer(), Audience: resource, Now: clk.Now, Leeway: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	now := clk.Now()
	tests := []struct {
		claim string
		at    time.Time
		want  string
	}{
		{"exp", now.Add(-5 * time.Second), ""},
		{"exp", now.Add(-11 * time.Second), "token expired"},
		{"nbf", now.Add(5 * time.Second), ""},
		{"nbf", now.Add(11 * time.Second), "token not valid yet"},
		{"iat", now.Add(5 * time.Second), ""},
		{"iat", now.Add(11 * time.Second), "token issued in the future"},
	}
	for _, tc := range tests {
		c := as.Claims("alice", resource)
		c["iat"], c["nbf"] = now.Unix(), now.Unix()
		c[tc.claim] = tc.at.Unix()
		if _, err := v.Verify(context.Background(), as.Sign(c)); reason(err) != tc.want {
			t.Errorf("%s %v: got %q, want %q", tc.claim, tc.at.Sub(now), reason(err), tc.want)
		}
	}
}

// Scopes come from scope, or from scp as an array or a string; the key's
// own alg must agree with the token's; a static key set works offline.
func TestJWTClaimsAndKeys(t *testing.T) {
	as := newTestAS(t)
	k := as.Current()
	set := &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.Priv.PublicKey, KeyID: k.KID, Algorithm: "ES256", Use: "sig"}}}
	v, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer(), Audience: resource, KeySet: set})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		scp  any
		want []string
	}{
		{[]string{"a", "b", "a"}, []string{"a", "b"}},
		{"a b", []string{"a", "b"}},
	} {
		c := as.Claims("alice", resource)
		delete(c, "scope")
		c["scp"] = tc.scp
		p, err := v.Verify(ctx, as.Sign(c))
		if err != nil || len(p.Scopes) != len(tc.want) || p.Scopes[0] != tc.want[0] {
			t.Errorf("scp %v: %v %v", tc.scp, p, err)
		}
	}
	c := as.Claims("alice", []string{"https://x.example.com", resource}, "mcp")
	if _, err := v.Verify(ctx, as.Sign(c)); err != nil {
		t.Errorf("aud array: %v", err)
	}
	if as.JWKSFetches.Load() != 0 {
		t.Error("a static key set was fetched")
	}
	// A key published for RS256 cannot verify an ES256 token.
	set.Keys[0].Algorithm = "RS256"
	v2, _ := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer(), Audience: resource, KeySet: set})
	if _, err := v2.Verify(ctx, as.Sign(as.Claims("alice", resource))); reason(err) != "signature does not verify" {
		t.Errorf("alg mismatch: %v", err)
	}
	// A verifier that allows RS256 only refuses ES256.
	v3, _ := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer(), Audience: resource, KeySet: set, Algorithms: []string{"RS256"}})
	if _, err := v3.Verify(ctx, as.Sign(as.Claims("alice", resource))); reason(err) != "malformed token or algorithm not allowed" {
		t.Errorf("allowlist: %v", err)
	}
}

// Discovery and key fetch failures are not token errors (503, not 401),
// and a failing endpoint is not asked again before the refresh interval.
func TestJWTKeysUnavailable(t *testing.T) {
	as := newTestAS(t)
	v, _ := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer() + "/nowhere", Audience: resource})
	_, err := v.Verify(context.Background(), as.Sign(as.Claims("alice", resource)))
	if err == nil || errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("discovery: got %v", err)
	}

	var hits atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer down.Close()
	clk := &clock{t: time.Now()}
	v, _ = auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer(), Audience: resource, JWKSURL: down.URL, Now: clk.Now})
	tok := as.Sign(as.Claims("alice", resource))
	for range 5 {
		if _, err := v.Verify(context.Background(), tok); err == nil || errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("keys down: got %v", err)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("%d fetches while down", n)
	}
	clk.Add(auth.DefaultKeyRefreshInterval)
	v.Verify(context.Background(), tok)
	if n := hits.Load(); n != 2 {
		t.Fatalf("%d fetches after the interval", n)
	}
}

// Each allowed algorithm verifies with a key of its kind; the key set is
// static, so no fetch is involved.
func TestJWTAlgorithms(t *testing.T) {
	as := newTestAS(t)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	edPub, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecKey := mustKey(t)
	for _, tc := range []struct {
		alg       jose.SignatureAlgorithm
		priv, pub any
	}{
		{jose.RS256, rsaKey, &rsaKey.PublicKey},
		{jose.PS256, rsaKey, &rsaKey.PublicKey},
		{jose.ES256, ecKey, &ecKey.PublicKey},
		{jose.EdDSA, edPriv, edPub},
	} {
		set := &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: tc.pub, KeyID: "k", Use: "sig"}}}
		v, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer(), Audience: resource, KeySet: set})
		if err != nil {
			t.Fatal(err)
		}
		sig, err := jose.NewSigner(jose.SigningKey{Algorithm: tc.alg, Key: jose.JSONWebKey{Key: tc.priv, KeyID: "k"}}, (&jose.SignerOptions{}).WithType("at+jwt"))
		if err != nil {
			t.Fatal(err)
		}
		tok, err := jwt.Signed(sig).Claims(as.Claims("alice", resource, "mcp")).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		if p, err := v.Verify(context.Background(), tok); err != nil || p.Subject != "alice" {
			t.Errorf("%s: %v", tc.alg, err)
		}
		// The same token refused when its algorithm is not allowed.
		v2, _ := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer(), Audience: resource, KeySet: set, Algorithms: []string{"ES384"}})
		if _, err := v2.Verify(context.Background(), tok); reason(err) != "malformed token or algorithm not allowed" {
			t.Errorf("%s outside the allowlist: %v", tc.alg, err)
		}
	}
}

// TestClaimTypeErrors: a correctly signed token whose claim has the wrong
// JSON type is refused with a reason naming the claim, never as a bad
// signature, and without Go type names (issue #16 item 17).
func TestClaimTypeErrors(t *testing.T) {
	as := newTestAS(t)
	v, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer(), Audience: resource})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		claim string
		value any
		want  string
	}{
		{"scope", []string{"mcp"}, "claim scope must be a string"},
		{"scope", 5, "claim scope must be a string"},
		{"scp", map[string]any{"a": 1}, "claim scp must be a string or an array of strings"},
		{"scp", []any{"a", 1}, "claim scp must be a string or an array of strings"},
		{"iss", 1, "claim iss must be a string"},
		{"sub", true, "claim sub must be a string"},
		{"aud", 7, "claim aud must be a string or an array of strings"},
		{"exp", "tomorrow", "claim exp must be a number"},
		{"nbf", []int{1}, "claim nbf must be a number"},
		{"iat", "now", "claim iat must be a number"},
		{"jti", 3, "claim jti must be a string"},
		{"client_id", map[string]any{}, "claim client_id must be a string"},
		// Right types, wrong values: the reason says so too.
		{"iss", "https://other.example", "issuer is not trusted"},
		{"aud", "https://other.example/mcp", "token was not issued for this resource"},
		{"exp", 1, "token expired"},
	} {
		claims := as.Claims("alice", resource, "mcp")
		claims[tc.claim] = tc.value
		_, err := v.Verify(context.Background(), as.Sign(claims))
		got := reason(err)
		if got != tc.want {
			t.Errorf("%s = %v: reason %q, want %q", tc.claim, tc.value, got, tc.want)
		}
	}
}
