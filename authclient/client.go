package authclient

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpstack/mcpstack/internal/oauthhttp"
	"github.com/mcpstack/mcpstack/oauth"
)

// ClientRegistration is the identity of this client at one authorization
// server: pre-registered, a Client ID Metadata Document URL, or the result
// of Dynamic Client Registration.
type ClientRegistration struct {
	// ClientID is the client identifier.
	ClientID string `json:"client_id"`
	// ClientSecret is the shared secret, for client_secret_basic and
	// client_secret_post.
	ClientSecret string `json:"client_secret,omitempty"`
	// AuthMethod is the token endpoint authentication method: "none",
	// "client_secret_basic", "client_secret_post" or "private_key_jwt".
	// Empty means client_secret_basic when there is a secret, else none.
	AuthMethod string `json:"token_endpoint_auth_method,omitempty"`
	// Key signs private_key_jwt assertions. It is never stored.
	Key *SigningKey `json:"-"`
}

// SigningKey is a private key for private_key_jwt client authentication
// (RFC 7523 §2.2).
type SigningKey struct {
	// Key is an *ecdsa.PrivateKey, *rsa.PrivateKey or ed25519.PrivateKey.
	Key crypto.Signer
	// Algorithm is the JWS algorithm, for example "ES256"; empty picks
	// ES256, RS256 or EdDSA from the key type.
	Algorithm string
	// KeyID is put in the kid header when not empty.
	KeyID string
}

// ParsePrivateKeyPEM reads a PKCS #8, PKCS #1 or SEC 1 private key in PEM
// form, as conformance suites and key tools hand them out.
func ParsePrivateKeyPEM(data []byte, algorithm string) (*SigningKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("authclient: no PEM block in private key")
	}
	var key any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("authclient: private key: %w", err)
	}
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("authclient: private key of type %T cannot sign", key)
	}
	return &SigningKey{Key: s, Algorithm: algorithm}, nil
}

func (k *SigningKey) algorithm() (jose.SignatureAlgorithm, error) {
	if k.Algorithm != "" {
		return jose.SignatureAlgorithm(k.Algorithm), nil
	}
	switch key := k.Key.(type) {
	case *ecdsa.PrivateKey:
		switch key.Curve.Params().BitSize {
		case 384:
			return jose.ES384, nil
		case 521:
			return jose.ES512, nil
		}
		return jose.ES256, nil
	case *rsa.PrivateKey:
		return jose.RS256, nil
	case ed25519.PrivateKey:
		return jose.EdDSA, nil
	}
	return "", fmt.Errorf("authclient: unsupported key type %T", k.Key)
}

// clientAssertion signs the RFC 7523 client authentication JWT: iss and sub
// are the client id, aud the authorization server's issuer.
func (k *SigningKey) clientAssertion(clientID, audience string, now time.Time) (string, error) {
	alg, err := k.algorithm()
	if err != nil {
		return "", err
	}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if k.KeyID != "" {
		opts = opts.WithHeader(jose.HeaderKey("kid"), k.KeyID)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k.Key}, opts)
	if err != nil {
		return "", fmt.Errorf("authclient: signer: %w", err)
	}
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	claims := jwt.Claims{
		Issuer:    clientID,
		Subject:   clientID,
		Audience:  jwt.Audience{audience},
		ID:        base64.RawURLEncoding.EncodeToString(jti),
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now.Add(-30 * time.Second)),
		Expiry:    jwt.NewNumericDate(now.Add(5 * time.Minute)),
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

// authMethod is the effective token endpoint authentication method.
func (c ClientRegistration) authMethod() string {
	switch {
	case c.AuthMethod != "":
		return c.AuthMethod
	case c.ClientSecret != "":
		return oauth.AuthMethodClientSecretBasic
	}
	return oauth.AuthMethodNone
}

// clientAuth is the client authentication of c at the authorization
// server issuer: private_key_jwt assertions are signed for issuer at now.
func (c ClientRegistration) clientAuth(issuer string, now time.Time) oauthhttp.ClientAuth {
	a := oauthhttp.ClientAuth{ID: c.ClientID, Secret: c.ClientSecret, Method: c.authMethod()}
	if c.Key != nil {
		a.Assertion = func() (string, error) { return c.Key.clientAssertion(c.ClientID, issuer, now) }
	}
	return a
}

// postForm sends an application/x-www-form-urlencoded POST and decodes a
// JSON answer into ok, or returns the OAuth error (oauthhttp.PostForm).
func postForm(ctx context.Context, hc *http.Client, endpoint string, form url.Values, prepare func(*http.Request, url.Values) error, ok any) (http.Header, error) {
	h, err := oauthhttp.PostForm(ctx, hc, endpoint, form, prepare, ok)
	return h, fromHTTP(err)
}

// register performs Dynamic Client Registration (RFC 7591).
func register(ctx context.Context, hc *http.Client, endpoint string, md oauth.ClientMetadata) (ClientRegistration, error) {
	if err := checkURL(endpoint); err != nil {
		return ClientRegistration{}, err
	}
	body, err := json.Marshal(md)
	if err != nil {
		return ClientRegistration{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return ClientRegistration{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	var info oauth.ClientInformation
	// RFC 7591 §3.2.1 answers 201; any 2xx is taken, as servers differ.
	if _, err := oauthhttp.Do(hc, req, 0, &info); err != nil {
		return ClientRegistration{}, fmt.Errorf("authclient: registration: %w", fromHTTP(err))
	}
	if info.ClientID == "" {
		return ClientRegistration{}, fmt.Errorf("authclient: registration at %s returned no client_id", endpoint)
	}
	method := info.TokenEndpointAuthMethod
	if method == "" {
		method = md.TokenEndpointAuthMethod
		if info.ClientSecret == "" && (method == oauth.AuthMethodClientSecretBasic || method == oauth.AuthMethodClientSecretPost) {
			// The server issued no secret: the client is public.
			method = oauth.AuthMethodNone
		}
	}
	return ClientRegistration{ClientID: info.ClientID, ClientSecret: info.ClientSecret, AuthMethod: method}, nil
}

// chooseAuthMethod picks the token endpoint authentication method to
// register with: private_key_jwt when we have a key and the server takes it,
// else none, client_secret_basic, client_secret_post in that order of
// preference among those the server supports.
func chooseAuthMethod(m oauth.AuthorizationServerMetadata, haveKey bool) string {
	supported := m.TokenEndpointAuthMethods()
	if haveKey && slices.Contains(supported, oauth.AuthMethodPrivateKeyJWT) {
		return oauth.AuthMethodPrivateKeyJWT
	}
	for _, want := range []string{oauth.AuthMethodNone, oauth.AuthMethodClientSecretBasic, oauth.AuthMethodClientSecretPost} {
		if slices.Contains(supported, want) {
			return want
		}
	}
	return oauth.AuthMethodNone
}

// requestToken sends a token request with client authentication through
// the module's one token client (oauthhttp.RetrieveToken) and returns the
// response.
// With a DPoP prover, the request carries a proof, and is sent again once
// with the server's nonce when it asks for one (RFC 9449 §8).
func requestToken(ctx context.Context, hc *http.Client, md oauth.AuthorizationServerMetadata, client ClientRegistration, form url.Values, now time.Time, dp *dpopProver) (*oauth.TokenResponse, error) {
	if md.TokenEndpoint == "" {
		return nil, fmt.Errorf("%w: %s has no token_endpoint", ErrNoMetadata, md.Issuer)
	}
	r := oauthhttp.TokenRequest{Endpoint: md.TokenEndpoint, Form: form, Auth: client.clientAuth(md.Issuer, now)}
	if dp != nil {
		r.Prepare = func(req *http.Request) error {
			p, err := dp.proof(http.MethodPost, md.TokenEndpoint, "", now)
			if err != nil {
				return err
			}
			req.Header.Set("DPoP", p)
			return nil
		}
	}
	var tr *oauth.TokenResponse
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		var h http.Header
		tr, h, err = oauthhttp.RetrieveToken(ctx, hc, r)
		if dp == nil || h == nil || !dp.remember(md.TokenEndpoint, h.Get("DPoP-Nonce")) {
			break
		}
		var e *oauth.ErrorResponse
		if !errors.As(err, &e) || e.Code != "use_dpop_nonce" {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("authclient: token request (%s): %w", form.Get("grant_type"), fromHTTP(err))
	}
	return tr, nil
}
