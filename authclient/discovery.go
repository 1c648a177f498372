package authclient

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpstack/mcpstack/internal/httpbody"
	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/oauth"
)

// maxDocument bounds a metadata or token response body.
const maxDocument = 1 << 20

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

// getJSON fetches url and decodes a JSON object into v. It reports found =
// false for answers other than 200, so that a caller can try the next URL.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) (found bool, err error) {
	if err := checkURL(u); err != nil {
		return false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return false, fmt.Errorf("authclient: GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxDocument))
		return false, nil
	}
	// A body cut by the deadline can end in a clean EOF: httpbody.Read
	// refuses it whatever the read returned (#16.6).
	body, err := httpbody.Read(ctx, resp, maxDocument)
	if err != nil {
		return false, fmt.Errorf("authclient: GET %s: %w", u, err)
	}
	if err := strictjson.Unmarshal(body, v); err != nil {
		return true, fmt.Errorf("authclient: GET %s: %w", u, err)
	}
	return true, nil
}

// checkURL refuses URLs that are not https, except http on a loopback host,
// and URLs with user information or a fragment.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrUnsafeURL, raw, err)
	}
	switch {
	case u.User != nil:
		return fmt.Errorf("%w: %q carries credentials", ErrUnsafeURL, raw)
	case u.Fragment != "":
		return fmt.Errorf("%w: %q has a fragment", ErrUnsafeURL, raw)
	case u.Host == "":
		return fmt.Errorf("%w: %q has no host", ErrUnsafeURL, raw)
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%w: %q: only https (or http to a loopback host) is allowed", ErrUnsafeURL, raw)
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

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
// the well-known locations in order. It returns nil, nil when none exists.
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
	for _, u := range urls {
		var m oauth.ProtectedResourceMetadata
		found, err := getJSON(ctx, hc, u, &m)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		if !resourceCovers(m.Resource, serverURL) {
			return nil, fmt.Errorf("%w: metadata at %s names %q, server is %q", oauth.ErrResourceMismatch, u, m.Resource, serverURL)
		}
		if len(m.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("%w: metadata at %s lists no authorization_servers", oauth.ErrInvalidMetadata, u)
		}
		return &m, nil
	}
	return nil, nil
}

// discoverAuthorizationServer fetches the metadata of issuer from the
// locations MCP names, in order, and checks it.
//
// In legacy (2025-03-26) mode the metadata found at the server's origin may
// name an issuer with a path on that origin: 2025-03-26 servers publish it
// there, before issuer paths were taken into account.
func discoverAuthorizationServer(ctx context.Context, hc *http.Client, issuer string, allowNoPKCE, legacy bool) (oauth.AuthorizationServerMetadata, error) {
	urls, err := oauth.AuthorizationServerMetadataURLs(issuer)
	if err != nil {
		return oauth.AuthorizationServerMetadata{}, err
	}
	for _, u := range urls {
		var m oauth.AuthorizationServerMetadata
		found, err := getJSON(ctx, hc, u, &m)
		if err != nil {
			return m, err
		}
		if !found {
			continue
		}
		if err := m.CheckIssuer(issuer); err != nil && !(legacy && sameOrigin(m.Issuer, issuer)) {
			return m, fmt.Errorf("authclient: metadata at %s: %w", u, err)
		}
		if err := m.Validate(); err != nil {
			return m, fmt.Errorf("authclient: metadata at %s: %w", u, err)
		}
		if !allowNoPKCE && !m.SupportsS256() {
			return m, fmt.Errorf("%w: %s (code_challenge_methods_supported = %q)", ErrPKCENotAdvertised, issuer, m.CodeChallengeMethodsSupported)
		}
		for _, e := range []string{m.AuthorizationEndpoint, m.TokenEndpoint, m.RegistrationEndpoint} {
			if e != "" {
				if err := checkURL(e); err != nil {
					return m, err
				}
			}
		}
		return m, nil
	}
	return oauth.AuthorizationServerMetadata{}, fmt.Errorf("%w: no authorization server metadata for %s (tried %s)", ErrNoMetadata, issuer, strings.Join(urls, ", "))
}

// sameOrigin reports whether two URLs have the same scheme, host and port.
func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Scheme == ub.Scheme && strings.EqualFold(ua.Host, ub.Host)
}
