package authserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

func TestClientAuthentication(t *testing.T) {
	a := newAS(t, trustAll, nil)
	a.addClient(t, "basic", oauth.AuthMethodClientSecretBasic, "s3cret/+", loopbackRedirect)
	a.addClient(t, "post", oauth.AuthMethodClientSecretPost, "p0st", loopbackRedirect)
	code := func(id string) url.Values {
		f := codeForm(id, a.code(t, id, loopbackRedirect, verifier), loopbackRedirect, verifier)
		return f
	}
	t.Run("basic", func(t *testing.T) {
		f := code("basic")
		f.Del("client_id")
		if st, body := a.post(t, "/token", f, "basic", "s3cret/+"); st != 200 {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("basic wrong secret", func(t *testing.T) {
		st, body := a.post(t, "/token", code("basic"), "basic", "nope")
		wantError(t, st, body, http.StatusUnauthorized, oauth.InvalidClient)
	})
	t.Run("basic client using post", func(t *testing.T) {
		f := code("basic")
		f.Set("client_secret", "s3cret/+")
		st, body := a.post(t, "/token", f)
		wantError(t, st, body, http.StatusUnauthorized, oauth.InvalidClient)
	})
	t.Run("post", func(t *testing.T) {
		f := code("post")
		f.Set("client_secret", "p0st")
		if st, body := a.post(t, "/token", f); st != 200 {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("confidential client without secret", func(t *testing.T) {
		st, body := a.post(t, "/token", code("post"))
		wantError(t, st, body, http.StatusUnauthorized, oauth.InvalidClient)
	})
}

func TestClientCredentialsAndPrivateKeyJWT(t *testing.T) {
	a := newAS(t, nil, nil)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jwks, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	if err := a.store.CreateClient(t.Context(), authserver.Client{Metadata: oauth.ClientMetadata{
		ClientID: "svc", GrantTypes: []string{oauth.GrantClientCredentials}, TokenEndpointAuthMethod: oauth.AuthMethodPrivateKeyJWT,
		JWKS: jwks,
	}}); err != nil {
		t.Fatal(err)
	}
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: "k1"}}, nil)
	assertion := func(aud, jti string, exp time.Duration) string {
		s, err := jwt.Signed(signer).Claims(jwt.Claims{Issuer: "svc", Subject: "svc", Audience: jwt.Audience{aud}, ID: jti,
			IssuedAt: jwt.NewNumericDate(time.Now()), Expiry: jwt.NewNumericDate(time.Now().Add(exp))}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	form := func(as string) url.Values {
		return url.Values{"grant_type": {"client_credentials"}, "resource": {testResource}, "scope": {"mcp:read"},
			"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}, "client_assertion": {as}}
	}
	good := assertion(a.ts.URL+"/token", "j1", time.Minute)
	st, body := a.post(t, "/token", form(good))
	if st != 200 || body["refresh_token"] != nil {
		t.Fatalf("client_credentials: %d %v", st, body)
	}
	claims, err := a.VerifyAccessToken(context.Background(), body["access_token"].(string))
	if err != nil || claims.Subject != "svc" || claims.Audience[0] != testResource {
		t.Fatalf("claims %+v %v", claims, err)
	}
	for name, as := range map[string]string{
		"replayed jti":   good,
		"wrong aud":      assertion("https://elsewhere.test/token", "j2", time.Minute),
		"too long-lived": assertion(a.ts.URL+"/token", "j3", time.Hour),
		"expired":        assertion(a.ts.URL+"/token", "j4", -time.Minute),
		"garbage":        "a.b.c",
	} {
		t.Run(name, func(t *testing.T) {
			st, body := a.post(t, "/token", form(as))
			wantError(t, st, body, http.StatusUnauthorized, oauth.InvalidClient)
		})
	}
	t.Run("public client", func(t *testing.T) {
		a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
		st, body := a.post(t, "/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {"pub"}, "resource": {testResource}})
		wantError(t, st, body, http.StatusBadRequest, oauth.UnauthorizedClient)
	})
}

func TestKeyRotation(t *testing.T) {
	a := newAS(t, trustAll, nil)
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	_, old := a.post(t, "/token", codeForm("pub", a.code(t, "pub", loopbackRedirect, verifier), loopbackRedirect, verifier))
	if err := a.RotateKey(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, fresh := a.post(t, "/token", codeForm("pub", a.code(t, "pub", loopbackRedirect, verifier), loopbackRedirect, verifier))
	set := a.JWKS()
	if len(set.Keys) != 2 {
		t.Fatalf("JWKS has %d keys, want the old and the new", len(set.Keys))
	}
	for _, tok := range []any{old["access_token"], fresh["access_token"]} {
		if err := acceptFor(set, a.Issuer(), testResource, tok.(string)); err != nil {
			t.Fatal(err)
		}
	}
	h1, _ := jwt.ParseSigned(old["access_token"].(string), []jose.SignatureAlgorithm{jose.ES256})
	h2, _ := jwt.ParseSigned(fresh["access_token"].(string), []jose.SignatureAlgorithm{jose.ES256})
	if h1.Headers[0].KeyID == h2.Headers[0].KeyID {
		t.Fatal("the new key does not sign")
	}
}
