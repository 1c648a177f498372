package authserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpstack/mcpstack/internal/clientip"
	"github.com/mcpstack/mcpstack/internal/ratelimit"
	"github.com/mcpstack/mcpstack/oauth"
)

// Config configures a [Server]. Issuer and Store are required, and so is a
// way to sign users in: Users, DevUser for a development server, or
// Upstream to delegate sign-in to another provider.
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
	// Upstream, if set, signs users in through another OAuth 2.1 or
	// OpenID Connect provider under one static client id, with the
	// confused-deputy defences of the MCP security best practices: see
	// [UpstreamConfig]. It excludes Users and DevUser. Redirect URIs are
	// then compared as exact strings, with no loopback port latitude.
	Upstream *UpstreamConfig

	// Resources, if not empty, lists the resource indicators (RFC 8707)
	// the server issues tokens for; others are refused with invalid_target.
	// Comparison uses [oauth.SameResource]. The user-info endpoint
	// ([Server.UserInfoURL]) is always allowed.
	Resources []string
	// Scopes lists scopes_supported. If not empty, a request for any other
	// scope is refused with invalid_scope.
	Scopes []string

	// TrustedClient, if set, reports whether a client is first-party; its
	// users are not asked for consent.
	TrustedClient func(Client) bool

	// ScopePolicy, if set, decides whether a client may ask for the
	// scopes it requests (already checked against Scopes) at the
	// authorization endpoint and in the client_credentials grant; an error
	// refuses the request with invalid_scope. Nil lets every client ask
	// for any scope the server supports, whatever scope it registered: a
	// registered scope (RFC 7591 §2) describes the client, it does not cap
	// what the user may consent to later (step-up authorization, MCP
	// authorization §"Scope Challenge Handling"). [RegisteredScopesOnly]
	// restores that cap. Called concurrently, on the request's goroutine.
	ScopePolicy func(ctx context.Context, c Client, requested []string) error

	// StoreTimeout bounds a store change that must run to its end even
	// when the client has gone away: redeeming a code, rotating a refresh
	// token, revoking a grant, spending a consent. Zero means 10 seconds.
	StoreTimeout time.Duration

	// CIMD fetches Client ID Metadata Documents. Nil disables URL client
	// identifiers.
	CIMD *CIMDFetcher

	// Lifetimes. Zero values mean: codes 1 minute, access tokens 10
	// minutes, refresh tokens 30 days, login sessions 1 hour, retired keys
	// kept in the JWKS for 24 hours.
	CodeTTL, AccessTokenTTL, RefreshTokenTTL, SessionTTL, KeyRetention time.Duration

	// RegistrationRate and RegistrationBurst bound Dynamic Client
	// Registration per client address. Zero values mean 10 per hour with a
	// burst of 5 (with DevUser set: 1 per second with a burst of 100, as a
	// test suite registering a client per test needs). A negative
	// RegistrationRate disables registration.
	RegistrationRate  rate.Limit
	RegistrationBurst int
	// LoginRate and LoginBurst bound password attempts on the login form
	// per client address, against guessing. Zero values mean 10 per minute
	// with a burst of 10; a negative LoginRate means no limit.
	LoginRate  rate.Limit
	LoginBurst int
	// AuthorizeRate and AuthorizeBurst bound requests to the authorization
	// endpoint per client address; each may fetch a Client ID Metadata
	// Document. Zero values mean 1 per second with a burst of 30 (with
	// DevUser: 10 per second, burst 300); a negative AuthorizeRate means no
	// limit.
	AuthorizeRate  rate.Limit
	AuthorizeBurst int
	// Servers on a Store that implements SharedRateLimiter (store/redis,
	// store/postgres) count each address's events together, so that
	// replicas behind one address grant it the budget once, not once
	// each; other stores count per server.
	//
	// RateLimitKeys bounds the client addresses each per-address limiter
	// remembers. Every Retry-After sent with a refusal is the time until
	// the address may try again, rounded up to whole seconds. When it is full the least recently seen address is
	// forgotten; a new address is never refused for lack of room. Zero
	// means 10,000. IPv6 addresses are counted per /64.
	RateLimitKeys int
	// TrustedProxies lists the reverse proxies (CIDR prefixes) whose
	// forwarding header gives the client address for the per-address
	// limits. A request from any other peer is keyed on the peer address,
	// whatever headers it carries. Empty trusts none: behind a proxy, all
	// clients would then share the proxy's budget.
	TrustedProxies []netip.Prefix
	// ForwardedHeader names the header the trusted proxies set:
	// "X-Forwarded-For" (the default when empty) or "Forwarded" (RFC
	// 7239). The other is ignored.
	ForwardedHeader string

	// MaxClientMetadataBytes bounds a registration request's body and the
	// metadata stored for the client; MaxRedirectURIs bounds its
	// redirect_uris. Zero values mean DefaultMaxClientMetadataBytes and
	// DefaultMaxRedirectURIs.
	MaxClientMetadataBytes int
	MaxRedirectURIs        int
	// UnusedClientTTL is how long a client registered by Dynamic Client
	// Registration is kept if it is never used (no code issued for it, no
	// token endpoint request of it succeeding); PruneInterval is how often,
	// at most, the server looks for such clients to delete. Zero values
	// mean DefaultUnusedClientTTL and DefaultPruneInterval; a negative
	// UnusedClientTTL keeps every client.
	UnusedClientTTL time.Duration
	PruneInterval   time.Duration

	// MaxFormBytes bounds the form-encoded body of the token, revocation,
	// introspection and authorization (login and consent) endpoints, read
	// before the client or the user is authenticated: a longer body is
	// refused with invalid_request (400) and no more than MaxFormBytes+1
	// bytes of it are read. Zero means DefaultMaxFormBytes.
	MaxFormBytes int64

	// CookieKey, if set, is the only key that signs login sessions, CSRF
	// tokens and the request sealed in the forms (32 bytes or more); the
	// embedding program keeps it and shares it between its servers. If
	// nil, the keys are kept in the Store: the first server on an empty
	// store creates one, every server on the store signs with the newest
	// and verifies with it and the older ones, so logins survive a restart
	// and are shared by replicas; [Server.RotateCookieKey] adds a key.
	CookieKey []byte
	// CookieKeyRetention is how long a cookie key still verifies after its
	// successor was created: a rotation does not sign anyone out who
	// signed in up to this long before it. Zero means 24 hours (the login
	// session lasts SessionTTL, a CSRF cookie 12 hours).
	CookieKeyRetention time.Duration

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
	// Logger receives one line per refused request and per security event.
	// Nil discards them, as in every package of this module: pass
	// slog.Default() to log where the program logs.
	Logger *slog.Logger
}

// DefaultStoreTimeout is the default of [Config.StoreTimeout].
const DefaultStoreTimeout = 10 * time.Second

// ErrScopeNotRegistered is what [RegisteredScopesOnly] returns for a scope
// the client did not register.
var ErrScopeNotRegistered = errors.New("authserver: scope not registered for this client")

// RegisteredScopesOnly is a [Config.ScopePolicy] that lets a client which
// registered a scope ask only for scopes within it; one that registered none
// may ask for any. It is the policy of deployments that want registration to
// cap a client's scopes, at the price of step-up authorization for clients
// that register the scope of their first challenge.
func RegisteredScopesOnly(_ context.Context, c Client, requested []string) error {
	if c.Metadata.Scope != "" && !oauth.HasAllScopes(oauth.ParseScope(c.Metadata.Scope), requested) {
		return ErrScopeNotRegistered
	}
	return nil
}

// Defaults of the [Config] bounds on registered clients.
const (
	DefaultMaxClientMetadataBytes = 8 << 10
	DefaultMaxRedirectURIs        = 10
	DefaultUnusedClientTTL        = 7 * 24 * time.Hour
	DefaultPruneInterval          = time.Hour
)

// Server is an OAuth 2.1 authorization server for MCP. It is an
// http.Handler: mount it on the paths [Server.Paths] lists, or at the root
// of a host.
type Server struct {
	cfg        Config
	store      Store
	issuer     *url.URL
	prefix     string // issuer path without trailing slash
	mux        *http.ServeMux
	keys       keyring
	cookies    cookieKeyring
	log        *slog.Logger
	secure     bool
	clientIP   clientip.Resolver
	registers  *ratelimit.Limiter
	logins     *ratelimit.Limiter
	authorizes *ratelimit.Limiter
	cors       corsPolicies
	upstream   *upstream    // nil without Config.Upstream
	lastPrune  atomic.Int64 // Unix ns of the last PruneClients run
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

// NewServer checks the configuration, loads (or creates) the signing keys and
// returns a server.
func NewServer(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("authserver: Config.Store is required")
	}
	switch {
	case cfg.Upstream != nil && (cfg.Users != nil || cfg.DevUser != ""):
		return nil, errors.New("authserver: Config.Upstream excludes Config.Users and Config.DevUser")
	case cfg.Upstream == nil && cfg.Users == nil && cfg.DevUser == "":
		return nil, errors.New("authserver: Config.Users, Config.DevUser or Config.Upstream is required")
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
	def(&cfg.StoreTimeout, DefaultStoreTimeout)
	if cfg.UnusedClientTTL == 0 {
		cfg.UnusedClientTTL = DefaultUnusedClientTTL
	}
	def(&cfg.PruneInterval, DefaultPruneInterval)
	if cfg.MaxClientMetadataBytes <= 0 {
		cfg.MaxClientMetadataBytes = DefaultMaxClientMetadataBytes
	}
	if cfg.MaxRedirectURIs <= 0 {
		cfg.MaxRedirectURIs = DefaultMaxRedirectURIs
	}
	if err := cfg.defaultLimits(); err != nil {
		return nil, err
	}
	if cfg.MaxFormBytes <= 0 {
		cfg.MaxFormBytes = DefaultMaxFormBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	def(&cfg.CookieKeyRetention, 24*time.Hour)
	if cfg.CookieKey != nil && len(cfg.CookieKey) < 32 {
		return nil, errors.New("authserver: Config.CookieKey must be at least 32 bytes")
	}
	cfg.CookieKey = slices.Clone(cfg.CookieKey)
	cfg.Scopes = slices.Clone(cfg.Scopes)
	cfg.TrustedProxies = slices.Clone(cfg.TrustedProxies)
	cfg.CORSOrigins = slices.Clone(cfg.CORSOrigins)
	policies, err := newCORSPolicies(cfg.CORSOrigins)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:        cfg,
		store:      cfg.Store,
		issuer:     u,
		prefix:     strings.TrimSuffix(u.Path, "/"),
		log:        cfg.Logger.With("component", "authserver"),
		secure:     u.Scheme == "https",
		clientIP:   clientip.Resolver{Trusted: slices.Clone(cfg.TrustedProxies), Header: cfg.ForwardedHeader},
		registers:  ratelimit.New(cfg.RegistrationRate, cfg.RegistrationBurst, cfg.RateLimitKeys),
		logins:     ratelimit.New(cfg.LoginRate, cfg.LoginBurst, cfg.RateLimitKeys),
		authorizes: ratelimit.New(cfg.AuthorizeRate, cfg.AuthorizeBurst, cfg.RateLimitKeys),
		cors:       policies,
	}
	if cfg.Upstream != nil {
		if s.upstream, err = newUpstream(*cfg.Upstream, cfg.Now); err != nil {
			return nil, err
		}
	}
	if err := s.loadKeys(ctx); err != nil {
		return nil, err
	}
	if err := s.loadCookieKeys(ctx); err != nil {
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
	s.mux.HandleFunc("GET "+s.prefix+pathUserInfo, s.serveUserInfo)
	s.mux.HandleFunc("POST "+s.prefix+pathUserInfo, s.serveUserInfo)
	s.mux.HandleFunc("GET "+s.prefix+pathStyle, serveStyle)
	if s.upstream != nil {
		s.mux.HandleFunc("GET "+s.prefix+pathUpstreamCallback, s.serveUpstreamCallback)
	}
	return s, nil
}

// ServeHTTP implements http.Handler. Once a minute, a request first
// rereads the signing and cookie keys from the store, so that servers
// sharing a store follow each other's rotations.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.refreshKeys(r.Context())
	s.mux.ServeHTTP(w, r)
}

// Issuer returns the issuer identifier.
func (s *Server) Issuer() string { return s.cfg.Issuer }

// Paths returns every path the server answers, for mounting it on a mux
// shared with other handlers (such as an MCP endpoint).
func (s *Server) Paths() []string {
	p := s.metadataPaths()
	for _, e := range []string{pathAuthorize, pathToken, pathRegister, pathJWKS, pathIntrospect, pathRevoke, pathUserInfo, pathStyle} {
		p = append(p, s.prefix+e)
	}
	if s.upstream != nil {
		p = append(p, s.prefix+pathUpstreamCallback)
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
		UserinfoEndpoint:                           s.endpoint(pathUserInfo),
		CodeChallengeMethodsSupported:              []string{oauth.MethodS256},
		ClientIDMetadataDocumentSupported:          s.cfg.CIMD != nil,
		AuthorizationResponseIssParameterSupported: true,
		SubjectTypesSupported:                      []string{"public"},
		IDTokenSigningAlgValuesSupported:           []string{"ES256"},
	}
	if s.cfg.RegistrationRate > 0 {
		m.RegistrationEndpoint = s.endpoint(pathRegister)
	}
	if s.upstream != nil && len(s.upstream.cfg.ExchangeClients) > 0 {
		m.GrantTypesSupported = append(m.GrantTypesSupported, oauth.GrantTokenExchange)
	}
	return m
}

func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSON(w, http.StatusOK, s.Metadata())
}

func (s *Server) serveJWKS(w http.ResponseWriter, r *http.Request) {
	// At most a second stale, so that a key another server on the store
	// rotated in is served here too before any resource server needs it.
	s.reloadKeysSoon(r.Context())
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

// defaultLimits fills in the rate limits left zero and checks the rest.
func (cfg *Config) defaultLimits() error {
	dev := cfg.DevUser != ""
	limit := func(r *rate.Limit, b *int, prod rate.Limit, prodBurst int, devRate rate.Limit, devBurst int) {
		if dev {
			prod, prodBurst = devRate, devBurst
		}
		if *r == 0 {
			*r = prod
		}
		if *r < 0 {
			*r = rate.Inf
		}
		if *b <= 0 {
			*b = prodBurst
		}
	}
	registration := cfg.RegistrationRate
	limit(&cfg.RegistrationRate, &cfg.RegistrationBurst, rate.Every(6*time.Minute), 5, 1, 100)
	if registration < 0 {
		cfg.RegistrationRate = -1 // registration disabled, as documented
	}
	limit(&cfg.LoginRate, &cfg.LoginBurst, rate.Every(6*time.Second), 10, rate.Every(6*time.Second), 10)
	limit(&cfg.AuthorizeRate, &cfg.AuthorizeBurst, 1, 30, 10, 300)
	if cfg.RateLimitKeys < 0 {
		return errors.New("authserver: Config.RateLimitKeys must not be negative")
	}
	switch cfg.ForwardedHeader {
	case "", clientip.XForwardedFor, clientip.Forwarded:
	default:
		return fmt.Errorf("authserver: Config.ForwardedHeader %q: want %q or %q", cfg.ForwardedHeader, clientip.XForwardedFor, clientip.Forwarded)
	}
	return nil
}

// clientKey returns the rate-limit key of the request's client: its
// address (per /64 for IPv6) as [clientip.Resolver] finds it.
func (s *Server) clientKey(r *http.Request) string {
	if k := clientip.Key(s.clientIP.Addr(r)); k != "" {
		return k
	}
	return r.RemoteAddr
}

// limited takes one event of l for the request's client. If none is left
// it sets Retry-After to the truthful wait and returns false.
func (s *Server) limited(w http.ResponseWriter, r *http.Request, l *ratelimit.Limiter, what string) bool {
	key := s.clientKey(r)
	ok, wait := s.allow(r, l, what, key) // see ratelimit_shared.go
	if ok {
		return false
	}
	secs := ratelimit.RetryAfterSeconds(wait)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	s.log.Warn("rate limited", "limit", what, "client", key, "retry_after_s", secs)
	return true
}
