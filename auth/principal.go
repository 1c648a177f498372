package auth

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/mcpstack/mcpstack/oauth"
)

// Principal is the verified identity behind an access token: what a
// [Verifier] returns and what handlers find with [PrincipalFromContext].
// It does not expose the raw token.
type Principal struct {
	// Subject is the token's sub claim: the resource owner, or the client
	// itself for a client credentials grant.
	Subject string
	// ClientID is the OAuth client the token was issued to (client_id).
	ClientID string
	// Issuer is the authorization server that issued the token (iss).
	Issuer string
	// Audience lists the token's audiences (aud).
	Audience []string
	// Scopes lists the scopes granted (scope or scp).
	Scopes []string
	// Expiry is when the token expires; zero if unknown.
	Expiry time.Time
	// Claims holds the other claims of a JWT or members of an introspection
	// response, as decoded JSON values. It may be nil.
	Claims map[string]any

	// token is the raw access token, kept for TokenExchange only.
	token string
}

// HasScopes reports whether every one of scopes was granted.
func (p *Principal) HasScopes(scopes ...string) bool {
	return p != nil && oauth.HasAllScopes(p.Scopes, scopes)
}

// Identity returns a string naming the principal for session binding: the
// issuer and the subject (the client id when there is no subject), joined
// by a character that cannot appear in either.
func (p *Principal) Identity() string {
	if p == nil {
		return ""
	}
	who := p.Subject
	if who == "" {
		who = "client:" + p.ClientID
	}
	return p.Issuer + "\x00" + who
}

// clone returns a copy whose slices and map the caller may not share.
func (p *Principal) clone() *Principal {
	q := *p
	q.Audience = slices.Clone(p.Audience)
	q.Scopes = slices.Clone(p.Scopes)
	q.Claims = maps.Clone(p.Claims)
	return &q
}

type principalKey struct{}
type rawTokenKey struct{}

// ContextWithPrincipal returns a copy of ctx carrying p. The middleware
// calls it; tests and other transports may too.
func ContextWithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFromContext returns the principal the middleware verified for
// the request whose context (or a context derived from it, such as an MCP
// handler's) is ctx.
func PrincipalFromContext(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(*Principal)
	return p, ok && p != nil
}

// RawTokenFromContext returns the access token of the request, only when
// the middleware was configured with Options.ExposeToken. Forwarding it to
// another service is token passthrough, which MCP forbids; use
// [TokenExchange] or [ClientCredentials] for upstream calls.
func RawTokenFromContext(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(rawTokenKey{}).(string)
	return t, ok && t != ""
}

// SessionIdentity names the principal of a request verified by the
// middleware, or "" when there is none. It is meant for the Identity option
// of the MCP Streamable HTTP handler, which binds a session to the identity
// that created it and refuses (403) a request for that session made with
// another principal's token.
func SessionIdentity(r *http.Request) string {
	p, _ := PrincipalFromContext(r.Context())
	return p.Identity()
}

func contextWithRawToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, rawTokenKey{}, token)
}
