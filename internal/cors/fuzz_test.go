package cors

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzHandle checks, for any listed origin and any request Origin, that
// the request's origin is echoed only when the policy admits it, that a
// preflight gets 204 exactly then, and that a listed origin always admits
// itself.
func FuzzHandle(f *testing.F) {
	f.Add("https://app.example", "https://app.example", true)
	f.Add("https://app.example", "https://APP.example/", false)
	f.Add("http://localhost:6274", "http://localhost:6275", true)
	f.Add("https://app.example", "null", true)
	f.Fuzz(func(t *testing.T, listed, origin string, preflight bool) {
		p, err := New(Config{Origins: []string{listed}, Methods: []string{"POST"}})
		if err != nil || p.AllowsAny() {
			return // Any is covered by TestHandle
		}
		if n, _ := NormalizeOrigin(listed); !p.Allowed(n) {
			t.Fatalf("%q does not admit itself (%q)", listed, n)
		}
		if strings.ContainsAny(origin, "\r\n\x00") {
			return // not a header value a server can receive
		}
		r := httptest.NewRequest("OPTIONS", "/", nil)
		r.Header.Set("Origin", origin)
		if preflight {
			r.Header.Set("Access-Control-Request-Method", "POST")
		}
		w := httptest.NewRecorder()
		done := p.Handle(w, r)
		allowed := p.Allowed(origin)
		got := w.Header().Get("Access-Control-Allow-Origin")
		switch {
		case allowed && got != origin:
			t.Fatalf("admitted %q answered with %q", origin, got)
		case !allowed && got != "":
			t.Fatalf("refused %q answered with %q", origin, got)
		case done != (preflight && origin != ""):
			t.Fatalf("done %v for preflight %v, origin %q", done, preflight, origin)
		case done && allowed != (w.Code == 204):
			t.Fatalf("preflight of %q (allowed %v): %d", origin, allowed, w.Code)
		case allowed && !strings.EqualFold(strings.TrimSuffix(origin, "/"), strings.TrimSuffix(strings.ToLower(strings.TrimSpace(listed)), "/")):
			t.Fatalf("%q admitted by %q", origin, listed)
		}
	})
}
