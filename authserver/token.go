package authserver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpstack/mcpstack/oauth"
)

// AccessClaims are the claims of the access tokens the server issues
// (RFC 9068).
type AccessClaims struct {
	jwt.Claims
	ClientID string `json:"client_id"`
	Scope    string `json:"scope,omitempty"`
}

// family returns the token family encoded in the jti.
func (c AccessClaims) family() string {
	f, _, _ := strings.Cut(c.ID, ".")
	return f
}

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.writeError(w, r, 0, oauth.InvalidRequest, "unreadable form")
		return
	}
	for k, v := range r.PostForm {
		if len(v) > 1 && k != "resource" {
			s.writeError(w, r, 0, oauth.InvalidRequest, k+" appears more than once")
			return
		}
	}
	c, oe := s.authenticateClient(r)
	if oe != nil {
		s.writeClientError(w, r, oe)
		return
	}
	var resp oauth.TokenResponse
	switch g := r.PostForm.Get("grant_type"); g {
	case oauth.GrantAuthorizationCode:
		resp, oe = s.codeGrant(r.Context(), c, r.PostForm)
	case oauth.GrantRefreshToken:
		resp, oe = s.refreshGrant(r.Context(), c, r.PostForm)
	case oauth.GrantClientCredentials:
		resp, oe = s.clientCredentialsGrant(r.Context(), c, r.PostForm)
	case oauth.GrantTokenExchange:
		resp, oe = s.tokenExchangeGrant(r.Context(), c, r.PostForm)
	case "":
		oe = errf(oauth.InvalidRequest, "grant_type is missing")
	default:
		oe = errf(oauth.UnsupportedGrantType, "unsupported grant_type")
	}
	if oe != nil {
		s.writeClientError(w, r, oe)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	s.markClientUsed(r.Context(), c)
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) writeClientError(w http.ResponseWriter, r *http.Request, oe *oauthError) {
	if oe.code == oauth.InvalidClient {
		if _, _, ok := r.BasicAuth(); ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
		}
	}
	s.writeError(w, r, 0, oe.code, oe.desc)
}

func (s *Server) codeGrant(ctx context.Context, c Client, f url.Values) (oauth.TokenResponse, *oauthError) {
	if !allows(c, oauth.GrantAuthorizationCode) {
		return oauth.TokenResponse{}, errf(oauth.UnauthorizedClient, "client not registered for authorization_code")
	}
	raw := f.Get("code")
	if raw == "" {
		return oauth.TokenResponse{}, errf(oauth.InvalidRequest, "code is missing")
	}
	h := hashToken(raw)
	// The code is read, checked, and only then spent: a refused request
	// (another client, a wrong verifier) leaves it to its rightful owner.
	code, err := s.store.Code(ctx, h)
	if oe := s.spendError(ctx, c, "authorization code", code.FamilyID, err); oe != nil {
		return oauth.TokenResponse{}, oe
	}
	switch {
	case s.now().After(code.ExpiresAt):
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "authorization code expired")
	case code.ClientID != c.ID():
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "authorization code was issued to another client")
	case f.Get("redirect_uri") != code.RedirectURI:
		// RFC 6749 §4.1.3: identical, not equivalent.
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "redirect_uri differs from the authorization request")
	case f.Get("code_verifier") == "":
		return oauth.TokenResponse{}, errf(oauth.InvalidRequest, "code_verifier is missing")
	case !oauth.VerifyS256(f.Get("code_verifier"), code.CodeChallenge):
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "code_verifier does not match the code_challenge")
	}
	if oe := sameResource(f, code.Resource, "the authorization request"); oe != nil {
		return oauth.TokenResponse{}, oe
	}
	resp, oe := s.accessToken(c, code.Subject, code.Resource, code.Scopes, code.FamilyID)
	if oe != nil {
		return oauth.TokenResponse{}, oe
	}
	var first *RefreshToken
	if allows(c, oauth.GrantRefreshToken) {
		raw, rt, oe := s.newRefreshToken(c, code.Subject, code.Resource, code.Scopes, code.FamilyID)
		if oe != nil {
			return oauth.TokenResponse{}, oe
		}
		first, resp.RefreshToken = &rt, raw
	}
	sctx, cancel := s.storeContext(ctx)
	defer cancel()
	_, err = s.store.RedeemCode(sctx, h, first)
	if oe := s.spendError(ctx, c, "authorization code", code.FamilyID, err); oe != nil {
		return oauth.TokenResponse{}, oe
	}
	return resp, nil
}

// spendError turns the error of reading or spending a code or refresh
// token into the answer, revoking the family on reuse: RFC 6749 §4.1.2 and
// §10.4, RFC 9700 §4.14.2.
func (s *Server) spendError(ctx context.Context, c Client, what, family string, err error) *oauthError {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrAlreadyUsed):
		s.log.Warn(what+" reused; revoking its grant", "client_id", c.ID())
		// The revocation must not depend on the presenter waiting for the
		// answer: one who replays a stolen token would otherwise give up
		// early and keep the grant alive.
		sctx, cancel := s.storeContext(ctx)
		defer cancel()
		if rerr := s.store.RevokeFamily(sctx, family, s.now().Add(s.cfg.RefreshTokenTTL)); rerr != nil {
			s.log.Error("revoking a reused grant failed", "client_id", c.ID(), "error", rerr)
		}
		return errf(oauth.InvalidGrant, "%s already used; its grant is revoked", what)
	case errors.Is(err, ErrNotFound):
		return errf(oauth.InvalidGrant, "unknown %s", what)
	default:
		s.log.Error("store failed", "what", what, "client_id", c.ID(), "error", err)
		return errf(oauth.ServerError, "reading or updating the %s failed; retry", what)
	}
}

// sameResource checks the resource parameter of a token request against
// the grant's (RFC 8707 §2.2: it may only narrow, and there is one).
func sameResource(f url.Values, granted, what string) *oauthError {
	if res := f["resource"]; len(res) > 1 || (len(res) == 1 && !oauth.SameResource(res[0], granted)) {
		return errf(oauth.InvalidTarget, "resource differs from %s", what)
	}
	return nil
}

func (s *Server) refreshGrant(ctx context.Context, c Client, f url.Values) (oauth.TokenResponse, *oauthError) {
	if !allows(c, oauth.GrantRefreshToken) {
		return oauth.TokenResponse{}, errf(oauth.UnauthorizedClient, "client not registered for refresh_token")
	}
	raw := f.Get("refresh_token")
	if raw == "" {
		return oauth.TokenResponse{}, errf(oauth.InvalidRequest, "refresh_token is missing")
	}
	h := hashToken(raw)
	// Read, check, then rotate: only a refresh that succeeds spends the
	// token, so a refused one leaves the client its grant.
	t, err := s.store.RefreshToken(ctx, h)
	if oe := s.spendError(ctx, c, "refresh token", t.FamilyID, err); oe != nil {
		return oauth.TokenResponse{}, oe
	}
	switch {
	case s.now().After(t.ExpiresAt):
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "refresh token expired")
	case t.ClientID != c.ID():
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "refresh token was issued to another client")
	}
	if oe := sameResource(f, t.Resource, "the original grant"); oe != nil {
		return oauth.TokenResponse{}, oe
	}
	scopes := t.Scopes
	// A scope that names no token (empty, or only spaces) is read as
	// omitted, as /authorize and client_credentials read it: RFC 6749 §6
	// keeps the original grant's scope then. Narrowing to nothing would
	// mint a token good for nothing.
	if requested := oauth.ParseScope(f.Get("scope")); len(requested) > 0 {
		scopes = requested
		if !oauth.HasAllScopes(t.Scopes, scopes) {
			return oauth.TokenResponse{}, errf(oauth.InvalidScope, "scope exceeds the original grant")
		}
	}
	if revoked, err := s.store.FamilyRevoked(ctx, t.FamilyID); err != nil {
		return oauth.TokenResponse{}, errf(oauth.ServerError, "reading the grant failed; retry")
	} else if revoked {
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "refresh token revoked")
	}
	// A narrower scope narrows this access token only: RFC 6749 §6 keeps
	// the new refresh token's scope identical to the old one's.
	resp, oe := s.accessToken(c, t.Subject, t.Resource, scopes, t.FamilyID)
	if oe != nil {
		return oauth.TokenResponse{}, oe
	}
	next, rt, oe := s.newRefreshToken(c, t.Subject, t.Resource, t.Scopes, t.FamilyID)
	if oe != nil {
		return oauth.TokenResponse{}, oe
	}
	sctx, cancel := s.storeContext(ctx)
	defer cancel()
	_, err = s.store.RotateRefreshToken(sctx, h, rt)
	if oe := s.spendError(ctx, c, "refresh token", t.FamilyID, err); oe != nil {
		return oauth.TokenResponse{}, oe
	}
	resp.RefreshToken = next
	return resp, nil
}

func (s *Server) clientCredentialsGrant(ctx context.Context, c Client, f url.Values) (oauth.TokenResponse, *oauthError) {
	if !confidential(c) || !allows(c, oauth.GrantClientCredentials) {
		return oauth.TokenResponse{}, errf(oauth.UnauthorizedClient, "client not registered for client_credentials")
	}
	res, oe := s.checkResource(f)
	if oe != nil {
		return oauth.TokenResponse{}, oe
	}
	scopes, oe := s.checkScopes(ctx, c, f.Get("scope"))
	if oe != nil {
		return oauth.TokenResponse{}, oe
	}
	family, err := randomToken(16)
	if err != nil {
		return oauth.TokenResponse{}, errf(oauth.ServerError, "no randomness")
	}
	return s.accessToken(c, c.ID(), res, scopes, family)
}

// storeContext returns the context for a store change that must not be
// abandoned half-done when the client goes away: it keeps ctx's values but
// not its cancellation, and ends after Config.StoreTimeout.
func (s *Server) storeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.cfg.StoreTimeout)
}

// accessToken mints an access token of the family. Its audience is the
// resource in canonical form (RFC 8707, MCP authorization), whatever
// spelling the grant was stored with.
func (s *Server) accessToken(c Client, subject, resource string, scopes []string, family string) (oauth.TokenResponse, *oauthError) {
	now := s.now()
	jti, err := randomToken(16)
	if err != nil {
		return oauth.TokenResponse{}, errf(oauth.ServerError, "no randomness")
	}
	claims := AccessClaims{
		Claims: jwt.Claims{
			Issuer: s.cfg.Issuer, Subject: subject, Audience: jwt.Audience{canonicalAudience(resource)},
			Expiry: jwt.NewNumericDate(now.Add(s.cfg.AccessTokenTTL)), IssuedAt: jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now), ID: family + "." + jti,
		},
		ClientID: c.ID(), Scope: oauth.JoinScope(scopes),
	}
	signer, err := s.activeSigner()
	if err != nil {
		return oauth.TokenResponse{}, errf(oauth.ServerError, "no signing key")
	}
	at, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return oauth.TokenResponse{}, errf(oauth.ServerError, "signing failed")
	}
	return oauth.TokenResponse{AccessToken: at, TokenType: "Bearer",
		ExpiresIn: int64(s.cfg.AccessTokenTTL / time.Second), Scope: claims.Scope}, nil
}

// canonicalAudience returns a resource in canonical form. Grants stored
// before resources were canonicalized at the authorization endpoint may hold
// another spelling; one that does not parse is kept as it is.
func canonicalAudience(resource string) string {
	if c, err := oauth.CanonicalResource(resource); err == nil {
		return c
	}
	return resource
}

// newRefreshToken makes a refresh token of the family, to be stored by
// RedeemCode or RotateRefreshToken, and returns it with its raw value.
func (s *Server) newRefreshToken(c Client, subject, resource string, scopes []string, family string) (string, RefreshToken, *oauthError) {
	rt, err := randomToken(32)
	if err != nil {
		return "", RefreshToken{}, errf(oauth.ServerError, "no randomness")
	}
	return rt, RefreshToken{
		Hash: hashToken(rt), FamilyID: family, ClientID: c.ID(), Subject: subject,
		Resource: resource, Scopes: slices.Clone(scopes), ExpiresAt: s.now().Add(s.cfg.RefreshTokenTTL),
	}, nil
}

// VerifyAccessToken checks a token the server issued: signature by a key in
// the JWKS, issuer, expiry, and that its grant was not revoked. It does not
// check the audience; the caller (a resource server) must.
func (s *Server) VerifyAccessToken(ctx context.Context, raw string) (AccessClaims, error) {
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return AccessClaims{}, err
	}
	var c AccessClaims
	set := s.JWKS()
	keys := set.Key(tok.Headers[0].KeyID)
	if len(keys) == 0 && s.reloadKeysSoon(ctx) {
		// Another server on the store may have rotated in the key.
		set = s.JWKS()
		keys = set.Key(tok.Headers[0].KeyID)
	}
	var verr error = errors.New("authserver: unknown key")
	for _, k := range keys {
		if verr = tok.Claims(k.Key, &c); verr == nil {
			break
		}
	}
	if verr != nil {
		return AccessClaims{}, verr
	}
	if typ, _ := tok.Headers[0].ExtraHeaders["typ"].(string); !strings.EqualFold(typ, "at+jwt") {
		return AccessClaims{}, errors.New("authserver: not an access token")
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: s.cfg.Issuer, Time: s.now()}, 0); err != nil {
		return AccessClaims{}, err
	}
	if revoked, err := s.store.FamilyRevoked(ctx, c.family()); err != nil || revoked {
		return AccessClaims{}, errors.New("authserver: token revoked")
	}
	return c, nil
}
