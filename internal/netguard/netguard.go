// Package netguard is the one guard against server-side request forgery
// shared by every outbound fetch of this module whose URL comes from
// someone else: the OAuth client's discovery and authorization server
// requests (package authclient), the authorization server's fetches of
// Client ID Metadata Documents and client JWKS (package authserver), and
// the fetch tool of mcpstack serve.
//
// The check is made on the address actually dialled, after name
// resolution, so that a name resolving (or re-resolving, DNS rebinding) to
// an internal address, a redirect to one, or an unusual spelling of one
// (decimal, octal, IPv4-mapped IPv6) cannot get around it. What is refused
// is every address that is not globally reachable unicast, after the IANA
// special-purpose address registries (RFC 6890 and its updates): see
// [Check].
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// ErrForbidden reports an address the guard refuses to connect to.
var ErrForbidden = errors.New("netguard: address not allowed")

// ErrLoopback is matched, besides ErrForbidden, by the refusal of a
// loopback address, which Policy.AllowLoopback would let through: a
// command line can then name the flag that does so.
var ErrLoopback = errors.New("loopback")

// Policy relaxes the guard, for development and tests.
type Policy struct {
	// AllowLoopback lets loopback addresses (127.0.0.0/8, ::1) through.
	AllowLoopback bool
	// AllowAll turns the guard off: every address is allowed.
	AllowAll bool
}

// special lists the special-purpose ranges refused besides what the netip
// predicates in Check catch (loopback, RFC 1918 and unique local, link-local,
// multicast, unspecified). Sources: RFC 6890 §2.2.2 (IPv4) and §2.2.3 (IPv6)
// and the IANA registries that update them.
var special = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		// IPv4 (RFC 6890 §2.2.2 and updates).
		"0.0.0.0/8",       // "this network" (RFC 791 §3.2)
		"100.64.0.0/10",   // shared address space, CGNAT (RFC 6598)
		"192.0.0.0/24",    // IETF protocol assignments (RFC 6890 §2.1)
		"192.0.2.0/24",    // documentation TEST-NET-1 (RFC 5737)
		"192.88.99.0/24",  // 6to4 relay anycast (RFC 3068, deprecated by RFC 7526)
		"198.18.0.0/15",   // benchmarking (RFC 2544)
		"198.51.100.0/24", // documentation TEST-NET-2 (RFC 5737)
		"203.0.113.0/24",  // documentation TEST-NET-3 (RFC 5737)
		"240.0.0.0/4",     // reserved (RFC 1112 §4), 255.255.255.255 broadcast (RFC 919) included
		// IPv6 (RFC 6890 §2.2.3 and updates).
		"::/96",          // IPv4-compatible addresses (deprecated, RFC 4291 §2.5.5.1)
		"64:ff9b::/96",   // IPv4/IPv6 translation, NAT64 (RFC 6052): embeds any IPv4 address
		"64:ff9b:1::/48", // local-use IPv4/IPv6 translation (RFC 8215)
		"100::/64",       // discard-only (RFC 6666)
		"2001::/23",      // IETF protocol assignments (RFC 2928), Teredo 2001::/32 (RFC 4380) included
		"2001:db8::/32",  // documentation (RFC 3849)
		"2002::/16",      // 6to4 (RFC 3056): embeds any IPv4 address
		"3fff::/20",      // documentation (RFC 9637)
		"5f00::/16",      // segment routing SIDs (RFC 9602)
		"fec0::/10",      // site-local (deprecated, RFC 3879)
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// Check reports whether p lets a connection to a through: nil if so, an
// error wrapping ErrForbidden saying why if not. An IPv4-mapped IPv6
// address (::ffff:a.b.c.d) is judged as the IPv4 address it carries; a zone
// is ignored. Refused, unless p allows them: loopback (127.0.0.0/8, ::1;
// RFC 1122 §3.2.1.3, RFC 4291 §2.5.3), private (10/8, 172.16/12,
// 192.168/16; RFC 1918) and unique local (fc00::/7; RFC 4193), link-local
// (169.254/16, RFC 3927; fe80::/10, RFC 4291 §2.5.6; cloud metadata
// services at 169.254.169.254 included), multicast (224/4, ff00::/8),
// unspecified (0.0.0.0, ::), and the special-purpose ranges listed in the
// package's source (CGNAT 100.64/10, "this network" 0/8, documentation,
// benchmarking, reserved 240/4, NAT64, 6to4, Teredo...).
func Check(a netip.Addr, p Policy) error {
	if p.AllowAll {
		return nil
	}
	a = a.Unmap().WithZone("")
	fail := func(why string) error { return fmt.Errorf("%w: %s is %s", ErrForbidden, a, why) }
	switch {
	case !a.IsValid():
		return fail("invalid")
	case a.IsLoopback():
		if p.AllowLoopback {
			return nil
		}
		return fmt.Errorf("%w: %s is %w", ErrForbidden, a, ErrLoopback)
	case a.IsPrivate():
		return fail("private")
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return fail("link-local")
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return fail("multicast")
	case a.IsUnspecified():
		return fail("unspecified")
	}
	for _, r := range special {
		if r.Contains(a) {
			return fail("in special-purpose range " + r.String())
		}
	}
	return nil
}

// IsPublic reports whether a is a globally reachable unicast address: one
// that Check refuses under the strictest policy is not.
func IsPublic(a netip.Addr) bool { return Check(a, Policy{}) == nil }

// Control is a net.Dialer Control function that refuses, under p, the
// address about to be dialled. It runs after name resolution, for every
// address tried, and so sees the address actually connected to.
func (p Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse the dialled address %q", ErrForbidden, address)
	}
	return Check(ap.Addr(), p)
}

// Resolver resolves host names; *net.Resolver implements it. Tests inject
// one that maps names to chosen addresses.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer dials TCP connections under a Policy. Its DialContext may be used
// concurrently. The zero value guards with the strictest policy, the
// system's resolver and a 10 s connect timeout.
type Dialer struct {
	// Policy relaxes the guard.
	Policy Policy
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// Timeout bounds each connection attempt; zero means 10 s.
	Timeout time.Duration
}

// DialContext resolves addr's host, refuses it if any of its addresses is
// refused (a name that resolves to an internal address among public ones
// is not trusted with any), and connects to the checked addresses in turn;
// the Control hook checks the address actually dialled once more. ctx
// bounds the resolution and the connection.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		r := d.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		if addrs, err = r.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, fmt.Errorf("netguard: resolving %s: %w", host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("netguard: %s has no address", host)
		}
	}
	for _, a := range addrs {
		if err := Check(a, d.Policy); err != nil {
			return nil, fmt.Errorf("%s: %w", host, err)
		}
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	nd := net.Dialer{Timeout: timeout, Control: d.Policy.Control}
	var last error
	for _, a := range addrs {
		c, err := nd.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// Transport returns a clone of base (nil means http.DefaultTransport, or a
// new transport if that is not an *http.Transport) that dials through d,
// TLS included, and uses no proxy: through a proxy, the address dialled
// would be the proxy's, not the target's. A base with the deprecated
// DialTLS set is not supported.
func Transport(base *http.Transport, d *Dialer) *http.Transport {
	if base == nil {
		if dt, ok := http.DefaultTransport.(*http.Transport); ok {
			base = dt
		} else {
			base = &http.Transport{}
		}
	}
	t := base.Clone()
	t.Proxy = nil
	t.DialContext = d.DialContext // takes priority over a deprecated Dial
	t.DialTLSContext = nil        // TLS goes over a DialContext connection
	return t
}

// IsLocalHost reports whether host (a name or an address literal, without
// port) designates this machine or a private network: a loopback or
// non-public address, "localhost" or a name under ".localhost" (RFC 6761
// §6.3), or a name all of whose addresses are non-public. A name that does
// not resolve is not local. It lets a client decide whether to guard the
// URLs a server hands it: one reached at a private address already is
// inside.
func IsLocalHost(ctx context.Context, r Resolver, host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return !IsPublic(a)
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		if IsPublic(a) {
			return false
		}
	}
	return true
}
