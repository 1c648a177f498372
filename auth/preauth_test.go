package auth_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/internal/testutil"
)

// TestFormBodyBoundBeforeAuth: a big form-encoded body is refused without
// being read beyond Options.MaxFormBytes, whatever the token (none,
// invalid, valid) and whether its length is declared or not (#16.2).
func TestFormBodyBoundBeforeAuth(t *testing.T) {
	as := newTestAS(t)
	good := "Bearer " + as.Sign(as.Claims("alice", resource, "mcp"))
	tests := []struct {
		name     string
		maxForm  int64 // Options.MaxFormBytes
		authz    string
		declared int64 // Content-Length; -1 unknown (chunked)
		peek     bool  // per-tool scopes configured
	}{
		{"no token, chunked", 0, "", -1, false},
		{"no token, declared 16 MiB", 0, "", 16 << 20, false},
		{"invalid token, chunked", 0, "Bearer abc.def.ghi", -1, false},
		{"valid token, chunked", 0, good, -1, false},
		{"valid token, chunked, with peek", 0, good, -1, true},
		{"no token, declared just over", 0, "", auth.DefaultMaxFormBytes + 1, false},
		{"custom bound, chunked", 1 << 10, "", -1, false},
		{"custom bound, valid token, chunked, with peek", 1 << 10, good, -1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGuarded(t, as, func(o *auth.Options) {
				o.MaxFormBytes = tt.maxForm
				if tt.peek {
					o.ToolScopes = map[string][]string{"x": {"x"}}
				}
			})
			bound := tt.maxForm
			if bound == 0 {
				bound = auth.DefaultMaxFormBytes
			}
			body := &testutil.EndlessForm{}
			r := testutil.FormPost("/mcp", body, tt.declared)
			if tt.authz != "" {
				r.Header.Set("Authorization", tt.authz)
			}
			w := httptest.NewRecorder()
			g.h.ServeHTTP(w, r)
			if w.Code != http.StatusRequestEntityTooLarge {
				t.Errorf("status %d, want 413", w.Code)
			}
			if body.N > bound+1 {
				t.Errorf("read %d bytes of the body, bound %d", body.N, bound)
			}
			if g.calls != 0 {
				t.Error("the handler was reached")
			}
		})
	}
	// A small form is still read, and a token in it refused.
	g := newGuarded(t, as, nil)
	w, _ := g.do("POST", "/mcp", good, "application/x-www-form-urlencoded", "x=1&access_token="+strings.Repeat("a", 100))
	if w.Code != http.StatusBadRequest {
		t.Errorf("form token: status %d, want 400", w.Code)
	}
}

// FuzzFormBodyBound: whatever form body and token a request carries, no
// more than MaxFormBytes+1 bytes of it are read before the token is
// checked, and the handler is reached only with the valid token (#16.2).
func FuzzFormBodyBound(f *testing.F) {
	as := newTestAS(f)
	good := "Bearer " + as.Sign(as.Claims("alice", resource, "mcp"))
	f.Add("a=b", "", int64(-1))
	f.Add("access_token=x", "good", int64(14))
	f.Add(strings.Repeat("a=b&", 2000), "good", int64(-1))
	f.Add("x=1", "Bearer abc", int64(1<<30))
	const bound = 1 << 10
	f.Fuzz(func(t *testing.T, form, authz string, declared int64) {
		calls := 0
		m, err := auth.NewMiddleware(auth.Options{Resource: resource, Verifier: verifierFor(t, as), MaxFormBytes: bound})
		if err != nil {
			t.Fatal(err)
		}
		h := m.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls++ }))
		body := &testutil.CountingBody{R: strings.NewReader(form)}
		r := testutil.FormPost("/mcp", body, declared)
		if authz == "good" {
			authz = good
		}
		r.Header.Set("Authorization", authz)
		h.ServeHTTP(httptest.NewRecorder(), r)
		if body.N > bound+1 {
			t.Fatalf("read %d bytes", body.N)
		}
		if calls > 0 && authz != good {
			t.Fatalf("handler reached with Authorization %q", authz)
		}
	})
}

func verifierFor(t *testing.T, as *testAS) auth.Verifier {
	v, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer(), Audience: resource})
	if err != nil {
		t.Fatal(err)
	}
	return v
}
