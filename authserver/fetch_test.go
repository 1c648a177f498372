package authserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// keyServer serves a JWK Set at /jwks over TLS under the name keys.test,
// with the given Content-Type and Cache-Control, counting the requests.
type keyServer struct {
	url   string
	hits  atomic.Int32
	ctype atomic.Value // string
}

func newKeyServer(t *testing.T, ca *testCA, set jose.JSONWebKeySet, contentType, cacheControl string) *keyServer {
	t.Helper()
	ks := &keyServer{}
	ks.ctype.Store(contentType)
	body, _ := json.Marshal(set)
	ts := ca.tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ks.hits.Add(1)
		w.Header().Set("Content-Type", ks.ctype.Load().(string))
		if cacheControl != "" {
			w.Header().Set("Cache-Control", cacheControl)
		}
		_, _ = w.Write(body)
	}), "keys.test")
	ts.StartTLS()
	t.Cleanup(ts.Close)
	ks.url = "https://keys.test:" + ts.URL[strings.LastIndex(ts.URL, ":")+1:] + "/jwks"
	return ks
}

// jwtClient is a private_key_jwt client whose keys are at a jwks_uri.
type jwtClient struct {
	signer jose.Signer
	a      *testAS
	clk    *clock
	n      int
}

func newJWTClient(t *testing.T, contentType, cacheControl string) (*jwtClient, *keyServer) {
	t.Helper()
	ca := newCA(t)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ks := newKeyServer(t, ca, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}}, contentType, cacheControl)
	clk := &clock{t: time.Now()}
	f := authserver.NewCIMDFetcher()
	f.Resolver = mapResolver{"keys.test": addrs("127.0.0.1")}
	f.AllowLoopback = true
	f.TLSConfig = ca.clientTLS()
	f.Now = clk.now
	a := newAS(t, func(c *authserver.Config) { c.CIMD = f; c.Now = clk.now }, nil)
	if err := a.store.CreateClient(t.Context(), authserver.Client{Metadata: oauth.ClientMetadata{
		ClientID: "svc", GrantTypes: []string{oauth.GrantClientCredentials}, TokenEndpointAuthMethod: oauth.AuthMethodPrivateKeyJWT,
		JWKSURI: ks.url,
	}}); err != nil {
		t.Fatal(err)
	}
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: "k1"}}, nil)
	return &jwtClient{signer: signer, a: a, clk: clk}, ks
}

// authenticate sends a client_credentials request with an assertion that
// the change function may spoil, and returns the status.
func (c *jwtClient) authenticate(t *testing.T, change func(*jwt.Claims, *jose.SigningKey)) int {
	t.Helper()
	c.n++
	now := c.clk.now()
	claims := jwt.Claims{Issuer: "svc", Subject: "svc", Audience: jwt.Audience{c.a.ts.URL + "/token"}, ID: fmt.Sprint("jti-", c.n),
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(time.Minute))}
	signer := c.signer
	if change != nil {
		sk := jose.SigningKey{Algorithm: jose.ES256}
		change(&claims, &sk)
		if sk.Key != nil {
			signer, _ = jose.NewSigner(sk, nil)
		}
	}
	as, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {testResource},
		"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}, "client_assertion": {as}}
	return serveAs(c.a, "POST", "/token", "application/x-www-form-urlencoded", form.Encode(), "192.0.2.1:1", nil).Code
}

// #17.7, the figure: 1,000 authentications of one private_key_jwt client
// cause one fetch of its jwks_uri, plus one per max-age that passes.
func TestJWKSFetchedOncePerCacheLifetime(t *testing.T) {
	c, ks := newJWTClient(t, "application/jwk-set+json", "public, max-age=300")
	for i := range 1000 {
		if st := c.authenticate(t, nil); st != http.StatusOK {
			t.Fatalf("authentication %d: %d", i, st)
		}
	}
	if n := ks.hits.Load(); n != 1 {
		t.Fatalf("1,000 authentications at one instant fetched jwks_uri %d times, want 1", n)
	}
	t.Logf("1,000 authentications within max-age: %d fetch", ks.hits.Load())
	// The same over 1,000 seconds: max-age=300 allows a fetch at 0, 300,
	// 600 and 900 s.
	c2, ks2 := newJWTClient(t, "application/jwk-set+json", "public, max-age=300")
	for i := range 1000 {
		if st := c2.authenticate(t, nil); st != http.StatusOK {
			t.Fatalf("authentication %d: %d", i, st)
		}
		c2.clk.add(time.Second)
	}
	if n := ks2.hits.Load(); n != 4 {
		t.Fatalf("1,000 authentications over 1,000 s with max-age=300 fetched %d times, want 4", n)
	}
	t.Logf("1,000 authentications over 1,000 s, max-age=300: %d fetches", ks2.hits.Load())
}

// #17.7: an assertion whose claims are wrong costs no fetch at all, and
// made-up key ids cost at most one refetch per JWKSRefetch.
func TestForgedAssertionsFetchNothing(t *testing.T) {
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, tc := range []struct {
		name   string
		change func(*jwt.Claims, *jose.SigningKey)
	}{
		{"wrong aud", func(c *jwt.Claims, _ *jose.SigningKey) { c.Audience = jwt.Audience{"https://elsewhere.test/token"} }},
		{"wrong iss", func(c *jwt.Claims, _ *jose.SigningKey) { c.Issuer = "mallory" }},
		{"expired", func(c *jwt.Claims, _ *jose.SigningKey) {
			c.Expiry = jwt.NewNumericDate(c.IssuedAt.Time().Add(-time.Hour))
		}},
		{"too long-lived", func(c *jwt.Claims, _ *jose.SigningKey) {
			c.Expiry = jwt.NewNumericDate(c.IssuedAt.Time().Add(time.Hour))
		}},
		{"no jti", func(c *jwt.Claims, _ *jose.SigningKey) { c.ID = "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ks := newJWTClient(t, "application/json", "max-age=300")
			for range 100 {
				if st := c.authenticate(t, tc.change); st != http.StatusUnauthorized {
					t.Fatalf("forged assertion: %d", st)
				}
			}
			if n := ks.hits.Load(); n != 0 {
				t.Fatalf("forged assertions fetched jwks_uri %d times, want 0", n)
			}
		})
	}
	t.Run("unknown kid", func(t *testing.T) {
		c, ks := newJWTClient(t, "application/json", "max-age=3600")
		unknown := func(_ *jwt.Claims, k *jose.SigningKey) { k.Key = jose.JSONWebKey{Key: other, KeyID: "k-made-up"} }
		for range 100 {
			if st := c.authenticate(t, unknown); st != http.StatusUnauthorized {
				t.Fatalf("unknown kid: %d", st)
			}
		}
		if n := ks.hits.Load(); n != 1 {
			t.Fatalf("100 unknown-kid assertions fetched %d times, want 1", n)
		}
		c.clk.add(time.Minute) // JWKSRefetch
		for range 100 {
			c.authenticate(t, unknown)
		}
		if n := ks.hits.Load(); n != 2 {
			t.Fatalf("after a JWKSRefetch interval: %d fetches, want 2", n)
		}
		if st := c.authenticate(t, nil); st != http.StatusOK {
			t.Fatalf("the real key after unknown kids: %d", st)
		}
	})
}

// #17.9: a key set served with its registered media type, or JSON with
// parameters or in another case, is accepted; other types are not.
func TestJWKSContentTypes(t *testing.T) {
	for _, tc := range []struct {
		ctype string
		ok    bool
	}{
		{"application/jwk-set+json", true},
		{"application/jwk-set+json; charset=utf-8", true},
		{"application/json", true},
		{"application/json; charset=utf-8", true},
		{"Application/JSON", true},
		{"APPLICATION/JWK-SET+JSON", true},
		{"text/plain", false},
		{"application/jwk+json", false},
		{"application/jsonx", false},
		{"", false},
	} {
		t.Run(tc.ctype, func(t *testing.T) {
			c, _ := newJWTClient(t, tc.ctype, "")
			want := map[bool]int{true: http.StatusOK, false: http.StatusUnauthorized}[tc.ok]
			if st := c.authenticate(t, nil); st != want {
				t.Fatalf("status %d, want %d", st, want)
			}
		})
	}
}

// #17.7: a failed document fetch is remembered for FailureCache, and each
// host has an outbound budget.
func TestCIMDFailureCacheAndHostBudget(t *testing.T) {
	ca := newCA(t)
	d := newDocServer(t, ca)
	clk := &clock{t: time.Now()}
	newFetcher := func() *authserver.CIMDFetcher {
		f := authserver.NewCIMDFetcher()
		f.Resolver = mapResolver{"client.test": addrs("127.0.0.1")}
		f.AllowLoopback = true
		f.TLSConfig = ca.clientTLS()
		f.Now = clk.now
		return f
	}
	f := newFetcher()
	for range 10 {
		if _, err := f.Fetch(t.Context(), d.base+"/text.json"); !errors.Is(err, authserver.ErrFetch) {
			t.Fatalf("Fetch: %v", err)
		}
	}
	if n := d.hits["/text.json"].Load(); n != 1 {
		t.Fatalf("a failing document fetched %d times within FailureCache, want 1", n)
	}
	clk.add(31 * time.Second)
	f.Fetch(t.Context(), d.base+"/text.json")
	if n := d.hits["/text.json"].Load(); n != 2 {
		t.Fatalf("after FailureCache: %d fetches, want 2", n)
	}

	f = newFetcher()
	f.HostRate, f.HostBurst = 1, 3
	var limited int
	for range 10 {
		_, err := f.Fetch(t.Context(), d.base+"/nocache.json")
		if errors.Is(err, authserver.ErrFetchLimited) && errors.Is(err, authserver.ErrFetch) {
			limited++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if limited != 7 || d.hits["/nocache.json"].Load() != 3 {
		t.Fatalf("host budget 3: %d limited, %d fetched", limited, d.hits["/nocache.json"].Load())
	}
	clk.add(time.Second)
	if _, err := f.Fetch(t.Context(), d.base+"/nocache.json"); err != nil {
		t.Fatalf("after a second: %v", err)
	}
}

// #17.9: the other content-type checks: a metadata document and a
// registration may say charset or use another case.
func TestJSONContentTypeVariants(t *testing.T) {
	for _, tc := range []struct {
		ctype string
		want  int
	}{
		{"application/json", http.StatusCreated},
		{"application/json; charset=utf-8", http.StatusCreated},
		{"Application/JSON;charset=UTF-8", http.StatusCreated},
		{"application/jsonp", http.StatusUnsupportedMediaType},
		{"application/json-seq", http.StatusUnsupportedMediaType},
		{"text/plain", http.StatusUnsupportedMediaType},
		{"", http.StatusUnsupportedMediaType},
	} {
		t.Run("register "+tc.ctype, func(t *testing.T) {
			a := newAS(t, nil, nil)
			if w := serveAs(a, "POST", "/register", tc.ctype, goodRegistration, "192.0.2.1:1", nil); w.Code != tc.want {
				t.Fatalf("%d, want %d: %s", w.Code, tc.want, w.Body)
			}
		})
	}
}

// #17.7: many clients arriving together with one new client id cost one
// fetch, and none of them is refused for the host's budget.
func TestConcurrentFetchesShared(t *testing.T) {
	ca := newCA(t)
	d := newDocServer(t, ca)
	f := authserver.NewCIMDFetcher()
	f.Resolver = mapResolver{"client.test": addrs("127.0.0.1")}
	f.AllowLoopback = true
	f.TLSConfig = ca.clientTLS()
	f.HostRate, f.HostBurst = 1, 1
	errs := make(chan error, 32)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			_, err := f.Fetch(t.Context(), d.base+"/good.json")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := d.hits["/good.json"].Load(); n != 1 {
		t.Fatalf("32 concurrent fetches of one document: %d requests, want 1", n)
	}
}
