package authserver_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// docServer serves client metadata documents over TLS on 127.0.0.1 under
// the name client.test. It counts the requests per path.
type docServer struct {
	base string // https://client.test:PORT
	hits map[string]*atomic.Int32
}

func newDocServer(t *testing.T, ca *testCA) *docServer {
	t.Helper()
	d := &docServer{hits: map[string]*atomic.Int32{}}
	paths := []string{"/good.json", "/redirect.json", "/big.json", "/slow.json", "/wrong-id.json",
		"/text.json", "/nocache.json", "/secret.json", "/endless.json"}
	for _, p := range paths {
		d.hits[p] = new(atomic.Int32)
	}
	doc := func(id string) string {
		return fmt.Sprintf(`{"client_id":%q,"client_name":"CIMD App","redirect_uris":[%q],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"]}`, id, loopbackRedirect)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := d.hits[r.URL.Path]; ok {
			c.Add(1)
		}
		self := d.base + r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/good.json":
			w.Header().Set("Cache-Control", "max-age=600")
			fmt.Fprint(w, doc(self))
		case "/nocache.json":
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprint(w, doc(self))
		case "/redirect.json":
			http.Redirect(w, r, d.base+"/good.json", http.StatusFound)
		case "/big.json":
			fmt.Fprint(w, strings.TrimSuffix(doc(self), "}")+`,"pad":"`+strings.Repeat("x", 10<<10)+`"}`)
		case "/slow.json":
			<-r.Context().Done()
		case "/endless.json":
			// A complete document, then a chunked body that never ends.
			fmt.Fprint(w, doc(self))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case "/wrong-id.json":
			fmt.Fprint(w, doc(d.base+"/good.json"))
		case "/text.json":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, doc(self))
		case "/secret.json":
			fmt.Fprint(w, strings.Replace(doc(self), `"none"`, `"client_secret_basic"`, 1))
		default:
			http.NotFound(w, r)
		}
	})
	ts := ca.tlsServer(t, h, "client.test")
	ts.StartTLS()
	t.Cleanup(ts.Close)
	d.base = "https://client.test:" + ts.URL[strings.LastIndex(ts.URL, ":")+1:]
	return d
}

// cimdAS starts a server whose fetcher resolves client.test to addr.
func cimdAS(t *testing.T, ca *testCA, allowLoopback bool, addr string, tweak func(*authserver.CIMDFetcher)) *testAS {
	f := authserver.NewCIMDFetcher()
	f.Resolver = mapResolver{"client.test": addrs(addr)}
	f.AllowLoopback = allowLoopback
	f.TLSConfig = ca.clientTLS()
	f.Timeout = 2 * time.Second
	if tweak != nil {
		tweak(f)
	}
	return newAS(t, func(c *authserver.Config) { trustAll(c); c.CIMD = f }, nil)
}

func TestCIMDSSRFGuard(t *testing.T) {
	ca := newCA(t)
	d := newDocServer(t, ca)
	id := d.base + "/good.json"
	for _, addr := range []string{"127.0.0.1", "::1", "10.0.0.1", "169.254.169.254", "::ffff:127.0.0.1",
		"::ffff:169.254.169.254", "100.64.0.1", "192.168.1.1", "fd00:ec2::254", "224.0.0.1", "0.0.0.0"} {
		t.Run(addr, func(t *testing.T) {
			a := cimdAS(t, ca, false, addr, nil)
			before := d.hits["/good.json"].Load()
			wantPageError(t, a.authorize(t, authParams(id, loopbackRedirect, verifier)), http.StatusBadRequest, oauth.InvalidClient)
			if d.hits["/good.json"].Load() != before {
				t.Fatal("the document was fetched")
			}
			f := authserver.NewCIMDFetcher()
			f.Resolver = mapResolver{"client.test": addrs(addr)}
			f.TLSConfig = ca.clientTLS()
			if _, err := f.Fetch(t.Context(), id); !errors.Is(err, authserver.ErrForbiddenAddress) {
				t.Fatalf("Fetch: %v, want ErrForbiddenAddress", err)
			}
		})
	}
	// The same document is accepted once loopback is allowed, so the guard
	// is what refused it above.
	for _, addr := range []string{"127.0.0.1", "::ffff:127.0.0.1"} {
		t.Run("allowed "+addr, func(t *testing.T) {
			a := cimdAS(t, ca, true, addr, nil)
			a.code(t, id, loopbackRedirect, verifier)
		})
	}
	t.Run("one bad address among good ones", func(t *testing.T) {
		f := authserver.NewCIMDFetcher()
		f.Resolver = mapResolver{"client.test": addrs("127.0.0.1", "10.1.2.3")}
		f.AllowLoopback = true
		f.TLSConfig = ca.clientTLS()
		if _, err := f.Fetch(t.Context(), id); !errors.Is(err, authserver.ErrForbiddenAddress) {
			t.Fatalf("Fetch: %v, want ErrForbiddenAddress", err)
		}
	})
}

func TestCIMDDocumentRefusals(t *testing.T) {
	ca := newCA(t)
	d := newDocServer(t, ca)
	tests := []struct {
		path string
		code oauth.ErrorCode
	}{
		{"/redirect.json", oauth.InvalidClient},
		{"/big.json", oauth.InvalidClient},
		{"/slow.json", oauth.InvalidClient},
		{"/wrong-id.json", oauth.InvalidClient},
		{"/text.json", oauth.InvalidClient},
		{"/missing.json", oauth.InvalidClient},
		{"/secret.json", oauth.InvalidRequest},
	}
	a := cimdAS(t, ca, true, "127.0.0.1", func(f *authserver.CIMDFetcher) { f.Timeout = 300 * time.Millisecond })
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			wantPageError(t, a.authorize(t, authParams(d.base+tt.path, loopbackRedirect, verifier)), http.StatusBadRequest, tt.code)
		})
	}
	t.Run("complete document in a body cut by the deadline", func(t *testing.T) {
		// The cut can end in a clean EOF; once in five fetches it did
		// before #16.6. Each attempt waits for the 300 ms deadline.
		for range 20 {
			wantPageError(t, a.authorize(t, authParams(d.base+"/endless.json", loopbackRedirect, verifier)), http.StatusBadRequest, oauth.InvalidClient)
		}
	})
	t.Run("redirect not followed", func(t *testing.T) {
		if n := d.hits["/good.json"].Load(); n != 0 {
			t.Fatalf("good.json fetched %d times", n)
		}
	})
	t.Run("redirect_uri not in the document", func(t *testing.T) {
		wantPageError(t, a.authorize(t, authParams(d.base+"/good.json", "http://127.0.0.1:8765/other", verifier)), http.StatusBadRequest, oauth.InvalidRequest)
	})
	t.Run("token endpoint", func(t *testing.T) {
		st, body := a.post(t, "/token", codeForm(d.base+"/wrong-id.json", "x", loopbackRedirect, verifier))
		wantError(t, st, body, http.StatusUnauthorized, oauth.InvalidClient)
	})
}

func TestCIMDCacheAndPolicy(t *testing.T) {
	ca := newCA(t)
	d := newDocServer(t, ca)
	f := authserver.NewCIMDFetcher()
	f.Resolver = mapResolver{"client.test": addrs("127.0.0.1")}
	f.AllowLoopback = true
	f.TLSConfig = ca.clientTLS()
	for range 3 {
		if _, err := f.Fetch(t.Context(), d.base+"/good.json"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Fetch(t.Context(), d.base+"/nocache.json"); err != nil {
			t.Fatal(err)
		}
	}
	if got := d.hits["/good.json"].Load(); got != 1 {
		t.Errorf("max-age document fetched %d times, want 1", got)
	}
	if got := d.hits["/nocache.json"].Load(); got != 3 {
		t.Errorf("no-store document fetched %d times, want 3", got)
	}

	for _, tt := range []struct {
		name        string
		allow, deny []string
		ok          bool
	}{
		{"denied", nil, []string{"test"}, false},
		{"not allowed", []string{"example.com"}, nil, false},
		{"allowed", []string{"client.test"}, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := cimdAS(t, ca, true, "127.0.0.1", func(f *authserver.CIMDFetcher) { f.Policy = authserver.DomainPolicy(tt.allow, tt.deny) })
			resp := a.authorize(t, authParams(d.base+"/good.json", loopbackRedirect, verifier))
			if tt.ok {
				redirectParams(t, resp, loopbackRedirect)
			} else {
				wantPageError(t, resp, http.StatusBadRequest, oauth.InvalidClient)
			}
		})
	}
	if _, err := url.Parse(d.base); err != nil {
		t.Fatal(err)
	}
}
