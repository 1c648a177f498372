package main

import (
	"fmt"
	"net/url"
)

// storeUnreachable returns the error for a store (flag "redis" or
// "postgres", kind "Redis" or "PostgreSQL") that failed at start: one line
// that names the flag, the URL without its password, the cause, and what
// to check. It wraps errStoreUnreachable and err.
func storeUnreachable(flag, kind, rawURL string, err error) error {
	return fmt.Errorf("--%s %s: %w: %w (check that %s runs there and the URL is right)",
		flag, redactedURL(rawURL), errStoreUnreachable, err, kind)
}

// redactedURL is rawURL with any password replaced, for messages; a URL
// that does not parse is not repeated at all (it may hold a password
// where the parser cannot find it).
func redactedURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(the URL given)"
	}
	return u.Redacted()
}
