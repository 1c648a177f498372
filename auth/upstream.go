package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/internal/oauthhttp"
	"github.com/mcpstack/mcpstack/oauth"
)

// Token type identifiers of RFC 8693 §3 (the same as package oauth's).
const (
	TokenTypeAccessToken = oauth.TokenTypeAccessToken
	TokenTypeJWT         = oauth.TokenTypeJWT
)

// GrantTokenExchange is the RFC 8693 grant type (the same as package
// oauth's).
const GrantTokenExchange = oauth.GrantTokenExchange

// ErrNoPrincipal reports a TokenExchange called outside a request the
// middleware verified.
var ErrNoPrincipal = errors.New("auth: no verified principal in context")

// A TokenSource gives the access token to send upstream for a call made
// with ctx.
//
// MCP forbids token passthrough: a server must never forward the token a
// client sent it. To call another API it uses a token issued for that API,
// obtained with [TokenExchange] (on behalf of the user, RFC 8693) or
// [ClientCredentials] (as itself). These, through [UpstreamClient], are the
// only sanctioned ways to call upstream.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// TokenExchange obtains upstream tokens on behalf of the caller of the
// current request (RFC 8693): it sends the request's access token, which
// it takes from the principal in ctx, as subject_token to the token
// endpoint, with this server's client credentials, and asks for a token for
// Audience or Resource. The token received from the client is never sent
// anywhere but to that endpoint. Results are not cached.
//
// The authorization server of package authserver answers it with the
// user's token at the upstream provider the user signed in with, for the
// clients listed in its UpstreamConfig.ExchangeClients: Issuer is then
// that server, Audience the provider's issuer. Safe for concurrent use
// once its fields are set; not to be copied after first use.
type TokenExchange struct {
	// TokenURL is the authorization server's token endpoint. If empty, it
	// is the token_endpoint of Issuer's metadata (RFC 8414), fetched at
	// the first exchange and kept.
	TokenURL string
	// Issuer is the authorization server's issuer identifier, used when
	// TokenURL is empty. One of the two is required.
	Issuer string
	// ClientID and ClientSecret authenticate this server (HTTP Basic, or
	// form members when AuthMethod is client_secret_post).
	ClientID, ClientSecret string
	AuthMethod             string
	// Audience and Resource name the upstream API (at least one).
	Audience string
	Resource string
	// Scopes asked for; empty lets the server decide.
	Scopes []string
	// RequestedTokenType defaults to TokenTypeAccessToken.
	RequestedTokenType string
	// HTTPClient calls the endpoint; nil means a client with
	// DefaultHTTPTimeout. Its redirect policy is not used: redirects are
	// refused.
	HTTPClient *http.Client

	mu         sync.Mutex
	discovered string // the token endpoint of Issuer's metadata
}

// tokenURL returns TokenURL, or the token endpoint of Issuer's metadata.
func (x *TokenExchange) tokenURL(ctx context.Context) (string, error) {
	if x.TokenURL != "" {
		return x.TokenURL, nil
	}
	if x.Issuer == "" {
		return "", errors.New("auth: TokenExchange needs TokenURL or Issuer")
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.discovered != "" {
		return x.discovered, nil
	}
	md, err := discover(ctx, x.HTTPClient, x.Issuer)
	if err != nil {
		return "", err
	}
	if md.TokenEndpoint == "" {
		return "", fmt.Errorf("auth: the metadata of %s has no token_endpoint", x.Issuer)
	}
	x.discovered = md.TokenEndpoint
	return x.discovered, nil
}

// Token exchanges the current request's token for an upstream token.
func (x *TokenExchange) Token(ctx context.Context) (string, error) {
	t, err := x.Exchange(ctx)
	if err != nil {
		return "", err
	}
	return t.AccessToken, nil
}

// Exchange is Token with the whole token response.
func (x *TokenExchange) Exchange(ctx context.Context) (*oauth.TokenResponse, error) {
	p, ok := PrincipalFromContext(ctx)
	if !ok || p.token == "" {
		return nil, ErrNoPrincipal
	}
	if x.Audience == "" && x.Resource == "" {
		return nil, errors.New("auth: TokenExchange needs Audience or Resource")
	}
	form := url.Values{
		"grant_type":         {GrantTokenExchange},
		"subject_token":      {p.token},
		"subject_token_type": {TokenTypeAccessToken},
	}
	rt := x.RequestedTokenType
	if rt == "" {
		rt = TokenTypeAccessToken
	}
	form.Set("requested_token_type", rt)
	if x.Audience != "" {
		form.Set("audience", x.Audience)
	}
	if x.Resource != "" {
		form.Set("resource", x.Resource)
	}
	if len(x.Scopes) > 0 {
		form.Set("scope", oauth.JoinScope(x.Scopes))
	}
	tokenURL, err := x.tokenURL(ctx)
	if err != nil {
		return nil, err
	}
	t, err := requestToken(ctx, x.HTTPClient, tokenURL, form, x.ClientID, x.ClientSecret, x.AuthMethod)
	if err != nil {
		return nil, err
	}
	// RFC 8693 §2.2.1: issued_token_type is required; a token of another
	// type than asked for is not one to send as a bearer token.
	if t.IssuedTokenType != "" && t.IssuedTokenType != rt {
		return nil, fmt.Errorf("auth: token exchange issued a %q, not a %q", t.IssuedTokenType, rt)
	}
	return t, nil
}

// ClientCredentials obtains upstream tokens for this server itself with
// the client credentials grant, and reuses each until shortly before it
// expires. It is safe for concurrent use.
type ClientCredentials struct {
	// TokenURL is the upstream authorization server's token endpoint.
	TokenURL string
	// ClientID and ClientSecret authenticate this server.
	ClientID, ClientSecret string
	AuthMethod             string
	// Resource names the upstream API (RFC 8707); optional.
	Resource string
	// Scopes asked for.
	Scopes []string
	// HTTPClient calls the endpoint; nil means a client with
	// DefaultHTTPTimeout. Its redirect policy is not used: redirects are
	// refused.
	HTTPClient *http.Client
	// Now returns the current time; nil means time.Now.
	Now func() time.Time

	mu     sync.Mutex
	token  string
	expiry time.Time
}

// Token returns a cached token, or a new one.
func (c *ClientCredentials) Token(ctx context.Context) (string, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && (c.expiry.IsZero() || now().Add(30*time.Second).Before(c.expiry)) {
		return c.token, nil
	}
	form := url.Values{"grant_type": {oauth.GrantClientCredentials}}
	if c.Resource != "" {
		form.Set("resource", c.Resource)
	}
	if len(c.Scopes) > 0 {
		form.Set("scope", oauth.JoinScope(c.Scopes))
	}
	t, err := requestToken(ctx, c.HTTPClient, c.TokenURL, form, c.ClientID, c.ClientSecret, c.AuthMethod)
	if err != nil {
		return "", err
	}
	c.token, c.expiry = t.AccessToken, t.Expiry(now())
	return c.token, nil
}

// UpstreamClient returns an HTTP client whose requests carry a token from
// src, obtained with the request's context (pass the handler's ctx with
// http.NewRequestWithContext, so that TokenExchange finds the principal).
// An Authorization header already on the request is replaced. A nil base
// means http.DefaultTransport. It follows a redirect only on the origin
// (scheme, host and port) of the request it was given: the token goes
// with every request the client sends, so a redirect to another origin is
// returned to the caller as it is, never followed.
func UpstreamClient(src TokenSource, base http.RoundTripper) *http.Client {
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{Transport: &upstreamTransport{src: src, base: base}, CheckRedirect: sameOriginRedirect}
}

// sameOriginRedirect lets a redirect on the first request's origin
// through, at most 10 of them as net/http does, and stops at any other.
func sameOriginRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || !strings.EqualFold(req.URL.Host, first.Host) {
		return http.ErrUseLastResponse
	}
	if len(via) >= 10 {
		return errors.New("auth: stopped after 10 redirects")
	}
	return nil
}

type upstreamTransport struct {
	src  TokenSource
	base http.RoundTripper
}

func (t *upstreamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := t.src.Token(req.Context())
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	return t.base.RoundTrip(r)
}

// requestToken posts form to a token endpoint with client authentication,
// through the module's one token client (oauthhttp.RetrieveToken), and
// accepts only a Bearer token: this server sends it as one.
func requestToken(ctx context.Context, client *http.Client, tokenURL string, form url.Values, id, secret, method string) (*oauth.TokenResponse, error) {
	switch method {
	case "", oauth.AuthMethodClientSecretBasic, oauth.AuthMethodClientSecretPost, oauth.AuthMethodNone:
	default:
		return nil, fmt.Errorf("auth: client authentication %q is not supported", method)
	}
	t, _, err := oauthhttp.RetrieveToken(ctx, httpClient(client), oauthhttp.TokenRequest{
		Endpoint: tokenURL, Form: form, Auth: clientAuth(id, secret, method),
	})
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	if !t.IsBearer() {
		return nil, fmt.Errorf("auth: token type %q is not Bearer", t.TokenType)
	}
	return t, nil
}

// SubjectTokens gives the upstream provider's access token of a user of
// the authorization server, by the subject it put in its tokens.
// *authserver.Server implements it when it signs users in through an
// upstream provider (authserver.Config.Upstream): the provider's tokens
// stay on the server side, encrypted in its store, refreshed as needed.
type SubjectTokens interface {
	UpstreamAccessToken(ctx context.Context, subject string) (string, error)
}

// PrincipalUpstream returns a [TokenSource] giving the upstream token of
// the user whose access token the middleware verified for the current
// request: src is asked by the principal's subject, never with the token
// the MCP client sent (no passthrough), and the upstream token goes only
// to the upstream API, through [UpstreamClient]. Outside a verified request
// Token returns ErrNoPrincipal. Use it in the process that runs the
// authorization server; a resource server in another process uses a
// [TokenExchange] with Issuer set to that authorization server and
// Audience to the provider's issuer, as a client listed in its
// UpstreamConfig.ExchangeClients.
func PrincipalUpstream(src SubjectTokens) TokenSource { return principalUpstream{src} }

type principalUpstream struct{ src SubjectTokens }

func (p principalUpstream) Token(ctx context.Context) (string, error) {
	pr, ok := PrincipalFromContext(ctx)
	if !ok || pr.Subject == "" {
		return "", ErrNoPrincipal
	}
	return p.src.UpstreamAccessToken(ctx, pr.Subject)
}
