package mcphttp

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/mcpstack/mcpstack/internal/clip"
)

// hostGuard checks the Host and Origin headers of requests.
type hostGuard struct {
	disabled bool
	hosts    []string // lower case; "host" (any port) or "host:port"; IPv6 without brackets unless with a port
	origins  []string // lower case

	cors *corsPolicy // Options.CORS; its origins pass too
}

func newHostGuard(disabled bool, hosts, origins []string) hostGuard {
	g := hostGuard{disabled: disabled}
	for _, h := range hosts {
		g.hosts = append(g.hosts, normalizeHostEntry(h))
	}
	for _, o := range origins {
		g.origins = append(g.origins, strings.TrimSuffix(strings.ToLower(o), "/"))
	}
	return g
}

func normalizeHostEntry(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, port, err := net.SplitHostPort(h); err == nil {
		return net.JoinHostPort(host, port)
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// check returns why a request is refused, or "". MCP 2025-11-25
// basic/transports#security-warning: the Origin of every request is
// checked, against DNS rebinding, and an invalid one gets 403; the Host
// check does the same for a server on a loopback address, which a page
// reaches through a rebound name without sending an Origin.
func (g *hostGuard) check(r *http.Request) string {
	if g.disabled {
		return ""
	}
	host := strings.ToLower(r.Host)
	hostname := host
	if !strings.Contains(host, ":") {
		// No port: SplitHostPort would allocate its error.
	} else if h, _, err := net.SplitHostPort(host); err == nil {
		hostname = h
	} else {
		hostname = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	if len(g.hosts) > 0 {
		ok := false
		for _, e := range g.hosts {
			if e == hostname || e == host {
				ok = true
				break
			}
		}
		if !ok {
			return "Host " + clip.Quote(r.Host) + " is not allowed"
		}
	} else if localIsLoopback(r) && !isLoopbackName(hostname) {
		return "Host " + clip.Quote(r.Host) + " is not allowed on a loopback address"
	}
	origin := headerGet(r.Header, "Origin")
	if origin == "" {
		return ""
	}
	if g.cors != nil && g.cors.Allowed(origin) {
		return ""
	}
	lo := strings.TrimSuffix(strings.ToLower(origin), "/")
	if len(g.origins) > 0 {
		for _, e := range g.origins {
			if e == lo {
				return ""
			}
		}
		return "Origin " + clip.Quote(origin) + " is not allowed"
	}
	u, err := url.Parse(lo)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "Origin " + clip.Quote(origin) + " is not allowed"
	}
	if u.Host == host || (isLoopbackName(u.Hostname()) && isLoopbackName(hostname)) {
		return ""
	}
	return "Origin " + clip.Quote(origin) + " is not allowed"
}

// localIsLoopback reports whether the request arrived on a loopback
// address.
func localIsLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	var ip net.IP
	switch a := addr.(type) {
	case *net.TCPAddr:
		ip = a.IP
	default:
		h, _, err := net.SplitHostPort(addr.String())
		if err != nil {
			return false
		}
		ip = net.ParseIP(h)
	}
	return ip != nil && ip.IsLoopback()
}

func isLoopbackName(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h) // unlike net.ParseIP, no allocation
	return err == nil && ip.IsLoopback()
}
