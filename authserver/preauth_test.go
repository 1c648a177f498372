package authserver_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/internal/testutil"
)

// TestFormBodyBound: every endpoint that reads a form before the client or
// the user is authenticated refuses a big one without reading beyond
// Config.MaxFormBytes (#16.2).
func TestFormBodyBound(t *testing.T) {
	for _, maxForm := range []int64{0, 1 << 10} {
		as := newAS(t, func(c *authserver.Config) { c.MaxFormBytes = maxForm }, nil)
		bound := maxForm
		if bound == 0 {
			bound = authserver.DefaultMaxFormBytes
		}
		for _, path := range []string{"/token", "/introspect", "/revoke", "/authorize"} {
			for _, declared := range []int64{-1, 16 << 20} {
				body := &testutil.EndlessForm{}
				r := testutil.FormPost(path, body, declared)
				w := httptest.NewRecorder()
				as.ServeHTTP(w, r)
				if w.Code != http.StatusBadRequest && w.Code != http.StatusRequestEntityTooLarge {
					t.Errorf("max %d, %s, length %d: status %d, want 400 or 413", maxForm, path, declared, w.Code)
				}
				if body.N > bound+1 {
					t.Errorf("max %d, %s, length %d: read %d bytes, bound %d", maxForm, path, declared, body.N, bound)
				}
			}
		}
	}
}
