package authclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpstack/mcpstack/internal/strictjson"
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
// for a token it revoked and for one it did not know.
func (t *Transport) revoke(ctx context.Context, hc *http.Client, endpoint, issuer string, client ClientRegistration, token, hint string) error {
	if err := checkURL(endpoint); err != nil {
		return err
	}
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, nil)
	if err != nil {
		return err
	}
	if err := client.authenticate(req, form, issuer, t.now()); err != nil {
		return err
	}
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("revoke %s: %w", hint, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	var e oauth.ErrorResponse
	if resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnauthorized {
		if strictjson.Unmarshal(data, &e) == nil && e.Code != "" {
			return fmt.Errorf("revoke %s: %w", hint, &e)
		}
	}
	if len(data) > 200 {
		data = data[:200]
	}
	return fmt.Errorf("revoke %s: %w", hint, &HTTPError{URL: req.URL.Redacted(), StatusCode: resp.StatusCode, Body: string(data)})
}
