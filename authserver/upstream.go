package authserver

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpstack/mcpstack/internal/oauthhttp"
	"github.com/mcpstack/mcpstack/oauth"
)

// UpstreamConfig makes the server sign users in through another OAuth 2.1
// or OpenID Connect provider (GitHub, Google, Entra, Okta, Keycloak, ...)
// under one static client id registered there, while it registers MCP
// clients itself (Dynamic Client Registration, Client ID Metadata
// Documents) and issues their tokens. See [Config.Upstream].
//
// Such a server is the "proxy with a static client id" of the MCP security
// best practices (§"Confused Deputy Problem"): before the browser is sent
// upstream for a client this user has not approved, the server shows its
// own consent page, so that a provider's remembered consent for the static
// client id never lets an unknown MCP client obtain a code.
type UpstreamConfig struct {
	// Issuer is the provider's issuer identifier. Unless AuthorizationURL
	// and TokenURL are both set, its metadata is discovered (OpenID
	// Connect Discovery, then RFC 8414) and its issuer must equal this.
	// Users signed in upstream become subject Issuer + "#" + their
	// upstream subject (an issuer has no fragment, RFC 8414 §2, so the
	// "#" cannot be ambiguous), unless MapClaims names them otherwise.
	Issuer string
	// ClientID is this server's client id at the provider. Required.
	ClientID string
	// ClientSecret authenticates this server at the provider's token
	// endpoint (client_secret_basic, or client_secret_post if AuthMethod
	// says so). Either it or PrivateKey is required.
	ClientSecret string
	// PrivateKey, if set, authenticates this server with private_key_jwt
	// (RFC 7523 §2.2): an ECDSA P-256, RSA or Ed25519 key whose public
	// half the provider knows, under KeyID.
	PrivateKey crypto.Signer
	KeyID      string
	// AuthMethod is client_secret_basic (the default with a secret),
	// client_secret_post or private_key_jwt (the default with a key).
	AuthMethod string
	// Scopes asked of the provider. Empty means "openid" (OpenID Connect);
	// a plain OAuth provider (GitHub) needs its own, or none at all.
	Scopes []string
	// AuthorizationURL, TokenURL and JWKSURL, if set, replace the
	// discovered endpoints: a provider without a metadata document (GitHub)
	// needs the first two.
	AuthorizationURL, TokenURL, JWKSURL string
	// UserInfoURL, if set, is called with the upstream access token and
	// its JSON members are the user's claims: the way to learn who signed
	// in at a plain OAuth provider (GitHub: https://api.github.com/user).
	// With an ID token too, both are required to name the same subject.
	// Empty: the claims are those of the ID token, which is then required.
	UserInfoURL string
	// Resource, if set, is sent as the RFC 8707 resource parameter of the
	// authorization and token requests to the provider: a provider that
	// requires one (another mcpstack authserver, whose user-info endpoint
	// accepts only tokens issued for it) is given its UserInfoURL here.
	// Empty: no resource parameter, as most providers expect.
	Resource string
	// SubjectClaim names the claim holding the upstream user id; empty
	// means "sub". GitHub's user-info has "id" (a number, taken in its
	// decimal form; "login" can be renamed and reused, "id" cannot).
	SubjectClaim string
	// MapClaims, if set, turns the user's claims into our subject and the
	// scopes this user may be granted: the hook that maps upstream groups
	// or roles to our scopes. An empty subject keeps the default
	// (Issuer#sub); nil scopes leave the requested scopes as they are,
	// otherwise only the requested scopes in the list are granted. An
	// error refuses the sign-in with access_denied. Called concurrently.
	MapClaims func(ctx context.Context, claims map[string]any) (subject string, scopes []string, err error)
	// StateTTL is how long a sign-in may stay at the provider before its
	// state expires. Zero means DefaultUpstreamStateTTL; at most 10
	// minutes.
	StateTTL time.Duration
	// TokenKey, if set (32 bytes), encrypts the upstream tokens kept in
	// the store (AES-256-GCM). Nil derives the key from the newest cookie
	// key (Config.CookieKey, or the ones in the store): tokens encrypted
	// under a key later removed from the store cannot be read, and their
	// user signs in again.
	TokenKey []byte
	// HTTPClient calls the provider; nil means a client with Timeout.
	// Its redirect policy is not used: redirects are refused.
	HTTPClient *http.Client
	// Timeout bounds each call to the provider (discovery, JWKS, token,
	// user-info) when HTTPClient is nil. Zero means
	// DefaultUpstreamTimeout.
	Timeout time.Duration
	// MaxResponseBytes bounds each response read from the provider; a
	// larger one fails the sign-in. Zero means DefaultUpstreamMaxResponseBytes.
	MaxResponseBytes int64
	// ExchangeClients lists the clients that may obtain a user's upstream
	// access token from the token endpoint with an RFC 8693 token exchange:
	// the resource servers (MCP servers) whose tool handlers call the
	// provider's API for the user, from another process than this server's
	// (in the same process, auth.PrincipalUpstream over
	// [Server.UpstreamAccessToken] needs no network). Each must be a
	// confidential client in the store; it presents, as subject_token, an
	// access token this server issued for its Resource, and names the
	// provider's Issuer as audience or resource. Empty: no exchange is
	// possible, and the grant is not advertised.
	ExchangeClients []ExchangeClient
}

// ExchangeClient is a client allowed to exchange access tokens for the
// user's upstream token: see [UpstreamConfig.ExchangeClients].
type ExchangeClient struct {
	// ClientID is the client's id in the store. The client must
	// authenticate (a secret or private_key_jwt): a public client is
	// refused whatever this list says.
	ClientID string
	// Resource is the resource server the client speaks for (RFC 8707):
	// only access tokens whose audience is this resource are exchanged,
	// so that one resource server cannot use a token a user gave another.
	Resource string
}

// Defaults and bounds of [UpstreamConfig].
const (
	DefaultUpstreamStateTTL         = 10 * time.Minute
	DefaultUpstreamTimeout          = 10 * time.Second
	DefaultUpstreamMaxResponseBytes = 1 << 20
	maxUpstreamStateTTL             = 10 * time.Minute
	upstreamMetadataTTL             = time.Hour
	upstreamKeysMinRefetch          = 30 * time.Second
	upstreamClockLeeway             = time.Minute
)

// Errors of the upstream sign-in and token source, matchable with errors.Is.
var (
	// ErrUpstream reports a provider that answered what it should not:
	// wrong metadata, a bad ID token, a token error.
	ErrUpstream = errors.New("authserver: upstream provider")
	// ErrNoUpstreamToken reports a user with no upstream tokens kept, or
	// whose tokens expired with no way to refresh them: the user must
	// sign in again.
	ErrNoUpstreamToken = errors.New("authserver: no upstream token for this user")
)

func upstreamErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUpstream, fmt.Sprintf(format, a...))
}

// upstream is the provider-facing half of Config.Upstream.
type upstream struct {
	cfg  UpstreamConfig
	http *http.Client
	now  func() time.Time

	mu      sync.Mutex
	meta    *oauth.AuthorizationServerMetadata
	metaAt  time.Time
	keys    jose.JSONWebKeySet
	keysAt  time.Time
	refresh [64]sync.Mutex // per-subject stripes: one refresh at a time per user
}

func newUpstream(cfg UpstreamConfig, now func() time.Time) (*upstream, error) {
	if cfg.Issuer == "" || cfg.ClientID == "" {
		return nil, errors.New("authserver: Config.Upstream needs Issuer and ClientID")
	}
	if !secureUpstreamURL(cfg.Issuer) {
		return nil, fmt.Errorf("authserver: upstream issuer %q must use https (or http on a loopback host)", cfg.Issuer)
	}
	for _, u := range []string{cfg.AuthorizationURL, cfg.TokenURL, cfg.JWKSURL, cfg.UserInfoURL} {
		if u != "" && !secureUpstreamURL(u) {
			return nil, fmt.Errorf("authserver: upstream endpoint %q must use https (or http on a loopback host)", u)
		}
	}
	switch {
	case cfg.AuthMethod == "" && cfg.PrivateKey != nil:
		cfg.AuthMethod = oauth.AuthMethodPrivateKeyJWT
	case cfg.AuthMethod == "":
		cfg.AuthMethod = oauth.AuthMethodClientSecretBasic
	}
	switch cfg.AuthMethod {
	case oauth.AuthMethodClientSecretBasic, oauth.AuthMethodClientSecretPost:
		if cfg.ClientSecret == "" {
			return nil, errors.New("authserver: Config.Upstream needs ClientSecret for " + cfg.AuthMethod)
		}
	case oauth.AuthMethodPrivateKeyJWT:
		if cfg.PrivateKey == nil {
			return nil, errors.New("authserver: Config.Upstream needs PrivateKey for private_key_jwt")
		}
		if _, err := assertionAlg(cfg.PrivateKey); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("authserver: upstream client authentication %q is not supported", cfg.AuthMethod)
	}
	if cfg.Resource != "" {
		res, err := oauth.CanonicalResource(cfg.Resource)
		if err != nil {
			return nil, fmt.Errorf("authserver: Config.Upstream.Resource: %w", err)
		}
		cfg.Resource = res
	}
	if cfg.Scopes == nil {
		cfg.Scopes = []string{"openid"}
	}
	cfg.Scopes = slices.Clone(cfg.Scopes)
	if cfg.SubjectClaim == "" {
		cfg.SubjectClaim = "sub"
	}
	if cfg.StateTTL <= 0 {
		cfg.StateTTL = DefaultUpstreamStateTTL
	}
	if cfg.StateTTL > maxUpstreamStateTTL {
		return nil, errors.New("authserver: Config.Upstream.StateTTL must be at most 10 minutes")
	}
	if cfg.TokenKey != nil && len(cfg.TokenKey) != 32 {
		return nil, errors.New("authserver: Config.Upstream.TokenKey must be 32 bytes")
	}
	cfg.TokenKey = slices.Clone(cfg.TokenKey)
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultUpstreamTimeout
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultUpstreamMaxResponseBytes
	}
	cfg.ExchangeClients = slices.Clone(cfg.ExchangeClients)
	for i, xc := range cfg.ExchangeClients {
		res, err := oauth.CanonicalResource(xc.Resource)
		if xc.ClientID == "" || err != nil {
			return nil, fmt.Errorf("authserver: Config.Upstream.ExchangeClients[%d] needs a ClientID and a valid Resource", i)
		}
		cfg.ExchangeClients[i].Resource = res
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: cfg.Timeout}
	}
	return &upstream{cfg: cfg, http: hc, now: now}, nil
}

// secureUpstreamURL accepts https URLs, and http ones on a loopback host
// (development, tests): oauthhttp.CheckURL, the module's one rule.
func secureUpstreamURL(s string) bool { return oauthhttp.CheckURL(s) == nil }

func (u *upstream) oidc() bool { return slices.Contains(u.cfg.Scopes, "openid") }

// metadata returns the provider's metadata: discovered and cached for an
// hour, or made of the configured endpoints.
func (u *upstream) metadata(ctx context.Context) (*oauth.AuthorizationServerMetadata, error) {
	if u.cfg.AuthorizationURL != "" && u.cfg.TokenURL != "" {
		return &oauth.AuthorizationServerMetadata{Issuer: u.cfg.Issuer, AuthorizationEndpoint: u.cfg.AuthorizationURL,
			TokenEndpoint: u.cfg.TokenURL, JWKSURI: u.cfg.JWKSURL}, nil
	}
	u.mu.Lock()
	if u.meta != nil && u.now().Before(u.metaAt.Add(upstreamMetadataTTL)) {
		m := u.meta
		u.mu.Unlock()
		return m, nil
	}
	u.mu.Unlock()
	m, err := u.discover(ctx)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	u.meta, u.metaAt = m, u.now()
	u.mu.Unlock()
	return m, nil
}

// discover fetches the provider's metadata through the module's one OAuth
// HTTP client (oauthhttp.DiscoverAuthorizationServer: RFC 8414 §3, then
// OpenID Connect Discovery 1.0 §4; exact issuer; validated metadata; no
// redirects; MaxResponseBytes), and applies the configured endpoints over
// it.
func (u *upstream) discover(ctx context.Context) (*oauth.AuthorizationServerMetadata, error) {
	m, err := oauthhttp.DiscoverAuthorizationServer(ctx, u.http, u.cfg.Issuer, oauthhttp.DiscoverOptions{MaxBody: u.cfg.MaxResponseBytes})
	if err != nil {
		return nil, fmt.Errorf("%w: discovery failed: %w", ErrUpstream, err)
	}
	if m.AuthorizationEndpoint == "" || m.TokenEndpoint == "" {
		return nil, upstreamErr("the metadata of %s lacks an endpoint", u.cfg.Issuer)
	}
	if m.PKCEAdvertised() && !m.SupportsS256() {
		return nil, upstreamErr("provider does not support PKCE S256")
	}
	if u.cfg.AuthorizationURL != "" {
		m.AuthorizationEndpoint = u.cfg.AuthorizationURL
	}
	if u.cfg.TokenURL != "" {
		m.TokenEndpoint = u.cfg.TokenURL
	}
	if u.cfg.JWKSURL != "" {
		m.JWKSURI = u.cfg.JWKSURL
	}
	return &m, nil
}

// getJSON GETs a JSON document, with a bearer token if tok is set, under
// the rules of oauthhttp.Do (https, no redirects, JSON, MaxResponseBytes,
// a body cut by the deadline refused). Numbers are decoded as
// json.Number, so that a numeric subject (GitHub's) keeps its digits.
func (u *upstream) getJSON(ctx context.Context, target, tok string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	var body json.RawMessage
	if _, err := oauthhttp.DoLimited(u.http, req, http.StatusOK, u.cfg.MaxResponseBytes, &body); err != nil {
		return fmt.Errorf("%w: %w", ErrUpstream, err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return upstreamErr("%s: %v", target, err)
	}
	return nil
}

// authorizeURL is where the browser goes to sign in upstream.
func (u *upstream) authorizeURL(m *oauth.AuthorizationServerMetadata, callback, state, verifier, nonce string) (string, error) {
	au, err := url.Parse(m.AuthorizationEndpoint)
	if err != nil {
		return "", upstreamErr("authorization endpoint: %v", err)
	}
	q := au.Query()
	q.Set("response_type", oauth.ResponseTypeCode)
	q.Set("client_id", u.cfg.ClientID)
	q.Set("redirect_uri", callback)
	q.Set("state", state)
	q.Set("code_challenge", oauth.S256Challenge(verifier))
	q.Set("code_challenge_method", oauth.MethodS256)
	if len(u.cfg.Scopes) > 0 {
		q.Set("scope", oauth.JoinScope(u.cfg.Scopes))
	}
	if u.oidc() {
		q.Set("nonce", nonce)
	}
	if u.cfg.Resource != "" {
		q.Set("resource", u.cfg.Resource)
	}
	au.RawQuery = q.Encode()
	return au.String(), nil
}

// upstreamTokens is what the server keeps of a user's upstream grant,
// encrypted in [UpstreamGrant.Sealed].
type upstreamTokens struct {
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	Scope        string    `json:"scope,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
}

// token posts a grant to the provider's token endpoint with this server's
// client authentication, through the module's one token client
// (oauthhttp.RetrieveToken, which also takes GitHub's errors answered with
// status 200 for errors), and accepts only a Bearer token.
func (u *upstream) token(ctx context.Context, form url.Values) (*oauth.TokenResponse, error) {
	m, err := u.metadata(ctx)
	if err != nil {
		return nil, err
	}
	if u.cfg.Resource != "" {
		form.Set("resource", u.cfg.Resource)
	}
	ca := oauthhttp.ClientAuth{ID: u.cfg.ClientID, Secret: u.cfg.ClientSecret, Method: u.cfg.AuthMethod}
	if u.cfg.AuthMethod == oauth.AuthMethodPrivateKeyJWT {
		ca.Assertion = func() (string, error) { return u.assertion(m.TokenEndpoint) }
	}
	t, _, err := oauthhttp.RetrieveToken(ctx, u.http, oauthhttp.TokenRequest{
		Endpoint: m.TokenEndpoint, Form: form, Auth: ca, MaxBody: u.cfg.MaxResponseBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUpstream, err)
	}
	if !t.IsBearer() {
		return nil, upstreamErr("token type %q is not Bearer", t.TokenType)
	}
	return t, nil
}

func assertionAlg(k crypto.Signer) (jose.SignatureAlgorithm, error) {
	switch pk := k.Public().(type) {
	case *ecdsa.PublicKey:
		if pk.Curve.Params().BitSize == 256 {
			return jose.ES256, nil
		}
	case *rsa.PublicKey:
		return jose.RS256, nil
	case ed25519.PublicKey:
		return jose.EdDSA, nil
	}
	return "", errors.New("authserver: Config.Upstream.PrivateKey must be ECDSA P-256, RSA or Ed25519")
}

// assertion signs a client assertion (RFC 7523 §3) for the token endpoint.
func (u *upstream) assertion(aud string) (string, error) {
	alg, _ := assertionAlg(u.cfg.PrivateKey)
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: u.cfg.PrivateKey, KeyID: u.cfg.KeyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("authserver: client assertion: %w", err)
	}
	jti, err := randomToken(16)
	if err != nil {
		return "", err
	}
	now := u.now()
	return jwt.Signed(sig).Claims(jwt.Claims{Issuer: u.cfg.ClientID, Subject: u.cfg.ClientID,
		Audience: jwt.Audience{aud}, ID: jti, IssuedAt: jwt.NewNumericDate(now),
		Expiry: jwt.NewNumericDate(now.Add(time.Minute))}).Serialize()
}

// idTokenAlgs are the signature algorithms accepted on ID tokens: never
// "none", never HMAC (the client secret is not a verification key here).
var idTokenAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384,
	jose.PS512, jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// verifyIDToken checks an ID token (OpenID Connect Core §3.1.3.7): its
// signature by a key of the provider's JWKS, iss, aud (and azp when there
// are several audiences), exp and iat, and the nonce sent with this
// sign-in. It returns its claims.
func (u *upstream) verifyIDToken(ctx context.Context, raw, nonce string) (map[string]any, error) {
	tok, err := jwt.ParseSigned(raw, idTokenAlgs)
	if err != nil {
		return nil, upstreamErr("id_token: %v", err)
	}
	if len(tok.Headers) != 1 {
		return nil, upstreamErr("id_token: one signature expected")
	}
	keys, err := u.verificationKeys(ctx, tok.Headers[0].KeyID)
	if err != nil {
		return nil, err
	}
	var std jwt.Claims
	var all map[string]any
	verified := false
	for _, k := range keys {
		if tok.Claims(k.Key, &std, &all) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, upstreamErr("id_token: signature not verified by the provider's keys")
	}
	if std.Expiry == nil || std.IssuedAt == nil {
		return nil, upstreamErr("id_token: exp and iat are required")
	}
	err = std.ValidateWithLeeway(jwt.Expected{Issuer: u.cfg.Issuer, AnyAudience: jwt.Audience{u.cfg.ClientID}, Time: u.now()}, upstreamClockLeeway)
	if err != nil {
		return nil, upstreamErr("id_token: %v", err)
	}
	if azp, ok := all["azp"].(string); (len(std.Audience) > 1 || ok) && azp != u.cfg.ClientID {
		return nil, upstreamErr("id_token: azp is not this client")
	}
	got, _ := all["nonce"].(string)
	if nonce == "" || subtle.ConstantTimeCompare([]byte(got), []byte(nonce)) != 1 {
		return nil, upstreamErr("id_token: nonce mismatch")
	}
	if std.Subject == "" {
		return nil, upstreamErr("id_token: no sub")
	}
	return all, nil
}

// verificationKeys returns the provider's keys that may have signed a
// token with this kid, fetching the JWKS when none is known, at most once
// per upstreamKeysMinRefetch.
func (u *upstream) verificationKeys(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	match := func() []jose.JSONWebKey {
		var out []jose.JSONWebKey
		for _, k := range u.keys.Keys {
			if (kid == "" || k.KeyID == kid) && k.Use != "enc" {
				out = append(out, k)
			}
		}
		return out
	}
	if ks := match(); len(ks) > 0 {
		return ks, nil
	}
	if !u.keysAt.IsZero() && u.now().Before(u.keysAt.Add(upstreamKeysMinRefetch)) {
		return nil, upstreamErr("id_token: unknown key %q", kid)
	}
	u.mu.Unlock()
	m, err := u.metadata(ctx)
	var set jose.JSONWebKeySet
	if err == nil {
		if m.JWKSURI == "" || !secureUpstreamURL(m.JWKSURI) {
			err = upstreamErr("no https jwks_uri")
		} else {
			err = u.getJSON(ctx, m.JWKSURI, "", &set)
		}
	}
	u.mu.Lock()
	u.keysAt = u.now()
	if err != nil {
		return nil, err
	}
	u.keys = set
	if ks := match(); len(ks) > 0 {
		return ks, nil
	}
	return nil, upstreamErr("id_token: unknown key %q", kid)
}

// identify learns who signed in: from the verified ID token and/or the
// user-info response, and returns the claims and the upstream subject.
func (u *upstream) identify(ctx context.Context, t *oauth.TokenResponse, nonce string) (map[string]any, string, error) {
	var claims map[string]any
	if t.IDToken != "" || (u.oidc() && u.cfg.UserInfoURL == "") {
		if t.IDToken == "" {
			return nil, "", upstreamErr("no id_token in the token response")
		}
		c, err := u.verifyIDToken(ctx, t.IDToken, nonce)
		if err != nil {
			return nil, "", err
		}
		claims = c
	}
	if u.cfg.UserInfoURL != "" {
		var info map[string]any
		if err := u.getJSON(ctx, u.cfg.UserInfoURL, t.AccessToken, &info); err != nil {
			return nil, "", err
		}
		if claims != nil && claimString(info, "sub") != "" && claimString(info, "sub") != claimString(claims, "sub") {
			// OpenID Connect Core §5.3.2: user-info of another user.
			return nil, "", upstreamErr("user-info sub differs from the id_token's")
		}
		for k, v := range claims {
			if _, ok := info[k]; !ok {
				info[k] = v
			}
		}
		claims = info
	}
	sub := claimString(claims, u.cfg.SubjectClaim)
	if sub == "" {
		return nil, "", upstreamErr("no %q claim", u.cfg.SubjectClaim)
	}
	return claims, sub, nil
}

// claimString returns a string or number claim as a string.
func claimString(c map[string]any, name string) string {
	switch v := c[name].(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}
