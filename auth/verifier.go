package auth

import (
	"context"
	"errors"
)

// A Verifier checks an access token and returns the principal it stands
// for. Verify must fail with an error matching [ErrInvalidToken] when the
// token is invalid, expired, or not issued for this server; any other
// error is taken as a failure of the verifier itself (for example an
// unreachable authorization server) and answered with 503.
type Verifier interface {
	Verify(ctx context.Context, token string) (*Principal, error)
}

// VerifierFunc adapts a function to the [Verifier] interface.
type VerifierFunc func(ctx context.Context, token string) (*Principal, error)

// Verify calls f.
func (f VerifierFunc) Verify(ctx context.Context, token string) (*Principal, error) {
	return f(ctx, token)
}

// ErrInvalidToken is matched (with errors.Is) by every error reporting a
// token that must be refused with 401 invalid_token.
var ErrInvalidToken = errors.New("auth: invalid token")

// TokenError says why a token was refused. It matches [ErrInvalidToken].
// Its Reason is safe to send to the client as error_description.
type TokenError struct {
	// Reason is a short description, such as "token expired".
	Reason string
	// Err is the underlying error, if any; it is not sent to the client.
	Err error
}

// Error implements the error interface.
func (e *TokenError) Error() string {
	if e.Err != nil {
		return "auth: invalid token: " + e.Reason + ": " + e.Err.Error()
	}
	return "auth: invalid token: " + e.Reason
}

// Unwrap returns the underlying error.
func (e *TokenError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalidToken.
func (e *TokenError) Is(target error) bool { return target == ErrInvalidToken }

func invalid(reason string, err error) error { return &TokenError{Reason: reason, Err: err} }
