package auth_test

import (
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpstack/mcpstack/internal/oauthtest"
	"github.com/mcpstack/mcpstack/oauth"
)

// testAS is the test authorization server shared with package
// authclient's tests (internal/oauthtest).
type testAS = oauthtest.Server

// newTestAS starts one as this package's tests want it: a confidential
// client "mcp-server" for client credentials, token exchange and
// introspection, and tokens that live an hour.
func newTestAS(t testing.TB) *testAS {
	return oauthtest.New(t, func(s *oauthtest.Server) {
		s.ClientID, s.ClientSecret = "mcp-server", "s3cret"
		s.TTL = 3600
		s.GrantTypes = []string{oauth.GrantAuthorizationCode, oauth.GrantClientCredentials}
		s.AuthMethods = []string{oauth.AuthMethodClientSecretBasic, oauth.AuthMethodClientSecretPost}
	})
}

// unsigned returns a token with alg "none".
func unsigned(as *testAS, claims map[string]any) string {
	return b64json(map[string]any{"alg": "none", "typ": "at+jwt", "kid": as.Current().KID}) + "." + b64json(claims) + "."
}

// hmacWithPublicKey returns a token signed with HS256 using the published
// public key (its JWK JSON and its DER encoding are both common choices of
// the attack; the JWK is used here) as the secret.
func hmacWithPublicKey(t testing.TB, as *testAS, claims map[string]any) string {
	k := as.Current()
	pub, _ := json.Marshal(jose.JSONWebKey{Key: &k.Priv.PublicKey, KeyID: k.KID, Algorithm: "ES256", Use: "sig"})
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: pub}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", k.KID))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func b64json(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func mustKey(t testing.TB) *ecdsa.PrivateKey { return oauthtest.NewKey(t) }
