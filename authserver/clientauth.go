package authserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/oauth"
)

// oauthError is an error with an OAuth error code, returned inside the
// server and turned into a response at the edge.
type oauthError struct {
	code oauth.ErrorCode
	desc string
}

func (e *oauthError) Error() string { return string(e.code) + ": " + e.desc }

func errf(code oauth.ErrorCode, format string, args ...any) *oauthError {
	return &oauthError{code: code, desc: fmt.Sprintf(format, args...)}
}

// lookupClient finds a client by id: a URL client id is fetched as a Client
// ID Metadata Document, anything else is looked up in the store.
func (s *Server) lookupClient(ctx context.Context, id string) (Client, *oauthError) {
	if id == "" {
		return Client{}, errf(oauth.InvalidRequest, "client_id is missing")
	}
	if oauth.IsURLClientID(id) {
		if s.cfg.CIMD == nil {
			return Client{}, errf(oauth.InvalidClient, "URL client identifiers are not supported")
		}
		m, err := s.cfg.CIMD.Fetch(ctx, id)
		if err != nil {
			s.log.Warn("client metadata document refused", "client_id", id, "err", err)
			return Client{}, cimdRefusal(err)
		}
		if m.TokenEndpointAuthMethod == "" {
			m.TokenEndpointAuthMethod = oauth.AuthMethodNone
		}
		return Client{Metadata: m}, nil
	}
	c, err := s.store.Client(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return Client{}, errf(oauth.InvalidClient, "unknown client")
	}
	if err != nil {
		return Client{}, errf(oauth.ServerError, "looking up the client failed")
	}
	return c, nil
}

// cimdRefusal is the error shown (on the error page, or in a token
// endpoint answer) for a Client ID Metadata Document that was refused.
// What the document says is the client's to fix and is shown; how the
// fetch failed (DNS, dial, TLS, the addresses a name resolves to, status,
// body) is the server's business and is only logged: showing it would
// turn the server into a probe of its own network (OWASP: improper error
// handling; RFC 6749 §5.2 descriptions are for the client developer).
func cimdRefusal(err error) *oauthError {
	var ve *oauth.ValidationError
	switch {
	case errors.As(err, &ve) && ve.Field != "client_id":
		return errf(oauth.InvalidRequest, "client metadata document: %s: %s", ve.Field, ve.Reason)
	case errors.As(err, &ve):
		return errf(oauth.InvalidClient, "client metadata document: %s: %s", ve.Field, ve.Reason)
	case errors.Is(err, ErrLoopbackAddress):
		return errf(oauth.InvalidClient, "the client metadata document is on a loopback address, which this server does not fetch from")
	case errors.Is(err, ErrUntrustedDomain):
		return errf(oauth.InvalidClient, "client metadata documents from this domain are not accepted")
	default:
		return errf(oauth.InvalidClient, "the client metadata document could not be fetched")
	}
}

const assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

var assertionAlgs = []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.ES512, jose.RS256, jose.PS256, jose.EdDSA}

func assertionAlgNames() []string {
	out := make([]string, len(assertionAlgs))
	for i, a := range assertionAlgs {
		out[i] = string(a)
	}
	return out
}

// authenticateClient authenticates the client of a token, introspection or
// revocation request (RFC 6749 §2.3, RFC 7523 §2.2). The method used must
// be the one the client registered. r.Form must be parsed.
func (s *Server) authenticateClient(r *http.Request) (Client, *oauthError) {
	ctx := r.Context()
	basicID, basicSecret, hasBasic := r.BasicAuth()
	form := r.PostForm
	var id, method, secret string
	switch {
	case hasBasic:
		if form.Get("client_secret") != "" || form.Get("client_assertion") != "" {
			return Client{}, errf(oauth.InvalidRequest, "more than one client authentication method")
		}
		var err1, err2 error
		id, err1 = url.QueryUnescape(basicID)
		secret, err2 = url.QueryUnescape(basicSecret)
		if err1 != nil || err2 != nil {
			return Client{}, errf(oauth.InvalidClient, "malformed basic credentials")
		}
		method = oauth.AuthMethodClientSecretBasic
		if f := form.Get("client_id"); f != "" && f != id {
			return Client{}, errf(oauth.InvalidRequest, "client_id differs from the authenticated client")
		}
	case form.Get("client_assertion") != "":
		if form.Get("client_assertion_type") != assertionType {
			return Client{}, errf(oauth.InvalidClient, "unsupported client_assertion_type")
		}
		method = oauth.AuthMethodPrivateKeyJWT
		tok, err := jwt.ParseSigned(form.Get("client_assertion"), assertionAlgs)
		if err != nil {
			return Client{}, errf(oauth.InvalidClient, "malformed client assertion")
		}
		var c jwt.Claims
		if err := tok.UnsafeClaimsWithoutVerification(&c); err != nil || c.Subject == "" {
			return Client{}, errf(oauth.InvalidClient, "malformed client assertion")
		}
		id = c.Subject
		if f := form.Get("client_id"); f != "" && f != id {
			return Client{}, errf(oauth.InvalidRequest, "client_id differs from the assertion subject")
		}
	case form.Get("client_secret") != "":
		id, secret, method = form.Get("client_id"), form.Get("client_secret"), oauth.AuthMethodClientSecretPost
	default:
		id, method = form.Get("client_id"), oauth.AuthMethodNone
	}
	if id == "" {
		return Client{}, errf(oauth.InvalidClient, "no client authentication")
	}
	c, oe := s.lookupClient(ctx, id)
	if oe != nil {
		if oe.code == oauth.InvalidRequest && oauth.IsURLClientID(id) {
			oe.code = oauth.InvalidClient
		}
		return Client{}, oe
	}
	if c.AuthMethod() != method {
		return Client{}, errf(oauth.InvalidClient, "client is registered for %s, not %s", c.AuthMethod(), method)
	}
	switch method {
	case oauth.AuthMethodClientSecretBasic, oauth.AuthMethodClientSecretPost:
		if len(c.SecretHash) == 0 || subtle.ConstantTimeCompare(HashSecret(secret), c.SecretHash) != 1 {
			return Client{}, errf(oauth.InvalidClient, "wrong client secret")
		}
	case oauth.AuthMethodPrivateKeyJWT:
		if oe := s.verifyAssertion(ctx, c, form.Get("client_assertion")); oe != nil {
			return Client{}, oe
		}
	}
	return c, nil
}

// verifyAssertion checks a private_key_jwt client assertion (RFC 7523
// §3): iss and sub the client, aud the token endpoint or the issuer, not
// expired, at most 5 minutes long, a jti; then signed by a key of the
// client's jwks or jwks_uri; then its jti never seen before. The claims
// are checked before any key is looked up, so that a forged or stale
// assertion costs no outbound fetch; the jti is recorded only once the
// signature verifies, so that a forger can neither burn a client's jti nor
// fill the nonce table.
func (s *Server) verifyAssertion(ctx context.Context, c Client, raw string) *oauthError {
	tok, err := jwt.ParseSigned(raw, assertionAlgs)
	if err != nil {
		return errf(oauth.InvalidClient, "malformed client assertion")
	}
	var unverified jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&unverified); err != nil {
		return errf(oauth.InvalidClient, "malformed client assertion")
	}
	if oe := s.checkAssertionClaims(c, unverified); oe != nil {
		return oe
	}
	set, oe := s.clientKeys(ctx, c, tok.Headers[0].KeyID)
	if oe != nil {
		return oe
	}
	var claims jwt.Claims
	verified := false
	for _, k := range set.Keys {
		if kid := tok.Headers[0].KeyID; kid != "" && k.KeyID != "" && kid != k.KeyID {
			continue
		}
		if k.IsPublic() && tok.Claims(k.Key, &claims) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return errf(oauth.InvalidClient, "client assertion signature does not verify")
	}
	if err := s.store.UseNonce(ctx, "assertion:"+c.ID()+":"+claims.ID, claims.Expiry.Time().Add(time.Minute)); err != nil {
		return errf(oauth.InvalidClient, "client assertion replayed")
	}
	return nil
}

// checkAssertionClaims checks what an assertion says, before its
// signature is.
func (s *Server) checkAssertionClaims(c Client, claims jwt.Claims) *oauthError {
	now := s.now()
	aud := jwt.Audience(claims.Audience)
	if claims.Issuer != c.ID() || claims.Subject != c.ID() ||
		!(aud.Contains(s.endpoint(pathToken)) || aud.Contains(s.cfg.Issuer)) {
		return errf(oauth.InvalidClient, "client assertion iss, sub or aud wrong")
	}
	if err := claims.ValidateWithLeeway(jwt.Expected{Time: now}, 30*time.Second); err != nil || claims.Expiry == nil ||
		claims.Expiry.Time().Sub(now) > 5*time.Minute || claims.ID == "" {
		return errf(oauth.InvalidClient, "client assertion expired, too long-lived or without jti")
	}
	return nil
}

// clientKeys returns the keys a client's assertions are checked with: its
// registered jwks, or its jwks_uri's key set through the fetcher's cache.
func (s *Server) clientKeys(ctx context.Context, c Client, kid string) (jose.JSONWebKeySet, *oauthError) {
	var set jose.JSONWebKeySet
	switch {
	case len(c.Metadata.JWKS) > 0:
		if err := strictjson.Unmarshal(c.Metadata.JWKS, &set); err != nil {
			return set, errf(oauth.InvalidClient, "client jwks unreadable")
		}
	case c.Metadata.JWKSURI != "" && s.cfg.CIMD != nil:
		var err error
		if set, err = s.cfg.CIMD.KeySet(ctx, c.Metadata.JWKSURI, kid); err != nil {
			s.log.Warn("client jwks_uri unusable", "client_id", c.ID(), "err", err)
			return set, errf(oauth.InvalidClient, "client jwks_uri unusable")
		}
	default:
		return set, errf(oauth.InvalidClient, "client has no keys")
	}
	return set, nil
}

// confidential reports whether a client authenticates at the token endpoint.
func confidential(c Client) bool { return c.AuthMethod() != oauth.AuthMethodNone }

func allows(c Client, grant string) bool {
	g := c.Metadata.GrantTypes
	if len(g) == 0 {
		g = []string{oauth.GrantAuthorizationCode}
	}
	return slices.Contains(g, grant)
}
