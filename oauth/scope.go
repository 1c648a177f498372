package oauth

import "strings"

// ParseScope splits a scope string into its scope tokens. Tokens are
// separated by spaces (RFC 6749 §3.3); runs of spaces and leading or trailing
// spaces produce no empty tokens. It returns nil for a string with no tokens.
func ParseScope(s string) []string {
	var out []string
	for tok := range strings.SplitSeq(s, " ") {
		if tok != "" {
			out = append(out, tok)
		}
	}
	return out
}

// JoinScope joins scope tokens with single spaces, skipping empty tokens.
func JoinScope(scopes []string) string {
	var b strings.Builder
	for _, s := range scopes {
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	return b.String()
}

// MergeScopes returns the scopes of a followed by those of b that are not
// already present, each once, in first-seen order. Empty tokens are dropped.
// It returns nil if there are no scopes.
func MergeScopes(a, b []string) []string {
	var out []string
	seen := make(map[string]bool, len(a)+len(b))
	for _, list := range [2][]string{a, b} {
		for _, s := range list {
			if s != "" && !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// HasAllScopes reports whether every non-empty scope in required appears in
// granted. Scope tokens are compared exactly (they are case-sensitive).
func HasAllScopes(granted, required []string) bool {
	have := make(map[string]bool, len(granted))
	for _, s := range granted {
		have[s] = true
	}
	for _, s := range required {
		if s != "" && !have[s] {
			return false
		}
	}
	return true
}
