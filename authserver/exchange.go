package authserver

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"time"

	"github.com/mcpstack/mcpstack/oauth"
)

// exchangeClient returns the ExchangeClients entry of a client id.
func (u *upstream) exchangeClient(id string) (ExchangeClient, bool) {
	i := slices.IndexFunc(u.cfg.ExchangeClients, func(x ExchangeClient) bool { return x.ClientID == id })
	if i < 0 {
		return ExchangeClient{}, false
	}
	return u.cfg.ExchangeClients[i], true
}

// tokenExchangeGrant answers an RFC 8693 token exchange by which a
// resource server listed in UpstreamConfig.ExchangeClients obtains the
// upstream provider's access token of the user of an access token this
// server issued to an MCP client for that resource server. It is the
// cross-process form of [Server.UpstreamAccessToken]: the MCP client's
// token comes back to its issuer only, and the provider sees only its own
// tokens.
//
// Refused: a server without Upstream (unsupported_grant_type); a client
// not listed or public (unauthorized_client); actor_token (delegation is
// not offered), a subject token of another type, another requested type,
// a scope (the upstream grant's scope is the provider's) (invalid_request,
// invalid_scope); an audience or resource other than the provider's
// issuer (invalid_target); a subject token that does not verify (its
// signature, issuer, expiry, revocation) or whose audience is not the
// client's resource (invalid_request, RFC 8693 §2.2.2); a user with no
// upstream tokens left (invalid_grant: the user signs in again).
func (s *Server) tokenExchangeGrant(ctx context.Context, c Client, f url.Values) (oauth.TokenResponse, *oauthError) {
	if s.upstream == nil || len(s.upstream.cfg.ExchangeClients) == 0 {
		return oauth.TokenResponse{}, errf(oauth.UnsupportedGrantType, "unsupported grant_type")
	}
	xc, listed := s.upstream.exchangeClient(c.ID())
	if !listed || !confidential(c) {
		return oauth.TokenResponse{}, errf(oauth.UnauthorizedClient, "client may not exchange tokens")
	}
	if oe := s.checkExchangeRequest(f); oe != nil {
		return oauth.TokenResponse{}, oe
	}
	claims, err := s.VerifyAccessToken(ctx, f.Get("subject_token"))
	if err != nil {
		s.log.Warn("token exchange: subject token refused", "client_id", c.ID(), "err", err)
		return oauth.TokenResponse{}, errf(oauth.InvalidRequest, "subject_token is not a valid access token of this server")
	}
	// The token must have been given to this client's resource server: a
	// resource server may act only for the users who called it.
	if len(claims.Audience) != 1 || !oauth.SameResource(claims.Audience[0], xc.Resource) {
		s.log.Warn("token exchange: subject token for another audience", "client_id", c.ID(), "aud", []string(claims.Audience))
		return oauth.TokenResponse{}, errf(oauth.InvalidRequest, "subject_token was not issued for this client's resource")
	}
	if claims.Subject == claims.ClientID {
		// A client_credentials token names a client, not a user.
		return oauth.TokenResponse{}, errf(oauth.InvalidRequest, "subject_token names no user")
	}
	t, err := s.upstreamToken(ctx, claims.Subject)
	switch {
	case errors.Is(err, ErrNoUpstreamToken), errors.Is(err, ErrUpstream):
		s.log.Info("token exchange: no upstream token", "client_id", c.ID(), "err", err)
		return oauth.TokenResponse{}, errf(oauth.InvalidGrant, "no upstream token for this user; the user must sign in again")
	case err != nil:
		s.log.Error("token exchange failed", "client_id", c.ID(), "err", err)
		return oauth.TokenResponse{}, errf(oauth.ServerError, "reading the upstream token failed; retry")
	}
	resp := oauth.TokenResponse{AccessToken: t.AccessToken, TokenType: "Bearer",
		IssuedTokenType: oauth.TokenTypeAccessToken, Scope: t.Scope}
	if !t.Expiry.IsZero() {
		resp.ExpiresIn = max(int64(t.Expiry.Sub(s.now())/time.Second), 1)
	}
	return resp, nil
}

// checkExchangeRequest checks the parameters of a token exchange other
// than the subject token's value (RFC 8693 §2.1).
func (s *Server) checkExchangeRequest(f url.Values) *oauthError {
	switch {
	case f.Get("actor_token") != "" || f.Get("actor_token_type") != "":
		return errf(oauth.InvalidRequest, "delegation (actor_token) is not supported")
	case f.Get("subject_token") == "":
		return errf(oauth.InvalidRequest, "subject_token is missing")
	}
	switch f.Get("subject_token_type") {
	case oauth.TokenTypeAccessToken, oauth.TokenTypeJWT:
	default:
		return errf(oauth.InvalidRequest, "subject_token_type must be an access token")
	}
	if rt := f.Get("requested_token_type"); rt != "" && rt != oauth.TokenTypeAccessToken {
		return errf(oauth.InvalidRequest, "only an access token can be requested")
	}
	if f.Get("scope") != "" {
		return errf(oauth.InvalidScope, "the upstream token's scope is the provider's; ask for none")
	}
	aud, res := f.Get("audience"), f["resource"]
	if aud == "" && len(res) == 0 {
		return errf(oauth.InvalidTarget, "name the upstream provider as audience or resource")
	}
	if aud != "" && !oauth.SameResource(aud, s.upstream.cfg.Issuer) {
		return errf(oauth.InvalidTarget, "audience is not the upstream provider")
	}
	if len(res) > 1 || (len(res) == 1 && !oauth.SameResource(res[0], s.upstream.cfg.Issuer)) {
		return errf(oauth.InvalidTarget, "resource is not the upstream provider")
	}
	return nil
}
