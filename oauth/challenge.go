package oauth

import (
	"fmt"
	"strings"
)

// Challenge is one authentication challenge from a WWW-Authenticate header
// (RFC 7235 §2.1). A challenge carries either auth-params or a token68, never
// both.
type Challenge struct {
	// Scheme is the auth-scheme as written, for example "Bearer". Schemes
	// are case-insensitive; compare them with strings.EqualFold.
	Scheme string
	// Params maps lower-cased parameter names to their values, with
	// quoted-string values unquoted. It is nil when there are none.
	Params map[string]string
	// Token68 is the token68 form of the credentials hint, if used.
	Token68 string
}

// Param returns the value of the named parameter; the name is matched
// without regard to case. It returns "" when the parameter is absent.
func (c Challenge) Param(name string) string {
	return c.Params[strings.ToLower(name)]
}

// ParseChallenges parses the values of one or more WWW-Authenticate header
// lines, each of which may hold several comma-separated challenges, and
// returns the challenges in order.
//
// Parsing follows RFC 7235 §4.1 and RFC 7230 §7: empty list elements are
// skipped, parameter values are tokens or quoted strings (with backslash
// escapes), white space around "=" is allowed, and scheme and parameter names
// are case-insensitive. A parameter repeated within one challenge, text
// outside the grammar, or a control character is an error wrapping
// [ErrMalformedChallenge]; no challenges are returned then. Empty header
// values yield no challenges and no error.
func ParseChallenges(headers []string) ([]Challenge, error) {
	var out []Challenge
	for i, h := range headers {
		p := challengeParser{s: h}
		cs, err := p.list()
		if err != nil {
			return nil, fmt.Errorf("%w: header %d, offset %d: %s", ErrMalformedChallenge, i, p.pos, err.msg)
		}
		out = append(out, cs...)
	}
	return out, nil
}

type parseError struct{ msg string }

type challengeParser struct {
	s   string
	pos int
}

func (p *challengeParser) fail(msg string) *parseError { return &parseError{msg} }

func (p *challengeParser) eof() bool { return p.pos >= len(p.s) }

// skipOWS skips spaces and tabs and reports how many it skipped.
func (p *challengeParser) skipOWS() int {
	start := p.pos
	for !p.eof() && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
	return p.pos - start
}

// skipSeparators skips white space and empty list elements.
func (p *challengeParser) skipSeparators() {
	for !p.eof() && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t' || p.s[p.pos] == ',') {
		p.pos++
	}
}

func (p *challengeParser) token() string {
	start := p.pos
	for !p.eof() && isTChar(p.s[p.pos]) {
		p.pos++
	}
	return p.s[start:p.pos]
}

// list parses: 1#challenge.
func (p *challengeParser) list() ([]Challenge, *parseError) {
	var out []Challenge
	for {
		p.skipSeparators()
		if p.eof() {
			return out, nil
		}
		c, err := p.challenge()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
}

// challenge parses: auth-scheme [ 1*SP ( token68 / #auth-param ) ].
// It stops at the end of input or at the comma that starts the next
// challenge.
func (p *challengeParser) challenge() (Challenge, *parseError) {
	var c Challenge
	c.Scheme = p.token()
	if c.Scheme == "" {
		return c, p.fail("expected an auth-scheme")
	}
	ws := p.skipOWS()
	if p.eof() || p.s[p.pos] == ',' {
		return c, nil
	}
	if ws == 0 {
		return c, p.fail("expected white space after the auth-scheme")
	}
	if t, ok := p.token68(); ok {
		// token68 has checked that only white space and then the end or
		// a comma follow.
		c.Token68 = t
		p.skipOWS()
		return c, nil
	}
	for {
		name := p.token()
		if name == "" {
			return c, p.fail("expected a parameter name")
		}
		p.skipOWS()
		if p.eof() || p.s[p.pos] != '=' {
			return c, p.fail("expected '=' after parameter name")
		}
		p.pos++
		p.skipOWS()
		value, err := p.value()
		if err != nil {
			return c, err
		}
		key := strings.ToLower(name)
		if _, dup := c.Params[key]; dup {
			return c, p.fail("parameter " + key + " repeated")
		}
		if c.Params == nil {
			c.Params = make(map[string]string)
		}
		c.Params[key] = value
		p.skipOWS()
		if p.eof() {
			return c, nil
		}
		if p.s[p.pos] != ',' {
			return c, p.fail("expected ',' after parameter value")
		}
		// A comma ends this parameter. What follows is another parameter
		// if it is a token followed by '=', otherwise a new challenge.
		mark := p.pos
		p.skipSeparators()
		if p.eof() {
			return c, nil
		}
		next := p.pos
		p.token()
		p.skipOWS()
		isParam := p.pos > next && !p.eof() && p.s[p.pos] == '='
		if !isParam {
			p.pos = mark
			return c, nil
		}
		p.pos = next
	}
}

// token68 parses token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" /
// "/" ) *"=" if it is the whole credentials hint, that is if it is followed by
// optional white space and then the end or a comma. Otherwise it consumes
// nothing.
func (p *challengeParser) token68() (string, bool) {
	start := p.pos
	i := start
	for i < len(p.s) && (isUnreserved(p.s[i]) || p.s[i] == '+' || p.s[i] == '/') {
		i++
	}
	if i == start {
		return "", false
	}
	for i < len(p.s) && p.s[i] == '=' {
		i++
	}
	end := i
	for i < len(p.s) && (p.s[i] == ' ' || p.s[i] == '\t') {
		i++
	}
	if i < len(p.s) && p.s[i] != ',' {
		return "", false
	}
	p.pos = end
	return p.s[start:end], true
}

// value parses token / quoted-string.
func (p *challengeParser) value() (string, *parseError) {
	if p.eof() {
		return "", p.fail("missing parameter value")
	}
	if p.s[p.pos] != '"' {
		t := p.token()
		if t == "" {
			return "", p.fail("expected a token or quoted-string value")
		}
		return t, nil
	}
	p.pos++
	// Fast path: no escapes, so the value is a substring.
	start := p.pos
	for i := start; i < len(p.s); i++ {
		c := p.s[i]
		if c == '"' {
			p.pos = i + 1
			return p.s[start:i], nil
		}
		if c == '\\' || c != '\t' && (c < 0x20 || c == 0x7f) {
			break
		}
	}
	var b strings.Builder
	for !p.eof() {
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c == '\\':
			p.pos++
			if p.eof() {
				return "", p.fail("unterminated quoted-string")
			}
			e := p.s[p.pos]
			if e != '\t' && (e < 0x20 || e == 0x7f) {
				return "", p.fail("control character in quoted-pair")
			}
			b.WriteByte(e)
		case c == '\t' || c >= 0x20 && c != 0x7f:
			b.WriteByte(c)
		default:
			return "", p.fail("control character in quoted-string")
		}
		p.pos++
	}
	return "", p.fail("unterminated quoted-string")
}

// isTChar reports tchar (RFC 7230 §3.2.6).
func isTChar(c byte) bool {
	return isAlpha(c) || isDigit(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// BearerChallenge is the parsed form of a Bearer challenge (RFC 6750 §3,
// RFC 9728 §5.1). An MCP server sends one with every 401 and with a 403 for
// insufficient scope; its String method writes the header value.
type BearerChallenge struct {
	// Realm is the protection space, rarely used by MCP.
	Realm string
	// ResourceMetadata is the URL of the protected resource metadata
	// document (RFC 9728 §5.1).
	ResourceMetadata string
	// Scope lists the scopes needed; the client treats them as
	// authoritative for the request that was refused.
	Scope []string
	// Error is the error code, for example [InvalidToken] or
	// [InsufficientScope]; empty when the request had no credentials.
	Error ErrorCode
	// ErrorDescription is human-readable text for developers.
	ErrorDescription string
	// ErrorURI links to a page describing the error.
	ErrorURI string
}

// AsBearer converts c to a [BearerChallenge] if its scheme is Bearer. A
// Bearer challenge that uses the token68 form yields empty fields.
func (c Challenge) AsBearer() (BearerChallenge, bool) {
	if !strings.EqualFold(c.Scheme, "Bearer") {
		return BearerChallenge{}, false
	}
	return BearerChallenge{
		Realm:            c.Params["realm"],
		ResourceMetadata: c.Params["resource_metadata"],
		Scope:            ParseScope(c.Params["scope"]),
		Error:            ErrorCode(c.Params["error"]),
		ErrorDescription: c.Params["error_description"],
		ErrorURI:         c.Params["error_uri"],
	}, true
}

// ParseBearerChallenge parses WWW-Authenticate header values and returns the
// first Bearer challenge. It reports false if the headers do not parse (see
// [ParseChallenges]) or hold no Bearer challenge.
func ParseBearerChallenge(headers []string) (BearerChallenge, bool) {
	cs, err := ParseChallenges(headers)
	if err != nil {
		return BearerChallenge{}, false
	}
	for _, c := range cs {
		if b, ok := c.AsBearer(); ok {
			return b, true
		}
	}
	return BearerChallenge{}, false
}

// String returns the challenge as a WWW-Authenticate header value, for
// example
//
//	Bearer resource_metadata="https://a/.well-known/oauth-protected-resource", scope="files:read", error="insufficient_scope"
//
// Parameters appear in a fixed order (realm, resource_metadata, scope, error,
// error_description, error_uri) and empty ones are left out. Every value is a
// quoted-string with '"' and '\' escaped; control characters other than tab,
// which a header cannot carry, are replaced by spaces.
func (b BearerChallenge) String() string {
	var s strings.Builder
	s.WriteString("Bearer")
	first := true
	add := func(name, value string) {
		if value == "" {
			return
		}
		if first {
			s.WriteByte(' ')
			first = false
		} else {
			s.WriteString(", ")
		}
		s.WriteString(name)
		s.WriteString(`="`)
		for i := 0; i < len(value); i++ {
			switch c := value[i]; {
			case c == '"' || c == '\\':
				s.WriteByte('\\')
				s.WriteByte(c)
			case c != '\t' && (c < 0x20 || c == 0x7f):
				s.WriteByte(' ')
			default:
				s.WriteByte(c)
			}
		}
		s.WriteByte('"')
	}
	add("realm", b.Realm)
	add("resource_metadata", b.ResourceMetadata)
	add("scope", JoinScope(b.Scope))
	add("error", string(b.Error))
	add("error_description", b.ErrorDescription)
	add("error_uri", b.ErrorURI)
	return s.String()
}
