package authserver

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpstack/mcpstack/internal/httpbody"
	"github.com/mcpstack/mcpstack/oauth"
)

// Errors of [CIMDFetcher.Fetch]; the returned errors wrap one of them.
var (
	// ErrForbiddenAddress reports a host that resolves to an address the
	// SSRF guard refuses (loopback, private, link-local, ...).
	ErrForbiddenAddress = errors.New("authserver: address not allowed")
	// ErrUntrustedDomain reports a host the trust policy refused.
	ErrUntrustedDomain = errors.New("authserver: domain not trusted")
	// ErrFetch reports a document that could not be fetched or read:
	// a network error, a redirect, a non-200 status, a wrong content type,
	// a body over the size limit, or a timeout.
	ErrFetch = errors.New("authserver: fetching client metadata failed")
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
//   - a size limit, and application/json as the content type;
//   - documents are cached per Cache-Control max-age, clamped to
//     [MinCache, MaxCache];
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
	// MinCache and MaxCache bound how long a document is cached; MaxEntries
	// bounds the cache size.
	MinCache, MaxCache time.Duration
	MaxEntries         int

	now    func() time.Time
	client *http.Client
	mu     sync.Mutex
	cache  map[string]cacheEntry
}

type cacheEntry struct {
	m       oauth.ClientMetadata
	expires time.Time
}

// NewCIMDFetcher returns a fetcher with the defaults: 2 s to connect, 5 s in
// all, 5 KiB, cached between 1 minute and 1 day, 1000 documents. Change the
// exported fields before the first Fetch.
func NewCIMDFetcher() *CIMDFetcher {
	return &CIMDFetcher{
		ConnectTimeout: 2 * time.Second,
		Timeout:        5 * time.Second,
		MaxBytes:       5 << 10,
		MinCache:       time.Minute,
		MaxCache:       24 * time.Hour,
		MaxEntries:     1000,
		now:            time.Now,
		cache:          make(map[string]cacheEntry),
	}
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

// forbidden lists the prefixes the guard refuses besides what the netip
// predicates catch.
var forbidden = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",          // "this network"
		"100.64.0.0/10",      // CGNAT
		"192.0.0.0/24",       // IETF protocol assignments
		"192.0.2.0/24",       // documentation
		"198.18.0.0/15",      // benchmarking
		"198.51.100.0/24",    // documentation
		"203.0.113.0/24",     // documentation
		"240.0.0.0/4",        // reserved, broadcast
		"64:ff9b::/96",       // NAT64
		"64:ff9b:1::/48",     // local NAT64
		"2002::/16",          // 6to4
		"2001:db8::/32",      // documentation
		"100::/64",           // discard
		"::/96",              // IPv4-compatible (deprecated)
		"fd00:ec2::254/128",  // AWS metadata over IPv6 (also unique local)
		"169.254.169.254/32", // cloud metadata (also link-local)
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// CheckAddress reports whether the SSRF guard lets a connection to a go
// through: nil if so, an error wrapping ErrForbiddenAddress if not.
// IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
func CheckAddress(a netip.Addr, allowLoopback bool) error {
	a = a.Unmap().WithZone("")
	fail := func(why string) error { return fmt.Errorf("%w: %s is %s", ErrForbiddenAddress, a, why) }
	switch {
	case !a.IsValid():
		return fail("invalid")
	case a.IsLoopback():
		if allowLoopback {
			return nil
		}
		return fail("loopback")
	case a.IsPrivate():
		return fail("private")
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return fail("link-local")
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return fail("multicast")
	case a.IsUnspecified():
		return fail("unspecified")
	}
	for _, p := range forbidden {
		if p.Contains(a) {
			return fail("in reserved range " + p.String())
		}
	}
	return nil
}

func (f *CIMDFetcher) resolver() Resolver {
	if f.Resolver != nil {
		return f.Resolver
	}
	return net.DefaultResolver
}

// dial resolves the host, checks every address, and connects to a checked
// one. The Control hook checks the address actually dialled once more.
func (f *CIMDFetcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = f.resolver().LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("%w: resolving %s: %v", ErrFetch, host, err)
		}
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: %s has no address", ErrFetch, host)
	}
	for _, a := range addrs {
		if err := CheckAddress(a, f.AllowLoopback); err != nil {
			return nil, fmt.Errorf("%s: %w", host, err)
		}
	}
	d := net.Dialer{
		Timeout: f.ConnectTimeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
			}
			return CheckAddress(ap.Addr(), f.AllowLoopback)
		},
	}
	var last error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
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
// fresh. It checks the document with [oauth.ValidateClientIDMetadataDocument].
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
	if e, ok := f.cache[clientID]; ok && now.Before(e.expires) {
		f.mu.Unlock()
		return e.m, nil
	}
	f.mu.Unlock()

	body, ttl, err := f.get(ctx, clientID)
	if err != nil {
		return oauth.ClientMetadata{}, err
	}
	var m oauth.ClientMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		return oauth.ClientMetadata{}, fmt.Errorf("%w: %s: not a JSON object: %v", ErrFetch, clientID, err)
	}
	if err := oauth.ValidateClientIDMetadataDocument(clientID, m); err != nil {
		return oauth.ClientMetadata{}, err
	}
	if ttl > 0 {
		f.mu.Lock()
		if len(f.cache) >= f.MaxEntries {
			for k, e := range f.cache {
				if !now.Before(e.expires) || len(f.cache) >= f.MaxEntries {
					delete(f.cache, k)
				}
			}
		}
		f.cache[clientID] = cacheEntry{m: m, expires: now.Add(ttl)}
		f.mu.Unlock()
	}
	return m, nil
}

// get fetches a JSON document with every guard, returning its body and how
// long it may be cached (0: not at all).
func (f *CIMDFetcher) get(ctx context.Context, raw string) ([]byte, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrFetch, err)
	}
	if req.URL.Scheme != "https" {
		return nil, 0, fmt.Errorf("%w: %s: https is required", ErrFetch, raw)
	}
	req.Header.Set("Accept", "application/json")
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
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, 0, fmt.Errorf("%w: %s: content type %q, want application/json", ErrFetch, raw, resp.Header.Get("Content-Type"))
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
