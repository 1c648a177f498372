package authclient

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpstack/mcpstack/oauth"
)

func TestStores(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	stores := map[string]Store{
		"memory": &MemoryStore{},
		"file":   &FileStore{Path: filepath.Join(dir, "sub", "tokens.json")},
	}
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			k1 := Key{Resource: "https://a/mcp", Issuer: "https://as1"}
			k2 := Key{Resource: "https://a/mcp", Issuer: "https://as2"}
			if e, err := s.Load(ctx, k1); e != nil || err != nil {
				t.Fatalf("empty store: %v %v", e, err)
			}
			e1 := &Entry{Client: &ClientRegistration{ClientID: "c1", Key: &SigningKey{}}, Token: &Token{AccessToken: "t1", Scope: []string{"x"}}}
			if err := s.Save(ctx, k1, e1); err != nil {
				t.Fatal(err)
			}
			if err := s.Save(ctx, k2, &Entry{Token: &Token{AccessToken: "t2"}}); err != nil {
				t.Fatal(err)
			}
			e1.Token.Scope[0] = "changed" // the store keeps its own copy
			if err := s.Save(ctx, k1, &Entry{Client: e1.Client, Token: &Token{AccessToken: "t1b"}}); err != nil {
				t.Fatal(err)
			}
			got, err := s.Load(ctx, k1)
			if err != nil || got.Token.AccessToken != "t1b" || got.Client.ClientID != "c1" {
				t.Fatalf("Load = %+v, %v", got, err)
			}
			if got, _ := s.Load(ctx, k2); got == nil || got.Token.AccessToken != "t2" {
				t.Fatalf("second key lost: %+v", got)
			}
			if err := s.Delete(ctx, k2); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Load(ctx, k2); got != nil {
				t.Fatalf("deleted entry still there")
			}
		})
	}
	fs := stores["file"].(*FileStore)
	fi, err := os.Stat(fs.Path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(fs.Path)
	var list []map[string]any
	if err := json.Unmarshal(data, &list); err != nil || len(list) != 1 {
		t.Fatalf("file holds %d entries (%v): want one per resource and issuer", len(list), err)
	}
	if bytes.Contains(data, []byte("Key\"")) {
		t.Fatalf("signing key written to disk: %s", data)
	}
	// A second FileStore on the same path reads what the first wrote.
	got, err := (&FileStore{Path: fs.Path}).Load(ctx, Key{Resource: "https://a/mcp", Issuer: "https://as1"})
	if err != nil || got == nil || got.Token.AccessToken != "t1b" {
		t.Fatalf("reload: %+v %v", got, err)
	}
}

func TestFileStoreAcrossTransports(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, nil)
	path := filepath.Join(t.TempDir(), "tokens.json")
	for i := range 2 {
		tr := NewTransport(Config{Authorizer: follower(), Store: &FileStore{Path: path}})
		if st, err := call(t, tr.Client(), rs.url(), `{}`); err != nil || st != 200 {
			t.Fatalf("run %d: %d %v", i, st, err)
		}
	}
	if len(as.Authorizations) != 1 || len(as.Registrations) != 1 {
		t.Fatalf("second run did not reuse the stored token: %d authorizations, %d registrations", len(as.Authorizations), len(as.Registrations))
	}
}

func TestMetadataDocumentHandler(t *testing.T) {
	md := oauth.ClientMetadata{
		ClientID:     "https://client.example/oauth/client.json",
		ClientName:   "Example",
		RedirectURIs: []string{"http://127.0.0.1/callback"},
	}
	h, err := MetadataDocumentHandler(md, 0)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "https://client.example/oauth/client.json", nil))
	var got oauth.ClientMetadata
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" || json.Unmarshal(rec.Body.Bytes(), &got) != nil || got.ClientID != md.ClientID {
		t.Fatalf("GET: %d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	if err := oauth.ValidateClientIDMetadataDocument(md.ClientID, got); err != nil {
		t.Fatalf("served document invalid: %v", err)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "https://client.example/other.json", nil))
	if rec.Code != 404 {
		t.Fatalf("other path: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "https://client.example/oauth/client.json", nil))
	if rec.Code != 405 {
		t.Fatalf("POST: %d", rec.Code)
	}
	bad := []oauth.ClientMetadata{
		{ClientID: "http://client.example/c.json", ClientName: "x", RedirectURIs: md.RedirectURIs},
		{ClientID: "https://client.example", ClientName: "x", RedirectURIs: md.RedirectURIs},
		{ClientID: md.ClientID, RedirectURIs: md.RedirectURIs},
		{ClientID: md.ClientID, ClientName: "x", RedirectURIs: md.RedirectURIs, TokenEndpointAuthMethod: "client_secret_basic"},
	}
	for _, b := range bad {
		if _, err := MetadataDocumentHandler(b, 0); err == nil {
			t.Errorf("accepted %+v", b)
		}
	}
}

// chanWriter hands each write to a channel.
type chanWriter chan string

func (c chanWriter) Write(p []byte) (int, error) { c <- string(p); return len(p), nil }

func TestLoopbackAuthorizer(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, nil)
	printed := make(chanWriter, 1)
	// Headless: the URL is printed; a "browser" follows it.
	la, err := NewLoopbackAuthorizer(LoopbackOptions{Headless: true, Output: printed})
	if err != nil {
		t.Fatal(err)
	}
	defer la.Close()
	if !strings.HasPrefix(la.RedirectURI(), "http://127.0.0.1:") {
		t.Fatalf("redirect URI %q is not on 127.0.0.1", la.RedirectURI())
	}
	browser := make(chan error, 1)
	go func() {
		msg := <-printed
		u := strings.TrimSpace(strings.SplitAfter(msg, "\n\n")[1])
		resp, err := http.Get(u) // follows the redirect to the listener
		if err == nil {
			resp.Body.Close()
		}
		browser <- err
	}()
	tr := NewTransport(Config{Authorizer: la})
	if st, err := call(t, tr.Client(), rs.url(), `{}`); err != nil || st != 200 {
		t.Fatalf("%d %v", st, err)
	}
	if err := <-browser; err != nil {
		t.Fatal(err)
	}
	if as.Authorizations[0].Get("redirect_uri") != la.RedirectURI() {
		t.Fatalf("redirect_uri = %q", as.Authorizations[0].Get("redirect_uri"))
	}
	// A redirect nobody waits for is refused.
	resp, err := http.Get(la.RedirectURI() + "?code=x&state=y")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("unexpected callback answered %d", resp.StatusCode)
	}
}

func TestOpenBrowserRefusesUnsafeURLs(t *testing.T) {
	for _, u := range []string{"javascript:alert(1)", "file:///etc/passwd", "http://example.com/", "data:text/html,x"} {
		if err := OpenBrowser(u); !errors.Is(err, ErrUnsafeURL) {
			t.Errorf("OpenBrowser(%q) = %v", u, err)
		}
	}
}

func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	sk, err := ParsePrivateKeyPEM(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), "")
	if err != nil {
		t.Fatal(err)
	}
	as := newFakeAS(t, func(a *fakeAS) {
		a.GrantTypes = []string{"client_credentials"}
		a.AuthMethods = []string{"private_key_jwt"}
		a.NoPKCE = true // not needed without a user agent
	})
	rs := newFakeRS(t, as, nil)
	tr := NewTransport(Config{
		Grant:  GrantClientCredentials,
		Scopes: []string{"svc"},
		PreRegistered: func(string) (ClientRegistration, bool) {
			return ClientRegistration{ClientID: "machine", AuthMethod: oauth.AuthMethodPrivateKeyJWT, Key: sk}, true
		},
	})
	if st, err := call(t, tr.Client(), rs.url(), `{}`); err != nil || st != 200 {
		t.Fatalf("%d %v", st, err)
	}
	f := as.TokenForms[0]
	if f.Get("grant_type") != "client_credentials" || f.Get("resource") != rs.url() || f.Get("scope") != "svc" {
		t.Fatalf("token form %v", f)
	}
	tok, err := jwt.ParseSigned(f.Get("client_assertion"), []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	var c jwt.Claims
	if err := tok.Claims(&key.PublicKey, &c); err != nil {
		t.Fatalf("assertion signature: %v", err)
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: "machine", Subject: "machine", AnyAudience: jwt.Audience{as.Issuer()}, Time: time.Now()}, 0); err != nil {
		t.Fatalf("assertion claims: %v", err)
	}
	if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		t.Fatalf("client_assertion_type %q", f.Get("client_assertion_type"))
	}
	if len(as.Authorizations) != 0 {
		t.Fatalf("client credentials went through the authorization endpoint")
	}
}

func TestCrossAppAccess(t *testing.T) {
	var exchange url.Values
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		exchange = r.PostForm
		writeJSON(w, 200, map[string]any{"access_token": "the-id-jag", "issued_token_type": TokenTypeIDJAG, "token_type": "N_A"})
	}))
	defer idp.Close()
	as := newFakeAS(t, func(a *fakeAS) {
		a.GrantTypes = []string{GrantJWTBearer}
		a.AuthMethods = []string{"client_secret_basic"}
	})
	rs := newFakeRS(t, as, nil)
	x := &CrossAppAccess{TokenEndpoint: idp.URL + "/token", IDToken: "id-token", ClientID: "idp-client"}
	tr := NewTransport(Config{
		Grant:     GrantJWTBearer,
		Assertion: x.Assertion,
		PreRegistered: func(string) (ClientRegistration, bool) {
			return ClientRegistration{ClientID: "xaa", ClientSecret: "s"}, true
		},
	})
	if st, err := call(t, tr.Client(), rs.url(), `{}`); err != nil || st != 200 {
		t.Fatalf("%d %v", st, err)
	}
	want := map[string]string{
		"grant_type": GrantTokenExchange, "subject_token": "id-token", "subject_token_type": TokenTypeIDToken,
		"requested_token_type": TokenTypeIDJAG, "audience": as.Issuer(), "resource": rs.url(), "client_id": "idp-client",
	}
	for k, v := range want {
		if exchange.Get(k) != v {
			t.Errorf("token exchange %s = %q, want %q", k, exchange.Get(k), v)
		}
	}
	f := as.TokenForms[0]
	if f.Get("grant_type") != GrantJWTBearer || f.Get("assertion") != "the-id-jag" || f.Get("resource") != rs.url() || !strings.HasPrefix(as.TokenAuth[0], "Basic ") {
		t.Fatalf("JWT bearer request %v, auth %q", f, as.TokenAuth[0])
	}
}

func TestRedirectFollowerRefusesOtherRedirects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:9/elsewhere?code=x", http.StatusFound)
	}))
	defer srv.Close()
	f := follower()
	if _, err := f.Authorize(context.Background(), srv.URL); err == nil {
		t.Fatal("accepted a redirect to another URI")
	}
}

// TestLoopbackIgnoresForeignRedirects: while an authorization waits, any
// request to the listener without the authorization's state (a local
// process guessing, an error response, a repeated or empty state) gets an
// error page and is ignored; the real redirect, sent after them, is the one
// Authorize returns (#16.4).
func TestLoopbackIgnoresForeignRedirects(t *testing.T) {
	const state = "the-real-state-0123456789"
	forged := []struct {
		name  string
		query string
	}{
		{"no state", "code=evil"},
		{"empty state", "code=evil&state="},
		{"wrong state", "code=evil&state=guess"},
		{"state prefix", "code=evil&state=the-real-state"},
		{"state with suffix", "code=evil&state=" + state + "x"},
		{"repeated state", "code=evil&state=" + state + "&state=other"},
		{"error with wrong state", "error=access_denied&state=guess"},
		{"error without state", "error=access_denied"},
		{"wrong iss and state", "code=evil&state=guess&iss=https%3A%2F%2Fevil.example"},
	}
	opened := make(chan string, 1)
	la, err := NewLoopbackAuthorizer(LoopbackOptions{Open: func(u string) error { opened <- u; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer la.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type result struct {
		v   url.Values
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := la.Authorize(ctx, "https://as.example/authorize?state="+state+"&client_id=c")
		done <- result{v, err}
	}()
	<-opened
	get := func(query string) int {
		resp, err := http.Get(la.RedirectURI() + "?" + query)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, f := range forged {
		if st := get(f.query); st != http.StatusBadRequest {
			t.Errorf("%s: answered %d, want 400", f.name, st)
		}
		select {
		case r := <-done:
			t.Fatalf("%s: Authorize returned %v, %v: the forged redirect was taken", f.name, r.v, r.err)
		default:
		}
	}
	if st := get("code=real&state=" + state); st != http.StatusOK {
		t.Fatalf("the real redirect: answered %d", st)
	}
	r := <-done
	if r.err != nil || r.v.Get("code") != "real" {
		t.Fatalf("Authorize = %v, %v; want the real code", r.v, r.err)
	}
	// Once taken, the same redirect again is refused.
	if st := get("code=real&state=" + state); st != http.StatusBadRequest {
		t.Errorf("replayed redirect: answered %d", st)
	}
}

// TestLoopbackNeedsState: an authorization URL without state is refused,
// and a wait with nothing coming ends with its context.
func TestLoopbackNeedsState(t *testing.T) {
	la, err := NewLoopbackAuthorizer(LoopbackOptions{Open: func(string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer la.Close()
	nctx, ncancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ncancel()
	if _, err := la.Authorize(nctx, "https://as.example/authorize?client_id=c"); !errors.Is(err, ErrNoState) {
		t.Fatalf("no state: %v, want ErrNoState", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := la.Authorize(ctx, "https://as.example/authorize?state=s"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timeout: %v", err)
	}
}
