package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Rotate adds a new signing key, which signs from now on, and returns its
// kid; older keys stay published until DropOld.
func (s *Server) Rotate() string {
	priv := NewKey(s.t)
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.generation++
	kid := fmt.Sprintf("k%d", s.generation)
	s.keys = append(s.keys, SigningKey{KID: kid, Priv: priv})
	return kid
}

// DropOld unpublishes every key but the current one.
func (s *Server) DropOld() {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.keys = s.keys[len(s.keys)-1:]
}

// Current returns the key that signs.
func (s *Server) Current() SigningKey {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.keys[len(s.keys)-1]
}

// Claims returns the claims of a valid access token for sub, audience aud
// (a string or a list) and scopes; tests change them to break one rule at
// a time.
func (s *Server) Claims(sub string, aud any, scopes ...string) map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": s.Issuer(), "sub": sub, "aud": aud, "client_id": "client-" + sub,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"jti": fmt.Sprint(now.UnixNano()), "scope": strings.Join(scopes, " "),
	}
}

// Sign signs claims with the current key as an at+jwt (RFC 9068).
func (s *Server) Sign(claims map[string]any) string {
	return s.SignWith(s.Current(), "at+jwt", claims)
}

// SignWith signs claims with k, with typ as the JWS typ header.
func (s *Server) SignWith(k SigningKey, typ string, claims map[string]any) string {
	return s.signWith(k, typ, claims)
}

func (s *Server) signWith(k SigningKey, typ string, claims map[string]any) string {
	opts := (&jose.SignerOptions{}).WithType(jose.ContentType(typ))
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: k.Priv, KeyID: k.KID}}, opts)
	if err != nil {
		s.t.Fatal(err)
	}
	tok, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		s.t.Fatal(err)
	}
	return tok
}

// NewKey returns a new P-256 key.
func NewKey(t interface{ Fatal(...any) }) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
