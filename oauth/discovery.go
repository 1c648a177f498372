package oauth

import (
	"fmt"
	"strings"
)

// Well-known path prefixes used for discovery.
const (
	// WellKnownProtectedResource is the RFC 9728 well-known path.
	WellKnownProtectedResource = "/.well-known/oauth-protected-resource"
	// WellKnownAuthorizationServer is the RFC 8414 well-known path.
	WellKnownAuthorizationServer = "/.well-known/oauth-authorization-server"
	// WellKnownOpenIDConfiguration is the OpenID Connect Discovery 1.0 path.
	WellKnownOpenIDConfiguration = "/.well-known/openid-configuration"
)

// ProtectedResourceMetadataURLs returns the URLs a client tries, in order,
// to find the protected resource metadata of the MCP server at serverURL when
// the 401 challenge gave no resource_metadata parameter:
//
//  1. the path-specific URL, with the well-known path inserted between the
//     host and the server's path (RFC 9728 §3.1);
//  2. the root URL {origin}/.well-known/oauth-protected-resource.
//
// For a server at the root path only the root URL is returned. serverURL is
// first put in canonical form (see [CanonicalResource]), so its trailing
// slash is dropped as RFC 9728 §3.1 requires; a query, if any, follows the
// path in the first URL.
func ProtectedResourceMetadataURLs(serverURL string) ([]string, error) {
	c, err := canonicalize(serverURL)
	if err != nil {
		return nil, err
	}
	root := c.origin() + WellKnownProtectedResource
	specific := root + c.path
	if c.hasQuery {
		specific += "?" + c.query
	}
	if specific == root {
		return []string{root}, nil
	}
	return []string{specific, root}, nil
}

// AuthorizationServerMetadataURLs returns the URLs a client tries, in order,
// to find the metadata of the authorization server identified by issuer.
//
// For an issuer with a path, such as https://auth.example.com/t1:
//
//  1. https://auth.example.com/.well-known/oauth-authorization-server/t1
//  2. https://auth.example.com/.well-known/openid-configuration/t1
//  3. https://auth.example.com/t1/.well-known/openid-configuration
//
// For an issuer without a path:
//
//  1. https://auth.example.com/.well-known/oauth-authorization-server
//  2. https://auth.example.com/.well-known/openid-configuration
//
// A terminating slash of the issuer path is removed first (RFC 8414 §3.1,
// OpenID Connect Discovery §4). The issuer must be an http or https URL with
// no query or fragment; scheme and host are lower-cased. The metadata found
// must still name exactly this issuer (see
// [AuthorizationServerMetadata.CheckIssuer]).
func AuthorizationServerMetadataURLs(issuer string) ([]string, error) {
	c, err := canonicalize(issuer)
	if err != nil {
		return nil, err
	}
	if c.hasQuery {
		return nil, fmt.Errorf("%w: issuer %q: must not contain a query", ErrInvalidURI, issuer)
	}
	o := c.origin()
	if c.path == "" {
		return []string{o + WellKnownAuthorizationServer, o + WellKnownOpenIDConfiguration}, nil
	}
	return []string{
		o + WellKnownAuthorizationServer + c.path,
		o + WellKnownOpenIDConfiguration + c.path,
		o + c.path + WellKnownOpenIDConfiguration,
	}, nil
}

// ProtectedResourceMetadataPath returns the path at which a server whose MCP
// endpoint is at resourcePath serves its protected resource metadata:
// WellKnownProtectedResource followed by resourcePath without its trailing
// slashes. "" and "/" give the root path. A missing leading slash is added.
//
// For example "/mcp" gives "/.well-known/oauth-protected-resource/mcp".
func ProtectedResourceMetadataPath(resourcePath string) string {
	p := strings.TrimRight(resourcePath, "/")
	if p == "" {
		return WellKnownProtectedResource
	}
	if p[0] != '/' {
		p = "/" + p
	}
	return WellKnownProtectedResource + p
}
