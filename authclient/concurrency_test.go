package authclient

import (
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/oauth"
)

func TestConcurrentRequestsAuthorizeOnce(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, nil)
	c := NewTransport(Config{Authorizer: follower()}).Client()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			st, err := call(t, c, rs.url(), `{}`)
			if err == nil && st != 200 {
				err = &HTTPError{URL: rs.url(), StatusCode: st}
			}
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
	if n := len(as.Authorizations); n != 1 {
		t.Fatalf("%d authorizations for concurrent requests, want 1", n)
	}
}

// FuzzResourceCovers checks that a resource identifier only ever covers
// servers of its own origin, under its own path.
func FuzzResourceCovers(f *testing.F) {
	f.Add("https://h/mcp", "https://h/mcp/x")
	f.Add("https://h", "https://h/mcp")
	f.Add("https://h/a", "https://h/ab")
	f.Add("HTTPS://H:443/a/", "https://h/a")
	f.Fuzz(func(t *testing.T, res, server string) {
		if !resourceCovers(res, server) {
			return
		}
		r, err1 := oauth.CanonicalResource(res)
		s, err2 := oauth.CanonicalResource(server)
		if err1 != nil || err2 != nil {
			t.Fatalf("covers with invalid URIs %q %q", res, server)
		}
		ru, _ := url.Parse(r)
		su, _ := url.Parse(s)
		if ru.Scheme != su.Scheme || ru.Host != su.Host {
			t.Fatalf("%q covers %q of another origin", res, server)
		}
		if r != s && !strings.HasPrefix(su.Path+"/", ru.Path+"/") {
			t.Fatalf("%q covers %q outside its path", res, server)
		}
	})
}
