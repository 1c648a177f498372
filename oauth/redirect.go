package oauth

import (
	"fmt"
	"net/netip"
	"strings"
)

// Loopback host kinds.
const (
	notLoopback = iota
	loopbackIP
	loopbackName
)

// loopbackKind classifies a host as written in a URI: the IP literals
// 127.0.0.1 and [::1] (RFC 8252 §7.3), the name localhost (RFC 8252 §8.3),
// or neither.
func loopbackKind(host string) int {
	if strings.EqualFold(host, "localhost") {
		return loopbackName
	}
	if strings.HasPrefix(host, "[") {
		if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && a == netip.IPv6Loopback() {
			return loopbackIP
		}
		return notLoopback
	}
	if a, err := netip.ParseAddr(host); err == nil && a == netip.AddrFrom4([4]byte{127, 0, 0, 1}) {
		return loopbackIP
	}
	return notLoopback
}

// IsLoopbackRedirect reports whether uri is an http redirect URI on the
// local machine: its host is the loopback IP literal 127.0.0.1 or [::1]
// (RFC 8252 §7.3) or the name localhost (RFC 8252 §8.3, allowed but not
// recommended there). Such URIs are the only http redirect URIs MCP allows.
func IsLoopbackRedirect(uri string) bool {
	u, err := splitURI(uri)
	return err == nil && strings.EqualFold(u.scheme, "http") && u.hasAuthority &&
		!u.hasUserinfo && !u.hasFragment && loopbackKind(u.host) != notLoopback
}

// ValidateRedirectURI checks a redirect URI against the rules MCP applies to
// registration: an absolute URI without a fragment (RFC 6749 §3.1.2) or
// userinfo, using https with a host, or http with a loopback host (see
// [IsLoopbackRedirect]). Errors wrap [ErrInvalidURI].
func ValidateRedirectURI(uri string) error {
	fail := func(reason string) error {
		return fmt.Errorf("%w: redirect URI %q: %s", ErrInvalidURI, uri, reason)
	}
	u, err := splitURI(uri)
	switch {
	case err != nil:
		return fail(err.Error())
	case u.hasFragment:
		return fail("must not contain a fragment")
	case u.hasUserinfo:
		return fail("must not contain userinfo")
	case strings.EqualFold(u.scheme, "https") && u.hasAuthority && u.host != "":
		return nil
	case IsLoopbackRedirect(uri):
		return nil
	}
	return fail("must use https, or http with a loopback host")
}

// RedirectURIMatches reports whether a redirect URI presented in an
// authorization or token request matches a registered one.
//
// Matching is exact string comparison (RFC 9700 §4.1.3, OAuth 2.1), so case,
// percent-encoding and trailing-slash differences do not match. The one
// exception is RFC 8252 §7.3: when both URIs use http with the same loopback
// IP literal host (127.0.0.1 or [::1]), the port may differ or be absent,
// because native clients listen on an ephemeral port chosen at run time.
//
// The host name localhost gets no such exception: RFC 8252 grants port
// flexibility to loopback IP literals only, and §8.3 recommends against
// localhost because it depends on name resolution. A client that needs a
// variable port should register an IP literal.
//
// URIs that are not valid URIs or that carry a fragment never match.
func RedirectURIMatches(registered, presented string) bool {
	p, err := splitURI(presented)
	if err != nil || p.hasFragment {
		return false
	}
	if registered == presented {
		return true
	}
	r, err := splitURI(registered)
	if err != nil || r.hasFragment {
		return false
	}
	return r.scheme == p.scheme && strings.EqualFold(r.scheme, "http") &&
		r.hasAuthority && p.hasAuthority && !r.hasUserinfo && !p.hasUserinfo &&
		r.host == p.host && loopbackKind(r.host) == loopbackIP &&
		r.path == p.path && r.hasQuery == p.hasQuery && r.query == p.query
}
