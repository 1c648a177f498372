package oauth

import (
	"fmt"
	"strings"
)

// CanonicalResource returns the canonical form of an MCP server URI, the value
// a client sends as the RFC 8707 resource parameter and a server expects as
// the token audience.
//
// The input must be an absolute http or https URI with a host, no userinfo and
// no fragment; anything else is an error wrapping [ErrInvalidURI]. The result
// is normalized by RFC 3986 §6:
//
//   - scheme and host are lower-cased (upper-case input is accepted);
//   - the default port (:443 for https, :80 for http) and an empty port are
//     dropped, and leading zeros of a port are removed;
//   - in the host and path, percent escapes of unreserved characters are
//     decoded and the hex digits of other escapes are upper-cased;
//   - dot segments ("." and "..") are removed from the path;
//   - trailing slashes are removed from the path, so "https://a/" becomes
//     "https://a" and "https://a/mcp/" becomes "https://a/mcp";
//   - the query, if any, is kept verbatim.
//
// Removing a trailing slash follows the MCP rule "without trailing slash
// unless significant": this package cannot know whether a server treats
// "/mcp/" and "/mcp" differently, and the discovery rules of RFC 9728 §3.1
// and RFC 8414 §3.1 drop the terminating slash anyway, so two such servers
// could not publish distinct metadata. A server for which the slash is
// significant should use a URI without one.
//
// RFC 8707 permits a query component but discourages it; MCP servers should
// not need one.
func CanonicalResource(raw string) (string, error) {
	c, err := canonicalize(raw)
	if err != nil {
		return "", err
	}
	return c.String(), nil
}

// SameResource reports whether a and b are both valid server URIs with the
// same canonical form (see [CanonicalResource]).
func SameResource(a, b string) bool {
	ca, err := CanonicalResource(a)
	if err != nil {
		return false
	}
	cb, err := CanonicalResource(b)
	return err == nil && ca == cb
}

// canonicalURI is a canonicalized http(s) URI split into the parts that the
// discovery helpers rebuild.
type canonicalURI struct {
	scheme   string // "http" or "https"
	hostport string // lower-case host with a non-default port, if any
	path     string // "" or "/..." without a trailing slash
	hasQuery bool
	query    string
}

// origin returns scheme://host[:port].
func (c canonicalURI) origin() string { return c.scheme + "://" + c.hostport }

// String returns the canonical URI.
func (c canonicalURI) String() string {
	s := c.origin() + c.path
	if c.hasQuery {
		s += "?" + c.query
	}
	return s
}

func canonicalize(raw string) (canonicalURI, error) {
	var c canonicalURI
	fail := func(reason string) (canonicalURI, error) {
		return canonicalURI{}, fmt.Errorf("%w: %q: %s", ErrInvalidURI, raw, reason)
	}
	u, err := splitURI(raw)
	if err != nil {
		return fail(err.Error())
	}
	switch {
	case strings.EqualFold(u.scheme, "https"):
		c.scheme = "https"
	case strings.EqualFold(u.scheme, "http"):
		c.scheme = "http"
	default:
		return fail("scheme must be http or https")
	}
	if p := u.serverProblem(); p != "" {
		return fail(p)
	}
	c.hostport = lowerOutsideEscapes(normalizePercent(u.host))
	port, err := canonicalPort(u.port)
	if err != nil {
		return fail(err.Error())
	}
	if port != "" && !(c.scheme == "https" && port == "443") && !(c.scheme == "http" && port == "80") {
		c.hostport += ":" + port
	}
	c.path = strings.TrimRight(removeDotSegments(normalizePercent(u.path)), "/")
	c.hasQuery, c.query = u.hasQuery, u.query
	return c, nil
}

// canonicalPort strips leading zeros and checks the range 1..65535.
// An empty port stays empty.
func canonicalPort(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	p = strings.TrimLeft(p, "0")
	n := 0
	for i := 0; i < len(p); i++ {
		n = n*10 + int(p[i]-'0')
		if n > 65535 {
			return "", fmt.Errorf("port out of range")
		}
	}
	if n == 0 {
		return "", fmt.Errorf("port 0")
	}
	return p, nil
}
