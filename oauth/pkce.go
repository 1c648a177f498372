package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
)

// PKCE method names (RFC 7636 §4.2).
const (
	// MethodS256 is the SHA-256 code challenge method, the one MCP clients
	// must use.
	MethodS256 = "S256"
	// MethodPlain sends the verifier itself as the challenge. This package
	// never produces it.
	MethodPlain = "plain"
)

// Verifier length limits (RFC 7636 §4.1).
const (
	MinVerifierLen = 43
	MaxVerifierLen = 128
)

// NewVerifier returns a fresh PKCE code verifier: 32 bytes from crypto/rand,
// base64url-encoded without padding, which gives 43 characters from the
// unreserved set as RFC 7636 §4.1 recommends.
func NewVerifier() (string, error) {
	v, err := randomString(rand.Reader, 32)
	if err != nil {
		return "", fmt.Errorf("oauth: code verifier: %w", err)
	}
	return v, nil
}

// NewState returns a fresh unguessable value for the OAuth state parameter
// (or an OpenID Connect nonce): 32 bytes from crypto/rand, base64url-encoded
// without padding. The caller stores it, compares it exactly when the
// authorization response arrives, and uses it once.
func NewState() (string, error) {
	v, err := randomString(rand.Reader, 32)
	if err != nil {
		return "", fmt.Errorf("oauth: state: %w", err)
	}
	return v, nil
}

func randomString(r io.Reader, n int) (string, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// S256Challenge returns the S256 code challenge for a verifier:
// BASE64URL(SHA256(ASCII(verifier))) without padding (RFC 7636 §4.2).
func S256Challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// VerifyS256 reports whether verifier is a syntactically valid code verifier
// (see [ValidVerifier]) whose S256 challenge equals challenge. The comparison
// runs in constant time.
func VerifyS256(verifier, challenge string) bool {
	if !ValidVerifier(verifier) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(S256Challenge(verifier)), []byte(challenge)) == 1
}

// ValidVerifier reports whether v is a code verifier allowed by RFC 7636 §4.1:
// 43 to 128 characters from ALPHA / DIGIT / "-" / "." / "_" / "~".
func ValidVerifier(v string) bool {
	if len(v) < MinVerifierLen || len(v) > MaxVerifierLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isUnreserved(v[i]) {
			return false
		}
	}
	return true
}
