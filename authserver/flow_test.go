package authserver_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/time/rate"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// miniClient is a minimal hand-written OAuth client for the tests.
type miniClient struct {
	t    *testing.T
	http *http.Client
	meta oauth.AuthorizationServerMetadata
}

func (c *miniClient) getJSON(u string, v any) {
	c.t.Helper()
	resp, err := c.http.Get(u)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		c.t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		c.t.Fatal(err)
	}
}

var hiddenRE = regexp.MustCompile(`name="(csrf|request)" value="([^"]+)"`)

// authorize runs the authorization request through the consent page and
// clicks Allow, returning the code.
func (c *miniClient) authorize(q url.Values, redirect string) string {
	c.t.Helper()
	resp, err := c.http.Get(c.meta.AuthorizationEndpoint + "?" + q.Encode())
	if err != nil {
		c.t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "Allow") {
		c.t.Fatalf("consent page: %d %s", resp.StatusCode, page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
		c.t.Fatalf("CSP %q", csp)
	}
	if strings.Contains(string(page), "<script") {
		c.t.Fatal("consent page has a script")
	}
	form := url.Values{"action": {"allow"}}
	for _, m := range hiddenRE.FindAllStringSubmatch(string(page), -1) {
		form.Set(m[1], strings.ReplaceAll(m[2], "&#43;", "+"))
	}
	resp, err = c.http.PostForm(c.meta.AuthorizationEndpoint, form)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	got := redirectParams(c.t, resp, redirect)
	if got.Get("iss") != c.meta.Issuer || got.Get("state") != q.Get("state") || got.Get("code") == "" {
		c.t.Fatalf("authorization response %v", got)
	}
	return got.Get("code")
}

func (c *miniClient) token(form url.Values) oauth.TokenResponse {
	c.t.Helper()
	resp, err := c.http.PostForm(c.meta.TokenEndpoint, form)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-store" {
		c.t.Fatalf("token: %d %s", resp.StatusCode, b)
	}
	var tr oauth.TokenResponse
	if err := json.Unmarshal(b, &tr); err != nil {
		c.t.Fatal(err)
	}
	return tr
}

// acceptFor is a resource server's check: signature against the JWKS,
// issuer, expiry and audience equal to its own resource.
func acceptFor(jwks jose.JSONWebKeySet, issuer, resource, raw string) error {
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return err
	}
	keys := jwks.Key(tok.Headers[0].KeyID)
	if len(keys) != 1 {
		return errors.New("no key")
	}
	var cl jwt.Claims
	if err := tok.Claims(keys[0].Key, &cl); err != nil {
		return err
	}
	return cl.Validate(jwt.Expected{Issuer: issuer, AnyAudience: jwt.Audience{resource}, Time: time.Now()})
}

func TestFullFlowHTTPS(t *testing.T) {
	ca := newCA(t)
	docs := newDocServer(t, ca)
	fetch := authserver.NewCIMDFetcher()
	fetch.Resolver = mapResolver{"client.test": addrs("127.0.0.1")}
	fetch.AllowLoopback = true // development option: the document is on this machine
	fetch.TLSConfig = ca.clientTLS()
	a := newAS(t, func(c *authserver.Config) { c.CIMD = fetch }, ca.tlsServer(t, nil))
	if !strings.HasPrefix(a.Issuer(), "https://127.0.0.1:") {
		t.Fatalf("issuer %s", a.Issuer())
	}

	register := func(t *testing.T, c *miniClient) string {
		body := `{"client_name":"DCR App","redirect_uris":["` + loopbackRedirect + `"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"],"application_type":"native"}`
		resp, err := c.http.Post(c.meta.RegistrationEndpoint, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var info oauth.ClientInformation
		if resp.StatusCode != 201 || json.NewDecoder(resp.Body).Decode(&info) != nil || info.ClientID == "" || info.ClientSecret != "" {
			t.Fatalf("registration: %d %+v", resp.StatusCode, info)
		}
		return info.ClientID
	}
	for _, mode := range []string{"CIMD", "DCR"} {
		t.Run(mode, func(t *testing.T) {
			jar, _ := cookiejar.New(nil)
			hc := ca.client()
			hc.Jar = jar
			c := &miniClient{t: t, http: hc}
			c.getJSON(a.Issuer()+"/.well-known/oauth-authorization-server", &c.meta)
			if err := c.meta.Validate(); err != nil || !c.meta.SupportsS256() || !c.meta.ClientIDMetadataDocumentSupported {
				t.Fatalf("metadata %+v: %v", c.meta, err)
			}
			clientID := docs.base + "/good.json"
			if mode == "DCR" {
				clientID = register(t, c)
			}
			v, _ := oauth.NewVerifier()
			q := authParams(clientID, loopbackRedirect, v)
			code := c.authorize(q, loopbackRedirect)
			tr := c.token(codeForm(clientID, code, loopbackRedirect, v))
			var jwks jose.JSONWebKeySet
			c.getJSON(c.meta.JWKSURI, &jwks)
			if err := acceptFor(jwks, c.meta.Issuer, testResource, tr.AccessToken); err != nil {
				t.Fatalf("resource server refused its own token: %v", err)
			}
			if err := acceptFor(jwks, c.meta.Issuer, "https://other.example.test/mcp", tr.AccessToken); err == nil {
				t.Fatal("another resource server accepted the token")
			}
			tr2 := c.token(url.Values{"grant_type": {"refresh_token"}, "client_id": {clientID}, "refresh_token": {tr.RefreshToken}})
			if tr2.RefreshToken == "" || tr2.RefreshToken == tr.RefreshToken || acceptFor(jwks, c.meta.Issuer, testResource, tr2.AccessToken) != nil {
				t.Fatalf("refresh: %+v", tr2)
			}
		})
	}
}

func TestIntrospectionAndRevocation(t *testing.T) {
	a := newAS(t, trustAll, nil)
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	a.addClient(t, "rs", oauth.AuthMethodClientSecretBasic, "rs-secret", "https://rs.example.test/cb")
	_, tok := a.post(t, "/token", codeForm("pub", a.code(t, "pub", loopbackRedirect, verifier), loopbackRedirect, verifier))
	at := tok["access_token"].(string)

	st, body := a.post(t, "/introspect", url.Values{"token": {at}})
	wantError(t, st, body, http.StatusUnauthorized, oauth.InvalidClient)
	st, body = a.post(t, "/introspect", url.Values{"token": {at}}, "rs", "wrong")
	wantError(t, st, body, http.StatusUnauthorized, oauth.InvalidClient)
	st, body = a.post(t, "/introspect", url.Values{"token": {at}}, "rs", "rs-secret")
	if st != 200 || body["active"] != true || body["client_id"] != "pub" || body["sub"] != "alice" ||
		!slices.Contains(body["aud"].([]any), any(testResource)) || body["scope"] != "mcp:read" {
		t.Fatalf("introspection: %d %v", st, body)
	}
	// Revocation by the client revokes the grant.
	st, _ = a.post(t, "/revoke", url.Values{"token": {tok["refresh_token"].(string)}, "client_id": {"pub"}})
	if st != 200 {
		t.Fatalf("revoke: %d", st)
	}
	for _, tk := range []string{at, tok["refresh_token"].(string)} {
		st, body = a.post(t, "/introspect", url.Values{"token": {tk}}, "rs", "rs-secret")
		if st != 200 || body["active"] != false {
			t.Fatalf("after revocation: %d %v", st, body)
		}
	}
	st, body = a.post(t, "/introspect", url.Values{"token": {"garbage"}}, "rs", "rs-secret")
	if st != 200 || body["active"] != false {
		t.Fatalf("garbage: %d %v", st, body)
	}
}

func TestRegistrationLimits(t *testing.T) {
	a := newAS(t, func(c *authserver.Config) { c.RegistrationRate, c.RegistrationBurst = rate.Every(time.Hour), 3 }, nil)
	reg := func(body string) (int, map[string]any) {
		resp, err := a.http.Post(a.ts.URL+"/register", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	st, m := reg(`{"client_name":"x","redirect_uris":["http://example.test/cb"]}`)
	wantError(t, st, m, 400, oauth.InvalidRedirectURI)
	st, m = reg(`{"client_name":"x","redirect_uris":["https://a.test/cb"],"grant_types":["client_credentials"],"token_endpoint_auth_method":"none"}`)
	wantError(t, st, m, 400, oauth.InvalidClientMetadata)
	st, m = reg(`{"client_name":"x","redirect_uris":["https://a.test/cb"]}`)
	if st != 201 || m["client_secret"] == nil || m["token_endpoint_auth_method"] != "client_secret_basic" {
		t.Fatalf("registration: %d %v", st, m)
	}
	st, m = reg(`{"client_name":"x","redirect_uris":["https://a.test/cb"]}`)
	wantError(t, st, m, http.StatusTooManyRequests, oauth.TemporarilyUnavailable)
}
