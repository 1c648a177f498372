package authclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mcpstack/mcpstack/internal/oauthhttp"
	"github.com/mcpstack/mcpstack/oauth"
)

// ErrNoRevocation is returned, wrapped, by [Transport.Logout] when the
// authorization server advertises no revocation endpoint: the tokens were
// forgotten locally but stay valid at the server until they expire.
var ErrNoRevocation = errors.New("authclient: the authorization server has no revocation endpoint")

// Logout ends the client's authorization for the MCP server at serverURL:
// it revokes the refresh token and then the access token at the
// authorization server's revocation endpoint (RFC 7009), with the client's
// authentication, and removes the token from the transport and its
// [Store]. The client registration is kept, so that logging in again does
// not register the client again.
//
// The token is forgotten locally even when revocation fails; the error
// then says why (an *oauth.ErrorResponse or *HTTPError, or ErrNoRevocation
// when the server offers no revocation). Logout with no token is a no-op.
func (t *Transport) Logout(ctx context.Context, serverURL string) error {
	u, err := url.Parse(serverURL)
	if err != nil {
		return fmt.Errorf("authclient: logout: %w", err)
	}
	s := t.server(u)
	return s.exclusive(ctx, func() error { return t.logout(ctx, s, serverURL) })
}

// logout is Logout once it runs alone.
func (t *Transport) logout(ctx context.Context, s *server, serverURL string) error {
	var err error
	_, d := s.state()
	if d == nil {
		if d, err = t.discover(ctx, serverURL, oauth.BearerChallenge{}); err != nil {
			return fmt.Errorf("authclient: logout: %w", err)
		}
	}
	key := Key{Resource: d.Resource, Issuer: d.Issuer}
	entry, err := t.store.Load(ctx, key)
	if err != nil {
		return fmt.Errorf("authclient: logout: %w", err)
	}
	s.mu.Lock()
	tok := s.token
	s.token = nil
	clear(s.attempts)
	s.mu.Unlock()
	if entry != nil && entry.Token != nil {
		tok = entry.Token
	}
	if tok == nil {
		return nil
	}
	var errs []error
	if entry != nil {
		entry.Token = nil
		if err := t.store.Save(ctx, key, entry); err != nil {
			errs = append(errs, err)
		}
	}
	endpoint := d.Metadata.RevocationEndpoint
	switch {
	case endpoint == "":
		errs = append(errs, ErrNoRevocation)
	case entry == nil || entry.Client == nil:
		errs = append(errs, ErrNoClient)
	default:
		client := t.withKey(*entry.Client)
		// The refresh token first: revoking it may revoke the access
		// tokens of its grant too (RFC 7009 §2.1), and it is the one
		// that lives longer.
		if tok.RefreshToken != "" {
			if err := t.revoke(ctx, t.httpOf(d), endpoint, d.Issuer, client, tok.RefreshToken, "refresh_token"); err != nil {
				errs = append(errs, err)
			}
		}
		if err := t.revoke(ctx, t.httpOf(d), endpoint, d.Issuer, client, tok.AccessToken, "access_token"); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("authclient: logout: %w", err)
	}
	return nil
}

// revoke sends one RFC 7009 revocation request. The server answers 200
// for a token it revoked and for one it did not know (§2.2); the body of
// that answer means nothing and is dropped.
func (t *Transport) revoke(ctx context.Context, hc *http.Client, endpoint, issuer string, client ClientRegistration, token, hint string) error {
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	_, err := oauthhttp.PostForm(ctx, hc, endpoint, form, client.clientAuth(issuer, t.now()).Apply, nil)
	if err != nil {
		return fmt.Errorf("revoke %s: %w", hint, fromHTTP(err))
	}
	return nil
}
