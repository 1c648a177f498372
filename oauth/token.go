package oauth

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// ErrorCode is an OAuth error code, the "error" member of an error response
// or the error parameter of a Bearer challenge.
type ErrorCode string

// Standard error codes.
const (
	// RFC 6749 §4.1.2.1 and §5.2 (authorization and token endpoints).
	InvalidRequest          ErrorCode = "invalid_request"
	InvalidClient           ErrorCode = "invalid_client"
	InvalidGrant            ErrorCode = "invalid_grant"
	UnauthorizedClient      ErrorCode = "unauthorized_client"
	UnsupportedGrantType    ErrorCode = "unsupported_grant_type"
	InvalidScope            ErrorCode = "invalid_scope"
	AccessDenied            ErrorCode = "access_denied"
	UnsupportedResponseType ErrorCode = "unsupported_response_type"
	ServerError             ErrorCode = "server_error"
	TemporarilyUnavailable  ErrorCode = "temporarily_unavailable"

	// RFC 6750 §3.1 (resource servers).
	InvalidToken      ErrorCode = "invalid_token"
	InsufficientScope ErrorCode = "insufficient_scope"

	// RFC 7591 §3.2.2 (client registration).
	InvalidClientMetadata ErrorCode = "invalid_client_metadata"
	InvalidRedirectURI    ErrorCode = "invalid_redirect_uri"

	// RFC 8707 §2 (resource indicators).
	InvalidTarget ErrorCode = "invalid_target"
)

// HTTPStatus returns the HTTP status code that usually accompanies the error
// in a direct (non-redirect) response: 401 for invalid_client and
// invalid_token, 403 for insufficient_scope and access_denied, 500 for
// server_error, 503 for temporarily_unavailable and 400 for everything else,
// unknown codes included.
func (c ErrorCode) HTTPStatus() int {
	switch c {
	case InvalidClient, InvalidToken:
		return http.StatusUnauthorized
	case InsufficientScope, AccessDenied:
		return http.StatusForbidden
	case ServerError:
		return http.StatusInternalServerError
	case TemporarilyUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusBadRequest
	}
}

// ErrorResponse is an OAuth error response body (RFC 6749 §5.2, RFC 7591
// §3.2.2). It implements error, so a client can return it as is.
type ErrorResponse struct {
	Code        ErrorCode `json:"error"`
	Description string    `json:"error_description,omitempty"`
	URI         string    `json:"error_uri,omitempty"`
}

// Error returns "oauth: " followed by the code and, if present, the
// description.
func (e *ErrorResponse) Error() string {
	s := "oauth: " + string(e.Code)
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// Is makes errors.Is(err, &ErrorResponse{Code: c}) true for any
// ErrorResponse with code c. A target with a Description must match it too.
func (e *ErrorResponse) Is(target error) bool {
	t, ok := target.(*ErrorResponse)
	if !ok || t == nil {
		return false
	}
	return t.Code == e.Code && (t.Description == "" || t.Description == e.Description)
}

// TokenResponse is a successful token endpoint response (RFC 6749 §5.1),
// with the OpenID Connect id_token and the RFC 8693 issued_token_type.
type TokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	// ExpiresIn is the access token lifetime in seconds; 0 means unknown.
	// When decoding, a numeric string such as "3600" is also accepted.
	ExpiresIn       int64  `json:"expires_in,omitempty"`
	RefreshToken    string `json:"refresh_token,omitempty"`
	Scope           string `json:"scope,omitempty"`
	IDToken         string `json:"id_token,omitempty"`
	IssuedTokenType string `json:"issued_token_type,omitempty"`

	// Extra holds members not listed above, kept verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

type tokenResponseFields TokenResponse

// MarshalJSON encodes the response with its Extra members.
func (t TokenResponse) MarshalJSON() ([]byte, error) {
	return marshalWithExtra(tokenResponseFields(t), t.Extra)
}

// UnmarshalJSON decodes the response, keeping unknown members in Extra.
func (t *TokenResponse) UnmarshalJSON(data []byte) error {
	var w struct {
		tokenResponseFields
		ExpiresIn json.RawMessage `json:"expires_in,omitempty"`
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	n, err := parseExpiresIn(w.ExpiresIn)
	if err != nil {
		return err
	}
	extra, err := unknownMembers(data, tokenResponseFields{})
	if err != nil {
		return err
	}
	*t = TokenResponse(w.tokenResponseFields)
	t.ExpiresIn = n
	t.Extra = extra
	return nil
}

// parseExpiresIn accepts an integer, a string holding one, or null.
func parseExpiresIn(raw json.RawMessage) (int64, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return 0, nil
	}
	if s[0] == '"' {
		if err := strictjson.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("oauth: expires_in: not an integer: %q", s)
	}
	return n, nil
}

// Validate checks the members RFC 6749 §5.1 requires: access_token and
// token_type, and a non-negative expires_in.
func (t TokenResponse) Validate() error {
	switch {
	case t.AccessToken == "":
		return invalid("access_token", "missing")
	case t.TokenType == "":
		return invalid("token_type", "missing")
	case t.ExpiresIn < 0:
		return invalid("expires_in", "negative")
	}
	return nil
}

// IsBearer reports whether the token type is Bearer, ignoring case
// (RFC 6749 §5.1).
func (t TokenResponse) IsBearer() bool { return strings.EqualFold(t.TokenType, "Bearer") }

// Expiry returns when the access token expires if it was issued at now, or
// the zero time if the lifetime is unknown (ExpiresIn <= 0). Lifetimes too
// large for a time.Duration are capped.
func (t TokenResponse) Expiry(now time.Time) time.Time {
	if t.ExpiresIn <= 0 {
		return time.Time{}
	}
	secs := min(t.ExpiresIn, int64(math.MaxInt64/int64(time.Second)))
	return now.Add(time.Duration(secs) * time.Second)
}

// Scopes returns the granted scope as a list (see [ParseScope]).
func (t TokenResponse) Scopes() []string { return ParseScope(t.Scope) }
