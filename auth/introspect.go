package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/internal/oauthhttp"
	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/oauth"
)

// DefaultIntrospectionCacheTTL bounds how long an introspection result is
// reused when IntrospectionOptions.CacheTTL is zero.
const DefaultIntrospectionCacheTTL = time.Minute

// IntrospectionOptions configure an [IntrospectionVerifier].
type IntrospectionOptions struct {
	// Endpoint is the introspection endpoint. When empty it is discovered
	// from the metadata of Issuer (introspection_endpoint).
	Endpoint string
	// Issuer is the authorization server's issuer identifier. When set,
	// an iss member of the answer must equal it.
	Issuer string

	// ClientID and ClientSecret authenticate this server to the endpoint
	// (RFC 7662 §2.1), with HTTP Basic unless AuthMethod says
	// client_secret_post. Required.
	ClientID, ClientSecret string
	// AuthMethod is oauth.AuthMethodClientSecretBasic (the default) or
	// oauth.AuthMethodClientSecretPost.
	AuthMethod string

	// Audience is the canonical URI of this server; the aud of the answer
	// must contain it. Required unless AllowAnyAudience is set.
	Audience string
	// AllowAnyAudience disables the audience check (see JWTOptions).
	AllowAnyAudience bool

	// CacheTTL bounds how long an answer is reused (never past the
	// token's expiry). Zero means DefaultIntrospectionCacheTTL; negative
	// disables the cache.
	CacheTTL time.Duration
	// CacheSize bounds the cached answers; zero means DefaultCacheSize.
	CacheSize int

	// HTTPClient calls the endpoint; nil means a client with
	// DefaultHTTPTimeout. Its redirect policy is not used: redirects are
	// refused.
	HTTPClient *http.Client
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// IntrospectionVerifier verifies opaque (or any) access tokens by asking
// the authorization server (RFC 7662). A token is accepted when the answer
// says active, its aud contains the audience, its exp is in the future
// (and present), and its iss, if given, is the issuer. Accepted answers are
// cached by token hash within the CacheTTL bound.
type IntrospectionVerifier struct {
	opts  IntrospectionOptions
	now   func() time.Time
	cache *Cache

	mu       sync.Mutex
	endpoint string
}

// NewIntrospectionVerifier checks opts and returns a verifier. It does no
// I/O.
func NewIntrospectionVerifier(opts IntrospectionOptions) (*IntrospectionVerifier, error) {
	if opts.Endpoint == "" && opts.Issuer == "" {
		return nil, errors.New("auth: IntrospectionOptions needs Endpoint or Issuer")
	}
	if opts.Endpoint != "" && !secureURL(opts.Endpoint) {
		return nil, fmt.Errorf("auth: introspection endpoint %q is not https", opts.Endpoint)
	}
	if opts.ClientID == "" {
		return nil, errors.New("auth: IntrospectionOptions.ClientID is required")
	}
	switch opts.AuthMethod {
	case "":
		opts.AuthMethod = oauth.AuthMethodClientSecretBasic
	case oauth.AuthMethodClientSecretBasic, oauth.AuthMethodClientSecretPost:
	default:
		return nil, fmt.Errorf("auth: introspection client authentication %q is not supported", opts.AuthMethod)
	}
	if !opts.AllowAnyAudience {
		c, err := oauth.CanonicalResource(opts.Audience)
		if err != nil {
			return nil, fmt.Errorf("auth: IntrospectionOptions.Audience: %w", err)
		}
		opts.Audience = c
	}
	v := &IntrospectionVerifier{opts: opts, now: opts.Now, endpoint: opts.Endpoint}
	if v.now == nil {
		v.now = time.Now
	}
	if opts.CacheTTL >= 0 {
		ttl := opts.CacheTTL
		if ttl == 0 {
			ttl = DefaultIntrospectionCacheTTL
		}
		v.cache = NewCache(VerifierFunc(v.introspect), CacheOptions{TTL: ttl, Size: opts.CacheSize, Now: v.now})
	}
	return v, nil
}

// Verify checks token with the introspection endpoint, or the cache.
func (v *IntrospectionVerifier) Verify(ctx context.Context, token string) (*Principal, error) {
	if v.cache != nil {
		return v.cache.Verify(ctx, token)
	}
	return v.introspect(ctx, token)
}

// introspectionAnswer is an RFC 7662 §2.2 response.
type introspectionAnswer struct {
	Active    bool            `json:"active"`
	Scope     string          `json:"scope"`
	ClientID  string          `json:"client_id"`
	Username  string          `json:"username"`
	TokenType string          `json:"token_type"`
	Exp       *float64        `json:"exp"`
	Iat       *float64        `json:"iat"`
	Nbf       *float64        `json:"nbf"`
	Sub       string          `json:"sub"`
	Aud       json.RawMessage `json:"aud"`
	Iss       string          `json:"iss"`
}

func (v *IntrospectionVerifier) introspect(ctx context.Context, token string) (*Principal, error) {
	endpoint, err := v.endpointURL(ctx)
	if err != nil {
		return nil, err
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	var raw map[string]any
	var ans introspectionAnswer
	var body json.RawMessage
	ca := clientAuth(v.opts.ClientID, v.opts.ClientSecret, v.opts.AuthMethod)
	if _, err := oauthhttp.PostForm(ctx, httpClient(v.opts.HTTPClient), endpoint, form, ca.Apply, &body); err != nil {
		return nil, fmt.Errorf("auth: introspection: %w", err)
	}
	if err := strictjson.Unmarshal(body, &ans); err != nil {
		return nil, fmt.Errorf("auth: introspection answer: %w", err)
	}
	_ = strictjson.Unmarshal(body, &raw)
	if !ans.Active {
		return nil, invalid("token is not active", nil)
	}
	if tt := ans.TokenType; tt != "" && !strings.EqualFold(tt, "bearer") && !strings.EqualFold(tt, "access_token") {
		return nil, invalid("not an access token", nil)
	}
	if v.opts.Issuer != "" && ans.Iss != "" && ans.Iss != v.opts.Issuer {
		return nil, invalid("issuer is not trusted", nil)
	}
	var aud []string
	if len(ans.Aud) > 0 && string(ans.Aud) != "null" {
		if err := strictjson.Unmarshal(ans.Aud, &aud); err != nil {
			var one string
			if err := strictjson.Unmarshal(ans.Aud, &one); err != nil {
				return nil, invalid("claim aud must be a string or an array of strings", err)
			}
			aud = []string{one}
		}
	}
	if !v.opts.AllowAnyAudience && !audienceContains(aud, v.opts.Audience) {
		return nil, invalid("token was not issued for this resource", nil)
	}
	if ans.Exp == nil {
		return nil, invalid("token has no expiry", nil)
	}
	now := v.now()
	exp := time.Unix(int64(*ans.Exp), 0)
	if !now.Before(exp) {
		return nil, invalid("token expired", nil)
	}
	if ans.Nbf != nil && now.Before(time.Unix(int64(*ans.Nbf), 0)) {
		return nil, invalid("token not valid yet", nil)
	}
	iss := ans.Iss
	if iss == "" {
		iss = v.opts.Issuer
	}
	for _, k := range []string{"active", "scope", "client_id", "token_type", "exp", "iat", "nbf", "sub", "aud", "iss"} {
		delete(raw, k)
	}
	if len(raw) == 0 {
		raw = nil
	}
	return &Principal{
		Subject:  ans.Sub,
		ClientID: ans.ClientID,
		Issuer:   iss,
		Audience: aud,
		Scopes:   oauth.ParseScope(ans.Scope),
		Expiry:   exp,
		Claims:   raw,
		token:    token,
	}, nil
}

func (v *IntrospectionVerifier) endpointURL(ctx context.Context) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.endpoint != "" {
		return v.endpoint, nil
	}
	md, err := discover(ctx, v.opts.HTTPClient, v.opts.Issuer)
	if err != nil {
		return "", err
	}
	if md.IntrospectionEndpoint == "" || !secureURL(md.IntrospectionEndpoint) {
		return "", fmt.Errorf("auth: issuer %s: introspection_endpoint %q missing or not https", v.opts.Issuer, md.IntrospectionEndpoint)
	}
	v.endpoint = md.IntrospectionEndpoint
	return v.endpoint, nil
}
