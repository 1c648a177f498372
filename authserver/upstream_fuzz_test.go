package authserver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
)

// FuzzUpstreamCallback sends arbitrary queries and browser cookies to the
// upstream callback: no state was ever created, so nothing may be issued,
// nothing may redirect and the server must not fail.
func FuzzUpstreamCallback(f *testing.F) {
	f.Add("code=x&state=y", "mcp_upstream=zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz")
	f.Add("state=&state=a&iss=http://x", "")
	f.Add("error=access_denied&state=%00", "__Host-mcp_upstream=;")
	prov := newFakeProvider(f, false)
	a := newUpstreamAS(f, prov, func(c *authserver.Config) { c.AuthorizeRate = -1 })
	f.Fuzz(func(t *testing.T, rawQuery, cookie string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/upstream/callback", nil)
		req.URL.RawQuery = rawQuery
		req.Header.Set("Cookie", cookie)
		a.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest || rec.Header().Get("Location") != "" {
			t.Fatalf("callback %q: %d %q", rawQuery, rec.Code, rec.Header().Get("Location"))
		}
	})
}

// FuzzUpstreamGrantRecord reads arbitrary stored grant records: each is
// refused with ErrNoUpstreamToken, never a panic, never a token.
func FuzzUpstreamGrantRecord(f *testing.F) {
	f.Add([]byte{1, 4, 'a', 'b', 'c', 'd'})
	f.Add([]byte{1, 200})
	f.Add([]byte{1, 18})
	f.Add([]byte{})
	prov := newFakeProvider(f, false)
	a := newUpstreamAS(f, prov, nil)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, sealed []byte) {
		if err := a.store.SaveUpstreamGrant(ctx, authserver.UpstreamGrant{Subject: "s", Sealed: sealed, UpdatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		tok, err := a.UpstreamAccessToken(ctx, "s")
		if err == nil || (!errors.Is(err, authserver.ErrNoUpstreamToken) && !strings.Contains(err.Error(), "cookie keys")) {
			t.Fatalf("record %x: token %q, error %v", sealed, tok, err)
		}
	})
}
