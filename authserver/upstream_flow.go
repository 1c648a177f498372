package authserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/mcpstack/mcpstack/oauth"
)

// The confused-deputy rules of the MCP security best practices
// (§"Confused Deputy Problem", "Mitigation"), as this file applies them
// when Config.Upstream is set:
//
//   - a per-user registry of approved client ids, in the Store
//     (Store.ApproveClient, Store.ClientApproved), checked first;
//   - for a client this user has not approved in this browser, this
//     server's consent page, shown before any redirect to the provider,
//     naming the client, its scopes, its redirect URI and the provider's
//     scopes, CSRF-protected and unframeable (pages.go);
//   - consent cookies named __Host-mcp_consent_<client hash> (Secure,
//     Path=/, no Domain, HttpOnly, SameSite=Lax), whose value is sealed
//     with the cookie key over the subject and the client id, so that a
//     cookie earned by one client is worth nothing to another;
//   - redirect URIs compared as exact strings, with no loopback port
//     latitude (authorize.go);
//   - the upstream state created only after the consent was posted,
//     random, stored single-use (Store.TakeUpstreamState), expiring after
//     UpstreamConfig.StateTTL (at most 10 minutes) and bound to the
//     browser by the __Host-mcp_upstream cookie.
//
// On http (a loopback issuer, for development) browsers refuse __Host-
// cookies, so the cookies lose the prefix: mcp_consent_<hash> and
// mcp_upstream.

const (
	pathUpstreamCallback = "/upstream/callback"
	upstreamBrowserName  = "mcp_upstream"
	consentCookiePrefix  = "mcp_consent_"
)

// pendingUpstream is UpstreamState.Data: what the callback needs.
type pendingUpstream struct {
	Request  string `json:"r"` // the MCP client's authorization parameters
	Verifier string `json:"v"` // PKCE verifier toward the provider
	Nonce    string `json:"n"` // OpenID Connect nonce
	Browser  string `json:"b"` // SHA-256 of the browser's mcp_upstream cookie
}

// consentCookieName is the cookie that records this browser's consent for
// one client: bound to the client by its name and by its sealed value.
func (s *Server) consentCookieName(clientID string) string {
	h := sha256.Sum256([]byte(clientID))
	return s.cookieName(consentCookiePrefix + hex.EncodeToString(h[:8]))
}

func (s *Server) setConsentCookie(w http.ResponseWriter, subject, clientID string) {
	http.SetCookie(w, &http.Cookie{
		Name: s.consentCookieName(clientID), Value: s.seal("consent", subject+"\x00"+clientID, s.cfg.SessionTTL),
		Path: "/", MaxAge: int(s.cfg.SessionTTL / time.Second), HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode,
	})
}

// approvedHere reports whether subject approved this client (the registry)
// and did so in this browser (the consent cookie bound to the client).
func (s *Server) approvedHere(r *http.Request, subject string, c Client) bool {
	ck, err := r.Cookie(s.consentCookieName(c.ID()))
	if err != nil {
		return false
	}
	v, ok := s.unseal(r.Context(), "consent", ck.Value)
	if !ok || v != subject+"\x00"+c.ID() {
		return false
	}
	ok, err = s.store.ClientApproved(r.Context(), subject, c.ID())
	if err != nil {
		s.log.Error("reading the client approvals failed", "error", err)
		return false
	}
	return ok
}

// proceedUpstream is proceed with Config.Upstream: a user already signed in
// who approved this client in this browser gets the code; anyone else gets
// the consent page, before anything is sent to the provider.
func (s *Server) proceedUpstream(w http.ResponseWriter, r *http.Request, ar *authRequest, q url.Values, subject string) {
	if subject != "" && (s.approvedHere(r, subject, ar.client) || s.trusted(ar.client)) {
		if s.upstreamUsable(r.Context(), subject) {
			s.issueCode(w, r, ar, subject)
			return
		}
		// Approved, but the provider's tokens are gone or spent: sign in
		// there again (no new consent: this user approved this client in
		// this browser), or tools would fail until the session ends.
		s.startUpstream(w, r, ar, q)
		return
	}
	if s.trusted(ar.client) {
		// A first-party client (Config.TrustedClient) needs no consent;
		// the confused-deputy rule is about clients registered by others.
		s.startUpstream(w, r, ar, q)
		return
	}
	s.showPage(w, r, http.StatusOK, ar, q, "upconsent", subject, "")
}

// upstreamUsable reports whether the user has upstream tokens this server
// can read and that are fresh or refreshable.
func (s *Server) upstreamUsable(ctx context.Context, subject string) bool {
	t, err := s.loadUpstreamTokens(ctx, subject)
	return err == nil && (s.fresh(t) || t.RefreshToken != "")
}

func (s *Server) trusted(c Client) bool { return s.cfg.TrustedClient != nil && s.cfg.TrustedClient(c) }

// browserBinding returns the hash of the browser's mcp_upstream cookie,
// setting one first if there is none.
func (s *Server) browserBinding(w http.ResponseWriter, r *http.Request) (string, error) {
	if c, err := r.Cookie(s.cookieName(upstreamBrowserName)); err == nil && len(c.Value) >= 32 {
		return hashToken(c.Value), nil
	}
	v, err := randomToken(32)
	if err != nil {
		return "", err
	}
	s.setCookie(w, upstreamBrowserName, v, s.upstream.cfg.StateTTL)
	return hashToken(v), nil
}

// startUpstream runs after the consent was posted and spent: it creates
// the state (only now, MCP security best practices), stores it single-use
// and sends the browser to the provider.
func (s *Server) startUpstream(w http.ResponseWriter, r *http.Request, ar *authRequest, q url.Values) {
	m, err := s.upstream.metadata(r.Context())
	if err != nil {
		s.log.Error("upstream metadata", "error", err)
		s.redirectError(w, r, ar, errf(oauth.TemporarilyUnavailable, "the sign-in provider cannot be reached"))
		return
	}
	state, err1 := randomToken(32)
	verifier, err2 := oauth.NewVerifier()
	nonce, err3 := randomToken(32)
	browser, err4 := s.browserBinding(w, r)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		s.redirectError(w, r, ar, errf(oauth.ServerError, "no randomness"))
		return
	}
	keep := url.Values{}
	for _, p := range authParams {
		if v, ok := q[p]; ok {
			keep[p] = v
		}
	}
	data, _ := json.Marshal(pendingUpstream{Request: keep.Encode(), Verifier: verifier, Nonce: nonce, Browser: browser})
	ctx, cancel := s.storeContext(r.Context())
	defer cancel()
	if err := s.store.SaveUpstreamState(ctx, UpstreamState{Hash: hashToken(state), Data: data,
		ExpiresAt: s.now().Add(s.upstream.cfg.StateTTL)}); err != nil {
		s.log.Error("storing the upstream state failed", "error", err)
		s.redirectError(w, r, ar, errf(oauth.TemporarilyUnavailable, "the server could not start the sign-in"))
		return
	}
	target, err := s.upstream.authorizeURL(m, s.endpoint(pathUpstreamCallback), state, verifier, nonce)
	if err != nil {
		s.redirectError(w, r, ar, errf(oauth.ServerError, "the sign-in provider's address is unusable"))
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// serveUpstreamCallback receives the browser back from the provider. The
// state must be one this server stored after a consent, not taken before
// (single use), not expired, and created in this browser; only then is the
// provider's code redeemed.
func (s *Server) serveUpstreamCallback(w http.ResponseWriter, r *http.Request) {
	if s.authorizeLimited(w, r) {
		return
	}
	q := r.URL.Query()
	p, oe := s.takeUpstreamState(w, r, q)
	if oe != nil {
		s.showError(w, r, http.StatusBadRequest, oe)
		return
	}
	aq, err := url.ParseQuery(p.Request)
	if err != nil {
		s.showError(w, r, http.StatusBadRequest, errf(oauth.InvalidRequest, "the authorization request is unreadable; start again"))
		return
	}
	// Checked again: the client or its redirect URIs may have changed
	// while the user was away.
	ar, redirectable, oe := s.checkAuthRequest(r.Context(), aq)
	if oe != nil {
		if redirectable {
			s.redirectError(w, r, ar, oe)
		} else {
			s.showError(w, r, http.StatusBadRequest, oe)
		}
		return
	}
	if e := q.Get("error"); e != "" {
		s.log.Info("upstream sign-in refused", "error", e, "client_id", ar.client.ID())
		s.redirectError(w, r, ar, errf(oauth.AccessDenied, "the sign-in provider did not sign the user in"))
		return
	}
	// RFC 9207: a provider that names itself must be the one we sent
	// the user to (mix-up defence).
	iss, hasIss := q["iss"]
	if !hasIss {
		// A provider that says it sends iss must send it (RFC 9207 §2.4).
		if m, err := s.upstream.metadata(r.Context()); err == nil && m.AuthorizationResponseIssParameterSupported {
			s.redirectError(w, r, ar, errf(oauth.AccessDenied, "the response does not name its provider"))
			return
		}
	}
	if hasIss && (len(iss) != 1 || iss[0] != s.upstream.cfg.Issuer) {
		s.redirectError(w, r, ar, errf(oauth.AccessDenied, "the response came from another provider"))
		return
	}
	subject, scopes, err := s.finishUpstream(r.Context(), q.Get("code"), p)
	if err != nil {
		s.log.Warn("upstream sign-in failed", "error", err, "client_id", ar.client.ID())
		s.redirectError(w, r, ar, errf(oauth.AccessDenied, "signing in with the provider failed"))
		return
	}
	ctx, cancel := s.storeContext(r.Context())
	defer cancel()
	if err := s.store.ApproveClient(ctx, subject, ar.client.ID(), s.now()); err != nil {
		s.log.Error("recording the approval failed", "error", err)
		s.redirectError(w, r, ar, errf(oauth.TemporarilyUnavailable, "the server could not record the consent"))
		return
	}
	if scopes != nil {
		ar.scopes = slices.DeleteFunc(slices.Clone(ar.scopes), func(sc string) bool { return !slices.Contains(scopes, sc) })
	}
	s.setSession(w, subject)
	s.setConsentCookie(w, subject, ar.client.ID())
	s.issueCode(w, r, ar, subject)
}

// takeUpstreamState spends the state of the callback and checks it.
func (s *Server) takeUpstreamState(w http.ResponseWriter, r *http.Request, q url.Values) (*pendingUpstream, *oauthError) {
	bad := errf(oauth.InvalidRequest, "this sign-in is unknown, expired or already finished; start again from the application")
	if len(q["state"]) != 1 || q.Get("state") == "" {
		return nil, bad
	}
	ctx, cancel := s.storeContext(r.Context())
	defer cancel()
	st, err := s.store.TakeUpstreamState(ctx, hashToken(q.Get("state")))
	switch {
	case errors.Is(err, ErrNotFound):
		s.log.Warn("upstream state unknown or replayed", "remote", r.RemoteAddr)
		return nil, bad
	case err != nil:
		s.log.Error("reading the upstream state failed", "error", err)
		return nil, errf(oauth.TemporarilyUnavailable, "the server could not read the sign-in; try again")
	}
	var p pendingUpstream
	if json.Unmarshal(st.Data, &p) != nil || !s.now().Before(st.ExpiresAt) {
		return nil, bad
	}
	c, err := r.Cookie(s.cookieName(upstreamBrowserName))
	if err != nil || subtle.ConstantTimeCompare([]byte(hashToken(c.Value)), []byte(p.Browser)) != 1 {
		s.log.Warn("upstream state from another browser", "remote", r.RemoteAddr)
		return nil, errf(oauth.InvalidRequest, "this sign-in was started in another browser; start again from the application")
	}
	// The browser cookie has done its work for this state.
	return &p, nil
}

// finishUpstream redeems the provider's code, learns who signed in, keeps
// the upstream tokens and returns our subject and the scopes allowed.
func (s *Server) finishUpstream(ctx context.Context, code string, p *pendingUpstream) (string, []string, error) {
	if code == "" {
		return "", nil, upstreamErr("no code in the callback")
	}
	t, err := s.upstream.token(ctx, url.Values{"grant_type": {oauth.GrantAuthorizationCode}, "code": {code},
		"redirect_uri": {s.endpoint(pathUpstreamCallback)}, "code_verifier": {p.Verifier}})
	if err != nil {
		return "", nil, err
	}
	claims, upSub, err := s.upstream.identify(ctx, t, p.Nonce)
	if err != nil {
		return "", nil, err
	}
	subject := s.upstream.cfg.Issuer + "#" + upSub
	var scopes []string
	if s.upstream.cfg.MapClaims != nil {
		sub, sc, err := s.upstream.cfg.MapClaims(ctx, claims)
		if err != nil {
			return "", nil, err
		}
		if sub != "" {
			subject = sub
		}
		scopes = sc
	}
	if err := s.saveUpstreamTokens(ctx, subject, upstreamTokensFrom(t, s.now(), "")); err != nil {
		return "", nil, err
	}
	return subject, scopes, nil
}

func upstreamTokensFrom(t *oauth.TokenResponse, now time.Time, oldRefresh string) upstreamTokens {
	u := upstreamTokens{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, TokenType: t.TokenType, Scope: t.Scope,
		Expiry: t.Expiry(now)}
	if u.RefreshToken == "" {
		u.RefreshToken = oldRefresh // RFC 6749 §6: the old one stays valid
	}
	return u
}
