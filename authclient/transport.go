package authclient

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcpstack/mcpstack/internal/netguard"
	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/oauth"
)

// Grant types beyond those named in package oauth.
const (
	// GrantJWTBearer is the RFC 7523 JWT bearer authorization grant.
	GrantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	// GrantTokenExchange is the RFC 8693 token exchange grant.
	GrantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	// GrantClientCredentials is the client credentials grant, for machine
	// clients that act for themselves.
	GrantClientCredentials = oauth.GrantClientCredentials
	// GrantAuthorizationCode is the authorization code grant with PKCE, the
	// default.
	GrantAuthorizationCode = oauth.GrantAuthorizationCode
)

// Config configures a [Transport]. Only Authorizer (for the authorization
// code grant) is required.
type Config struct {
	// Base sends the requests to MCP servers; nil means
	// http.DefaultTransport.
	Base http.RoundTripper
	// HTTPClient fetches metadata and talks to authorization servers; nil
	// means a client on http.DefaultTransport. It must not carry this
	// Transport. Its Transport, if nil or an *http.Transport, is cloned
	// with the guard against server-side request forgery (see
	// AllowPrivateAddresses); another RoundTripper is used as it is, and
	// must guard itself. Its redirect policy is not used: redirects from
	// metadata locations and authorization servers are refused.
	HTTPClient *http.Client
	// AllowPrivateAddresses turns off the guard against server-side
	// request forgery, for development. The URLs an MCP server hands the
	// client (resource_metadata, authorization_servers, the authorization
	// server's endpoints) are followed only to globally reachable
	// addresses, checked on the address actually dialled (loopback,
	// private, link-local and the other special-purpose ranges of RFC 6890
	// are refused with an error wrapping ErrUnsafeURL), unless the MCP
	// server itself is on a loopback or private address (its host is
	// localhost, such an address, or a name resolving only to such
	// addresses): a client that reaches it there is already inside.
	AllowPrivateAddresses bool
	// Resolver resolves host names for that guard; nil means
	// net.DefaultResolver. *net.Resolver implements it.
	Resolver Resolver

	// Grant is the grant type used to obtain tokens: GrantAuthorizationCode
	// (the default), GrantClientCredentials, or GrantJWTBearer with
	// Assertion.
	Grant string
	// Authorizer takes the user through the authorization endpoint, for the
	// authorization code grant.
	Authorizer Authorizer
	// Assertion returns the assertion for GrantJWTBearer, for example
	// [CrossAppAccess.Assertion].
	Assertion func(ctx context.Context, d *Discovery) (string, error)

	// PreRegistered returns the client registered beforehand with issuer,
	// if any. It is consulted first.
	PreRegistered func(issuer string) (ClientRegistration, bool)
	// ClientIDMetadataDocument is the https URL of this client's Client ID
	// Metadata Document, used as client_id by servers that advertise
	// client_id_metadata_document_supported.
	ClientIDMetadataDocument string
	// ClientMetadata is sent in Dynamic Client Registration. Missing
	// redirect_uris, grant_types, response_types and
	// token_endpoint_auth_method are filled in.
	ClientMetadata oauth.ClientMetadata
	// Key signs private_key_jwt client assertions, for clients registered
	// with that method (CIMD, DCR or pre-registered without a key of their
	// own).
	Key *SigningKey
	// PromptClient asks the user for client credentials when nothing else
	// applies (the last step of the registration order). Nil means fail
	// with ErrNoClient.
	PromptClient func(ctx context.Context, issuer string, md oauth.AuthorizationServerMetadata) (ClientRegistration, error)

	// ChooseAuthorizationServer picks one of the authorization servers the
	// resource lists; nil picks the first.
	ChooseAuthorizationServer func(ctx context.Context, servers []string) (string, error)
	// AuthorizationServer is used when the server publishes no protected
	// resource metadata; empty means such servers cannot be authorized.
	AuthorizationServer string
	// LegacyDiscovery applies the 2025-03-26 rules to a server that
	// publishes no protected resource metadata (and when
	// AuthorizationServer is empty): the server's origin is the
	// authorization server, and if it publishes no metadata either, its
	// /authorize, /token and /register endpoints are used, with PKCE S256.
	LegacyDiscovery bool
	// AllowUnadvertisedPKCE lets the client proceed with S256 when the
	// authorization server's metadata lacks code_challenge_methods_supported.
	// MCP forbids this; set it only for a provider known to support PKCE
	// without saying so.
	AllowUnadvertisedPKCE bool
	// OfflineAccess adds the offline_access scope to authorization requests
	// when the authorization server lists it in scopes_supported, to obtain
	// a refresh token.
	OfflineAccess bool
	// Scopes is the scope requested when neither the challenge nor the
	// metadata names one (for client credentials, say).
	Scopes []string

	// DPoP asks for DPoP-bound tokens (RFC 9449) from authorization servers
	// that list the proof key's algorithm in
	// dpop_signing_alg_values_supported, and presents them with a fresh
	// proof on every request. DPoPKey is the proof key; nil means a new
	// P-256 key for the life of the Transport.
	DPoP    bool
	DPoPKey crypto.Signer

	// Store keeps tokens and registrations; nil means a new MemoryStore.
	Store Store
	// MaxStepUps bounds step-up authorizations per resource and operation;
	// zero means 3.
	MaxStepUps int
	// Operation names the operation of a request for the step-up bound; nil
	// uses the HTTP method, the path and the JSON-RPC method of a JSON body.
	Operation func(r *http.Request, body []byte) string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Logger receives one info record per login step: discovery, the
	// client registration used, the authorization URL handed to the
	// Authorizer, each token obtained or refreshed, each step-up. Records
	// never carry tokens, codes or secrets. Nil discards them. It is
	// called from the goroutines of the requests that log in.
	Logger *slog.Logger
}

// Resolver resolves host names; *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Transport is an [http.RoundTripper] that authorizes requests to MCP
// servers. Create it with [NewTransport]; it is safe for concurrent use.
type Transport struct {
	cfg     Config
	store   Store
	hc      *http.Client // the guarded client, or the open one when there is no guard
	open    *http.Client // unguarded, for the servers of local MCP servers
	guarded bool         // hc is guarded

	dpop    *dpopProver // nil when DPoP is off
	dpopAlg jose.SignatureAlgorithm

	mu      sync.Mutex
	servers map[string]*server // by canonical request URL

	log *slog.Logger // never nil
}

// server is what the transport knows of one MCP endpoint.
type server struct {
	// mu guards the fields below. It is never held across I/O: an
	// authorization waits for the user's browser, and a request that only
	// needs the current token (a cancellation notice, say) must not wait
	// for that.
	mu       sync.Mutex
	disc     *Discovery
	token    *Token
	attempts map[string]int // step-ups by operation
	flight   *flight        // the authorization or refresh running, if any
}

// flight is one authorization or refresh of a server in progress. Its
// done channel is closed when it ends.
type flight struct {
	done chan struct{}
}

// exclusive runs fn, with ctx, as the only authorization or refresh of s
// in progress. If another is running, it first waits for that one to end,
// or returns ctx's error as soon as ctx ends: a request whose caller gave up
// never stays behind another request's login. fn runs without s.mu held
// and must recheck what it depends on (another request may have obtained a
// token meanwhile).
func (s *server) exclusive(ctx context.Context, fn func() error) error {
	f := &flight{done: make(chan struct{})}
	for {
		s.mu.Lock()
		cur := s.flight
		if cur == nil {
			s.flight = f
			s.mu.Unlock()
			break
		}
		s.mu.Unlock()
		select {
		case <-cur.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer func() {
		s.mu.Lock()
		s.flight = nil
		s.mu.Unlock()
		close(f.done)
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn()
}

// state returns the server's token and discovery.
func (s *server) state() (*Token, *Discovery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token, s.disc
}

// setToken replaces the server's token.
func (s *server) setToken(tok *Token) {
	s.mu.Lock()
	s.token = tok
	s.mu.Unlock()
}

// NewTransport returns a Transport for cfg.
func NewTransport(cfg Config) *Transport {
	t := &Transport{cfg: cfg, store: cfg.Store, hc: cfg.HTTPClient, servers: make(map[string]*server)}
	if t.store == nil {
		t.store = &MemoryStore{}
	}
	if t.hc == nil {
		t.hc = &http.Client{}
	}
	t.open = t.hc
	if !cfg.AllowPrivateAddresses {
		if g := guardClient(t.hc, cfg.Resolver); g != nil {
			t.hc, t.guarded = g, true
		}
	}
	if t.cfg.Grant == "" {
		t.cfg.Grant = GrantAuthorizationCode
	}
	t.log = cfg.Logger
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	if t.cfg.MaxStepUps == 0 {
		t.cfg.MaxStepUps = 3
	}
	if cfg.DPoP {
		// A key that cannot be made or used leaves DPoP off; tokens are
		// then plain bearer tokens.
		if p, err := newDPoPProver(cfg.DPoPKey); err == nil {
			t.dpop = p
			t.dpopAlg = p.alg
		}
	}
	return t
}

// guardClient returns a copy of hc whose transport dials through the SSRF
// guard, or nil if hc's transport is not an *http.Transport.
func guardClient(hc *http.Client, r Resolver) *http.Client {
	var base *http.Transport
	switch rt := hc.Transport.(type) {
	case nil:
	case *http.Transport:
		base = rt
	default:
		return nil
	}
	d := &netguard.Dialer{}
	if r != nil {
		d.Resolver = r
	}
	g := *hc
	g.Transport = netguard.Transport(base, d)
	return &g
}

// httpFor returns the client that talks to the authorization server of
// the MCP server at serverURL: the guarded one unless that server is local.
func (t *Transport) httpFor(ctx context.Context, serverURL string) *http.Client {
	if !t.guarded {
		return t.hc
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return t.hc
	}
	var r netguard.Resolver
	if t.cfg.Resolver != nil {
		r = t.cfg.Resolver
	}
	if netguard.IsLocalHost(ctx, r, u.Hostname()) {
		return t.open
	}
	return t.hc
}

// httpOf returns d's client: the one its discovery chose, else the
// guarded one.
func (t *Transport) httpOf(d *Discovery) *http.Client {
	if d != nil && d.hc != nil {
		return d.hc
	}
	return t.hc
}

// Client returns an http.Client that uses t.
func (t *Transport) Client() *http.Client { return &http.Client{Transport: t} }

func (t *Transport) now() time.Time {
	if t.cfg.Now != nil {
		return t.cfg.Now()
	}
	return time.Now()
}

func (t *Transport) base() http.RoundTripper {
	if t.cfg.Base != nil {
		return t.cfg.Base
	}
	return http.DefaultTransport
}

func (t *Transport) server(u *url.URL) *server {
	c := *u
	c.RawQuery, c.Fragment, c.User = "", "", nil
	key, err := oauth.CanonicalResource(c.String())
	if err != nil {
		key = c.String()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.servers[key]
	if s == nil {
		s = &server{attempts: make(map[string]int)}
		t.servers[key] = s
	}
	return s
}

// currentToken returns the token to send to s, refreshing it if expired.
// It does not wait for an authorization in progress unless the token needs
// a refresh, and then no longer than ctx.
func (t *Transport) currentToken(ctx context.Context, s *server) *Token {
	tok, disc := s.state()
	if tok == nil || disc == nil {
		return nil
	}
	if !tok.expired(t.now()) {
		return tok
	}
	if tok.RefreshToken != "" {
		// A failed refresh (or a ctx that ended) leaves the expired token,
		// dropped below.
		err := s.exclusive(ctx, func() error {
			if cur, _ := s.state(); cur != tok {
				return nil // replaced meanwhile
			}
			return t.refresh(ctx, s, disc, tok)
		})
		if cur, _ := s.state(); err == nil && cur != nil && cur != tok {
			return cur
		}
	}
	// Sent without a token, the request gets a 401 that authorizes anew.
	s.mu.Lock()
	if s.token == tok {
		s.token = nil
	}
	s.mu.Unlock()
	return nil
}

// RoundTrip implements [http.RoundTripper]. It sends req with the server's
// token, if any, and on 401 or 403 insufficient_scope authorizes and sends it
// again. The request body is buffered for that.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" {
		return nil, errors.New("authclient: request already carries an Authorization header")
	}
	ctx := req.Context()
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	s := t.server(req.URL)
	op := t.operation(req, body)
	serverURL := req.URL.String()
	if i := strings.IndexAny(serverURL, "?#"); i >= 0 {
		serverURL = serverURL[:i]
	}
	// A 401 leads to another authorization at most three times per request:
	// a stored token may be stale, its refresh refused, before a new grant.
	authorizations := 0
	for {
		tok := t.currentToken(ctx, s)
		resp, err := t.send(req, body, tok)
		if err != nil {
			return nil, err
		}
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			if authorizations == 3 {
				return resp, nil
			}
			ch := parseChallenge(resp.Header.Values("WWW-Authenticate")).BearerChallenge
			drain(resp)
			if err := t.authorize(ctx, s, serverURL, ch, tok, false); err != nil {
				return nil, err
			}
			authorizations++
		case http.StatusForbidden:
			ch := parseChallenge(resp.Header.Values("WWW-Authenticate")).BearerChallenge
			if ch.Error != oauth.InsufficientScope || tok == nil {
				return resp, nil
			}
			drain(resp)
			if err := t.stepUp(ctx, s, serverURL, op, ch, tok); err != nil {
				return nil, err
			}
		default:
			if resp.StatusCode/100 == 2 {
				s.mu.Lock()
				delete(s.attempts, op)
				s.mu.Unlock()
			}
			return resp, nil
		}
	}
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// send sends a copy of req with tok in the Authorization header.
func (t *Transport) send(req *http.Request, body []byte, tok *Token) (*http.Response, error) {
	r := req.Clone(req.Context())
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
	}
	if tok != nil {
		if strings.EqualFold(tok.TokenType, "DPoP") && t.dpop != nil {
			p, err := t.dpop.proof(r.Method, r.URL.String(), tok.AccessToken, t.now())
			if err != nil {
				return nil, err
			}
			r.Header.Set("Authorization", "DPoP "+tok.AccessToken)
			r.Header.Set("DPoP", p)
		} else {
			r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
	}
	resp, err := t.base().RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if t.dpop != nil && tok != nil {
		if n := resp.Header.Get("DPoP-Nonce"); n != "" && t.dpop.remember(r.URL.String(), n) {
			ch := parseChallenge(resp.Header.Values("WWW-Authenticate"))
			if resp.StatusCode == http.StatusUnauthorized && ch.dpop && ch.Error == "use_dpop_nonce" {
				// RFC 9449 §9: send the request again with the nonce.
				drain(resp)
				return t.send(req, body, tok)
			}
		}
	}
	return resp, nil
}

// proverFor returns the DPoP prover when tokens from md are DPoP-bound.
func (t *Transport) proverFor(md oauth.AuthorizationServerMetadata) *dpopProver {
	if t.usesDPoP(md) {
		return t.dpop
	}
	return nil
}

func (t *Transport) operation(req *http.Request, body []byte) string {
	if t.cfg.Operation != nil {
		return t.cfg.Operation(req, body)
	}
	op := req.Method + " " + req.URL.Path
	var msg struct {
		Method string `json:"method"`
	}
	if len(body) > 0 && body[0] == '{' && strictjson.Unmarshal(body, &msg) == nil && msg.Method != "" {
		op += " " + msg.Method
	}
	return op
}

// stepUp re-authorizes with the challenged scopes merged with those granted.
func (t *Transport) stepUp(ctx context.Context, s *server, serverURL, op string, ch oauth.BearerChallenge, used *Token) error {
	s.mu.Lock()
	if s.token != used && s.token != nil {
		// Another request already upgraded the token.
		s.mu.Unlock()
		return nil
	}
	n := s.attempts[op]
	resource := serverURL
	if s.disc != nil {
		resource = s.disc.Resource
	}
	if oauth.HasAllScopes(used.Scope, ch.Scope) || n >= t.cfg.MaxStepUps {
		s.mu.Unlock()
		return &StepUpError{Resource: resource, Operation: op, Attempts: n, Scope: ch.Scope, Granted: used.Scope}
	}
	s.attempts[op] = n + 1
	s.mu.Unlock()
	t.log.Info("authclient: step-up: the server asks for more scope", "operation", op, "scope", oauth.JoinScope(ch.Scope), "granted", oauth.JoinScope(used.Scope))
	ch.Scope = oauth.MergeScopes(used.Scope, ch.Scope)
	return t.authorize(ctx, s, serverURL, ch, used, true)
}

// authorize obtains a new token for s after a 401 (or a 403 for step-up).
// One authorization of s runs at a time (see server.exclusive); the user's
// browser wait is bound to ctx, the context of the request that needs it.
func (t *Transport) authorize(ctx context.Context, s *server, serverURL string, ch oauth.BearerChallenge, used *Token, stepUp bool) error {
	return s.exclusive(ctx, func() error {
		if cur, _ := s.state(); cur != nil && cur != used {
			return nil // another request authorized (or stepped up) meanwhile
		}
		return t.authorizeNow(ctx, s, serverURL, ch, used, stepUp)
	})
}

// authorizeNow is authorize once it runs alone.
func (t *Transport) authorizeNow(ctx context.Context, s *server, serverURL string, ch oauth.BearerChallenge, used *Token, stepUp bool) error {
	disc, err := t.discover(ctx, serverURL, ch)
	if err != nil {
		return err
	}
	t.log.Info("authclient: discovered the authorization server", "resource", disc.Resource, "issuer", disc.Issuer)
	s.mu.Lock()
	s.disc = disc
	s.mu.Unlock()
	key := Key{Resource: disc.Resource, Issuer: disc.Issuer}
	entry, err := t.store.Load(ctx, key)
	if err != nil {
		return err
	}
	if entry == nil {
		entry = &Entry{}
	}
	// A stored token the server has not refused yet is tried first; a
	// refused one is refreshed, if it can be.
	if !stepUp && entry.Token != nil {
		fresh := used == nil || entry.Token.AccessToken != used.AccessToken
		if fresh && !entry.Token.expired(t.now()) {
			t.log.Info("authclient: using the stored token", "resource", disc.Resource, "scope", oauth.JoinScope(entry.Token.Scope))
			s.setToken(entry.Token)
			return nil
		}
		if entry.Token.RefreshToken != "" && entry.Client != nil {
			if t.refresh(ctx, s, disc, entry.Token) == nil {
				return nil
			}
		}
	}
	if !stepUp {
		// The server refused the token. A step-up keeps it meanwhile:
		// requests it suffices for go on while the user is away.
		s.setToken(nil)
	}
	client, err := t.client(ctx, disc, entry)
	if err != nil {
		return err
	}
	entry.Client = &client
	if !stepUp {
		// A step-up leaves the stored token too: a login the user
		// abandons must not cost the grant already held.
		entry.Token = nil
	}
	if err := t.store.Save(ctx, key, entry); err != nil {
		return err
	}
	scope := t.chooseScope(disc, ch)
	tok, err := t.obtain(ctx, disc, client, scope)
	if err != nil {
		return err
	}
	entry.Token = tok
	if err := t.store.Save(ctx, key, entry); err != nil {
		return err
	}
	s.setToken(tok)
	return nil
}

// discover finds the resource metadata and authorization server for the
// server at serverURL.
func (t *Transport) discover(ctx context.Context, serverURL string, ch oauth.BearerChallenge) (*Discovery, error) {
	hc := t.httpFor(ctx, serverURL)
	prm, err := discoverResource(ctx, hc, serverURL, ch.ResourceMetadata)
	if err != nil {
		return nil, unsafeDial(err)
	}
	d := &Discovery{ServerURL: serverURL, ResourceMetadata: prm, hc: hc}
	legacy := false
	if prm == nil {
		if d.Resource, err = oauth.CanonicalResource(serverURL); err != nil {
			return nil, err
		}
		switch {
		case t.cfg.AuthorizationServer != "":
			d.Issuer = t.cfg.AuthorizationServer
		case t.cfg.LegacyDiscovery:
			u, err := url.Parse(d.Resource)
			if err != nil {
				return nil, err
			}
			d.Issuer, legacy = origin(u), true
		default:
			return nil, fmt.Errorf("%w: no protected resource metadata for %s", ErrNoMetadata, serverURL)
		}
	} else {
		d.Resource = prm.Resource
		d.Issuer = prm.AuthorizationServers[0]
		if t.cfg.ChooseAuthorizationServer != nil {
			if d.Issuer, err = t.cfg.ChooseAuthorizationServer(ctx, prm.AuthorizationServers); err != nil {
				return nil, err
			}
			if !slices.Contains(prm.AuthorizationServers, d.Issuer) {
				return nil, fmt.Errorf("authclient: chosen authorization server %q is not listed by %s", d.Issuer, prm.Resource)
			}
		}
	}
	d.Metadata, err = discoverAuthorizationServer(ctx, hc, d.Issuer, t.cfg.AllowUnadvertisedPKCE || t.cfg.Grant != GrantAuthorizationCode, legacy)
	if legacy && err == nil {
		d.Issuer = d.Metadata.Issuer
	}
	if legacy && errors.Is(err, ErrNoMetadata) {
		// 2025-03-26 default endpoints.
		d.Metadata = oauth.AuthorizationServerMetadata{
			Issuer:                        d.Issuer,
			AuthorizationEndpoint:         d.Issuer + "/authorize",
			TokenEndpoint:                 d.Issuer + "/token",
			RegistrationEndpoint:          d.Issuer + "/register",
			ResponseTypesSupported:        []string{"code"},
			CodeChallengeMethodsSupported: []string{oauth.MethodS256},
		}
		err = nil
	}
	if err != nil {
		return nil, unsafeDial(err)
	}
	return d, nil
}

// unsafeDial marks a refusal of the SSRF guard with ErrUnsafeURL.
func unsafeDial(err error) error {
	if errors.Is(err, netguard.ErrForbidden) && !errors.Is(err, ErrUnsafeURL) {
		return fmt.Errorf("%w: %w", ErrUnsafeURL, err)
	}
	return err
}

// client returns the client registration to use with disc's authorization
// server, in the order MCP gives: stored or pre-registered, Client ID
// Metadata Document, Dynamic Client Registration, prompt.
func (t *Transport) client(ctx context.Context, disc *Discovery, entry *Entry) (ClientRegistration, error) {
	md := disc.Metadata
	if t.cfg.PreRegistered != nil {
		if c, ok := t.cfg.PreRegistered(disc.Issuer); ok {
			t.log.Info("authclient: using the pre-registered client", "issuer", disc.Issuer, "client_id", c.ClientID)
			return t.withKey(c), nil
		}
	}
	if entry.Client != nil {
		t.log.Info("authclient: using the stored client registration", "issuer", disc.Issuer, "client_id", entry.Client.ClientID)
		return t.withKey(*entry.Client), nil
	}
	if t.cfg.ClientIDMetadataDocument != "" && md.ClientIDMetadataDocumentSupported {
		c := ClientRegistration{ClientID: t.cfg.ClientIDMetadataDocument, AuthMethod: oauth.AuthMethodNone}
		if t.cfg.Key != nil && slices.Contains(md.TokenEndpointAuthMethods(), oauth.AuthMethodPrivateKeyJWT) {
			c.AuthMethod = oauth.AuthMethodPrivateKeyJWT
		}
		t.log.Info("authclient: using the Client ID Metadata Document as client_id", "issuer", disc.Issuer, "client_id", c.ClientID)
		return t.withKey(c), nil
	}
	if md.RegistrationEndpoint != "" {
		cm := t.cfg.ClientMetadata
		if len(cm.RedirectURIs) == 0 && t.cfg.Authorizer != nil {
			cm.RedirectURIs = []string{t.cfg.Authorizer.RedirectURI()}
		}
		if cm.ClientName == "" {
			cm.ClientName = "mcpstack client"
		}
		if len(cm.GrantTypes) == 0 {
			switch t.cfg.Grant {
			case GrantAuthorizationCode:
				cm.GrantTypes = []string{oauth.GrantAuthorizationCode, oauth.GrantRefreshToken}
			default:
				cm.GrantTypes = []string{t.cfg.Grant}
			}
		}
		if len(cm.ResponseTypes) == 0 && t.cfg.Grant == GrantAuthorizationCode {
			cm.ResponseTypes = []string{"code"}
		}
		if cm.TokenEndpointAuthMethod == "" {
			cm.TokenEndpointAuthMethod = chooseAuthMethod(md, t.cfg.Key != nil)
		}
		if cm.Extra == nil {
			cm.Extra = map[string]json.RawMessage{}
		}
		if _, ok := cm.Extra["application_type"]; !ok {
			cm.Extra["application_type"] = json.RawMessage(`"native"`)
		}
		c, err := register(ctx, t.httpOf(disc), md.RegistrationEndpoint, cm)
		if err != nil {
			return ClientRegistration{}, unsafeDial(err)
		}
		t.log.Info("authclient: registered the client dynamically", "registration_endpoint", md.RegistrationEndpoint, "client_id", c.ClientID)
		return t.withKey(c), nil
	}
	if t.cfg.PromptClient != nil {
		c, err := t.cfg.PromptClient(ctx, disc.Issuer, md)
		if err != nil {
			return ClientRegistration{}, err
		}
		return t.withKey(c), nil
	}
	return ClientRegistration{}, fmt.Errorf("%w: %s", ErrNoClient, disc.Issuer)
}

func (t *Transport) withKey(c ClientRegistration) ClientRegistration {
	if c.Key == nil && c.authMethod() == oauth.AuthMethodPrivateKeyJWT {
		c.Key = t.cfg.Key
	}
	return c
}

// chooseScope applies the MCP scope rule: the challenge's scope, else the
// resource's scopes_supported, else the configured scopes, else none; plus
// offline_access when asked for and offered.
func (t *Transport) chooseScope(d *Discovery, ch oauth.BearerChallenge) []string {
	var scope []string
	switch {
	case len(ch.Scope) > 0:
		scope = ch.Scope
	case d.ResourceMetadata != nil && len(d.ResourceMetadata.ScopesSupported) > 0:
		scope = d.ResourceMetadata.ScopesSupported
	default:
		scope = t.cfg.Scopes
	}
	scope = slices.Clone(scope)
	if t.cfg.OfflineAccess && t.cfg.Grant == GrantAuthorizationCode &&
		slices.Contains(d.Metadata.ScopesSupported, "offline_access") && !slices.Contains(scope, "offline_access") {
		scope = append(scope, "offline_access")
	}
	return scope
}

// obtain runs the configured grant.
func (t *Transport) obtain(ctx context.Context, d *Discovery, client ClientRegistration, scope []string) (*Token, error) {
	form := url.Values{}
	switch t.cfg.Grant {
	case GrantAuthorizationCode:
		return t.authorizationCode(ctx, d, client, scope)
	case GrantClientCredentials:
		form.Set("grant_type", GrantClientCredentials)
	case GrantJWTBearer:
		if t.cfg.Assertion == nil {
			return nil, errors.New("authclient: GrantJWTBearer needs Config.Assertion")
		}
		a, err := t.cfg.Assertion(ctx, d)
		if err != nil {
			return nil, err
		}
		form.Set("grant_type", GrantJWTBearer)
		form.Set("assertion", a)
	default:
		return nil, fmt.Errorf("authclient: unsupported grant %q", t.cfg.Grant)
	}
	if len(scope) > 0 {
		form.Set("scope", oauth.JoinScope(scope))
	}
	form.Set("resource", d.Resource)
	tr, err := requestToken(ctx, t.httpOf(d), d.Metadata, client, form, t.now(), t.proverFor(d.Metadata))
	if err != nil {
		return nil, unsafeDial(err)
	}
	tok := t.token(tr, scope, nil)
	t.logToken("authclient: token obtained", d, tok)
	return tok, nil
}

// authorizationCode runs the authorization code grant with PKCE.
func (t *Transport) authorizationCode(ctx context.Context, d *Discovery, client ClientRegistration, scope []string) (*Token, error) {
	if t.cfg.Authorizer == nil {
		return nil, errors.New("authclient: the authorization code grant needs Config.Authorizer")
	}
	md := d.Metadata
	if md.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("%w: %s has no authorization_endpoint", ErrNoMetadata, d.Issuer)
	}
	verifier, err := oauth.NewVerifier()
	if err != nil {
		return nil, err
	}
	state, err := oauth.NewState()
	if err != nil {
		return nil, err
	}
	redirect := t.cfg.Authorizer.RedirectURI()
	au, err := url.Parse(md.AuthorizationEndpoint)
	if err != nil {
		return nil, err
	}
	q := au.Query()
	q.Set("response_type", "code")
	q.Set("client_id", client.ClientID)
	q.Set("redirect_uri", redirect)
	q.Set("state", state)
	q.Set("code_challenge", oauth.S256Challenge(verifier))
	q.Set("code_challenge_method", oauth.MethodS256)
	q.Set("resource", d.Resource)
	if len(scope) > 0 {
		q.Set("scope", oauth.JoinScope(scope))
	}
	au.RawQuery = q.Encode()
	t.log.Info("authclient: authorization URL handed to the browser", "url", au.String())
	got, err := t.cfg.Authorizer.Authorize(ctx, au.String())
	if err != nil {
		return nil, err
	}
	if err := checkAuthorizationResponse(got, state, md); err != nil {
		return nil, err
	}
	form := url.Values{}
	form.Set("grant_type", oauth.GrantAuthorizationCode)
	form.Set("code", got.Get("code"))
	form.Set("redirect_uri", redirect)
	form.Set("code_verifier", verifier)
	form.Set("resource", d.Resource)
	tr, err := requestToken(ctx, t.httpOf(d), md, client, form, t.now(), t.proverFor(md))
	if err != nil {
		return nil, unsafeDial(err)
	}
	tok := t.token(tr, scope, nil)
	t.logToken("authclient: token obtained", d, tok)
	return tok, nil
}

// checkAuthorizationResponse checks state, then iss (RFC 9207), then the
// error or code.
func checkAuthorizationResponse(v url.Values, state string, md oauth.AuthorizationServerMetadata) error {
	if got := v.Get("state"); got == "" || got != state {
		return ErrStateMismatch
	}
	if v.Has("iss") {
		if v.Get("iss") != md.Issuer {
			return fmt.Errorf("%w: got %q, want %q", ErrResponseIssuerMismatch, v.Get("iss"), md.Issuer)
		}
	} else if md.AuthorizationResponseIssParameterSupported {
		return fmt.Errorf("%w: iss missing though %s advertises it", ErrResponseIssuerMismatch, md.Issuer)
	}
	if e := v.Get("error"); e != "" {
		return &oauth.ErrorResponse{Code: oauth.ErrorCode(e), Description: v.Get("error_description"), URI: v.Get("error_uri")}
	}
	if v.Get("code") == "" {
		return ErrNoCode
	}
	return nil
}

// token turns a token response into a Token; old supplies the refresh token
// when the response rotates none.
func (t *Transport) token(tr *oauth.TokenResponse, requested []string, old *Token) *Token {
	tok := &Token{AccessToken: tr.AccessToken, TokenType: tr.TokenType, RefreshToken: tr.RefreshToken, Scope: tr.Scopes()}
	if tok.Scope == nil {
		tok.Scope = slices.Clone(requested)
	}
	if tr.ExpiresIn > 0 {
		tok.Expiry = tr.Expiry(t.now())
	}
	if tok.RefreshToken == "" && old != nil {
		tok.RefreshToken = old.RefreshToken
	}
	return tok
}

// refresh uses old's refresh token, with the resource parameter, and
// makes the new token s's token and stores it. The caller runs it inside
// s.exclusive.
// logToken logs a token's scope and lifetime, never the token.
func (t *Transport) logToken(msg string, d *Discovery, tok *Token) {
	t.log.Info(msg, "resource", d.Resource, "scope", oauth.JoinScope(tok.Scope), "expires", tok.Expiry, "refresh_token", tok.RefreshToken != "")
}

func (t *Transport) refresh(ctx context.Context, s *server, d *Discovery, old *Token) error {
	key := Key{Resource: d.Resource, Issuer: d.Issuer}
	entry, err := t.store.Load(ctx, key)
	if err != nil {
		return err
	}
	if entry == nil || entry.Client == nil {
		return ErrNoClient
	}
	form := url.Values{}
	form.Set("grant_type", oauth.GrantRefreshToken)
	form.Set("refresh_token", old.RefreshToken)
	form.Set("resource", d.Resource)
	tr, err := requestToken(ctx, t.httpOf(d), d.Metadata, t.withKey(*entry.Client), form, t.now(), t.proverFor(d.Metadata))
	if err != nil {
		return err
	}
	tok := t.token(tr, old.Scope, old)
	t.logToken("authclient: token refreshed", d, tok)
	entry.Token = tok
	if err := t.store.Save(ctx, key, entry); err != nil {
		return err
	}
	s.setToken(tok)
	return nil
}
