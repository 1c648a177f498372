package authclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpstack/mcpstack/internal/netguard"
	"github.com/mcpstack/mcpstack/internal/oauthhttp"
	"github.com/mcpstack/mcpstack/oauth"
)

// Discovery is what the transport learned about a server and its
// authorization server.
type Discovery struct {
	// ServerURL is the MCP endpoint the request went to.
	ServerURL string
	// Resource is the resource identifier sent as the RFC 8707 resource
	// parameter: the metadata's resource, or the canonical server URI when
	// no metadata was found and pre-configured values were used.
	Resource string
	// ResourceMetadata is the protected resource metadata, nil when none was
	// found and [Config.AuthorizationServer] was used instead.
	ResourceMetadata *oauth.ProtectedResourceMetadata
	// Issuer is the chosen authorization server.
	Issuer string
	// Metadata is the authorization server's metadata.
	Metadata oauth.AuthorizationServerMetadata

	hc *http.Client // talks to the authorization server: guarded unless the MCP server is local
}

// The HTTP side of this package (what an authorization server may answer,
// redirects refused, bodies bounded, the https rule, RFC 8414 discovery,
// the token endpoint) is the module's one OAuth HTTP client,
// internal/oauthhttp, shared with package auth; fromHTTP gives its errors
// this package's documented types.

// fromHTTP maps an error of package oauthhttp to the types this package
// documents: an OAuth error answer is its *oauth.ErrorResponse, another
// unexpected answer an *HTTPError, a URL or address refused wraps
// ErrUnsafeURL, no metadata wraps ErrNoMetadata. Other errors are wrapped
// with this package's prefix.
func fromHTTP(err error) error {
	var se *oauthhttp.StatusError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrUnsafeURL), errors.Is(err, ErrNoMetadata):
		return err
	case errors.Is(err, oauthhttp.ErrNoMetadata):
		// Before the StatusErrors it joins: the answer is "none found".
		return fmt.Errorf("%w: %w", ErrNoMetadata, err)
	case errors.As(err, &se) && se.OAuth != nil:
		return se.OAuth
	case errors.As(err, &se):
		body := se.Body
		if errors.Is(se, oauthhttp.ErrRedirect) {
			body = oauthhttp.ErrRedirect.Error()
		}
		return &HTTPError{URL: se.URL, StatusCode: se.StatusCode, Body: body}
	case errors.Is(err, oauthhttp.ErrInsecureURL), errors.Is(err, netguard.ErrForbidden):
		return fmt.Errorf("%w: %w", ErrUnsafeURL, err)
	}
	return fmt.Errorf("authclient: %w", err)
}

// checkURL refuses URLs that are not https, except http on a loopback host,
// and URLs with user information or a fragment (oauthhttp.CheckURL), with
// an error wrapping ErrUnsafeURL.
func checkURL(raw string) error { return fromHTTP(oauthhttp.CheckURL(raw)) }

// resourceCovers reports whether the protected resource identifier resource
// names the server at serverURL: same canonical scheme, host and port, and a
// path that equals the server's or is a prefix of it ending at a segment
// boundary. An MCP endpoint https://h/mcp is thus covered by https://h/mcp
// and by https://h, but not by https://h/other or https://evil/mcp.
func resourceCovers(resource, serverURL string) bool {
	r, err := oauth.CanonicalResource(resource)
	if err != nil {
		return false
	}
	s, err := oauth.CanonicalResource(serverURL)
	if err != nil {
		return false
	}
	if r == s {
		return true
	}
	if strings.Contains(r, "?") {
		return false
	}
	ru, _ := url.Parse(r)
	su, _ := url.Parse(s)
	if ru == nil || su == nil || ru.Scheme != su.Scheme || ru.Host != su.Host {
		return false
	}
	if ru.Path == "" {
		return true
	}
	return strings.HasPrefix(su.Path, ru.Path+"/") || su.Path == ru.Path
}

// discoverResource finds the protected resource metadata of the server at
// serverURL: from the challenge's resource_metadata when given, else from
// the well-known locations in order (RFC 9728 §3). It returns nil, nil when
// none exists.
func discoverResource(ctx context.Context, hc *http.Client, serverURL, fromChallenge string) (*oauth.ProtectedResourceMetadata, error) {
	var urls []string
	if fromChallenge != "" {
		urls = []string{fromChallenge}
	} else {
		var err error
		if urls, err = oauth.ProtectedResourceMetadataURLs(serverURL); err != nil {
			return nil, err
		}
	}
	m, u, err := oauthhttp.FirstJSON[oauth.ProtectedResourceMetadata](ctx, hc, urls)
	if errors.Is(err, oauthhttp.ErrNoMetadata) {
		return nil, nil
	}
	if err != nil {
		return nil, fromHTTP(err)
	}
	if !resourceCovers(m.Resource, serverURL) {
		return nil, fmt.Errorf("%w: metadata at %s names %q, server is %q", oauth.ErrResourceMismatch, u, m.Resource, serverURL)
	}
	if len(m.AuthorizationServers) == 0 {
		return nil, fmt.Errorf("%w: metadata at %s lists no authorization_servers", oauth.ErrInvalidMetadata, u)
	}
	return &m, nil
}

// discoverAuthorizationServer fetches the metadata of issuer from the
// locations MCP names, in order, and checks it
// (oauthhttp.DiscoverAuthorizationServer), then that it advertises PKCE
// S256, as MCP requires of clients, unless allowNoPKCE.
//
// In legacy (2025-03-26) mode the metadata found at the server's origin may
// name an issuer with a path on that origin: 2025-03-26 servers publish it
// there, before issuer paths were taken into account.
func discoverAuthorizationServer(ctx context.Context, hc *http.Client, issuer string, allowNoPKCE, legacy bool) (oauth.AuthorizationServerMetadata, error) {
	var opts oauthhttp.DiscoverOptions
	if legacy {
		opts.AcceptIssuer = func(got string) bool { return sameOrigin(got, issuer) }
	}
	m, err := oauthhttp.DiscoverAuthorizationServer(ctx, hc, issuer, opts)
	if err != nil {
		return m, fromHTTP(err)
	}
	if !allowNoPKCE && !m.SupportsS256() {
		return m, fmt.Errorf("%w: %s (code_challenge_methods_supported = %q)", ErrPKCENotAdvertised, issuer, m.CodeChallengeMethodsSupported)
	}
	return m, nil
}

// sameOrigin reports whether two URLs have the same scheme, host and port.
func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Scheme == ub.Scheme && strings.EqualFold(ua.Host, ub.Host)
}
