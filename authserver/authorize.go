package authserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/oauth"
)

// authRequest is a checked authorization request.
type authRequest struct {
	client      Client
	redirectURI string
	state       string
	challenge   string
	resource    string
	scopes      []string
}

// params are the request parameters carried from page to page.
var authParams = []string{"response_type", "client_id", "redirect_uri", "state", "code_challenge",
	"code_challenge_method", "resource", "scope"}

// checkAuthRequest checks an authorization request. When the client or the
// redirect URI cannot be trusted, the error must be shown to the user
// (redirectable false); otherwise it goes back to the redirect URI.
func (s *Server) checkAuthRequest(ctx context.Context, q url.Values) (ar *authRequest, redirectable bool, oe *oauthError) {
	for _, p := range []string{"client_id", "redirect_uri"} {
		if len(q[p]) > 1 {
			return nil, false, errf(oauth.InvalidRequest, "%s appears more than once", p)
		}
	}
	c, oe := s.lookupClient(ctx, q.Get("client_id"))
	if oe != nil {
		return nil, false, oe
	}
	ru := q.Get("redirect_uri")
	if ru == "" {
		return nil, false, errf(oauth.InvalidRequest, "redirect_uri is missing")
	}
	if oauth.ValidateRedirectURI(ru) != nil {
		return nil, false, errf(oauth.InvalidRequest, "redirect_uri must use https, or http on a loopback host")
	}
	if !slices.ContainsFunc(c.Metadata.RedirectURIs, func(reg string) bool { return s.redirectMatches(reg, ru) }) {
		return nil, false, errf(oauth.InvalidRequest, "redirect_uri is not registered for this client")
	}
	ar = &authRequest{client: c, redirectURI: ru, state: q.Get("state")}
	for _, p := range authParams {
		if len(q[p]) > 1 {
			return ar, true, errf(oauth.InvalidRequest, "%s appears more than once", p)
		}
	}
	if rt := q.Get("response_type"); rt != oauth.ResponseTypeCode {
		return ar, true, errf(oauth.UnsupportedResponseType, "only response_type=code is supported")
	}
	if !allows(c, oauth.GrantAuthorizationCode) {
		return ar, true, errf(oauth.UnauthorizedClient, "the client is not registered for authorization_code")
	}
	ar.challenge = q.Get("code_challenge")
	switch m := q.Get("code_challenge_method"); {
	case ar.challenge == "":
		return ar, true, errf(oauth.InvalidRequest, "code_challenge is required (PKCE)")
	case m != oauth.MethodS256:
		return ar, true, errf(oauth.InvalidRequest, "code_challenge_method must be S256")
	case len(ar.challenge) != 43 || strings.Trim(ar.challenge, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "":
		return ar, true, errf(oauth.InvalidRequest, "code_challenge is not an S256 challenge")
	}
	res, oe := s.checkResource(q)
	if oe != nil {
		return ar, true, oe
	}
	ar.resource = res
	if why := checkScopeSyntax(q.Get("scope")); why != "" {
		return ar, true, errf(oauth.InvalidScope, "%s", why)
	}
	scopes, oe := s.checkScopes(ctx, c, q.Get("scope"))
	if oe != nil {
		return ar, true, oe
	}
	ar.scopes = scopes
	return ar, true, nil
}

// redirectMatches compares a presented redirect URI with a registered one:
// by [oauth.RedirectURIMatches], or, with Config.Upstream, as exact
// strings (MCP security best practices, confused deputy: "exact string
// matching", with no RFC 8252 loopback port latitude).
func (s *Server) redirectMatches(registered, presented string) bool {
	if s.upstream != nil {
		return registered == presented
	}
	return oauth.RedirectURIMatches(registered, presented)
}

// checkResource checks the resource parameter (RFC 8707), which is required,
// and returns it in canonical form ([oauth.CanonicalResource]): the form
// stored with the grant, compared at the token endpoint and issued as the
// access token's aud, so that every spelling of one server is one audience.
func (s *Server) checkResource(q url.Values) (string, *oauthError) {
	switch len(q["resource"]) {
	case 0:
		return "", errf(oauth.InvalidRequest, "resource is required")
	case 1:
	default:
		return "", errf(oauth.InvalidTarget, "only one resource is supported")
	}
	res, err := oauth.CanonicalResource(q.Get("resource"))
	if err != nil {
		return "", errf(oauth.InvalidTarget, "resource must be an absolute URI without a fragment")
	}
	// The user-info endpoint is a resource of this server's own, always
	// allowed (see Server.UserInfoURL).
	if len(s.cfg.Resources) > 0 && !oauth.SameResource(res, s.UserInfoURL()) && !slices.ContainsFunc(s.cfg.Resources, func(a string) bool { return oauth.SameResource(a, res) }) {
		return "", errf(oauth.InvalidTarget, "unknown resource")
	}
	return res, nil
}

// checkScopes checks requested scopes against the server's, then asks
// Config.ScopePolicy, if any, about the client.
func (s *Server) checkScopes(ctx context.Context, c Client, scope string) ([]string, *oauthError) {
	req := oauth.ParseScope(scope)
	if len(s.cfg.Scopes) > 0 && !oauth.HasAllScopes(s.cfg.Scopes, req) {
		return nil, errf(oauth.InvalidScope, "unknown scope requested")
	}
	if s.cfg.ScopePolicy != nil {
		if err := s.cfg.ScopePolicy(ctx, c, req); err != nil {
			s.log.Info("scope refused by policy", "client_id", c.ID(), "scope", scope, "error", err)
			return nil, errf(oauth.InvalidScope, "scope not allowed for this client")
		}
	}
	return req, nil
}

// redirect sends the authorization response to the redirect URI.
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, ar *authRequest, params url.Values) {
	u, err := url.Parse(ar.redirectURI)
	if err != nil {
		s.showError(w, r, http.StatusBadRequest, errf(oauth.InvalidRequest, "redirect_uri unusable"))
		return
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if ar.state != "" {
		q.Set("state", ar.state)
	}
	q.Set("iss", s.cfg.Issuer)
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	status := http.StatusFound
	if r.Method == http.MethodPost {
		status = http.StatusSeeOther
	}
	http.Redirect(w, r, u.String(), status)
}

func (s *Server) redirectError(w http.ResponseWriter, r *http.Request, ar *authRequest, oe *oauthError) {
	s.log.Info("authorization refused", "client_id", ar.client.ID(), "error", string(oe.code), "description", oe.desc)
	s.redirect(w, r, ar, url.Values{"error": {string(oe.code)}, "error_description": {oe.desc}})
}

// issueCode stores a new code and redirects with it.
func (s *Server) issueCode(w http.ResponseWriter, r *http.Request, ar *authRequest, subject string) {
	code, err := randomToken(32)
	family, err2 := randomToken(16)
	if err != nil || err2 != nil {
		s.redirectError(w, r, ar, errf(oauth.ServerError, "no randomness"))
		return
	}
	// After a consent was spent, storing its code is not abandoned because
	// the browser went away.
	ctx, cancel := s.storeContext(r.Context())
	defer cancel()
	err = s.store.SaveCode(ctx, Code{
		Hash: hashToken(code), ClientID: ar.client.ID(), RedirectURI: ar.redirectURI,
		CodeChallenge: ar.challenge, Resource: ar.resource, Subject: subject, Scopes: ar.scopes,
		FamilyID: family, ExpiresAt: s.now().Add(s.cfg.CodeTTL),
	})
	if err != nil {
		s.redirectError(w, r, ar, errf(oauth.ServerError, "storing the code failed"))
		return
	}
	s.markClientUsed(r.Context(), ar.client)
	s.log.Info("authorization code issued", "client_id", ar.client.ID(), "subject", subject)
	s.redirect(w, r, ar, url.Values{"code": {code}})
}

// authorizeLimited applies Config.AuthorizeRate: every request to the
// authorization endpoint may fetch a Client ID Metadata Document, so an
// address that sends too many is refused before anything is looked up.
func (s *Server) authorizeLimited(w http.ResponseWriter, r *http.Request) bool {
	if !s.limited(w, r, s.authorizes, "authorization") {
		return false
	}
	s.showError(w, r, http.StatusTooManyRequests, errf(oauth.TemporarilyUnavailable, "too many requests from your address; try again later"))
	return true
}

func (s *Server) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	if s.authorizeLimited(w, r) {
		return
	}
	ar, redirectable, oe := s.checkAuthRequest(r.Context(), r.URL.Query())
	if oe != nil {
		if redirectable {
			s.redirectError(w, r, ar, oe)
		} else {
			s.showError(w, r, http.StatusBadRequest, oe)
		}
		return
	}
	s.proceed(w, r, ar, r.URL.Query(), s.sessionSubject(r), "")
}

// proceed shows the login form, the consent page, or (for a trusted client)
// issues the code.
func (s *Server) proceed(w http.ResponseWriter, r *http.Request, ar *authRequest, q url.Values, subject, loginError string) {
	if s.upstream != nil {
		s.proceedUpstream(w, r, ar, q, subject)
		return
	}
	if subject == "" {
		status := http.StatusOK
		if loginError != "" {
			status = http.StatusUnauthorized
		}
		s.showPage(w, r, status, ar, q, "login", "", loginError)
		return
	}
	if s.cfg.TrustedClient != nil && s.cfg.TrustedClient(ar.client) {
		s.issueCode(w, r, ar, subject)
		return
	}
	s.showPage(w, r, http.StatusOK, ar, q, "consent", subject, "")
}

// DefaultMaxFormBytes is the default of Config.MaxFormBytes: what an
// OAuth form holds (a client assertion JWT, a sealed authorization request,
// a code verifier) fits in a few KiB.
const DefaultMaxFormBytes = 8 << 10

func (s *Server) serveAuthorizePost(w http.ResponseWriter, r *http.Request) {
	if s.authorizeLimited(w, r) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.showError(w, r, http.StatusBadRequest, errf(oauth.InvalidRequest, "unreadable form"))
		return
	}
	// Compared canonically: browsers send the origin in lower case without
	// a default port (RFC 6454 §6.1), however the issuer spells its own.
	if o := r.Header.Get("Origin"); o != "" && !oauth.SameResource(o, s.issuer.Scheme+"://"+s.issuer.Host) {
		s.showError(w, r, http.StatusForbidden, errf(oauth.InvalidRequest, "cross-origin form post"))
		return
	}
	if !s.checkCSRF(r) {
		s.showError(w, r, http.StatusForbidden, errf(oauth.InvalidRequest, "the form expired or was not sent from this site; start again"))
		return
	}
	q, ok := s.openRequest(r.Context(), r.PostForm.Get("request"))
	if !ok {
		s.showError(w, r, http.StatusBadRequest, errf(oauth.InvalidRequest, "the authorization request expired or was altered; start again"))
		return
	}
	ar, redirectable, oe := s.checkAuthRequest(r.Context(), q)
	if oe != nil {
		if redirectable {
			s.redirectError(w, r, ar, oe)
		} else {
			s.showError(w, r, http.StatusBadRequest, oe)
		}
		return
	}
	subject := s.sessionSubject(r)
	switch r.PostForm.Get("action") {
	case "login":
		if s.cfg.Users == nil {
			s.showError(w, r, http.StatusBadRequest, errf(oauth.InvalidRequest, "no login here"))
			return
		}
		// Password guessing: Config.LoginRate attempts per address.
		if s.limited(w, r, s.logins, "login") {
			s.proceed(w, r, ar, q, "", "Too many attempts; try again in "+w.Header().Get("Retry-After")+" seconds.")
			return
		}
		sub, err := s.cfg.Users.Authenticate(r.Context(), r.PostForm.Get("username"), r.PostForm.Get("password"))
		if err != nil {
			s.log.Info("login failed", "username", r.PostForm.Get("username"))
			msg := "Wrong user name or password."
			if !errors.Is(err, ErrBadCredentials) {
				msg = "Signing in failed; try again."
			}
			s.proceed(w, r, ar, q, "", msg)
			return
		}
		s.setSession(w, sub)
		s.proceed(w, r, ar, q, sub, "")
	case "allow":
		if s.upstream != nil {
			// Consent first, then the provider (confused deputy).
			if s.spendConsent(w, r, q) {
				s.startUpstream(w, r, ar, q)
			}
			return
		}
		if subject == "" {
			s.proceed(w, r, ar, q, "", "Please sign in.")
			return
		}
		if !s.spendConsent(w, r, q) {
			return
		}
		s.issueCode(w, r, ar, subject)
	case "deny":
		if !s.spendConsent(w, r, q) {
			return
		}
		s.redirectError(w, r, ar, errf(oauth.AccessDenied, "the user denied the request"))
	default:
		s.showError(w, r, http.StatusBadRequest, errf(oauth.InvalidRequest, "unknown action"))
	}
}

// spendConsent records that the consent page whose sealed request is q was
// answered, so that the answer counts once: a form posted again (a
// replayed or double-submitted POST) gets an error page, not another code.
// It reports whether the caller may go on; if not, it has answered.
func (s *Server) spendConsent(w http.ResponseWriter, r *http.Request, q url.Values) bool {
	once := q.Get(onceParam)
	if once == "" {
		s.showError(w, r, http.StatusBadRequest, errf(oauth.InvalidRequest, "the authorization request expired or was altered; start again"))
		return false
	}
	ctx, cancel := s.storeContext(r.Context())
	defer cancel()
	err := s.store.UseNonce(ctx, "consent:"+once, s.now().Add(requestTTL+time.Minute))
	switch {
	case errors.Is(err, ErrAlreadyUsed):
		s.log.Warn("consent answered twice", "remote", r.RemoteAddr)
		s.showError(w, r, http.StatusBadRequest, errf(oauth.InvalidRequest, "this request was already answered; start again from the application"))
		return false
	case err != nil:
		s.log.Error("recording the consent failed", "error", err)
		s.showError(w, r, http.StatusServiceUnavailable, errf(oauth.TemporarilyUnavailable, "the server could not record the answer; try again"))
		return false
	}
	return true
}

// --- sessions, CSRF and the signed request

func (s *Server) cookieName(n string) string {
	if s.secure {
		return "__Host-" + n
	}
	return n
}

func (s *Server) setCookie(w http.ResponseWriter, name, value string, ttl time.Duration) {
	http.SetCookie(w, &http.Cookie{
		Name: s.cookieName(name), Value: value, Path: "/", MaxAge: int(ttl / time.Second),
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode,
	})
}

type sealed struct {
	V   string `json:"v"`
	Exp int64  `json:"exp"`
}

// seal signs a value with an expiry for a purpose.
func (s *Server) seal(purpose, v string, ttl time.Duration) string {
	b, _ := json.Marshal(sealed{V: v, Exp: s.now().Add(ttl).Unix()})
	p := base64.RawURLEncoding.EncodeToString(b)
	return p + "." + base64.RawURLEncoding.EncodeToString(s.mac(purpose, p))
}

func (s *Server) unseal(ctx context.Context, purpose, token string) (string, bool) {
	p, sig, ok := strings.Cut(token, ".")
	if !ok {
		return "", false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !s.verifyMAC(ctx, got, purpose, p) {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(p)
	var v sealed
	if err != nil || json.Unmarshal(b, &v) != nil || s.now().Unix() > v.Exp {
		return "", false
	}
	return v.V, true
}

func (s *Server) setSession(w http.ResponseWriter, subject string) {
	s.setCookie(w, "as_session", s.seal("session", subject, s.cfg.SessionTTL), s.cfg.SessionTTL)
}

func (s *Server) sessionSubject(r *http.Request) string {
	if s.cfg.DevUser != "" {
		return s.cfg.DevUser
	}
	c, err := r.Cookie(s.cookieName("as_session"))
	if err != nil {
		return ""
	}
	sub, _ := s.unseal(r.Context(), "session", c.Value)
	return sub
}

// csrfToken returns the form token for the request's CSRF cookie, setting
// the cookie first if there is none.
func (s *Server) csrfToken(w http.ResponseWriter, r *http.Request) string {
	v := ""
	if c, err := r.Cookie(s.cookieName("as_csrf")); err == nil && len(c.Value) >= 32 {
		v = c.Value
	} else {
		v, _ = randomToken(32)
		s.setCookie(w, "as_csrf", v, 12*time.Hour)
	}
	return base64.RawURLEncoding.EncodeToString(s.mac("csrf", v))
}

func (s *Server) checkCSRF(r *http.Request) bool {
	c, err := r.Cookie(s.cookieName("as_csrf"))
	if err != nil || len(c.Value) < 32 {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(r.PostForm.Get("csrf"))
	return err == nil && s.verifyMAC(r.Context(), got, "csrf", c.Value)
}

// requestTTL is how long a page's sealed request may be posted back.
const requestTTL = 15 * time.Minute

// onceParam names the random value each sealed request carries, which
// spendConsent spends; it is not an authorization parameter.
const onceParam = "_once"

// sealRequest seals the authorization parameters of q for a form, with a
// fresh single-use value: every page shown is answered at most once.
func (s *Server) sealRequest(q url.Values) string {
	keep := url.Values{}
	for _, p := range authParams {
		if v, ok := q[p]; ok {
			keep[p] = v
		}
	}
	once, err := randomToken(16)
	if err == nil {
		keep.Set(onceParam, once)
	}
	return s.seal("request", keep.Encode(), requestTTL)
}

func (s *Server) openRequest(ctx context.Context, token string) (url.Values, bool) {
	v, ok := s.unseal(ctx, "request", token)
	if !ok {
		return nil, false
	}
	q, err := url.ParseQuery(v)
	return q, err == nil
}
