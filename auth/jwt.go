package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpstack/mcpstack/oauth"
)

// Defaults and bounds of a [JWTVerifier].
const (
	// DefaultLeeway is the clock skew allowed on exp, nbf and iat.
	DefaultLeeway = 30 * time.Second
	// MaxLeeway is the largest skew JWTOptions.Leeway may set.
	MaxLeeway = 5 * time.Minute
	// DefaultKeyRefreshInterval is the least time between two JWKS fetches
	// caused by tokens with an unknown key id.
	DefaultKeyRefreshInterval = 30 * time.Second
	// DefaultKeySetMaxAge is how long a fetched JWKS is used before it is
	// fetched again.
	DefaultKeySetMaxAge = time.Hour
)

// DefaultAlgorithms is the signature algorithm allowlist used when
// JWTOptions.Algorithms is empty.
var DefaultAlgorithms = []string{"RS256", "PS256", "ES256", "EdDSA"}

// permittedAlgorithms are the asymmetric algorithms JWTOptions.Algorithms
// may list. "none" and the HMAC algorithms are never accepted: a resource
// server holds no shared secret, and HMAC with a public key as the secret is
// the classic algorithm confusion attack.
var permittedAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// JWTOptions configure a [JWTVerifier].
type JWTOptions struct {
	// Issuer is the authorization server's issuer identifier; the iss claim
	// must equal it exactly. Required.
	Issuer string
	// Audience is the canonical URI of this server (see
	// oauth.CanonicalResource); the aud claim must contain it. Required
	// unless AllowAnyAudience is set.
	Audience string
	// AllowAnyAudience disables the audience check. MCP forbids this for
	// a server accepting tokens from clients; it exists for verifiers
	// behind another check.
	AllowAnyAudience bool

	// JWKSURL is where the signing keys are fetched. When empty it is
	// discovered: the jwks_uri of the issuer's metadata (RFC 8414, then
	// OpenID Connect Discovery). It must be https (or http on loopback).
	JWKSURL string
	// KeySet, if set, is used instead of fetching keys.
	KeySet *jose.JSONWebKeySet

	// Algorithms is the signature algorithm allowlist; empty means
	// DefaultAlgorithms. "none" and HMAC algorithms are refused.
	Algorithms []string
	// Types lists the accepted values of the typ header, compared without
	// regard to case. Empty means "at+jwt" and "application/at+jwt", as RFC
	// 9068 §4 requires.
	Types []string

	// Leeway is the clock skew allowed on exp, nbf and iat. Zero means
	// DefaultLeeway; more than MaxLeeway is an error.
	Leeway time.Duration
	// KeyRefreshInterval is the least time between JWKS fetches caused by
	// an unknown key id (rate limiting). Zero means
	// DefaultKeyRefreshInterval.
	KeyRefreshInterval time.Duration
	// KeySetMaxAge is how long fetched keys are used before being fetched
	// again. Zero means DefaultKeySetMaxAge.
	KeySetMaxAge time.Duration

	// HTTPClient fetches metadata and keys; nil means a client with
	// DefaultHTTPTimeout. Its redirect policy is not used: redirects are
	// refused.
	HTTPClient *http.Client
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// JWTVerifier verifies JWT access tokens (RFC 9068) signed by the
// authorization server. Keys come from its JWKS, fetched when first needed,
// kept for KeySetMaxAge, and fetched again when a token names an unknown
// key id, at most once per KeyRefreshInterval.
//
// A token is accepted only if its typ is allowed, its alg is in the
// allowlist and agrees with the key, its signature verifies, iss equals the
// issuer, aud contains the audience, exp is in the future and nbf and iat
// are not (each within the leeway), and it has a sub.
// Scopes are read from scope (a space-separated string) or scp (an array
// or string).
type JWTVerifier struct {
	opts  JWTOptions
	algs  []jose.SignatureAlgorithm
	types []string
	now   func() time.Time

	keys      atomic.Pointer[keyState]
	fetchMu   sync.Mutex // serializes fetches
	lastFetch time.Time  // guarded by fetchMu: last attempt
	jwksURL   string     // guarded by fetchMu: discovered URL
}

type keyState struct {
	set     jose.JSONWebKeySet
	fetched time.Time
}

// NewJWTVerifier checks opts and returns a verifier. It does no I/O.
func NewJWTVerifier(opts JWTOptions) (*JWTVerifier, error) {
	if opts.Issuer == "" {
		return nil, errors.New("auth: JWTOptions.Issuer is required")
	}
	if !opts.AllowAnyAudience {
		c, err := oauth.CanonicalResource(opts.Audience)
		if err != nil {
			return nil, fmt.Errorf("auth: JWTOptions.Audience: %w", err)
		}
		opts.Audience = c
	}
	if opts.JWKSURL != "" && !secureURL(opts.JWKSURL) {
		return nil, fmt.Errorf("auth: JWTOptions.JWKSURL %q is not https", opts.JWKSURL)
	}
	if opts.Leeway == 0 {
		opts.Leeway = DefaultLeeway
	}
	if opts.Leeway < 0 || opts.Leeway > MaxLeeway {
		return nil, fmt.Errorf("auth: JWTOptions.Leeway %v is outside 0..%v", opts.Leeway, MaxLeeway)
	}
	if opts.KeyRefreshInterval <= 0 {
		opts.KeyRefreshInterval = DefaultKeyRefreshInterval
	}
	if opts.KeySetMaxAge <= 0 {
		opts.KeySetMaxAge = DefaultKeySetMaxAge
	}
	names := opts.Algorithms
	if len(names) == 0 {
		names = DefaultAlgorithms
	}
	v := &JWTVerifier{opts: opts, now: opts.Now, jwksURL: opts.JWKSURL}
	for _, a := range names {
		if !slices.Contains(permittedAlgorithms, a) {
			return nil, fmt.Errorf("auth: signature algorithm %q is not allowed", a)
		}
		v.algs = append(v.algs, jose.SignatureAlgorithm(a))
	}
	v.types = opts.Types
	if len(v.types) == 0 {
		v.types = []string{"at+jwt", "application/at+jwt"}
	}
	if v.now == nil {
		v.now = time.Now
	}
	if opts.KeySet != nil {
		v.keys.Store(&keyState{set: *opts.KeySet})
	}
	return v, nil
}

// accessClaims are the RFC 9068 claims read by the verifier.
type accessClaims struct {
	jwt.Claims
	ClientID string          `json:"client_id"`
	Scope    string          `json:"scope"`
	Scp      json.RawMessage `json:"scp"`
}

// Verify checks token and returns its principal. Errors about the token
// match ErrInvalidToken; a failure to fetch keys does not.
func (v *JWTVerifier) Verify(ctx context.Context, token string) (*Principal, error) {
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		return nil, invalid("malformed token or algorithm not allowed", err)
	}
	if len(tok.Headers) != 1 {
		return nil, invalid("one signature expected", nil)
	}
	h := tok.Headers[0]
	typ, _ := h.ExtraHeaders[jose.HeaderType].(string)
	if !slices.ContainsFunc(v.types, func(t string) bool { return strings.EqualFold(t, typ) }) {
		return nil, invalid("token type is not at+jwt", nil)
	}
	keys, err := v.keysFor(ctx, h.KeyID)
	if err != nil {
		return nil, err
	}
	var claims accessClaims
	var all map[string]any
	verified := false
	for _, k := range keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != h.Algorithm {
			continue
		}
		if !k.IsPublic() {
			continue // symmetric or private material: never a verification key here
		}
		// Only the signature here: a claim of the wrong type must not
		// read as a bad signature (issue #16 item 17).
		if err := tok.Claims(k.Key); err == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, invalid("signature does not verify", nil)
	}
	// The payload is the one just verified. go-jose's JSON decoder matches
	// member names exactly and refuses repeated ones.
	if err := tok.UnsafeClaimsWithoutVerification(&claims, &all); err != nil {
		return nil, invalid(claimsError(tok), err)
	}
	return v.checkClaims(&claims, all, token)
}

// claimsError says why the verified claims of tok do not decode: which
// claim has the wrong JSON type, or that they are not one JSON object with
// distinct members. It runs only for tokens that are refused.
func claimsError(tok *jwt.JSONWebToken) string {
	var raw map[string]json.RawMessage
	if err := tok.UnsafeClaimsWithoutVerification(&raw); err != nil {
		return "the claims are not a JSON object with distinct members"
	}
	if err := checkClaimTypes(raw); err != nil {
		return err.Error()
	}
	return "malformed claims"
}

// claimTypes gives the JSON type of each claim the verifier reads (RFC
// 7519 section 4.1, RFC 9068 section 2.2, RFC 8693 section 4.2 for scp
// as issued by some servers).
var claimTypes = []struct {
	name string
	kind claimKind
}{
	{"iss", claimString}, {"sub", claimString}, {"aud", claimStrings},
	{"exp", claimNumber}, {"nbf", claimNumber}, {"iat", claimNumber},
	{"jti", claimString}, {"client_id", claimString}, {"scope", claimString},
	{"scp", claimStrings},
}

type claimKind uint8

const (
	claimString  claimKind = iota // a string
	claimStrings                  // a string or an array of strings
	claimNumber                   // a number (NumericDate)
)

// checkClaimTypes says which claim, if any, has the wrong JSON type, in
// JSON terms. null counts as absent, as the decoder takes it.
func checkClaimTypes(raw map[string]json.RawMessage) error {
	for _, c := range claimTypes {
		v, ok := raw[c.name]
		if !ok || string(v) == "null" {
			continue
		}
		var okType bool
		switch c.kind {
		case claimString:
			var s string
			okType = json.Unmarshal(v, &s) == nil
		case claimStrings:
			var s string
			var list []string
			okType = json.Unmarshal(v, &s) == nil || json.Unmarshal(v, &list) == nil
		case claimNumber:
			var n float64
			okType = json.Unmarshal(v, &n) == nil
		}
		if !okType {
			want := map[claimKind]string{claimString: "a string", claimStrings: "a string or an array of strings", claimNumber: "a number"}[c.kind]
			return fmt.Errorf("claim %s must be %s", c.name, want)
		}
	}
	return nil
}

func (v *JWTVerifier) checkClaims(c *accessClaims, all map[string]any, token string) (*Principal, error) {
	now := v.now()
	lw := v.opts.Leeway
	if c.Issuer != v.opts.Issuer {
		return nil, invalid("issuer is not trusted", nil)
	}
	if !v.opts.AllowAnyAudience && !audienceContains(c.Audience, v.opts.Audience) {
		return nil, invalid("token was not issued for this resource", nil)
	}
	if c.Expiry == nil {
		return nil, invalid("token has no expiry", nil)
	}
	exp := c.Expiry.Time()
	if !now.Before(exp.Add(lw)) {
		return nil, invalid("token expired", nil)
	}
	if c.NotBefore != nil && now.Add(lw).Before(c.NotBefore.Time()) {
		return nil, invalid("token not valid yet", nil)
	}
	if c.IssuedAt == nil {
		return nil, invalid("token has no iat", nil)
	}
	if now.Add(lw).Before(c.IssuedAt.Time()) {
		return nil, invalid("token issued in the future", nil)
	}
	if c.Subject == "" {
		return nil, invalid("token has no sub", nil)
	}
	scopes, err := parseScp(c.Scope, c.Scp)
	if err != nil {
		return nil, invalid("claim scp must be a string or an array of strings", err)
	}
	for _, k := range []string{"iss", "sub", "aud", "exp", "nbf", "iat", "jti", "client_id", "scope", "scp"} {
		delete(all, k)
	}
	if len(all) == 0 {
		all = nil
	}
	return &Principal{
		Subject:  c.Subject,
		ClientID: c.ClientID,
		Issuer:   c.Issuer,
		Audience: []string(c.Audience),
		Scopes:   scopes,
		Expiry:   exp,
		Claims:   all,
		token:    token,
	}, nil
}

// audienceContains reports whether aud holds want, exactly or in another
// spelling of the same canonical URI.
func audienceContains(aud []string, want string) bool {
	if slices.Contains(aud, want) {
		return true
	}
	for _, a := range aud {
		if c, err := oauth.CanonicalResource(a); err == nil && c == want {
			return true
		}
	}
	return false
}

// parseScp returns the scopes of scope, or else of scp (array or string).
// An scp of the wrong type is an error even when scope is present.
func parseScp(scope string, scp json.RawMessage) ([]string, error) {
	if len(scp) == 0 || string(scp) == "null" {
		return oauth.ParseScope(scope), nil
	}
	var list []string
	var s string
	if err := json.Unmarshal(scp, &list); err != nil {
		if err := json.Unmarshal(scp, &s); err != nil {
			return nil, err
		}
	}
	switch {
	case scope != "":
		return oauth.ParseScope(scope), nil
	case list != nil:
		return oauth.MergeScopes(nil, list), nil
	}
	return oauth.ParseScope(s), nil
}

// keysFor returns the candidate keys for kid (all keys when kid is empty),
// fetching the key set when it is missing or old, and again, rate limited,
// when kid is unknown.
func (v *JWTVerifier) keysFor(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	st := v.keys.Load()
	if v.opts.KeySet == nil && (st == nil || v.now().Sub(st.fetched) >= v.opts.KeySetMaxAge) {
		if err := v.refresh(ctx, st); err != nil && st == nil {
			if errors.Is(err, errRateLimited) {
				return nil, errors.New("auth: signing keys unavailable (last fetch failed)")
			}
			return nil, err
		}
		st = v.keys.Load()
	}
	if ks := lookup(st, kid); len(ks) > 0 {
		return ks, nil
	}
	if v.opts.KeySet == nil && kid != "" {
		if err := v.refresh(ctx, st); err != nil && !errors.Is(err, errRateLimited) {
			return nil, err
		}
		if ks := lookup(v.keys.Load(), kid); len(ks) > 0 {
			return ks, nil
		}
	}
	return nil, invalid("unknown signing key", nil)
}

func lookup(st *keyState, kid string) []jose.JSONWebKey {
	if st == nil {
		return nil
	}
	if kid == "" {
		return st.set.Keys
	}
	return st.set.Key(kid)
}

var errRateLimited = errors.New("auth: key refresh rate limited")

// refresh fetches the key set unless another caller replaced seen in the
// meantime. Attempts, failed ones included, are at least
// KeyRefreshInterval apart, so that neither tokens with invented key ids
// nor an unreachable key endpoint make every request wait on a fetch.
func (v *JWTVerifier) refresh(ctx context.Context, seen *keyState) error {
	v.fetchMu.Lock()
	defer v.fetchMu.Unlock()
	if cur := v.keys.Load(); cur != seen {
		return nil // someone else fetched while we waited
	}
	now := v.now()
	if !v.lastFetch.IsZero() && now.Sub(v.lastFetch) < v.opts.KeyRefreshInterval {
		return errRateLimited
	}
	v.lastFetch = now
	if v.jwksURL == "" {
		md, err := discover(ctx, v.opts.HTTPClient, v.opts.Issuer)
		if err != nil {
			return err
		}
		if md.JWKSURI == "" || !secureURL(md.JWKSURI) {
			return fmt.Errorf("auth: issuer %s: jwks_uri %q missing or not https", v.opts.Issuer, md.JWKSURI)
		}
		v.jwksURL = md.JWKSURI
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := getJSON(ctx, v.opts.HTTPClient, v.jwksURL, &doc); err != nil {
		return fmt.Errorf("auth: fetching JWKS: %w", err)
	}
	// Keys of types or curves this package cannot use are skipped rather
	// than spoiling the whole set (RFC 7517 §5).
	var set jose.JSONWebKeySet
	for _, raw := range doc.Keys {
		var k jose.JSONWebKey
		if json.Unmarshal(raw, &k) == nil && k.Valid() {
			set.Keys = append(set.Keys, k)
		}
	}
	v.keys.Store(&keyState{set: set, fetched: now})
	return nil
}
