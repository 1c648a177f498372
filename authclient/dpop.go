package authclient

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/oauth"
)

// dpopProver makes DPoP proofs (RFC 9449) with one key and remembers the
// nonces servers hand out, per origin.
type dpopProver struct {
	signer jose.Signer
	alg    jose.SignatureAlgorithm

	mu     sync.Mutex
	nonces map[string]string
}

func newDPoPProver(key crypto.Signer) (*dpopProver, error) {
	if key == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		key = k
	}
	alg, err := (&SigningKey{Key: key}).algorithm()
	if err != nil {
		return nil, err
	}
	opts := (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt")
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		return nil, err
	}
	return &dpopProver{signer: s, alg: alg, nonces: map[string]string{}}, nil
}

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// proof returns a proof for a request with method to target (query and
// fragment dropped), bound to accessToken when not empty.
func (p *dpopProver) proof(method, target, accessToken string, now time.Time) (string, error) {
	u, err := url.Parse(target)
	if err != nil {
		return "", err
	}
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	htu := *u
	htu.RawQuery, htu.Fragment, htu.RawFragment = "", "", ""
	claims := map[string]any{
		"jti": base64.RawURLEncoding.EncodeToString(jti),
		"htm": method,
		"htu": htu.String(),
		"iat": now.Unix(),
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	p.mu.Lock()
	if n := p.nonces[origin(u)]; n != "" {
		claims["nonce"] = n
	}
	p.mu.Unlock()
	return jwt.Signed(p.signer).Claims(claims).Serialize()
}

// remember stores a nonce the server at target sent; it reports whether
// the nonce is new.
func (p *dpopProver) remember(target, nonce string) bool {
	u, err := url.Parse(target)
	if err != nil || nonce == "" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.nonces[origin(u)] == nonce {
		return false
	}
	p.nonces[origin(u)] = nonce
	return true
}

// dpopAlgs returns the authorization server's
// dpop_signing_alg_values_supported.
func dpopAlgs(md oauth.AuthorizationServerMetadata) []string {
	var algs []string
	if raw, ok := md.Extra["dpop_signing_alg_values_supported"]; ok {
		strictjson.Unmarshal(raw, &algs)
	}
	return algs
}

// usesDPoP reports whether tokens from md should be DPoP-bound: the
// transport has DPoP on and the server supports the prover's algorithm.
func (t *Transport) usesDPoP(md oauth.AuthorizationServerMetadata) bool {
	if t.dpop == nil {
		return false
	}
	alg := string(t.dpopAlg)
	return slices.Contains(dpopAlgs(md), alg)
}

// challenge is a Bearer or DPoP challenge, with its scheme.
type challenge struct {
	oauth.BearerChallenge
	dpop bool
}

// parseChallenge returns the first Bearer or DPoP challenge of a
// WWW-Authenticate header.
func parseChallenge(values []string) challenge {
	cs, err := oauth.ParseChallenges(values)
	if err != nil {
		return challenge{}
	}
	for _, c := range cs {
		if b, ok := c.AsBearer(); ok {
			return challenge{BearerChallenge: b}
		}
		if strings.EqualFold(c.Scheme, "DPoP") {
			return challenge{dpop: true, BearerChallenge: oauth.BearerChallenge{
				ResourceMetadata: c.Param("resource_metadata"),
				Scope:            oauth.ParseScope(c.Param("scope")),
				Error:            oauth.ErrorCode(c.Param("error")),
				ErrorDescription: c.Param("error_description"),
			}}
		}
	}
	return challenge{}
}
