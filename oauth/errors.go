package oauth

import "errors"

// Sentinel errors. Functions in this package wrap them with %w, so callers
// can test for them with [errors.Is].
var (
	// ErrInvalidURI reports a string that is not a URI acceptable for the
	// purpose at hand (for example a resource identifier with a fragment).
	ErrInvalidURI = errors.New("oauth: invalid URI")

	// ErrMalformedChallenge reports a WWW-Authenticate value that does not
	// follow the RFC 7235 challenge grammar.
	ErrMalformedChallenge = errors.New("oauth: malformed WWW-Authenticate challenge")

	// ErrInvalidMetadata reports a metadata document (authorization server,
	// protected resource or client) that breaks a rule of its specification.
	// Validation errors are [*ValidationError] values that unwrap to it.
	ErrInvalidMetadata = errors.New("oauth: invalid metadata")

	// ErrMetadataIssuerMismatch reports authorization server metadata whose
	// issuer is not the one the metadata was fetched for (RFC 8414 §3.3).
	// It is not authclient.ErrResponseIssuerMismatch, the RFC 9207 check
	// of an authorization response's iss parameter.
	ErrMetadataIssuerMismatch = errors.New("oauth: metadata issuer mismatch")

	// ErrResourceMismatch reports protected resource metadata whose resource
	// is not the one the metadata was fetched for (RFC 9728 §3.3).
	ErrResourceMismatch = errors.New("oauth: resource mismatch")
)

// ValidationError describes the first rule a metadata document breaks.
// It unwraps to [ErrInvalidMetadata].
type ValidationError struct {
	// Field is the JSON member at fault, for example "redirect_uris".
	Field string
	// Reason says what is wrong with it, in lower case.
	Reason string
}

// Error implements the error interface.
func (e *ValidationError) Error() string {
	return "oauth: invalid metadata: " + e.Field + ": " + e.Reason
}

// Unwrap returns [ErrInvalidMetadata].
func (e *ValidationError) Unwrap() error { return ErrInvalidMetadata }

func invalid(field, reason string) error {
	return &ValidationError{Field: field, Reason: reason}
}
