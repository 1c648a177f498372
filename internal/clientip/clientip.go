// Package clientip finds the address of the client behind a request, for
// keying per-client limits: the peer address, or, when the peer is a
// trusted reverse proxy, the address that proxy reports in Forwarded (RFC
// 7239) or X-Forwarded-For. It is shared by the servers of this module
// that limit per client.
package clientip

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// Header names a proxy header [Resolver] reads.
const (
	// XForwardedFor is the de-facto header most proxies append to.
	XForwardedFor = "X-Forwarded-For"
	// Forwarded is the standard header of RFC 7239; its for= parameters
	// are read.
	Forwarded = "Forwarded"
)

// maxHops bounds the hops examined in one request, so that a long header
// costs little.
const maxHops = 64

// ErrBadProxy reports a trusted-proxy entry that is neither an address nor
// a CIDR prefix.
var ErrBadProxy = errors.New("clientip: not an IP address or CIDR prefix")

// Resolver finds client addresses. The zero value trusts no proxy and
// returns the peer address. It is read-only after construction and safe for
// concurrent use.
type Resolver struct {
	// Trusted lists the reverse proxies whose forwarding header is
	// believed. A request from any other peer is keyed on the peer
	// address, whatever headers it carries.
	Trusted []netip.Prefix
	// Header is the header the trusted proxies set: [XForwardedFor] (the
	// default when empty) or [Forwarded]. Only one is read: a proxy that
	// sets one usually passes the other through from the client, where
	// anyone could write it.
	Header string
}

// ParsePrefixes parses trusted-proxy entries: CIDR prefixes ("10.0.0.0/8",
// "fd00::/8") or single addresses.
func ParsePrefixes(entries []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(entries))
	for _, e := range entries {
		p, err := ParsePrefix(e)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// ParsePrefix parses one trusted-proxy entry: a CIDR prefix or an address.
func ParsePrefix(e string) (netip.Prefix, error) {
	e = strings.TrimSpace(e)
	if p, err := netip.ParsePrefix(e); err == nil {
		return p.Masked(), nil
	}
	if a, err := netip.ParseAddr(e); err == nil {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	return netip.Prefix{}, fmt.Errorf("%w: %q", ErrBadProxy, e)
}

// Addr returns the client address of r. If the peer (r.RemoteAddr) is not
// a trusted proxy, that is the peer. Otherwise the forwarding header is
// walked from the right, the hop nearest to this server, skipping trusted
// proxies; the first untrusted hop is the client. A hop that is not an
// address ("unknown", an obfuscated name) ends the walk at the last trusted
// proxy, since nothing to its left can be believed. The result is invalid
// only when r.RemoteAddr is not an address (a test's or a Unix socket's).
func (res *Resolver) Addr(r *http.Request) netip.Addr {
	peer := parseHost(r.RemoteAddr)
	if !peer.IsValid() || !res.trusted(peer) {
		return peer
	}
	name := res.Header
	if name == "" {
		name = XForwardedFor
	}
	hops := res.hops(r.Header.Values(name), name)
	client := peer
	for i := len(hops) - 1; i >= 0 && i >= len(hops)-maxHops; i-- {
		a := parseHost(hops[i])
		if !a.IsValid() {
			return client
		}
		client = a
		if !res.trusted(a) {
			return a
		}
	}
	return client
}

func (res *Resolver) trusted(a netip.Addr) bool {
	for _, p := range res.Trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// hops lists the forwarded-for entries of the header lines, left to right.
func (res *Resolver) hops(lines []string, name string) []string {
	var out []string
	for _, line := range lines {
		for elem := range strings.SplitSeq(line, ",") {
			elem = strings.TrimSpace(elem)
			if name != Forwarded {
				out = append(out, elem)
				continue
			}
			// RFC 7239 §4: forwarded-pair *( ";" forwarded-pair ); the
			// element of a hop without for= says nothing of the client.
			v := ""
			for pair := range strings.SplitSeq(elem, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(pair), "=")
				if strings.EqualFold(strings.TrimSpace(k), "for") {
					v = strings.Trim(strings.TrimSpace(val), `"`)
				}
			}
			out = append(out, v)
		}
	}
	return out
}

// parseHost reads an address with or without a port, IPv6 bracketed or
// not (RFC 7239 §6 node syntax), as an unmapped address without zone.
func parseHost(s string) netip.Addr {
	s = strings.TrimSpace(s)
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone("")
	}
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return netip.Addr{}
		}
		s = s[1:end]
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}

// Key returns the rate-limit key of a client address: an IPv4 address as
// is, an IPv6 address as its /64, since one subscriber usually holds a
// whole /64 (RFC 6177) and could otherwise take a fresh key per request.
// An invalid address gives "".
func Key(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a.WithZone(""), 64).Masked().String()
}
