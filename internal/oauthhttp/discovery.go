package oauthhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/mcpstack/mcpstack/oauth"
)

// ErrNoMetadata reports that none of the locations tried holds a document:
// each answered a redirect (refused) or a 4xx.
var ErrNoMetadata = errors.New("metadata not found")

// IsAbsent reports whether err, from [GetJSON], means "no document here,
// try the next location": a refused redirect or a 4xx. Any other failure
// (a 5xx, a network error, a document that does not parse) stops
// discovery: the location exists and is broken, and falling through to
// another location would hide that, or find a different document.
func IsAbsent(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && (se.StatusCode/100 == 3 || se.StatusCode/100 == 4)
}

// FirstJSON fetches each of urls in turn with [GetJSON] until one holds a
// document, decodes it into a fresh T and returns it with its URL. Absent
// documents ([IsAbsent]) are skipped; every other failure ends the search.
// When none holds one, the error wraps ErrNoMetadata and every location's
// failure.
func FirstJSON[T any](ctx context.Context, hc *http.Client, urls []string) (T, string, error) {
	return firstJSON[T](ctx, hc, urls, MaxBody)
}

func firstJSON[T any](ctx context.Context, hc *http.Client, urls []string, limit int64) (T, string, error) {
	var errs []error
	for _, u := range urls {
		var v T
		err := getJSON(ctx, hc, u, limit, &v)
		if err == nil {
			return v, u, nil
		}
		if !IsAbsent(err) {
			var zero T
			return zero, u, err
		}
		errs = append(errs, err)
	}
	var zero T
	return zero, "", fmt.Errorf("%w: %w", ErrNoMetadata, errors.Join(errs...))
}

// DiscoverOptions adjusts [DiscoverAuthorizationServer].
type DiscoverOptions struct {
	// AcceptIssuer, when not nil, is asked about metadata whose issuer is
	// not exactly the one asked for, and may accept it: 2025-03-26 MCP
	// servers publish their metadata at their origin, naming an issuer with
	// a path. Nil keeps RFC 8414 §3.3: exact match or refusal.
	AcceptIssuer func(got string) bool
	// MaxBody bounds each answer; 0 means the package's MaxBody.
	MaxBody int64
}

// DiscoverAuthorizationServer fetches the metadata of the authorization
// server issuer from the locations of
// [oauth.AuthorizationServerMetadataURLs] (RFC 8414 §3.1, then OpenID
// Connect Discovery 1.0 §4), in order, under the rules of [FirstJSON], and
// checks it: the issuer is a URL [CheckURL] accepts; the document names
// exactly that issuer (RFC 8414 §3.3, errors wrapping
// oauth.ErrMetadataIssuerMismatch); it passes
// [oauth.AuthorizationServerMetadata.Validate] (RFC 8414 §2); and every
// endpoint it lists passes CheckURL. Rules of one kind of caller only (PKCE
// S256 advertised, for clients) are the caller's.
func DiscoverAuthorizationServer(ctx context.Context, hc *http.Client, issuer string, opts DiscoverOptions) (oauth.AuthorizationServerMetadata, error) {
	var zero oauth.AuthorizationServerMetadata
	if err := CheckURL(issuer); err != nil {
		return zero, fmt.Errorf("issuer: %w", err)
	}
	urls, err := oauth.AuthorizationServerMetadataURLs(issuer)
	if err != nil {
		return zero, fmt.Errorf("issuer: %w", err)
	}
	m, at, err := firstJSON[oauth.AuthorizationServerMetadata](ctx, hc, urls, opts.MaxBody)
	if err != nil {
		return zero, fmt.Errorf("authorization server %s: %w", issuer, err)
	}
	if err := CheckMetadata(m, issuer, opts); err != nil {
		return zero, fmt.Errorf("metadata at %s: %w", at, err)
	}
	return m, nil
}

// CheckMetadata applies the checks of [DiscoverAuthorizationServer] to
// metadata m obtained for issuer.
func CheckMetadata(m oauth.AuthorizationServerMetadata, issuer string, opts DiscoverOptions) error {
	if err := m.CheckIssuer(issuer); err != nil && (opts.AcceptIssuer == nil || !opts.AcceptIssuer(m.Issuer)) {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	for _, e := range [...]string{m.Issuer, m.AuthorizationEndpoint, m.TokenEndpoint, m.RegistrationEndpoint,
		m.RevocationEndpoint, m.IntrospectionEndpoint, m.JWKSURI, m.UserinfoEndpoint} {
		if e == "" {
			continue
		}
		if err := CheckURL(e); err != nil {
			return err
		}
	}
	return nil
}
