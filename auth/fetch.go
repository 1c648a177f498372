package auth

import (
	"context"
	"fmt"
	"net/http"

	"github.com/mcpstack/mcpstack/internal/oauthhttp"
	"github.com/mcpstack/mcpstack/oauth"
)

// DefaultHTTPTimeout bounds each call to the authorization server (metadata,
// keys, introspection, token endpoint) when no HTTP client is given.
const DefaultHTTPTimeout = oauthhttp.DefaultTimeout

// The HTTP side of this package (what an authorization server may answer,
// redirects refused, bodies bounded, the https rule) is the module's one
// OAuth HTTP client, internal/oauthhttp, shared with package authclient.

// secureURL reports whether raw is an https URL, or an http URL on a
// loopback host (for development and tests), without userinfo or
// fragment: oauthhttp.CheckURL.
func secureURL(raw string) bool { return oauthhttp.CheckURL(raw) == nil }

// httpClient returns hc, or a client with DefaultHTTPTimeout.
func httpClient(hc *http.Client) *http.Client {
	if hc == nil {
		return &http.Client{Timeout: DefaultHTTPTimeout}
	}
	return hc
}

// getJSON fetches a JSON document with GET and decodes it into v.
func getJSON(ctx context.Context, hc *http.Client, rawURL string, v any) error {
	if err := oauthhttp.GetJSON(ctx, httpClient(hc), rawURL, v); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	return nil
}

// discover fetches and checks the metadata of the authorization server
// issuer (RFC 8414, OpenID Connect Discovery): see
// oauthhttp.DiscoverAuthorizationServer.
func discover(ctx context.Context, hc *http.Client, issuer string) (oauth.AuthorizationServerMetadata, error) {
	m, err := oauthhttp.DiscoverAuthorizationServer(ctx, httpClient(hc), issuer, oauthhttp.DiscoverOptions{})
	if err != nil {
		return m, fmt.Errorf("auth: %w", err)
	}
	return m, nil
}

// clientAuth is the client authentication of this server at its
// authorization server: client_secret_basic unless method says otherwise.
func clientAuth(id, secret, method string) oauthhttp.ClientAuth {
	if method == "" {
		method = oauth.AuthMethodClientSecretBasic
	}
	return oauthhttp.ClientAuth{ID: id, Secret: secret, Method: method}
}
