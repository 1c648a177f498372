package oauth

import (
	"errors"
	"net/netip"
	"strings"
)

// uriParts holds the components of an absolute URI as written (RFC 3986 §3).
type uriParts struct {
	scheme       string // as written; compare with strings.EqualFold
	hasAuthority bool
	hasUserinfo  bool
	host         string // as written; an IP literal keeps its brackets
	hasPort      bool   // a ':' follows the host, possibly with no digits
	port         string
	path         string
	hasQuery     bool
	query        string
	hasFragment  bool
	fragment     string
}

// serverProblem says what keeps u from naming a server that a client may
// send requests or credentials to: no host, userinfo (credentials in the
// URL, RFC 3986 §3.2.1), or a fragment (meaningless to a server, RFC 3986
// §3.5). It returns "" when there is none of these.
func (u uriParts) serverProblem() string {
	switch {
	case !u.hasAuthority || u.host == "":
		return "missing host"
	case u.hasUserinfo:
		return "must not contain userinfo"
	case u.hasFragment:
		return "must not contain a fragment"
	}
	return ""
}

// splitURI reads an absolute URI strictly by RFC 3986: every byte must be an
// allowed URI character, percent escapes must be complete, and an IP literal
// must be a valid IPv6 address without a zone. It does not decode anything.
func splitURI(s string) (uriParts, error) {
	var u uriParts
	if s == "" {
		return u, errors.New("empty")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isURIChar(c) {
			return u, errors.New("contains a character not allowed in a URI")
		}
		if c == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return u, errors.New("contains an incomplete percent escape")
			}
		}
	}
	// scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
	colon := strings.IndexByte(s, ':')
	if colon <= 0 || strings.ContainsAny(s[:colon], "/?#") {
		return u, errors.New("not absolute: missing scheme")
	}
	u.scheme = s[:colon]
	if !isAlpha(u.scheme[0]) {
		return u, errors.New("scheme does not start with a letter")
	}
	for i := 1; i < len(u.scheme); i++ {
		c := u.scheme[i]
		if !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return u, errors.New("invalid character in scheme")
		}
	}
	rest := s[colon+1:]
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		u.hasFragment = true
		u.fragment = rest[i+1:]
		rest = rest[:i]
		if strings.IndexByte(u.fragment, '#') >= 0 {
			return u, errors.New("more than one '#'")
		}
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		u.hasQuery = true
		u.query = rest[i+1:]
		rest = rest[:i]
	}
	if strings.HasPrefix(rest, "//") {
		u.hasAuthority = true
		rest = rest[2:]
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		auth := rest[:end]
		rest = rest[end:]
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			u.hasUserinfo = true
			if strings.ContainsAny(auth[:at], "[]") {
				return u, errors.New("invalid userinfo")
			}
			auth = auth[at+1:]
		}
		if strings.HasPrefix(auth, "[") {
			end := strings.IndexByte(auth, ']')
			if end < 0 {
				return u, errors.New("unterminated IP literal")
			}
			u.host = auth[:end+1]
			auth = auth[end+1:]
			addr, err := netip.ParseAddr(u.host[1 : len(u.host)-1])
			if err != nil || !addr.Is6() || addr.Zone() != "" {
				return u, errors.New("invalid IP literal")
			}
		} else {
			end := strings.IndexByte(auth, ':')
			if end < 0 {
				end = len(auth)
			}
			u.host = auth[:end]
			auth = auth[end:]
			for i := 0; i < len(u.host); i++ {
				if c := u.host[i]; !isUnreserved(c) && !isSubDelim(c) && c != '%' {
					return u, errors.New("invalid character in host")
				}
			}
		}
		if auth != "" {
			if auth[0] != ':' {
				return u, errors.New("invalid authority")
			}
			u.hasPort = true
			u.port = auth[1:]
			for i := 0; i < len(u.port); i++ {
				if !isDigit(u.port[i]) {
					return u, errors.New("invalid port")
				}
			}
		}
	}
	u.path = rest
	for i := 0; i < len(u.path); i++ {
		if c := u.path[i]; !isPChar(c) && c != '/' {
			return u, errors.New("invalid character in path")
		}
	}
	for _, part := range [...]string{u.query, u.fragment} {
		for i := 0; i < len(part); i++ {
			if c := part[i]; !isPChar(c) && c != '/' && c != '?' {
				return u, errors.New("invalid character in query or fragment")
			}
		}
	}
	return u, nil
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isUnreserved reports unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~".
func isUnreserved(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == '-' || c == '.' || c == '_' || c == '~'
}

// isSubDelim reports sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" /
// "+" / "," / ";" / "=".
func isSubDelim(c byte) bool { return strings.IndexByte("!$&'()*+,;=", c) >= 0 }

// isPChar reports pchar = unreserved / pct-encoded / sub-delims / ":" / "@"
// (the '%' of pct-encoded is checked elsewhere).
func isPChar(c byte) bool {
	return isUnreserved(c) || isSubDelim(c) || c == ':' || c == '@' || c == '%'
}

// isURIChar reports whether c may appear anywhere in a URI.
func isURIChar(c byte) bool {
	return isPChar(c) || strings.IndexByte("/?#[]", c) >= 0
}

// normalizePercent applies RFC 3986 §6.2.2.2: escapes of unreserved
// characters are decoded and the hex digits of the others are upper-cased.
// The input must have complete escapes (splitURI checks this).
func normalizePercent(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		v := unhex(s[i+1])<<4 | unhex(s[i+2])
		if isUnreserved(v) {
			b.WriteByte(v)
		} else {
			b.WriteByte('%')
			b.WriteByte(upperHex(s[i+1]))
			b.WriteByte(upperHex(s[i+2]))
		}
		i += 2
	}
	return b.String()
}

func unhex(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func upperHex(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

// lowerOutsideEscapes lower-cases ASCII letters except the hex digits of
// percent escapes (which normalizePercent upper-cases).
func lowerOutsideEscapes(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); i++ {
		if b[i] == '%' {
			i += 2
			continue
		}
		if 'A' <= b[i] && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

// removeDotSegments implements RFC 3986 §5.2.4 for an absolute path.
func removeDotSegments(in string) string {
	if !strings.Contains(in, ".") {
		return in
	}
	var out []string // segments, each written with its leading '/'
	for in != "" {
		switch {
		case strings.HasPrefix(in, "../"):
			in = in[3:]
		case strings.HasPrefix(in, "./"):
			in = in[2:]
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case in == "/..":
			in = "/"
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case in == "." || in == "..":
			in = ""
		default:
			start := 0
			if in[0] == '/' {
				start = 1
			}
			end := strings.IndexByte(in[start:], '/')
			if end < 0 {
				end = len(in)
			} else {
				end += start
			}
			out = append(out, in[:end])
			in = in[end:]
		}
	}
	return strings.Join(out, "")
}
