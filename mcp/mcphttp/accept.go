package mcphttp

import (
	"mime"
	"strings"
)

// The media types a request accepts and sends (moved out of handler.go,
// which the file-size rule bounds).

// acceptsBoth reports whether an Accept header lists both JSON and SSE
// (wildcards count).
func acceptsBoth(values []string) bool {
	j, e := accepts(values)
	return j && e
}

func acceptsEventStream(values []string) bool {
	_, e := accepts(values)
	return e
}

func accepts(values []string) (jsonOK, sseOK bool) {
	if len(values) == 1 && values[0] == "application/json, text/event-stream" {
		return true, true // what most clients send, ours included
	}
	for _, v := range values {
		for v != "" {
			part := v
			if i := strings.IndexByte(v, ','); i >= 0 {
				part, v = v[:i], v[i+1:]
			} else {
				v = ""
			}
			if i := strings.IndexByte(part, ';'); i >= 0 {
				part = part[:i]
			}
			mt := strings.TrimSpace(part)
			switch {
			case equalLower(mt, "application/json"), equalLower(mt, "application/*"):
				jsonOK = true
			case equalLower(mt, "text/event-stream"), equalLower(mt, "text/*"):
				sseOK = true
			case mt == "*/*":
				jsonOK, sseOK = true, true
			}
		}
	}
	return jsonOK, sseOK
}

// equalLower reports whether s, lower-cased, is lower, which is lower
// case ASCII without 'k' (the only ASCII letter that a non-ASCII rune,
// the Kelvin sign, lower-cases to), so that comparing ASCII letters
// case-insensitively agrees with strings.ToLower(s) == lower.
func equalLower(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func isJSONContentType(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}
