package cors

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
	}{
		{"path", Config{Origins: []string{"https://a.example/app"}}},
		{"query", Config{Origins: []string{"https://a.example?x=1"}}},
		{"empty query", Config{Origins: []string{"https://a.example?"}}},
		{"fragment", Config{Origins: []string{"https://a.example#f"}}},
		{"userinfo", Config{Origins: []string{"https://u@a.example"}}},
		{"scheme", Config{Origins: []string{"ftp://a.example"}}},
		{"no scheme", Config{Origins: []string{"a.example"}}},
		{"null", Config{Origins: []string{"null"}}},
		{"empty", Config{Origins: []string{""}}},
		{"port only", Config{Origins: []string{"http://:80"}}},
		{"star with others", Config{Origins: []string{"*", "https://a.example"}}},
		{"header with comma", Config{Origins: []string{"https://a.example"}, Headers: []string{"A, B"}}},
		{"header with newline", Config{Headers: []string{"A\r\nSet-Cookie: x"}}},
		{"empty method", Config{Methods: []string{""}}},
	} {
		if _, err := New(tc.c); err == nil {
			t.Errorf("%s: New(%+v) succeeded", tc.name, tc.c)
		}
	}
}

func TestNormalizeOrigin(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://A.Example", "https://a.example"},
		{"https://a.example/", "https://a.example"},
		{"http://localhost:6274", "http://localhost:6274"},
		{" http://[::1]:8080 ", "http://[::1]:8080"},
	} {
		got, err := NormalizeOrigin(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("NormalizeOrigin(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestHandle(t *testing.T) {
	listed, err := New(Config{
		Origins: []string{"https://App.example", "http://localhost:6274/"},
		Methods: []string{"GET", "POST"},
		Headers: []string{"Content-Type", "Authorization"},
		Expose:  []string{"Mcp-Session-Id", "WWW-Authenticate"},
		MaxAge:  90 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	public, err := New(Config{Origins: []string{Any}, Methods: []string{"GET"}, Headers: []string{"Accept"}})
	if err != nil {
		t.Fatal(err)
	}
	none, err := New(Config{Methods: []string{"GET"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		p          *Policy
		method     string
		origin     string
		preflight  bool
		wantDone   bool
		wantStatus int // when done
		want       map[string]string
	}{
		{
			name: "preflight admitted", p: listed, method: "OPTIONS", origin: "https://app.example", preflight: true,
			wantDone: true, wantStatus: 204,
			want: map[string]string{
				"Access-Control-Allow-Origin":      "https://app.example",
				"Access-Control-Allow-Methods":     "GET, POST",
				"Access-Control-Allow-Headers":     "Content-Type, Authorization",
				"Access-Control-Max-Age":           "5400",
				"Access-Control-Allow-Credentials": "",
				"Access-Control-Expose-Headers":    "",
				"Vary":                             "Origin",
			},
		},
		{
			name: "preflight admitted, other case", p: listed, method: "OPTIONS", origin: "HTTP://LOCALHOST:6274", preflight: true,
			wantDone: true, wantStatus: 204,
			want: map[string]string{"Access-Control-Allow-Origin": "HTTP://LOCALHOST:6274"},
		},
		{
			name: "preflight refused", p: listed, method: "OPTIONS", origin: "https://evil.example", preflight: true,
			wantDone: true, wantStatus: 403,
			want: map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": "", "Access-Control-Allow-Headers": "", "Vary": "Origin"},
		},
		{
			name: "preflight, port differs", p: listed, method: "OPTIONS", origin: "http://localhost:6275", preflight: true,
			wantDone: true, wantStatus: 403,
			want: map[string]string{"Access-Control-Allow-Origin": ""},
		},
		{
			name: "preflight, no origin listed", p: none, method: "OPTIONS", origin: "https://app.example", preflight: true,
			wantDone: true, wantStatus: 403,
			want: map[string]string{"Access-Control-Allow-Origin": ""},
		},
		{
			name: "actual admitted", p: listed, method: "POST", origin: "https://app.example",
			want: map[string]string{
				"Access-Control-Allow-Origin":   "https://app.example",
				"Access-Control-Expose-Headers": "Mcp-Session-Id, WWW-Authenticate",
				"Access-Control-Allow-Methods":  "",
				"Vary":                          "Origin",
			},
		},
		{
			name: "actual refused", p: listed, method: "POST", origin: "https://evil.example",
			want: map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Expose-Headers": "", "Vary": "Origin"},
		},
		{
			name: "no origin", p: listed, method: "GET",
			want: map[string]string{"Access-Control-Allow-Origin": "", "Vary": "Origin"},
		},
		{
			name: "OPTIONS that is no preflight", p: listed, method: "OPTIONS", origin: "https://app.example",
			want: map[string]string{"Access-Control-Allow-Origin": "https://app.example", "Access-Control-Allow-Methods": ""},
		},
		{
			name: "public preflight", p: public, method: "OPTIONS", origin: "https://anyone.example", preflight: true,
			wantDone: true, wantStatus: 204,
			want: map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET", "Access-Control-Allow-Headers": "Accept", "Access-Control-Max-Age": "", "Vary": ""},
		},
		{
			name: "public, no origin", p: public, method: "GET",
			want: map[string]string{"Access-Control-Allow-Origin": "*", "Vary": ""},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/", nil)
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if tc.preflight {
				r.Header.Set("Access-Control-Request-Method", "POST")
				r.Header.Set("Access-Control-Request-Headers", "content-type, authorization")
			}
			w := httptest.NewRecorder()
			done := tc.p.Handle(w, r)
			if done != tc.wantDone {
				t.Fatalf("Handle = %v, want %v", done, tc.wantDone)
			}
			if done && w.Code != tc.wantStatus {
				t.Errorf("status %d, want %d", w.Code, tc.wantStatus)
			}
			for k, v := range tc.want {
				if got := strings.Join(w.Header().Values(k), ", "); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestWrapTwiceVaryOnce(t *testing.T) {
	p, err := New(Config{Origins: []string{"https://app.example"}})
	if err != nil {
		t.Fatal(err)
	}
	called := 0
	h := p.Wrap(p.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		called++
		w.WriteHeader(http.StatusUnauthorized)
	})))
	r := httptest.NewRequest("POST", "/", nil)
	r.Header.Set("Origin", "https://app.example")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if called != 1 || w.Code != 401 {
		t.Fatalf("called %d, status %d", called, w.Code)
	}
	if got := w.Header().Values("Vary"); len(got) != 1 || got[0] != "Origin" {
		t.Errorf("Vary %q", got)
	}
	if got := w.Header().Values("Access-Control-Allow-Origin"); len(got) != 1 {
		t.Errorf("Access-Control-Allow-Origin %q", got)
	}
	// A preflight never reaches next.
	r = httptest.NewRequest("OPTIONS", "/", nil)
	r.Header.Set("Origin", "https://app.example")
	r.Header.Set("Access-Control-Request-Method", "POST")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if called != 1 || w.Code != 204 {
		t.Errorf("preflight: called %d, status %d", called, w.Code)
	}
}
