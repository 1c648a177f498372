package authclient

import (
	"errors"
	"fmt"
)

// Sentinel errors; the transport wraps them with %w.
var (
	// ErrPKCENotAdvertised reports authorization server metadata without
	// code_challenge_methods_supported, or without S256 in it. MCP clients
	// must refuse to proceed; see [Config.AllowUnadvertisedPKCE].
	ErrPKCENotAdvertised = errors.New("authclient: authorization server does not advertise PKCE S256")
	// ErrNoMetadata reports that no protected resource metadata or no
	// authorization server metadata could be found.
	ErrNoMetadata = errors.New("authclient: metadata not found")
	// ErrNoClient reports that no way to obtain client credentials applies:
	// nothing pre-registered, no Client ID Metadata Document support, no
	// registration endpoint and no prompt callback.
	ErrNoClient = errors.New("authclient: no client credentials for the authorization server")
	// ErrStateMismatch reports an authorization response whose state is
	// missing or differs from the one sent; the response is discarded.
	ErrStateMismatch = errors.New("authclient: authorization response state mismatch")
	// ErrNoState reports an authorization URL without a state parameter,
	// given to [LoopbackAuthorizer.Authorize]: without it the listener
	// cannot tell the real redirect from one any local process sends.
	ErrNoState = errors.New("authclient: the authorization URL has no state parameter")
	// ErrResponseIssuerMismatch reports an authorization response whose iss
	// parameter (RFC 9207 §2.4) differs from the issuer, or lacks iss
	// although the server advertised it. Metadata naming another issuer
	// than the one it was fetched for is oauth.ErrMetadataIssuerMismatch.
	ErrResponseIssuerMismatch = errors.New("authclient: authorization response issuer mismatch")
	// ErrNoCode reports an authorization response without a code.
	ErrNoCode = errors.New("authclient: authorization response has no code")
	// ErrUnsafeURL reports a URL the client refuses to use: not https (or
	// http on a loopback host), carrying a fragment or credentials, or,
	// under the guard against server-side request forgery (see
	// Config.AllowPrivateAddresses), whose host is at an address that is
	// not public.
	ErrUnsafeURL = errors.New("authclient: unsafe URL")
)

// StepUpError is the permanent failure of a request whose server keeps
// answering 403 insufficient_scope: either the scopes it asks for were
// already granted, or the attempts for this resource and operation reached
// [Config.MaxStepUps].
type StepUpError struct {
	// Resource is the server's resource identifier.
	Resource string
	// Operation identifies the request (HTTP method, path and, for JSON
	// bodies, the JSON-RPC method).
	Operation string
	// Attempts is the number of step-up authorizations made.
	Attempts int
	// Scope is the scope the server last asked for.
	Scope []string
	// Granted is the scope of the token that was refused.
	Granted []string
}

// Error implements error.
func (e *StepUpError) Error() string {
	return fmt.Sprintf("authclient: insufficient scope for %s on %s after %d step-up attempt(s): server asks for %q, granted %q",
		e.Operation, e.Resource, e.Attempts, e.Scope, e.Granted)
}

// HTTPError reports an unexpected answer from an authorization server or a
// metadata location that did not carry an OAuth error body.
type HTTPError struct {
	URL        string
	StatusCode int
	Body       string
}

// Error implements error.
func (e *HTTPError) Error() string {
	return fmt.Sprintf("authclient: %s: HTTP %d: %s", e.URL, e.StatusCode, e.Body)
}
