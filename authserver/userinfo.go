package authserver

import (
	"net/http"
	"slices"
	"strings"

	"github.com/mcpstack/mcpstack/oauth"
)

// pathUserInfo is the user-info endpoint (OpenID Connect Core §5.3).
const pathUserInfo = "/userinfo"

// UserInfo is the user-info response (OpenID Connect Core §5.3.2): the
// subject the access token was issued for and the scope granted with it.
// It is what makes this server usable as a plain OAuth upstream of
// another authorization server (UpstreamConfig.UserInfoURL).
type UserInfo struct {
	Subject string `json:"sub"`
	Scope   string `json:"scope,omitempty"`
}

// UserInfoURL returns the user-info endpoint's URL. It is also the only
// resource (RFC 8707) whose access tokens the endpoint accepts: a client
// that wants to learn who signed in asks for resource=UserInfoURL (another
// authorization server does so with UpstreamConfig.Resource), and a token
// issued for an MCP server is refused there, so that the MCP server cannot
// replay its users' tokens to learn more than it was given.
func (s *Server) UserInfoURL() string { return s.endpoint(pathUserInfo) }

// serveUserInfo answers GET and POST with a bearer access token in the
// Authorization header (RFC 6750 §2.1). A token in the query is refused
// (RFC 6750 §2.3 is the method this server does not support: URLs end up
// in logs and Referer headers), and so is one in the form body, which
// would make a second way in for no client that needs it. The token is
// checked as introspection checks it (signature, issuer, expiry,
// revocation of its grant), then its audience (see [Server.UserInfoURL]).
// Failures are 401 with a WWW-Authenticate challenge (RFC 6750 §3).
func (s *Server) serveUserInfo(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Query().Has("access_token") {
		s.userInfoChallenge(w, http.StatusBadRequest, "invalid_request", "the access token must be sent in the Authorization header")
		return
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || strings.ContainsAny(tok, " \t") {
		if r.Header.Get("Authorization") == "" {
			// RFC 6750 §3.1: a request without authentication gets no error code.
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+s.cfg.Issuer+`"`)
			http.Error(w, "bearer access token required", http.StatusUnauthorized)
			return
		}
		s.userInfoChallenge(w, http.StatusUnauthorized, "invalid_request", "malformed Authorization header")
		return
	}
	ac, err := s.VerifyAccessToken(r.Context(), tok)
	if err != nil {
		s.userInfoChallenge(w, http.StatusUnauthorized, "invalid_token", "the access token is invalid, expired or revoked")
		return
	}
	self := s.UserInfoURL()
	if !slices.ContainsFunc(ac.Audience, func(a string) bool { return oauth.SameResource(a, self) }) {
		s.userInfoChallenge(w, http.StatusUnauthorized, "invalid_token", "the access token was not issued for the user-info endpoint")
		return
	}
	writeJSON(w, http.StatusOK, UserInfo{Subject: ac.Subject, Scope: ac.Scope})
}

// userInfoChallenge writes an RFC 6750 §3 error: the challenge carries the
// code, the body repeats it for people reading it.
func (s *Server) userInfoChallenge(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="`+s.cfg.Issuer+`", error="`+code+`", error_description="`+desc+`"`)
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}
