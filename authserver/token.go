package authserver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
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
	code, err := s.store.TakeCode(ctx, hashToken(raw))
	switch {
	case errors.Is(err, ErrAlreadyUsed):
		// RFC 6749 §4.1.2 and OAuth 2.1: a second use revokes what the
		// first one got.
		s.log.Warn("authorization code replayed; revoking its tokens", "client_id", c.ID())
		_ = s.store.RevokeFamily(ctx, code.FamilyID, s.now().Add(s.cfg.RefreshTokenTTL))
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "authorization code already used")
	case errors.Is(err, ErrNotFound):
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "unknown authorization code")
	case err != nil:
		return oauth.TokenResponse{}, errf(oauth.ServerError, "reading the code failed")
	}
	switch {
	case s.now().After(code.ExpiresAt):
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "authorization code expired")
	case code.ClientID != c.ID():
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "authorization code was issued to another client")
	case f.Get("redirect_uri") != code.RedirectURI:
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "redirect_uri differs from the authorization request")
	case f.Get("code_verifier") == "":
		return oauth.TokenResponse{}, errf(oauth.InvalidRequest, "code_verifier is missing")
	case !oauth.VerifyS256(f.Get("code_verifier"), code.CodeChallenge):
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "code_verifier does not match the code_challenge")
	}
	if res := f["resource"]; len(res) > 1 || (len(res) == 1 && res[0] != code.Resource) {
		return oauth.TokenResponse{}, errf(oauth.InvalidTarget, "resource differs from the authorization request")
	}
	return s.issue(ctx, c, code.Subject, code.Resource, code.Scopes, code.FamilyID, allows(c, oauth.GrantRefreshToken))
}

func (s *Server) refreshGrant(ctx context.Context, c Client, f url.Values) (oauth.TokenResponse, *oauthError) {
	if !allows(c, oauth.GrantRefreshToken) {
		return oauth.TokenResponse{}, errf(oauth.UnauthorizedClient, "client not registered for refresh_token")
	}
	raw := f.Get("refresh_token")
	if raw == "" {
		return oauth.TokenResponse{}, errf(oauth.InvalidRequest, "refresh_token is missing")
	}
	t, err := s.store.UseRefreshToken(ctx, hashToken(raw))
	switch {
	case errors.Is(err, ErrAlreadyUsed):
		s.log.Warn("refresh token reused; revoking its family", "client_id", c.ID())
		_ = s.store.RevokeFamily(ctx, t.FamilyID, s.now().Add(s.cfg.RefreshTokenTTL))
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "refresh token already used; its grant is revoked")
	case errors.Is(err, ErrNotFound):
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "unknown refresh token")
	case err != nil:
		return oauth.TokenResponse{}, errf(oauth.ServerError, "reading the refresh token failed")
	}
	if revoked, err := s.store.FamilyRevoked(ctx, t.FamilyID); err != nil || revoked {
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "refresh token revoked")
	}
	switch {
	case s.now().After(t.ExpiresAt):
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "refresh token expired")
	case t.ClientID != c.ID():
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "refresh token was issued to another client")
	}
	if res := f["resource"]; len(res) > 1 || (len(res) == 1 && res[0] != t.Resource) {
		return oauth.TokenResponse{}, errf(oauth.InvalidTarget, "resource differs from the original grant")
	}
	scopes := t.Scopes
	if sc := f.Get("scope"); sc != "" {
		scopes = oauth.ParseScope(sc)
		if !oauth.HasAllScopes(t.Scopes, scopes) {
			return oauth.TokenResponse{}, errf(oauth.InvalidScope, "scope exceeds the original grant")
		}
	}
	return s.issue(ctx, c, t.Subject, t.Resource, scopes, t.FamilyID, true)
}

func (s *Server) clientCredentialsGrant(ctx context.Context, c Client, f url.Values) (oauth.TokenResponse, *oauthError) {
	if !confidential(c) || !allows(c, oauth.GrantClientCredentials) {
		return oauth.TokenResponse{}, errf(oauth.UnauthorizedClient, "client not registered for client_credentials")
	}
	res, oe := s.checkResource(f)
	if oe != nil {
		return oauth.TokenResponse{}, oe
	}
	scopes, oe := s.checkScopes(c, f.Get("scope"))
	if oe != nil {
		return oauth.TokenResponse{}, oe
	}
	family, err := randomToken(16)
	if err != nil {
		return oauth.TokenResponse{}, errf(oauth.ServerError, "no randomness")
	}
	return s.issue(ctx, c, c.ID(), res, scopes, family, false)
}

// issue mints an access token and, if asked, a refresh token of the family.
func (s *Server) issue(ctx context.Context, c Client, subject, resource string, scopes []string, family string, refresh bool) (oauth.TokenResponse, *oauthError) {
	now := s.now()
	jti, err := randomToken(16)
	if err != nil {
		return oauth.TokenResponse{}, errf(oauth.ServerError, "no randomness")
	}
	claims := AccessClaims{
		Claims: jwt.Claims{
			Issuer: s.cfg.Issuer, Subject: subject, Audience: jwt.Audience{resource},
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
	resp := oauth.TokenResponse{AccessToken: at, TokenType: "Bearer",
		ExpiresIn: int64(s.cfg.AccessTokenTTL / time.Second), Scope: claims.Scope}
	if refresh {
		rt, err := randomToken(32)
		if err != nil {
			return oauth.TokenResponse{}, errf(oauth.ServerError, "no randomness")
		}
		if err := s.store.SaveRefreshToken(ctx, RefreshToken{
			Hash: hashToken(rt), FamilyID: family, ClientID: c.ID(), Subject: subject,
			Resource: resource, Scopes: scopes, ExpiresAt: now.Add(s.cfg.RefreshTokenTTL),
		}); err != nil {
			return oauth.TokenResponse{}, errf(oauth.ServerError, "storing the refresh token failed")
		}
		resp.RefreshToken = rt
	}
	return resp, nil
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
	var verr error = errors.New("authserver: unknown key")
	set := s.JWKS()
	for _, k := range set.Key(tok.Headers[0].KeyID) {
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
