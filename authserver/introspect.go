package authserver

import (
	"errors"
	"net/http"
	"strings"

	"github.com/mcpstack/mcpstack/oauth"
)

// Introspection is an introspection response (RFC 7662 §2.2).
type Introspection struct {
	Active    bool     `json:"active"`
	Scope     string   `json:"scope,omitempty"`
	ClientID  string   `json:"client_id,omitempty"`
	Subject   string   `json:"sub,omitempty"`
	Audience  []string `json:"aud,omitempty"`
	Issuer    string   `json:"iss,omitempty"`
	ExpiresAt int64    `json:"exp,omitempty"`
	IssuedAt  int64    `json:"iat,omitempty"`
	TokenType string   `json:"token_type,omitempty"`
}

// serveIntrospect answers RFC 7662 introspection. Callers must authenticate
// as a confidential client (a resource server); access tokens are
// introspected for any such caller, refresh tokens only for their client.
func (s *Server) serveIntrospect(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.writeError(w, r, 0, oauth.InvalidRequest, "unreadable form")
		return
	}
	c, oe := s.authenticateClient(r)
	if oe == nil && !confidential(c) {
		oe = errf(oauth.InvalidClient, "introspection needs an authenticated client")
	}
	if oe != nil {
		s.writeClientError(w, r, oe)
		return
	}
	tok := r.PostForm.Get("token")
	if tok == "" {
		s.writeError(w, r, 0, oauth.InvalidRequest, "token is missing")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if strings.Count(tok, ".") == 2 {
		if ac, err := s.VerifyAccessToken(r.Context(), tok); err == nil {
			writeJSON(w, http.StatusOK, Introspection{Active: true, Scope: ac.Scope, ClientID: ac.ClientID,
				Subject: ac.Subject, Audience: ac.Audience, Issuer: ac.Issuer, ExpiresAt: ac.Expiry.Time().Unix(),
				IssuedAt: ac.IssuedAt.Time().Unix(), TokenType: "Bearer"})
			return
		}
	}
	if rt, err := s.store.RefreshToken(r.Context(), hashToken(tok)); err == nil && rt.ClientID == c.ID() &&
		s.now().Before(rt.ExpiresAt) {
		if revoked, err := s.store.FamilyRevoked(r.Context(), rt.FamilyID); err == nil && !revoked {
			writeJSON(w, http.StatusOK, Introspection{Active: true, Scope: oauth.JoinScope(rt.Scopes), ClientID: rt.ClientID,
				Subject: rt.Subject, Audience: []string{canonicalAudience(rt.Resource)}, Issuer: s.cfg.Issuer,
				ExpiresAt: rt.ExpiresAt.Unix(), TokenType: "refresh_token"})
			return
		}
	}
	writeJSON(w, http.StatusOK, Introspection{Active: false})
}

// serveRevoke answers RFC 7009 revocation. Revoking either kind of token
// revokes its whole grant (the token family). An unknown, expired or
// otherwise invalid token is answered 200 and changes nothing (§2.2); a
// valid token issued to another client is refused with unauthorized_client
// (§2.1: the server verifies that the token was issued to the client making
// the request, and refuses the request if not).
func (s *Server) serveRevoke(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.writeError(w, r, 0, oauth.InvalidRequest, "unreadable form")
		return
	}
	c, oe := s.authenticateClient(r)
	if oe != nil {
		s.writeClientError(w, r, oe)
		return
	}
	tok := r.PostForm.Get("token")
	if tok == "" {
		s.writeError(w, r, 0, oauth.InvalidRequest, "token is missing")
		return
	}
	ctx := r.Context()
	family, owner := "", ""
	if rt, err := s.store.RefreshToken(ctx, hashToken(tok)); err == nil || errors.Is(err, ErrAlreadyUsed) {
		family, owner = rt.FamilyID, rt.ClientID
	} else if ac, err := s.VerifyAccessToken(ctx, tok); err == nil {
		family, owner = ac.family(), ac.ClientID
	}
	if family != "" && owner != c.ID() {
		s.log.Warn("revocation of another client's token refused", "client_id", c.ID())
		s.writeError(w, r, 0, oauth.UnauthorizedClient, "the token was not issued to this client")
		return
	}
	if family != "" {
		sctx, cancel := s.storeContext(ctx)
		defer cancel()
		if err := s.store.RevokeFamily(sctx, family, s.now().Add(s.cfg.RefreshTokenTTL)); err != nil {
			s.writeError(w, r, http.StatusServiceUnavailable, oauth.TemporarilyUnavailable, "revocation failed; retry")
			return
		}
		s.log.Info("grant revoked", "client_id", c.ID())
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}
