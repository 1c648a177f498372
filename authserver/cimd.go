package authserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"golang.org/x/sync/singleflight"
	"golang.org/x/time/rate"

	"github.com/mcpstack/mcpstack/internal/httpbody"
	"github.com/mcpstack/mcpstack/internal/netguard"
	"github.com/mcpstack/mcpstack/internal/ratelimit"
	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/oauth"
)

// Errors of [CIMDFetcher.Fetch]; the returned errors wrap one of them.
var (
	// ErrForbiddenAddress reports a host that resolves to an address the
	// SSRF guard refuses (loopback, private, link-local, ...).
	ErrForbiddenAddress = errors.New("authserver: address not allowed")
	// ErrLoopbackAddress is matched, besides ErrForbiddenAddress, when
	// the address refused is loopback, which CIMDFetcher.AllowLoopback
	// would let through (for development).
	ErrLoopbackAddress = netguard.ErrLoopback
	// ErrUntrustedDomain reports a host the trust policy refused.
	ErrUntrustedDomain = errors.New("authserver: domain not trusted")
	// ErrFetch reports a document that could not be fetched or read:
	// a network error, a redirect, a non-200 status, a wrong content type,
	// a body over the size limit, or a timeout.
	ErrFetch = errors.New("authserver: fetching client metadata failed")
	// ErrFetchLimited reports a fetch not made because the host's
	// outbound budget ([CIMDFetcher.HostRate]) is spent; it comes wrapped
	// together with ErrFetch.
	ErrFetchLimited = errors.New("authserver: too many fetches from this host; try later")
)

// Resolver resolves host names; *net.Resolver implements it. Tests inject
// one that maps names to chosen addresses.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CIMDFetcher fetches Client ID Metadata Documents safely:
//
//   - https only, on the default port unless the URL names one;
//   - every address the host resolves to is checked when dialling, and the
//     connection is made to the checked address: loopback, private (RFC
//     1918, unique local), link-local (cloud metadata at 169.254.169.254
//     included), CGNAT, multicast, unspecified, reserved, NAT64 and 6to4
//     addresses are refused, also when written as IPv4-mapped IPv6;
//     AllowLoopback lets loopback through for development;
//   - redirects are not followed;
//   - a connect timeout and a total timeout;
//   - a size limit, and application/json as the content type
//     (application/jwk-set+json too for a client's jwks_uri);
//   - documents and key sets are cached per Cache-Control max-age, clamped
//     to [MinCache, MaxCache]; a failed fetch is remembered for
//     FailureCache, so that a broken or hostile URL is not fetched again on
//     every request;
//   - at most HostRate fetches a second per host (burst HostBurst), so
//     that no one can make this server send a stream of requests to a
//     third party;
//   - Policy, if set, vets the host name before anything is fetched.
//
// The zero value is not ready: use [NewCIMDFetcher].
type CIMDFetcher struct {
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// AllowLoopback allows loopback addresses (127.0.0.0/8, ::1). For
	// development and tests only.
	AllowLoopback bool
	// Policy, if set, is asked about the host of every URL before it is
	// fetched; an error refuses it (see [DomainPolicy]).
	Policy func(host string) error
	// TLSConfig, if set, is used for the connection (tests set RootCAs).
	TLSConfig *tls.Config
	// ConnectTimeout bounds the TCP and TLS handshake; Timeout bounds the
	// whole fetch. MaxBytes bounds the body.
	ConnectTimeout, Timeout time.Duration
	MaxBytes                int64
	// MinCache and MaxCache bound how long a document or key set is
	// cached; MaxEntries bounds each cache (documents, key sets, failures).
	MinCache, MaxCache time.Duration
	MaxEntries         int
	// FailureCache is how long a failed fetch is remembered and answered
	// from memory (0: not at all).
	FailureCache time.Duration
	// JWKSRefetch is how often, at most, a cached client key set is
	// fetched again because an assertion names a key id it lacks (a client
	// rotating its key).
	JWKSRefetch time.Duration
	// HostRate and HostBurst bound outbound fetches per host name; a
	// negative HostRate means no limit. HostKeys bounds the hosts
	// remembered (the least recently seen is forgotten first).
	HostRate  rate.Limit
	HostBurst int
	HostKeys  int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time

	client   *http.Client
	mu       sync.Mutex
	cache    map[string]ttlEntry[oauth.ClientMetadata]
	keySets  map[string]ttlEntry[keySetEntry]
	failures map[string]ttlEntry[error]
	hostsMu  sync.Mutex
	hosts    *ratelimit.Limiter
	flights  singleflight.Group
}

// ttlEntry is a cached value and when it stops being fresh.
type ttlEntry[V any] struct {
	v       V
	expires time.Time
}

// keySetEntry is a client's fetched key set and when it was fetched.
type keySetEntry struct {
	set     jose.JSONWebKeySet
	fetched time.Time
}

// cacheGet returns the fresh entry of key. The caller holds f.mu.
func cacheGet[V any](m map[string]ttlEntry[V], key string, now time.Time) (V, bool) {
	e, ok := m[key]
	if !ok || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// cachePut stores v under key until expires, first dropping expired
// entries, and then others, while the map holds limit entries or more.
// The caller holds f.mu.
func cachePut[V any](m map[string]ttlEntry[V], key string, v V, expires, now time.Time, limit int) {
	if _, ok := m[key]; !ok && len(m) >= limit {
		for k, e := range m {
			if !now.Before(e.expires) {
				delete(m, k)
			}
		}
		for k := range m {
			if len(m) < limit {
				break
			}
			delete(m, k)
		}
	}
	m[key] = ttlEntry[V]{v: v, expires: expires}
}

// NewCIMDFetcher returns a fetcher with the defaults: 2 s to connect, 5 s in
// all, 5 KiB, cached between 1 minute and 1 day, 1000 documents, failures
// remembered 30 s, a key set refetched for an unknown key id at most once a
// minute, 60 fetches a minute per host with a burst of 20, 10,000 hosts.
// Change the exported fields before the first Fetch; a fetcher is safe for
// concurrent use after that.
func NewCIMDFetcher() *CIMDFetcher {
	return &CIMDFetcher{
		ConnectTimeout: 2 * time.Second,
		Timeout:        5 * time.Second,
		MaxBytes:       5 << 10,
		MinCache:       time.Minute,
		MaxCache:       24 * time.Hour,
		MaxEntries:     1000,
		FailureCache:   30 * time.Second,
		JWKSRefetch:    time.Minute,
		HostRate:       1,
		HostBurst:      20,
		HostKeys:       ratelimit.DefaultKeys,
		cache:          make(map[string]ttlEntry[oauth.ClientMetadata]),
		keySets:        make(map[string]ttlEntry[keySetEntry]),
		failures:       make(map[string]ttlEntry[error]),
	}
}

func (f *CIMDFetcher) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// hostAllowed spends one outbound fetch of host's budget.
func (f *CIMDFetcher) hostAllowed(host string) error {
	f.hostsMu.Lock()
	if f.hosts == nil {
		r := f.HostRate
		if r < 0 {
			r = rate.Inf
		}
		f.hosts = ratelimit.New(r, f.HostBurst, f.HostKeys)
	}
	l := f.hosts
	f.hostsMu.Unlock()
	if ok, wait := l.Allow(strings.ToLower(host), f.now()); !ok {
		return fmt.Errorf("%w: %w (for %s)", ErrFetch, ErrFetchLimited, wait.Round(time.Second))
	}
	return nil
}

// cachedFailure returns the remembered error of a recent failed fetch of
// raw, or nil.
func (f *CIMDFetcher) cachedFailure(raw string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err, _ := cacheGet(f.failures, raw, f.now())
	return err
}

// rememberFailure keeps err for FailureCache, unless it says nothing about
// the URL: the caller giving up, or this server's own outbound budget.
func (f *CIMDFetcher) rememberFailure(ctx context.Context, raw string, err error) {
	if f.FailureCache <= 0 || ctx.Err() != nil || errors.Is(err, ErrFetchLimited) {
		return
	}
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	cachePut(f.failures, raw, err, now.Add(f.FailureCache), now, f.MaxEntries)
}

// fetchGuarded is get behind the failure cache and the per-host budget,
// with concurrent fetches of one URL made once: many clients arriving
// together with the same new client id cost one fetch, not a burst that
// spends the host's budget and fails the rest. The fetch runs detached
// from the first caller's context (get bounds it by Timeout), so that one
// caller giving up does not fail the others; each caller still stops
// waiting when its own context ends.
func (f *CIMDFetcher) fetchGuarded(ctx context.Context, raw string, types []string) ([]byte, time.Duration, error) {
	if err := f.cachedFailure(raw); err != nil {
		return nil, 0, err
	}
	ch := f.flights.DoChan(strings.Join(types, ",")+" "+raw, func() (any, error) {
		fctx := context.WithoutCancel(ctx)
		u, err := url.Parse(raw)
		if err != nil {
			return fetched{}, fmt.Errorf("%w: %v", ErrFetch, err)
		}
		if err := f.hostAllowed(u.Hostname()); err != nil {
			return fetched{}, err
		}
		body, ttl, err := f.get(fctx, raw, types)
		if err != nil {
			f.rememberFailure(fctx, raw, err)
		}
		return fetched{body: body, ttl: ttl}, err
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, 0, res.Err
		}
		v := res.Val.(fetched)
		return v.body, v.ttl, nil
	case <-ctx.Done():
		return nil, 0, fmt.Errorf("%w: %s: %w", ErrFetch, raw, ctx.Err())
	}
}

// fetched is the result of one fetch shared by the callers waiting on it;
// they only read the body.
type fetched struct {
	body []byte
	ttl  time.Duration
}

// DomainPolicy returns a Policy hook: a host on the deny list (exact name, or
// a sub-domain of a listed name) is refused; if allow is not empty, only hosts
// on it (likewise) are accepted.
func DomainPolicy(allow, deny []string) func(host string) error {
	match := func(host string, list []string) bool {
		host = strings.ToLower(strings.TrimSuffix(host, "."))
		for _, d := range list {
			d = strings.ToLower(strings.TrimSuffix(d, "."))
			if host == d || strings.HasSuffix(host, "."+d) {
				return true
			}
		}
		return false
	}
	return func(host string) error {
		if match(host, deny) {
			return fmt.Errorf("%w: %s is on the deny list", ErrUntrustedDomain, host)
		}
		if len(allow) > 0 && !match(host, allow) {
			return fmt.Errorf("%w: %s is not on the allow list", ErrUntrustedDomain, host)
		}
		return nil
	}
}

// CheckAddress reports whether the SSRF guard lets a connection to a go
// through: nil if so, an error wrapping ErrForbiddenAddress if not. The
// guard is the module's one list (internal/netguard): every address that
// is not globally reachable unicast is refused (RFC 6890), loopback
// excepted when allowLoopback is set. IPv4-mapped IPv6 addresses are judged
// as the IPv4 address they carry.
func CheckAddress(a netip.Addr, allowLoopback bool) error {
	if err := netguard.Check(a, netguard.Policy{AllowLoopback: allowLoopback}); err != nil {
		return fmt.Errorf("%w: %w", ErrForbiddenAddress, err)
	}
	return nil
}

func (f *CIMDFetcher) resolver() Resolver {
	if f.Resolver != nil {
		return f.Resolver
	}
	return net.DefaultResolver
}

// dial connects through the module's one SSRF dial guard
// (netguard.Dialer: every address of the host checked, then the address
// actually dialled once more), and marks its refusals with
// ErrForbiddenAddress.
func (f *CIMDFetcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := netguard.Dialer{Policy: netguard.Policy{AllowLoopback: f.AllowLoopback}, Resolver: f.resolver(), Timeout: f.ConnectTimeout}
	c, err := d.DialContext(ctx, network, addr)
	if errors.Is(err, netguard.ErrForbidden) {
		return nil, fmt.Errorf("%w: %w", ErrForbiddenAddress, err)
	}
	return c, err
}

func (f *CIMDFetcher) httpClient() *http.Client {
	if f.client != nil {
		return f.client
	}
	var tc *tls.Config
	if f.TLSConfig != nil {
		tc = f.TLSConfig.Clone()
	} else {
		tc = &tls.Config{}
	}
	tc.MinVersion = tls.VersionTLS12
	f.client = &http.Client{
		Transport: &http.Transport{
			DialContext:            f.dial,
			TLSClientConfig:        tc,
			TLSHandshakeTimeout:    f.ConnectTimeout,
			ResponseHeaderTimeout:  f.Timeout,
			MaxResponseHeaderBytes: 16 << 10,
			DisableCompression:     true,
			Proxy:                  nil,
			MaxIdleConnsPerHost:    2,
			IdleConnTimeout:        30 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       f.Timeout,
	}
	return f.client
}

// Fetch returns the metadata document at clientID, from the cache when
// fresh. It checks the document with [oauth.ValidateClientIDMetadataDocument],
// and refuses a string in it that would hide or disguise what users see on
// the consent page (control, invisible and text-direction characters, such
// as NUL or U+202E) with an [*oauth.ValidationError].
func (f *CIMDFetcher) Fetch(ctx context.Context, clientID string) (oauth.ClientMetadata, error) {
	if err := oauth.ValidateClientIDURL(clientID); err != nil {
		return oauth.ClientMetadata{}, err
	}
	u, err := url.Parse(clientID)
	if err != nil {
		return oauth.ClientMetadata{}, fmt.Errorf("%w: %v", oauth.ErrInvalidURI, err)
	}
	if f.Policy != nil {
		if err := f.Policy(u.Hostname()); err != nil {
			return oauth.ClientMetadata{}, err
		}
	}
	now := f.now()
	f.mu.Lock()
	m, ok := cacheGet(f.cache, clientID, now)
	f.mu.Unlock()
	if ok {
		return m, nil
	}

	body, ttl, err := f.fetchGuarded(ctx, clientID, jsonTypes)
	if err != nil {
		return oauth.ClientMetadata{}, err
	}
	m, err = parseClientIDMetadataDocument(clientID, body)
	if err != nil {
		f.rememberFailure(ctx, clientID, err)
		return oauth.ClientMetadata{}, err
	}
	if ttl > 0 {
		f.mu.Lock()
		cachePut(f.cache, clientID, m, now.Add(ttl), now, f.MaxEntries)
		f.mu.Unlock()
	}
	return m, nil
}

// parseClientIDMetadataDocument reads and checks a fetched document.
func parseClientIDMetadataDocument(clientID string, body []byte) (oauth.ClientMetadata, error) {
	var m oauth.ClientMetadata
	if err := strictjson.Unmarshal(body, &m); err != nil {
		return oauth.ClientMetadata{}, fmt.Errorf("%w: %s: not valid client metadata: %s", ErrFetch, clientID, strictjson.Describe(err))
	}
	if err := oauth.ValidateClientIDMetadataDocument(clientID, m); err != nil {
		return oauth.ClientMetadata{}, err
	}
	if err := checkMetadataStrings(m); err != nil {
		return oauth.ClientMetadata{}, err
	}
	return m, nil
}

// Media types accepted for fetched documents: a metadata document is
// application/json; a JWK Set may also carry its registered type (RFC 7517
// §8.5), which this server serves its own JWKS with.
var (
	jsonTypes   = []string{"application/json"}
	jwkSetTypes = []string{"application/jwk-set+json", "application/json"}
)

// KeySet returns the key set at a client's jwks_uri, for checking an
// assertion signed with key id kid (empty: any). It is served from the
// cache while fresh; a cached set that lacks kid is fetched again, at most
// once per JWKSRefetch, so that a client's key rotation is picked up but
// assertions naming made-up key ids cannot make this server fetch on
// every request.
func (f *CIMDFetcher) KeySet(ctx context.Context, jwksURI, kid string) (jose.JSONWebKeySet, error) {
	now := f.now()
	f.mu.Lock()
	e, ok := cacheGet(f.keySets, jwksURI, now)
	f.mu.Unlock()
	if ok && (kid == "" || len(e.set.Key(kid)) > 0 || now.Sub(e.fetched) < f.JWKSRefetch) {
		return e.set, nil
	}
	if f.Policy != nil {
		u, err := url.Parse(jwksURI)
		if err != nil {
			return jose.JSONWebKeySet{}, fmt.Errorf("%w: %v", ErrFetch, err)
		}
		if err := f.Policy(u.Hostname()); err != nil {
			return jose.JSONWebKeySet{}, err
		}
	}
	body, ttl, err := f.fetchGuarded(ctx, jwksURI, jwkSetTypes)
	if err != nil {
		if ok {
			return e.set, nil // keep using the fresh set we have
		}
		return jose.JSONWebKeySet{}, err
	}
	var set jose.JSONWebKeySet
	if err := strictjson.Unmarshal(body, &set); err != nil {
		err = fmt.Errorf("%w: %s: not a JWK Set: %v", ErrFetch, jwksURI, err)
		f.rememberFailure(ctx, jwksURI, err)
		return jose.JSONWebKeySet{}, err
	}
	// A key set is cached even when its server says no-store: this
	// server cannot afford a fetch per client authentication.
	f.mu.Lock()
	cachePut(f.keySets, jwksURI, keySetEntry{set: set, fetched: now}, now.Add(max(ttl, f.MinCache)), now, f.MaxEntries)
	f.mu.Unlock()
	return set, nil
}

// get fetches a JSON document with every guard, returning its body and how
// long it may be cached (0: not at all).
// The response must carry one of the media types in types (any case, any
// parameters); the first is sent in Accept.
func (f *CIMDFetcher) get(ctx context.Context, raw string, types []string) ([]byte, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrFetch, err)
	}
	if req.URL.Scheme != "https" {
		return nil, 0, fmt.Errorf("%w: %s: https is required", ErrFetch, raw)
	}
	req.Header.Set("Accept", strings.Join(types, ", "))
	resp, err := f.httpClient().Do(req)
	if err != nil {
		if errors.Is(err, ErrForbiddenAddress) {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("%w: %s: %v", ErrFetch, raw, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("%w: %s: status %d (redirects are not followed)", ErrFetch, raw, resp.StatusCode)
	}
	if !hasMediaType(resp.Header.Get("Content-Type"), types) {
		return nil, 0, fmt.Errorf("%w: %s: content type %q, want %s", ErrFetch, raw, resp.Header.Get("Content-Type"), strings.Join(types, " or "))
	}
	if resp.ContentLength > f.MaxBytes {
		return nil, 0, fmt.Errorf("%w: %s: %d bytes is over the %d byte limit", ErrFetch, raw, resp.ContentLength, f.MaxBytes)
	}
	// A body cut by the deadline can end in a clean EOF: httpbody.Read
	// refuses it whatever the read returned (#16.6).
	body, err := httpbody.Read(ctx, resp, f.MaxBytes)
	if errors.Is(err, httpbody.ErrTooLarge) {
		return nil, 0, fmt.Errorf("%w: %s: over the %d byte limit", ErrFetch, raw, f.MaxBytes)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %s: %w", ErrFetch, raw, err)
	}
	return body, f.cacheTTL(resp.Header.Get("Cache-Control")), nil
}

// cacheTTL reads max-age from Cache-Control and clamps it; no-store and
// no-cache give 0, and a missing max-age gives MinCache.
func (f *CIMDFetcher) cacheTTL(cc string) time.Duration {
	ttl := f.MinCache
	for d := range strings.SplitSeq(cc, ",") {
		d = strings.ToLower(strings.TrimSpace(d))
		switch {
		case d == "no-store" || d == "no-cache":
			return 0
		case strings.HasPrefix(d, "max-age="):
			n, err := strconv.ParseInt(strings.Trim(strings.TrimPrefix(d, "max-age="), `"`), 10, 64)
			if err == nil {
				ttl = time.Duration(min(n, int64(f.MaxCache/time.Second))) * time.Second
			}
		}
	}
	return min(max(ttl, f.MinCache), f.MaxCache)
}

// hasMediaType reports whether the Content-Type value ct names one of
// types. Media types are case-insensitive and may carry parameters (RFC
// 9110 §8.3.1), so "Application/JSON; charset=utf-8" is application/json.
func hasMediaType(ct string, types []string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && slices.Contains(types, mt)
}
