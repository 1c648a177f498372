// Package oauthtest is the one authorization server of the tests of
// packages auth and authclient: small, written by hand, and honest about
// what it records, so that a test can both drive a flow and check what
// went over the wire.
//
// A [Server] serves, on an httptest server on 127.0.0.1:
//
//   - RFC 8414 metadata at the well-known location for its issuer (the
//     server's URL followed by IssuerPath);
//   - a JWKS of ES256 keys that can rotate ([Server.Rotate],
//     [Server.DropOld]);
//   - an authorization endpoint that grants every request at once with a
//     redirect (RFC 6749 §4.1.2), with the RFC 9207 iss parameter as
//     ISSMode says;
//   - a token endpoint for the authorization_code (with PKCE and
//     resource checked), refresh_token (rotating), client_credentials,
//     token exchange (RFC 8693) and JWT bearer (RFC 7523) grants, issuing
//     ES256 JWT access tokens whose aud is the resource;
//   - Dynamic Client Registration (RFC 7591), introspection (RFC 7662,
//     answers set with [Server.SetIntrospection]) and revocation (RFC
//     7009).
//
// Configure it in the function given to [New], before it starts. Every
// request is served under Mu, and recorded in the exported slices and
// maps; a test reads them under Mu while requests may still come, or
// freely once its flow is done. The server closes with the test.
package oauthtest

import (
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/mcpstack/mcpstack/oauth"
)

// Grant type identifiers served besides those of package oauth.
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	grantJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
)

// Server is the test authorization server. The configuration fields are
// read while it serves and must be set in New's configure function; the
// recorded fields are written under Mu.
type Server struct {
	// Srv is the HTTP server; a test may replace Srv.Config.Handler to
	// serve something else at the same address.
	Srv *httptest.Server

	// Configuration.

	// IssuerPath is appended to the server's URL to form its issuer, for
	// example "/tenant1"; "" gives a root issuer.
	IssuerPath string
	// NoPKCE leaves code_challenge_methods_supported out of the metadata.
	NoPKCE bool
	// CIMD advertises client_id_metadata_document_supported.
	CIMD bool
	// NoDCR leaves out the registration endpoint.
	NoDCR bool
	// ISSSupported advertises authorization_response_iss_parameter_supported.
	ISSSupported bool
	// ISSMode is the iss of the authorization response: "correct" (the
	// default), "wrong" (another issuer) or "omit".
	ISSMode string
	// AuthMethods is token_endpoint_auth_methods_supported; nil advertises
	// ["none"].
	AuthMethods []string
	// Scopes is scopes_supported, if not nil.
	Scopes []string
	// GrantTypes is grant_types_supported, if not nil.
	GrantTypes []string
	// TTL is the expires_in of issued tokens, in seconds; 0 leaves it out.
	TTL int
	// ClientPrefix prefixes registered client ids; "" means "dcr-".
	ClientPrefix string
	// Revocation serves a revocation endpoint.
	Revocation bool
	// ClientID and ClientSecret, when ClientSecret is set, are the only
	// credentials the client_credentials and token exchange grants and
	// introspection accept (HTTP Basic, or client_secret_post).
	ClientID, ClientSecret string

	// Mu guards what follows, and is held while a request is served.
	Mu sync.Mutex
	// Requests lists "METHOD URL" of every request.
	Requests []string
	// Registrations lists the client metadata of registrations.
	Registrations []oauth.ClientMetadata
	// Authorizations lists the query of every authorization request.
	Authorizations []url.Values
	// TokenForms lists the form of every token request, TokenAuth their
	// Authorization headers.
	TokenForms []url.Values
	TokenAuth  []string
	// Revocations lists the form of every revocation request.
	Revocations []url.Values
	// Tokens maps each live access token to its scope, Refresh each live
	// refresh token.
	Tokens, Refresh map[string][]string

	// Counters, readable without Mu.
	MetadataFetches, JWKSFetches, IntrospectionCalls atomic.Int32

	t          testing.TB
	n          int
	keys       []SigningKey // published; the last one signs
	codes      map[string]codeGrant
	intro      map[string]map[string]any
	generation int
}

// SigningKey is an ES256 key of the server's JWKS.
type SigningKey struct {
	KID  string
	Priv *ecdsa.PrivateKey
}

type codeGrant struct {
	challenge, resource, scope string
}

// New starts a server configured by configure (nil: the defaults), with
// one signing key, and closes it when t ends.
func New(t testing.TB, configure func(*Server)) *Server {
	s := &Server{t: t, ISSMode: "correct", Tokens: map[string][]string{}, Refresh: map[string][]string{},
		codes: map[string]codeGrant{}, intro: map[string]map[string]any{}}
	if configure != nil {
		configure(s)
	}
	s.Rotate()
	s.Srv = httptest.NewServer(s)
	t.Cleanup(s.Srv.Close)
	return s
}

// URL is the server's base URL.
func (s *Server) URL() string { return s.Srv.URL }

// Issuer is the server's issuer identifier.
func (s *Server) Issuer() string { return s.Srv.URL + s.IssuerPath }

// Metadata is the server's RFC 8414 metadata, as served. It reads only
// the configuration, and may be called under Mu or not.
func (s *Server) Metadata() map[string]any {
	base := s.Srv.URL
	m := map[string]any{
		"issuer":                   s.Issuer(),
		"authorization_endpoint":   base + "/authorize",
		"token_endpoint":           base + "/token",
		"jwks_uri":                 base + "/jwks",
		"introspection_endpoint":   base + "/introspect",
		"response_types_supported": []string{"code"},
	}
	if !s.NoPKCE {
		m["code_challenge_methods_supported"] = []string{oauth.MethodS256}
	}
	if !s.NoDCR {
		m["registration_endpoint"] = base + "/register"
	}
	if s.CIMD {
		m["client_id_metadata_document_supported"] = true
	}
	if s.ISSSupported {
		m["authorization_response_iss_parameter_supported"] = true
	}
	m["token_endpoint_auth_methods_supported"] = []string{oauth.AuthMethodNone}
	if s.AuthMethods != nil {
		m["token_endpoint_auth_methods_supported"] = s.AuthMethods
	}
	if s.Scopes != nil {
		m["scopes_supported"] = s.Scopes
	}
	if s.GrantTypes != nil {
		m["grant_types_supported"] = s.GrantTypes
	}
	if s.Revocation {
		m["revocation_endpoint"] = base + "/revoke"
	}
	return m
}

// ServeHTTP serves the server's endpoints, under Mu: a test that replaced
// Srv.Config.Handler hands it what it does not serve itself.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Requests = append(s.Requests, r.Method+" "+r.URL.String())
	r.ParseForm()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == oauth.WellKnownAuthorizationServer+s.IssuerPath:
		s.MetadataFetches.Add(1)
		WriteJSON(w, http.StatusOK, s.Metadata())
	case r.Method == http.MethodGet && r.URL.Path == "/jwks":
		s.JWKSFetches.Add(1)
		WriteJSON(w, http.StatusOK, s.jwks())
	case r.Method == http.MethodGet && r.URL.Path == "/authorize":
		s.authorize(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/token":
		s.token(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/register" && !s.NoDCR:
		s.register(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/introspect":
		s.introspect(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/revoke" && s.Revocation:
		s.Revocations = append(s.Revocations, r.PostForm)
		delete(s.Tokens, r.PostForm.Get("token"))
		delete(s.Refresh, r.PostForm.Get("token"))
		w.WriteHeader(http.StatusOK)
	default:
		http.NotFound(w, r)
	}
}

// WriteJSON answers v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// fail answers an OAuth error (RFC 6749 §5.2).
func fail(w http.ResponseWriter, status int, code oauth.ErrorCode) {
	WriteJSON(w, status, oauth.ErrorResponse{Code: code})
}

// jwks is the published key set, with a key of an unknown type first: it
// must not spoil the set (RFC 7517 §5).
func (s *Server) jwks() map[string][]json.RawMessage {
	keys := []json.RawMessage{json.RawMessage(`{"kty":"unknown","kid":"x"}`)}
	for _, k := range s.keys {
		raw, _ := json.Marshal(jose.JSONWebKey{Key: &k.Priv.PublicKey, KeyID: k.KID, Algorithm: "ES256", Use: "sig"})
		keys = append(keys, raw)
	}
	return map[string][]json.RawMessage{"keys": keys}
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.Authorizations = append(s.Authorizations, q)
	red, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || q.Get("response_type") != oauth.ResponseTypeCode {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	s.n++
	code := fmt.Sprintf("code-%d", s.n)
	s.codes[code] = codeGrant{challenge: q.Get("code_challenge"), resource: q.Get("resource"), scope: q.Get("scope")}
	rq := red.Query()
	rq.Set("code", code)
	rq.Set("state", q.Get("state"))
	switch s.ISSMode {
	case "correct":
		rq.Set("iss", s.Issuer())
	case "wrong":
		rq.Set("iss", "https://evil.example")
	}
	red.RawQuery = rq.Encode()
	http.Redirect(w, r, red.String(), http.StatusFound)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var md oauth.ClientMetadata
	if err := json.NewDecoder(r.Body).Decode(&md); err != nil {
		fail(w, http.StatusBadRequest, "invalid_client_metadata")
		return
	}
	s.Registrations = append(s.Registrations, md)
	prefix := s.ClientPrefix
	if prefix == "" {
		prefix = "dcr-"
	}
	resp := map[string]any{"client_id": fmt.Sprintf("%s%d", prefix, len(s.Registrations)), "redirect_uris": md.RedirectURIs,
		"token_endpoint_auth_method": md.TokenEndpointAuthMethod}
	if md.TokenEndpointAuthMethod != oauth.AuthMethodNone {
		resp["client_secret"] = "dcr-secret"
	}
	WriteJSON(w, http.StatusCreated, resp)
}

// confidential reports whether r carries ClientID and ClientSecret, when
// the server has a secret to check.
func (s *Server) confidential(r *http.Request) bool {
	if s.ClientSecret == "" {
		return true
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	return id == s.ClientID && secret == s.ClientSecret && !(basic && r.PostForm.Has("client_secret"))
}

// token serves the grants; issued access tokens are JWTs whose aud is the
// resource (or audience) asked for.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	s.TokenForms = append(s.TokenForms, f)
	s.TokenAuth = append(s.TokenAuth, r.Header.Get("Authorization"))
	var sub, aud string
	var scope []string
	switch f.Get("grant_type") {
	case oauth.GrantAuthorizationCode:
		g, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		if !ok || (g.challenge != "" && !oauth.VerifyS256(f.Get("code_verifier"), g.challenge)) || f.Get("resource") != g.resource {
			fail(w, http.StatusBadRequest, oauth.InvalidGrant)
			return
		}
		sub, aud, scope = "user-1", g.resource, oauth.ParseScope(g.scope)
	case "refresh_token":
		sc, ok := s.Refresh[f.Get("refresh_token")]
		if !ok {
			fail(w, http.StatusBadRequest, oauth.InvalidGrant)
			return
		}
		delete(s.Refresh, f.Get("refresh_token")) // rotation
		sub, aud, scope = "user-1", f.Get("resource"), sc
	case oauth.GrantClientCredentials, grantTokenExchange, grantJWTBearer:
		if !s.confidential(r) {
			fail(w, http.StatusUnauthorized, oauth.InvalidClient)
			return
		}
		sub, aud, scope = s.ClientID, f.Get("resource"), oauth.ParseScope(f.Get("scope"))
		if aud == "" {
			aud = f.Get("audience")
		}
	default:
		fail(w, http.StatusBadRequest, oauth.UnsupportedGrantType)
		return
	}
	s.n++
	c := s.Claims(sub, aud)
	c["scope"] = oauth.JoinScope(scope)
	c["jti"] = fmt.Sprintf("t%d-%d", s.n, time.Now().UnixNano())
	at := s.signWith(s.keys[len(s.keys)-1], "at+jwt", c)
	rt := fmt.Sprintf("rt-%d", s.n)
	s.Tokens[at] = scope
	s.Refresh[rt] = scope
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt, "scope": oauth.JoinScope(scope)}
	if s.TTL > 0 {
		resp["expires_in"] = s.TTL
	}
	WriteJSON(w, http.StatusOK, resp)
}

// SetIntrospection sets the introspection answer for token; unknown
// tokens are inactive.
func (s *Server) SetIntrospection(token string, answer map[string]any) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.intro[token] = answer
}

func (s *Server) introspect(w http.ResponseWriter, r *http.Request) {
	s.IntrospectionCalls.Add(1)
	if !s.confidential(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="introspection"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	ans, ok := s.intro[r.PostForm.Get("token")]
	if !ok {
		ans = map[string]any{"active": false}
	}
	WriteJSON(w, http.StatusOK, ans)
}

// ScopesOf returns the scope of a live access token.
func (s *Server) ScopesOf(tok string) ([]string, bool) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	sc, ok := s.Tokens[tok]
	return sc, ok
}

// Count returns how many requests began with prefix ("METHOD URL").
func (s *Server) Count(prefix string) int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	n := 0
	for _, r := range s.Requests {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}
