package authserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpstack/mcpstack/oauth"
)

// Config configures a [Server]. Issuer and Store are required, and so is a
// way to sign users in: Users, or DevUser for a development server.
type Config struct {
	// Issuer is the server's issuer identifier (RFC 8414): an https URL, or
	// http on a loopback host for development, with no query or fragment.
	// Endpoints live under its path.
	Issuer string
	// Store keeps clients, codes, tokens and signing keys.
	Store Store

	// Users signs users in with the login form.
	Users Authenticator
	// DevUser, if set, signs every visitor in as this subject with no login
	// form. For development on one machine only.
	DevUser string

	// Resources, if not empty, lists the resource indicators (RFC 8707)
	// the server issues tokens for; others are refused with invalid_target.
	// Comparison uses [oauth.SameResource].
	Resources []string
	// Scopes lists scopes_supported. If not empty, a request for any other
	// scope is refused with invalid_scope.
	Scopes []string

	// TrustedClient, if set, reports whether a client is first-party; its
	// users are not asked for consent.
	TrustedClient func(Client) bool

	// CIMD fetches Client ID Metadata Documents. Nil disables URL client
	// identifiers.
	CIMD *CIMDFetcher

	// Lifetimes. Zero values mean: codes 1 minute, access tokens 10
	// minutes, refresh tokens 30 days, login sessions 1 hour, retired keys
	// kept in the JWKS for 24 hours.
	CodeTTL, AccessTokenTTL, RefreshTokenTTL, SessionTTL, KeyRetention time.Duration

	// RegistrationRate and RegistrationBurst bound Dynamic Client
	// Registration per remote address. Zero values mean 10 per hour with a
	// burst of 5. A negative RegistrationRate disables registration.
	RegistrationRate  rate.Limit
	RegistrationBurst int

	// MaxFormBytes bounds the form-encoded body of the token, revocation,
	// introspection and authorization (login and consent) endpoints, read
	// before the client or the user is authenticated: a longer body is
	// refused with invalid_request (400) and no more than MaxFormBytes+1
	// bytes of it are read. Zero means DefaultMaxFormBytes.
	MaxFormBytes int64

	// CookieKey signs login sessions and CSRF tokens (32 bytes or more).
	// If nil a random key is used, so sessions end when the process does.
	CookieKey []byte

	// CORSOrigins lists the origins of pages allowed to call the token,
	// registration and revocation endpoints from a browser, as public
	// clients running in a page do (they use PKCE; the endpoints read no
	// cookies, so no credentials are ever allowed): each scheme://host[:port]
	// with an http or https scheme, or "*" alone for any origin. Empty
	// allows none. The metadata and the JWKS are public documents that
	// any page may read, whatever this says; the authorization endpoint is
	// visited by the browser itself and needs no CORS.
	CORSOrigins []string

	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Logger receives one line per refused request and per security event;
	// nil means slog.Default.
	Logger *slog.Logger
}

// Server is an OAuth 2.1 authorization server for MCP. It is an
// http.Handler: mount it on the paths [Server.Paths] lists, or at the root
// of a host.
type Server struct {
	cfg      Config
	store    Store
	issuer   *url.URL
	prefix   string // issuer path without trailing slash
	mux      *http.ServeMux
	keys     keyring
	log      *slog.Logger
	secure   bool
	limiters *limiterSet
	logins   *limiterSet
	cors     corsPolicies
}

// Endpoint paths under the issuer.
const (
	pathAuthorize  = "/authorize"
	pathToken      = "/token"
	pathRegister   = "/register"
	pathJWKS       = "/jwks.json"
	pathIntrospect = "/introspect"
	pathRevoke     = "/revoke"
	pathStyle      = "/assets/consent.css"
)

// New checks the configuration, loads (or creates) the signing keys and
// returns a server.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("authserver: Config.Store is required")
	}
	if cfg.Users == nil && cfg.DevUser == "" {
		return nil, errors.New("authserver: Config.Users or Config.DevUser is required")
	}
	u, err := url.Parse(cfg.Issuer)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("authserver: issuer %q must be an absolute URL without query, fragment or userinfo", cfg.Issuer)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && oauth.IsLoopbackRedirect(cfg.Issuer):
	default:
		return nil, fmt.Errorf("authserver: issuer %q must use https (or http on a loopback host)", cfg.Issuer)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.CodeTTL, time.Minute)
	def(&cfg.AccessTokenTTL, 10*time.Minute)
	def(&cfg.RefreshTokenTTL, 30*24*time.Hour)
	def(&cfg.SessionTTL, time.Hour)
	def(&cfg.KeyRetention, 24*time.Hour)
	if cfg.RegistrationRate == 0 {
		cfg.RegistrationRate = rate.Every(6 * time.Minute)
	}
	if cfg.RegistrationBurst <= 0 {
		cfg.RegistrationBurst = 5
	}
	if cfg.MaxFormBytes <= 0 {
		cfg.MaxFormBytes = DefaultMaxFormBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.CookieKey == nil {
		cfg.CookieKey = make([]byte, 32)
		if _, err := rand.Read(cfg.CookieKey); err != nil {
			return nil, err
		}
	} else if len(cfg.CookieKey) < 32 {
		return nil, errors.New("authserver: Config.CookieKey must be at least 32 bytes")
	}
	cfg.Scopes = slices.Clone(cfg.Scopes)
	cfg.CORSOrigins = slices.Clone(cfg.CORSOrigins)
	policies, err := newCORSPolicies(cfg.CORSOrigins)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		store:    cfg.Store,
		issuer:   u,
		prefix:   strings.TrimSuffix(u.Path, "/"),
		log:      cfg.Logger.With("component", "authserver"),
		secure:   u.Scheme == "https",
		limiters: &limiterSet{m: make(map[string]*limiterEntry)},
		logins:   &limiterSet{m: make(map[string]*limiterEntry)},
		cors:     policies,
	}
	if err := s.loadKeys(ctx); err != nil {
		return nil, err
	}
	s.mux = http.NewServeMux()
	for _, p := range s.metadataPaths() {
		s.handlePublic(p, s.serveMetadata)
	}
	s.mux.HandleFunc("GET "+s.prefix+pathAuthorize, s.serveAuthorize)
	s.mux.HandleFunc("POST "+s.prefix+pathAuthorize, s.serveAuthorizePost)
	s.handleClientPost(s.prefix+pathToken, s.serveToken)
	s.handleClientPost(s.prefix+pathRegister, s.serveRegister)
	s.handlePublic(s.prefix+pathJWKS, s.serveJWKS)
	s.mux.HandleFunc("POST "+s.prefix+pathIntrospect, s.serveIntrospect)
	s.handleClientPost(s.prefix+pathRevoke, s.serveRevoke)
	s.mux.HandleFunc("GET "+s.prefix+pathStyle, serveStyle)
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Issuer returns the issuer identifier.
func (s *Server) Issuer() string { return s.cfg.Issuer }

// Paths returns every path the server answers, for mounting it on a mux
// shared with other handlers (such as an MCP endpoint).
func (s *Server) Paths() []string {
	p := s.metadataPaths()
	for _, e := range []string{pathAuthorize, pathToken, pathRegister, pathJWKS, pathIntrospect, pathRevoke, pathStyle} {
		p = append(p, s.prefix+e)
	}
	return p
}

func (s *Server) metadataPaths() []string {
	if s.prefix == "" {
		return []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"}
	}
	return []string{
		"/.well-known/oauth-authorization-server" + s.prefix,
		"/.well-known/openid-configuration" + s.prefix,
		s.prefix + "/.well-known/openid-configuration",
	}
}

func (s *Server) endpoint(p string) string {
	return s.issuer.Scheme + "://" + s.issuer.Host + s.prefix + p
}

func (s *Server) now() time.Time { return s.cfg.Now() }

// Metadata returns the server's metadata document (RFC 8414), also served
// as OpenID Connect discovery.
func (s *Server) Metadata() oauth.AuthorizationServerMetadata {
	m := oauth.AuthorizationServerMetadata{
		Issuer:                 s.cfg.Issuer,
		AuthorizationEndpoint:  s.endpoint(pathAuthorize),
		TokenEndpoint:          s.endpoint(pathToken),
		JWKSURI:                s.endpoint(pathJWKS),
		ScopesSupported:        s.cfg.Scopes,
		ResponseTypesSupported: []string{oauth.ResponseTypeCode},
		ResponseModesSupported: []string{"query"},
		GrantTypesSupported:    []string{oauth.GrantAuthorizationCode, oauth.GrantRefreshToken, oauth.GrantClientCredentials},
		TokenEndpointAuthMethodsSupported: []string{oauth.AuthMethodNone, oauth.AuthMethodClientSecretBasic,
			oauth.AuthMethodClientSecretPost, oauth.AuthMethodPrivateKeyJWT},
		TokenEndpointAuthSigningAlgValuesSupported: assertionAlgNames(),
		RevocationEndpoint:                         s.endpoint(pathRevoke),
		IntrospectionEndpoint:                      s.endpoint(pathIntrospect),
		CodeChallengeMethodsSupported:              []string{oauth.MethodS256},
		ClientIDMetadataDocumentSupported:          s.cfg.CIMD != nil,
		AuthorizationResponseIssParameterSupported: true,
		SubjectTypesSupported:                      []string{"public"},
		IDTokenSigningAlgValuesSupported:           []string{"ES256"},
	}
	if s.cfg.RegistrationRate > 0 {
		m.RegistrationEndpoint = s.endpoint(pathRegister)
	}
	return m
}

func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSON(w, http.StatusOK, s.Metadata())
}

func (s *Server) serveJWKS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("Content-Type", "application/jwk-set+json")
	_ = json.NewEncoder(w).Encode(s.JWKS())
}

// writeJSON writes v as a JSON body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// writeError writes an OAuth error response (RFC 6749 §5.2) with the
// status the code usually takes, or status if non-zero.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, status int, code oauth.ErrorCode, desc string) {
	if status == 0 {
		status = code.HTTPStatus()
	}
	s.log.Info("refused", "path", r.URL.Path, "error", string(code), "description", desc)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, status, oauth.ErrorResponse{Code: code, Description: desc})
}

// randomToken returns n random bytes, base64url encoded.
func randomToken(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// hashToken is the key under which codes and refresh tokens are stored.
func hashToken(t string) string {
	h := sha256.Sum256([]byte(t))
	return hex.EncodeToString(h[:])
}

// HashSecret returns the value to store in Client.SecretHash for a client
// secret.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

func (s *Server) mac(parts ...string) []byte {
	m := hmac.New(sha256.New, s.cfg.CookieKey)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// limiterSet holds one registration rate limiter per remote address.
type limiterSet struct {
	mu sync.Mutex
	m  map[string]*limiterEntry
}

type limiterEntry struct {
	l    *rate.Limiter
	seen time.Time
}

const maxLimiters = 10000

func (ls *limiterSet) allow(key string, now time.Time, r rate.Limit, burst int) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	e, ok := ls.m[key]
	if !ok {
		if len(ls.m) >= maxLimiters {
			for k, v := range ls.m {
				if now.Sub(v.seen) > time.Hour {
					delete(ls.m, k)
				}
			}
			if len(ls.m) >= maxLimiters {
				return false
			}
		}
		e = &limiterEntry{l: rate.NewLimiter(r, burst)}
		ls.m[key] = e
	}
	e.seen = now
	return e.l.AllowN(now, 1)
}
