package authserver

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/oauth"
)

// Display strings: what a client says about itself (client_name above all)
// ends up on the login and consent pages, where a user decides whom to
// trust. Characters that are invisible or that reorder the text around them
// let a client show one name and be another: U+202E (RIGHT-TO-LEFT
// OVERRIDE) turns "moc.elgoog" into "google.com" on screen, NUL and other
// controls cut or hide text, and zero-width characters make two different
// names look the same (Unicode Technical Report #36 §2, "Bidirectional Text
// Spoofing"; RFC 7591 §5 warns of client_name spoofing).

// displayRefused reports whether r must not appear in a display string:
//
//   - control characters (Cc: C0 with NUL, tab and newline, DEL, C1);
//   - format characters (Cf: the bidirectional embeddings, overrides,
//     isolates and marks U+202A-U+202E, U+2066-U+2069, U+200E, U+200F,
//     U+061C; zero-width space U+200B and word joiner U+2060; U+FEFF; the
//     soft hyphen; the tag characters), except ZERO WIDTH NON-JOINER and
//     ZERO WIDTH JOINER, which Persian, Indic scripts and emoji need and
//     which reorder nothing;
//   - line and paragraph separators U+2028, U+2029;
//   - noncharacters (U+FDD0-U+FDEF and the last two of every plane).
func displayRefused(r rune) bool {
	switch {
	case r == '\u200C' || r == '\u200D':
		return false
	case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r):
		return true
	case r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE:
		return true
	}
	return false
}

// checkDisplayString returns a description of the first character of s
// that cannot be shown safely (or of invalid UTF-8), or "" if there is none.
func checkDisplayString(s string) string {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return fmt.Sprintf("is not valid UTF-8 (byte %d)", i)
			}
			continue
		}
		if displayRefused(r) {
			return fmt.Sprintf("contains %U, a control, invisible or text-direction character that would hide or disguise what users see", r)
		}
	}
	return ""
}

// checkMetadataStrings checks every string of client metadata (registered,
// or read from a Client ID Metadata Document) with checkDisplayString:
// the members the pages show, and all the others too, since any of them
// may be shown or logged one day, and none has a reason to carry such
// characters. Members outside the struct (Extra) are checked when they
// are strings or arrays of strings, names included. The error is an
// [*oauth.ValidationError] naming the member.
func checkMetadataStrings(m oauth.ClientMetadata) error {
	fields := []struct {
		name string
		vals []string
	}{
		{"client_id", []string{m.ClientID}},
		{"client_name", []string{m.ClientName}},
		{"client_uri", []string{m.ClientURI}},
		{"logo_uri", []string{m.LogoURI}},
		{"tos_uri", []string{m.TOSURI}},
		{"policy_uri", []string{m.PolicyURI}},
		{"jwks_uri", []string{m.JWKSURI}},
		{"software_id", []string{m.SoftwareID}},
		{"software_version", []string{m.SoftwareVersion}},
		{"scope", []string{m.Scope}},
		{"token_endpoint_auth_method", []string{m.TokenEndpointAuthMethod}},
		{"token_endpoint_auth_signing_alg", []string{m.TokenEndpointAuthSigningAlg}},
		{"redirect_uris", m.RedirectURIs},
		{"contacts", m.Contacts},
		{"grant_types", m.GrantTypes},
		{"response_types", m.ResponseTypes},
	}
	for _, f := range fields {
		for _, v := range f.vals {
			if why := checkDisplayString(v); why != "" {
				return &oauth.ValidationError{Field: f.name, Reason: why}
			}
		}
	}
	for k, raw := range m.Extra {
		if why := checkDisplayString(k); why != "" {
			return &oauth.ValidationError{Field: asciiQuote(k), Reason: "the member name " + why}
		}
		var one string
		var many []string
		switch {
		case json.Unmarshal(raw, &one) == nil:
			many = []string{one}
		case json.Unmarshal(raw, &many) == nil:
		default:
			continue
		}
		for _, v := range many {
			if why := checkDisplayString(v); why != "" {
				return &oauth.ValidationError{Field: asciiQuote(k), Reason: why}
			}
		}
	}
	if why := checkScopeSyntax(m.Scope); why != "" {
		return &oauth.ValidationError{Field: "scope", Reason: why}
	}
	return nil
}

// checkScopeSyntax checks space-separated scope tokens against RFC 6749
// §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), printable ASCII
// without '"' and '\'. Scopes are shown on the consent page.
func checkScopeSyntax(scope string) string {
	for _, tok := range oauth.ParseScope(scope) {
		for i := 0; i < len(tok); i++ {
			if c := tok[i]; c < 0x21 || c > 0x7E || c == '"' || c == '\\' {
				return fmt.Sprintf("scope token %s has a character RFC 6749 section 3.3 does not allow", asciiQuote(tok))
			}
		}
	}
	return ""
}

// asciiQuote quotes an arbitrary name or value for an error description,
// which RFC 6749 §5.2 limits to printable ASCII.
func asciiQuote(s string) string { return strconv.QuoteToASCII(s) }

// visible returns s with every character displayRefused reports, and every
// byte of invalid UTF-8, written as an escape (\u202E, \x00 for a stray
// byte), so that a page shows what is there instead of obeying it. Strings
// that reached the store before the checks, clients created by the
// embedding program, request parameters and user names all pass through
// it on the pages.
func visible(s string) string {
	clean := true
	for i, r := range s {
		if displayRefused(r) || r == '\\' {
			clean = false
			break
		}
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				clean = false
				break
			}
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02X`, s[i])
		case r == '\\':
			// Escaped too, so that a literal "\u202E" in a name cannot
			// pass for an escape this function wrote.
			b.WriteString(`\\`)
		case displayRefused(r) && r > 0xFFFF:
			fmt.Fprintf(&b, `\U%08X`, r)
		case displayRefused(r):
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}
