package oauthhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/oauth"
)

// ClientAssertionType is the client_assertion_type of private_key_jwt
// client authentication (RFC 7523 §2.2).
const ClientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// ErrAuthMethod reports a client authentication method this package does
// not implement, or private_key_jwt without an Assertion.
var ErrAuthMethod = errors.New("unsupported client authentication")

// ClientAuth is how a client authenticates at a token, introspection or
// revocation endpoint (RFC 6749 §2.3).
type ClientAuth struct {
	// ID and Secret are the client's credentials.
	ID, Secret string
	// Method is the token_endpoint_auth_method: oauth.AuthMethodNone,
	// AuthMethodClientSecretBasic, AuthMethodClientSecretPost or
	// AuthMethodPrivateKeyJWT. The caller resolves its own default; an
	// empty Method is an error.
	Method string
	// Assertion returns the signed RFC 7523 client assertion, for
	// private_key_jwt. It is called once per request.
	Assertion func() (string, error)
}

// Apply adds the client authentication to a request about to be sent
// with form as its body: the Authorization header for
// client_secret_basic, form members for the others.
func (a ClientAuth) Apply(req *http.Request, form url.Values) error {
	switch a.Method {
	case oauth.AuthMethodNone:
		form.Set("client_id", a.ID)
	case oauth.AuthMethodClientSecretBasic:
		// RFC 6749 §2.3.1: both parts are form-urlencoded first.
		req.SetBasicAuth(url.QueryEscape(a.ID), url.QueryEscape(a.Secret))
	case oauth.AuthMethodClientSecretPost:
		form.Set("client_id", a.ID)
		form.Set("client_secret", a.Secret)
	case oauth.AuthMethodPrivateKeyJWT:
		if a.Assertion == nil {
			return fmt.Errorf("%w: client %q uses private_key_jwt without a key", ErrAuthMethod, a.ID)
		}
		s, err := a.Assertion()
		if err != nil {
			return err
		}
		form.Set("client_id", a.ID)
		form.Set("client_assertion_type", ClientAssertionType)
		form.Set("client_assertion", s)
	default:
		return fmt.Errorf("%w: %q", ErrAuthMethod, a.Method)
	}
	return nil
}

// TokenRequest is one request to a token endpoint, for any grant: the
// grant's members are in Form, the client's authentication in Auth.
type TokenRequest struct {
	// Endpoint is the token endpoint.
	Endpoint string
	// Form holds grant_type and the grant's parameters. RetrieveToken
	// does not modify it.
	Form url.Values
	// Auth authenticates the client.
	Auth ClientAuth
	// Prepare, when not nil, runs after Auth is applied, for headers of
	// the caller's own (a DPoP proof, RFC 9449 §5).
	Prepare func(*http.Request) error
	// MaxBody bounds the answer; 0 means the package's MaxBody.
	MaxBody int64
}

// RetrieveToken sends r (RFC 6749 §3.2, under the rules of [PostForm]) and
// returns the token response, checked with
// [oauth.TokenResponse.Validate] (RFC 6749 §5.1: access_token and
// token_type present, expires_in not negative), with the answer's header
// (which carries a DPoP-Nonce, RFC 9449 §8) whenever an answer came. An
// error answer is a *StatusError unwrapping to its *oauth.ErrorResponse
// (RFC 6749 §5.2), and so is a 200 answer carrying an OAuth error (as
// GitHub sends them). What the token type must be is the caller's rule.
// It is the one token client of the module, for every grant.
func RetrieveToken(ctx context.Context, hc *http.Client, r TokenRequest) (*oauth.TokenResponse, http.Header, error) {
	form := make(url.Values, len(r.Form)+3)
	for k, v := range r.Form {
		form[k] = v
	}
	var raw json.RawMessage
	h, err := postForm(ctx, hc, r.Endpoint, form, func(req *http.Request, f url.Values) error {
		if err := r.Auth.Apply(req, f); err != nil {
			return err
		}
		if r.Prepare != nil {
			return r.Prepare(req)
		}
		return nil
	}, r.MaxBody, &raw)
	if err != nil {
		return nil, h, fmt.Errorf("token endpoint: %w", err)
	}
	// Some providers (GitHub) answer an error with status 200: it is an
	// error all the same, not a token response missing its token.
	var e oauth.ErrorResponse
	if strictjson.Unmarshal(raw, &e) == nil && e.Code != "" {
		return nil, h, fmt.Errorf("token endpoint: %w", &StatusError{URL: r.Endpoint, StatusCode: http.StatusOK, OAuth: &e})
	}
	var t oauth.TokenResponse
	if err := strictjson.Unmarshal(raw, &t); err != nil {
		return nil, h, fmt.Errorf("token endpoint %s: %w", r.Endpoint, err)
	}
	if err := t.Validate(); err != nil {
		return nil, h, fmt.Errorf("token endpoint %s: %w", r.Endpoint, err)
	}
	return &t, h, nil
}
