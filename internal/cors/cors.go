// Package cors answers Cross-Origin Resource Sharing (the Fetch standard's
// CORS protocol) for the HTTP endpoints of mcpstack: the Streamable HTTP
// endpoint in mcp, the protected resource metadata in auth, and the
// authorization server's endpoints in authserver.
//
// A [Policy] names the origins it admits: either exact origins
// (scheme://host[:port]), answered with the request's own origin and
// Vary: Origin, or any origin, answered with "*". It never sends
// Access-Control-Allow-Credentials: the endpoints it serves take their
// credentials in the Authorization header, which a page sets itself and
// which needs no credentials mode, only a listed request header; cookies
// are not read cross-origin.
package cors

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Any, as the only entry of Config.Origins, admits every origin.
const Any = "*"

// Config describes a Policy.
type Config struct {
	// Origins lists the origins admitted, such as "https://app.example.com"
	// or "http://localhost:6274": a scheme (http or https), a host and an
	// optional port, with no path, query or user information; [Any] alone
	// admits every origin. Empty admits none.
	Origins []string
	// Methods lists the methods a preflight may ask for.
	Methods []string
	// Headers lists the request headers a preflight may ask for.
	Headers []string
	// Expose lists the response headers a page may read beyond the
	// CORS-safelisted ones.
	Expose []string
	// MaxAge is how long a browser may keep a preflight answer; it is
	// sent in whole seconds. Zero sends no Access-Control-Max-Age.
	MaxAge time.Duration
}

// Policy answers CORS for one endpoint. Its methods are safe for
// concurrent use.
type Policy struct {
	origins []string // normalized: lower case, no trailing slash
	any     bool
	methods string
	headers string
	expose  string
	maxAge  string
}

// New checks c and returns its policy.
func New(c Config) (*Policy, error) {
	p := &Policy{
		methods: strings.Join(c.Methods, ", "),
		headers: strings.Join(c.Headers, ", "),
		expose:  strings.Join(c.Expose, ", "),
	}
	for _, list := range [][]string{c.Methods, c.Headers, c.Expose} {
		for _, t := range list {
			if !isToken(t) {
				return nil, fmt.Errorf("cors: %q is not a method or header name", t)
			}
		}
	}
	if c.MaxAge > 0 {
		p.maxAge = strconv.FormatInt(int64(c.MaxAge/time.Second), 10)
	}
	for _, o := range c.Origins {
		if o == Any {
			if len(c.Origins) > 1 {
				return nil, errors.New("cors: \"*\" must be the only origin")
			}
			p.any = true
			continue
		}
		n, err := NormalizeOrigin(o)
		if err != nil {
			return nil, err
		}
		p.origins = append(p.origins, n)
	}
	return p, nil
}

// NormalizeOrigin checks that o is a serialized origin (scheme://host with
// an optional port, as browsers send in the Origin header) and returns it
// in lower case without a trailing slash.
func NormalizeOrigin(o string) (string, error) {
	n := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(o)), "/")
	u, err := url.Parse(n)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" ||
		u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(n, "?") {
		return "", fmt.Errorf("cors: origin %q is not scheme://host[:port] with an http or https scheme", o)
	}
	return n, nil
}

// Origins returns the normalized origins p admits (nil when it admits any).
func (p *Policy) Origins() []string { return append([]string(nil), p.origins...) }

// AllowsAny reports whether p admits every origin.
func (p *Policy) AllowsAny() bool { return p.any }

// Allowed reports whether p admits origin, the value of an Origin header.
func (p *Policy) Allowed(origin string) bool {
	if origin == "" {
		return false
	}
	if p.any {
		return true
	}
	origin = strings.TrimSuffix(origin, "/")
	for _, o := range p.origins {
		if strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

// IsPreflight reports whether r is a CORS preflight request: OPTIONS with
// Origin and Access-Control-Request-Method.
func IsPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" &&
		r.Header.Get("Access-Control-Request-Method") != ""
}

// Handle does p's part of answering r. A preflight request is answered
// whole: 204 with the Access-Control-Allow-* headers when its origin is
// admitted, 403 with none when it is not; Handle then returns true. For
// any other request it sets the headers that let an admitted origin read
// the response (Access-Control-Allow-Origin and
// Access-Control-Expose-Headers), and Vary: Origin when the answer depends
// on the origin, and returns false: the caller answers the request.
func (p *Policy) Handle(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	if !p.any {
		addVary(h, "Origin")
	}
	origin := r.Header.Get("Origin")
	if IsPreflight(r) {
		if !p.Allowed(origin) {
			h.Set("Content-Type", "text/plain; charset=utf-8")
			h.Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte("Forbidden: origin not allowed\n"))
			return true
		}
		p.setOrigin(h, origin)
		if p.methods != "" {
			h.Set("Access-Control-Allow-Methods", p.methods)
		}
		if p.headers != "" {
			h.Set("Access-Control-Allow-Headers", p.headers)
		}
		if p.maxAge != "" {
			h.Set("Access-Control-Max-Age", p.maxAge)
		}
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	if p.any || p.Allowed(origin) {
		p.setOrigin(h, origin)
		if p.expose != "" {
			h.Set("Access-Control-Expose-Headers", p.expose)
		}
	}
	return false
}

// Wrap returns next behind p: preflight requests are answered by p, and
// the others get p's headers before next answers them.
func (p *Policy) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.Handle(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

func (p *Policy) setOrigin(h http.Header, origin string) {
	if p.any {
		h.Set("Access-Control-Allow-Origin", Any)
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
}

// addVary adds v to the Vary header unless it is there already, so that
// two layers of the same policy do not repeat it.
func addVary(h http.Header, v string) {
	for _, line := range h.Values("Vary") {
		for f := range strings.SplitSeq(line, ",") {
			if strings.EqualFold(strings.TrimSpace(f), v) {
				return
			}
		}
	}
	h.Add("Vary", v)
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2), the form
// of method and header names.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
