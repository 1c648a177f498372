package authserver_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzUserInfo sends arbitrary Authorization headers and queries to the
// user-info endpoint: no input but a token issued for it names the user
// (the seeds hold a valid token for an MCP server, whose mutations must
// all be refused), and every refusal is a 400 or 401 with a Bearer
// challenge, never a server error.
func FuzzUserInfo(f *testing.F) {
	a := newAS(f, trustAll, nil)
	a.addClient(f, "ui-app", "none", "", loopbackRedirect)
	mcp := userInfoToken(f, a, testResource)
	f.Add("Bearer "+mcp, "")
	f.Add("Bearer "+mcp, "access_token="+mcp)
	f.Add("bearer  a.b.c", "")
	f.Add("Basic dXNlcjpwYXNz", "")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, authz, rawQuery string) {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(method, "/userinfo", nil)
			req.URL.RawQuery = rawQuery
			if authz != "" {
				req.Header.Set("Authorization", authz)
			}
			a.ServeHTTP(rec, req)
			if rec.Code != http.StatusBadRequest && rec.Code != http.StatusUnauthorized {
				t.Fatalf("%s %q %q: status %d %s", method, authz, rawQuery, rec.Code, rec.Body)
			}
			if ch := rec.Header().Get("WWW-Authenticate"); len(ch) < 7 || ch[:7] != "Bearer " {
				t.Fatalf("challenge %q", ch)
			}
		}
	})
}
