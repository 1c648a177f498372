package mcp

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MetaKeyError reports a _meta key that breaks the protocol's key syntax.
type MetaKeyError struct {
	// Key is the offending key.
	Key string
	// Reason says what is wrong with it.
	Reason string
}

// Error implements the error interface.
func (e *MetaKeyError) Error() string {
	return "mcp: invalid _meta key " + strconv.Quote(e.Key) + ": " + e.Reason
}

// ValidMetaKey reports whether key is a well-formed _meta key, returning
// nil if it is and a *MetaKeyError saying why if it is not.
//
// A key is an optional prefix followed by a name. The prefix is one or more
// labels separated by dots and ended by a slash; each label starts with an
// ASCII letter, ends with an ASCII letter or digit, and has only letters,
// digits and hyphens in between. The name is empty or starts and ends with
// an ASCII letter or digit, with letters, digits, hyphens, underscores and
// dots in between. So "progressToken", "com.example/x", "com.example/" and
// "" (no prefix, empty name) are keys; "/x", "a..b/x", "-a/x", "1a/x" and
// "a/b/c" are not.
func ValidMetaKey(key string) error {
	name := key
	if i := strings.IndexByte(key, '/'); i >= 0 {
		if strings.IndexByte(key[i+1:], '/') >= 0 {
			return &MetaKeyError{Key: key, Reason: "key has more than one '/'"}
		}
		if reason := checkMetaPrefix(key[:i]); reason != "" {
			return &MetaKeyError{Key: key, Reason: reason}
		}
		name = key[i+1:]
	}
	if reason := checkMetaName(name); reason != "" {
		return &MetaKeyError{Key: key, Reason: reason}
	}
	return nil
}

// IsReservedMetaPrefix reports whether prefix, with or without its final
// '/', is a well-formed _meta key prefix reserved for the protocol: one
// whose second label is "modelcontextprotocol" or "mcp" (compared without
// regard to ASCII case). So "io.modelcontextprotocol/", "dev.mcp/" and
// "io.mcp.x/" are reserved; "com.example.mcp/" and "mcp/" are not.
func IsReservedMetaPrefix(prefix string) bool {
	prefix = strings.TrimSuffix(prefix, "/")
	if checkMetaPrefix(prefix) != "" {
		return false
	}
	i := strings.IndexByte(prefix, '.')
	if i < 0 {
		return false
	}
	second := prefix[i+1:]
	if j := strings.IndexByte(second, '.'); j >= 0 {
		second = second[:j]
	}
	return strings.EqualFold(second, "modelcontextprotocol") || strings.EqualFold(second, "mcp")
}

// MetaKeyReserved reports whether key has a prefix reserved for the
// protocol (see IsReservedMetaPrefix). Keys without a prefix, such as
// "progressToken", are not reserved by this rule even where the protocol
// defines them.
func MetaKeyReserved(key string) bool {
	i := strings.IndexByte(key, '/')
	if i < 0 {
		return false
	}
	return IsReservedMetaPrefix(key[:i])
}

// ValidateMeta checks every key of m with ValidMetaKey. It returns nil if
// all are valid and otherwise the *MetaKeyError of the smallest invalid key
// in byte order, so that the result does not depend on map iteration order.
func ValidateMeta(m Meta) error {
	var bad []string
	for k := range m {
		if ValidMetaKey(k) != nil {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return ValidMetaKey(slices.Min(bad))
}

// checkMetaPrefix returns why p (a prefix without its '/') is malformed, or
// "" if it is well formed.
func checkMetaPrefix(p string) string {
	if p == "" {
		return "prefix before '/' is empty"
	}
	start := 0
	for n := 1; ; n++ {
		end := strings.IndexByte(p[start:], '.')
		if end < 0 {
			end = len(p)
		} else {
			end += start
		}
		if reason := checkMetaLabel(p[start:end], n); reason != "" {
			return reason
		}
		if end == len(p) {
			return ""
		}
		start = end + 1
	}
}

func checkMetaLabel(l string, n int) string {
	if l == "" {
		return "prefix label " + strconv.Itoa(n) + " is empty"
	}
	if !isASCIILetter(l[0]) {
		return "prefix label " + strconv.Quote(l) + " must start with a letter, not " + quoteFirstRune(l)
	}
	for i := 1; i < len(l); i++ {
		c := l[i]
		if !isASCIIAlnum(c) && c != '-' {
			return "prefix label " + strconv.Quote(l) + " has " + quoteFirstRune(l[i:]) + "; labels hold only letters, digits and hyphens"
		}
	}
	if !isASCIIAlnum(l[len(l)-1]) {
		return "prefix label " + strconv.Quote(l) + " must end with a letter or digit"
	}
	return ""
}

func checkMetaName(s string) string {
	if s == "" {
		return ""
	}
	if !isASCIIAlnum(s[0]) {
		return "name must start with a letter or digit, not " + quoteFirstRune(s)
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isASCIIAlnum(c) && c != '-' && c != '_' && c != '.' {
			return "name has " + quoteFirstRune(s[i:]) + "; names hold only letters, digits, '-', '_' and '.'"
		}
	}
	if !isASCIIAlnum(s[len(s)-1]) {
		return "name must end with a letter or digit"
	}
	return ""
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isASCIIAlnum(c byte) bool { return isASCIILetter(c) || '0' <= c && c <= '9' }

func quoteFirstRune(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	return strconv.QuoteRune(r)
}
