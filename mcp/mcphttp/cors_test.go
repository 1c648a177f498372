package mcphttp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
)

// The CORS rules of the Streamable HTTP endpoint, over raw HTTP on
// 127.0.0.1.

const corsApp = "https://inspector.example"

func TestStreamableCORS(t *testing.T) {
	preflight := map[string]string{
		"Origin":                         corsApp,
		"Access-Control-Request-Method":  "POST",
		"Access-Control-Request-Headers": "content-type, authorization, mcp-protocol-version",
	}
	with := func(m map[string]string, k, v string) map[string]string {
		c := map[string]string{k: v}
		for a, b := range m {
			if a != k {
				c[a] = b
			}
		}
		return c
	}
	listed := &Options{CORS: &CORSOptions{AllowedOrigins: []string{corsApp, "http://localhost:6274"}}}
	init := fmt.Sprintf(rawInitBody, mcp.ProtocolVersion20251125)
	tests := []struct {
		name   string
		opts   *Options
		method string
		hdr    map[string]string
		body   string
		status int
		want   map[string]string // "" means absent
	}{
		{
			"preflight from a listed origin", listed, "OPTIONS", preflight, "", 204,
			map[string]string{
				"Access-Control-Allow-Origin":      corsApp,
				"Access-Control-Allow-Methods":     "GET, POST, DELETE",
				"Access-Control-Allow-Headers":     "Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID",
				"Access-Control-Max-Age":           "7200",
				"Access-Control-Allow-Credentials": "",
				"Vary":                             "Origin",
			},
		},
		{
			"preflight from a listed loopback origin", listed, "OPTIONS", with(preflight, "Origin", "http://localhost:6274"), "", 204,
			map[string]string{"Access-Control-Allow-Origin": "http://localhost:6274"},
		},
		{
			"preflight from an origin not listed", listed, "OPTIONS", with(preflight, "Origin", "https://evil.example"), "", 403,
			map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": "", "Access-Control-Allow-Headers": ""},
		},
		{
			"preflight from a loopback origin not listed", listed, "OPTIONS", with(preflight, "Origin", "http://localhost:5173"), "", 403,
			map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": ""},
		},
		{
			"preflight, protection off, origin not listed",
			&Options{DisableDNSRebindingProtection: true, CORS: listed.CORS},
			"OPTIONS", with(preflight, "Origin", "https://evil.example"), "", 403,
			map[string]string{"Access-Control-Allow-Origin": ""},
		},
		{
			"preflight with a longer max-age and a header of our own",
			&Options{CORS: &CORSOptions{AllowedOrigins: []string{corsApp}, AllowedHeaders: []string{"DPoP"}, MaxAge: 10 * time.Minute}},
			"OPTIONS", preflight, "", 204,
			map[string]string{
				"Access-Control-Allow-Headers": "Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, DPoP",
				"Access-Control-Max-Age":       "600",
			},
		},
		{
			"preflight without CORS: as before", nil, "OPTIONS", preflight, "", 403,
			map[string]string{"Access-Control-Allow-Origin": "", "Vary": ""},
		},
		{
			"OPTIONS without CORS, from no browser: as before", nil, "OPTIONS", nil, "", 405,
			map[string]string{"Allow": "GET, POST, DELETE", "Access-Control-Allow-Origin": ""},
		},
		{
			"initialize from a listed origin", listed, "POST", map[string]string{"Origin": corsApp}, init, 200,
			map[string]string{
				"Access-Control-Allow-Origin":   corsApp,
				"Access-Control-Expose-Headers": "Mcp-Session-Id, WWW-Authenticate",
				"Vary":                          "Origin",
			},
		},
		{
			"initialize from an origin not listed", listed, "POST", map[string]string{"Origin": "https://evil.example"}, init, 403,
			map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Expose-Headers": ""},
		},
		{
			"initialize from no browser", listed, "POST", nil, init, 200,
			map[string]string{"Access-Control-Allow-Origin": "", "Vary": "Origin"},
		},
		{
			"no CORS headers by default", nil, "POST", map[string]string{"Origin": "http://localhost:5173"}, init, 200,
			map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Expose-Headers": "", "Vary": ""},
		},
		{
			"a CORS origin passes the Origin check beside AllowedOrigins",
			&Options{AllowedOrigins: []string{"https://other.example"}, CORS: listed.CORS},
			"POST", map[string]string{"Origin": corsApp}, init, 200,
			map[string]string{"Access-Control-Allow-Origin": corsApp},
		},
		{
			"AllowedOrigins alone sends no CORS headers",
			&Options{AllowedOrigins: []string{corsApp}},
			"POST", map[string]string{"Origin": corsApp}, init, 200,
			map[string]string{"Access-Control-Allow-Origin": ""},
		},
		{
			"rebound Host still refused", listed, "POST", map[string]string{"Origin": corsApp, "Host": "evil.example"}, init, 403,
			map[string]string{"Access-Control-Allow-Origin": ""},
		},
		{
			"a refusal after the checks is readable", listed, "PUT", map[string]string{"Origin": corsApp}, "", 405,
			map[string]string{"Access-Control-Allow-Origin": corsApp, "Allow": "GET, POST, DELETE"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ts := serve(t, toolServer(t, nil), tt.opts)
			r := rawDo(t, tt.method, ts.URL, tt.hdr, tt.body)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			for k, v := range tt.want {
				if got := strings.Join(r.header.Values(k), ", "); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if tt.status == 200 && tt.body == init && r.header.Get("Mcp-Session-Id") == "" {
				t.Error("initialize: no Mcp-Session-Id")
			}
		})
	}
}

// A session driven by a page: every answer carries the CORS headers, and
// the session id can be read.
func TestStreamableCORSSession(t *testing.T) {
	_, ts := serve(t, toolServer(t, nil), &Options{CORS: &CORSOptions{AllowedOrigins: []string{corsApp}}})
	r := rawDo(t, "POST", ts.URL, map[string]string{"Origin": corsApp}, fmt.Sprintf(rawInitBody, mcp.ProtocolVersion20251125))
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %q", r.status, sid)
	}
	hdr := map[string]string{"Origin": corsApp, "Mcp-Session-Id": sid, "MCP-Protocol-Version": mcp.ProtocolVersion20251125}
	for _, step := range []struct {
		method, body string
		status       int
	}{
		{"POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202},
		{"POST", fmt.Sprintf(callEcho, 2, 5), 200},
		{"DELETE", "", 204},
		{"POST", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, 404},
	} {
		r := rawDo(t, step.method, ts.URL, hdr, step.body)
		if r.status != step.status {
			t.Fatalf("%s %s: %d, want %d: %s", step.method, step.body, r.status, step.status, r.body)
		}
		if got := r.header.Get("Access-Control-Allow-Origin"); got != corsApp {
			t.Errorf("%s %s: Access-Control-Allow-Origin %q", step.method, step.body, got)
		}
	}
}

// fakeBearer stands for an authorization middleware: without an
// Authorization header it answers 401 with a challenge.
func fakeBearer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// The CORS function in front of a middleware that answers on its own:
// its 401 is readable from the page, and preflights never reach it.
func TestCORSInFrontOfAuth(t *testing.T) {
	co := &CORSOptions{AllowedOrigins: []string{corsApp}}
	h := NewHandler(func(*http.Request) *mcp.Server { return toolServer(t, nil) }, &Options{CORS: co})
	for _, tc := range []struct {
		name    string
		handler http.Handler
		method  string
		hdr     map[string]string
		status  int
		want    map[string]string
	}{
		{
			"401 readable", CORS(fakeBearer(h), co), "POST", map[string]string{"Origin": corsApp}, 401,
			map[string]string{
				"Access-Control-Allow-Origin":   corsApp,
				"Access-Control-Expose-Headers": "Mcp-Session-Id, WWW-Authenticate",
				"WWW-Authenticate":              `Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp"`,
				"Vary":                          "Origin",
			},
		},
		{
			"401 not readable behind the handler alone", fakeBearer(h), "POST", map[string]string{"Origin": corsApp}, 401,
			map[string]string{"Access-Control-Allow-Origin": ""},
		},
		{
			"preflight answered before the middleware", CORS(fakeBearer(h), co), "OPTIONS",
			map[string]string{"Origin": corsApp, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"}, 204,
			map[string]string{"Access-Control-Allow-Origin": corsApp, "Access-Control-Allow-Methods": "GET, POST, DELETE"},
		},
		{
			"preflight refused before the middleware", CORS(fakeBearer(h), co), "OPTIONS",
			map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}, 403,
			map[string]string{"Access-Control-Allow-Origin": ""},
		},
		{
			"authorized request, headers once", CORS(fakeBearer(h), co), "POST",
			map[string]string{"Origin": corsApp, "Authorization": "Bearer x"}, 200,
			map[string]string{"Access-Control-Allow-Origin": corsApp, "Vary": "Origin"},
		},
		{
			"no origin listed: next itself", CORS(fakeBearer(h), &CORSOptions{}), "POST", map[string]string{"Origin": corsApp}, 401,
			map[string]string{"Access-Control-Allow-Origin": "", "Vary": ""},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(tc.handler)
			defer ts.Close()
			r := rawDo(t, tc.method, ts.URL, tc.hdr, fmt.Sprintf(rawInitBody, mcp.ProtocolVersion20251125))
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			for k, v := range tc.want {
				if got := strings.Join(r.header.Values(k), ", "); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
	h.Close()
}

func TestCORSOptionsPanics(t *testing.T) {
	for _, origins := range [][]string{{"*"}, {"https://a.example/path"}, {"null"}, {"inspector.example"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%q: no panic", origins)
				}
			}()
			NewHandler(func(*http.Request) *mcp.Server { return nil }, &Options{CORS: &CORSOptions{AllowedOrigins: origins}})
		}()
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("CORS %q: no panic", origins)
				}
			}()
			CORS(http.NotFoundHandler(), &CORSOptions{AllowedOrigins: origins})
		}()
	}
}

// BenchmarkStreamableCORS serves tools/call POSTs by calling the handler
// directly (as BenchmarkStreamableHandlerCallTool does) without CORS, with
// CORS and a request from no browser, and with CORS and a request from a
// listed origin: what CORS costs per request.
func BenchmarkStreamableCORS(b *testing.B) {
	for _, mode := range []struct {
		name   string
		cors   *CORSOptions
		origin string
	}{
		{"off", nil, ""},
		{"on/no-origin", &CORSOptions{AllowedOrigins: []string{corsApp}}, ""},
		{"on/listed-origin", &CORSOptions{AllowedOrigins: []string{corsApp}}, corsApp},
	} {
		b.Run(mode.name, func(b *testing.B) {
			s := benchServer(b)
			h := NewHandler(func(*http.Request) *mcp.Server { return s }, &Options{JSONResponse: true, CORS: mode.cors})
			defer h.Close()
			body := &resettableBody{}
			req := httptest.NewRequest("POST", "http://localhost/mcp", body)
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Mcp-Session-Id", directSession(b, h))
			req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
			if mode.origin != "" {
				req.Header.Set("Origin", mode.origin)
			}
			bodies := make([]string, 4096)
			for i := range bodies {
				bodies[i] = `{"jsonrpc":"2.0","id":` + itoa(i+1) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
			}
			out := &benchWriter{h: http.Header{}}
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				if n == len(bodies) {
					b.StopTimer()
					req.Header.Set("Mcp-Session-Id", directSession(b, h))
					n = 0
					b.StartTimer()
				}
				body.Reset(bodies[n])
				n++
				req.ContentLength = int64(body.Len())
				out.buf.Reset()
				clear(out.h)
				h.ServeHTTP(out, req)
				if out.code != 200 {
					b.Fatalf("status %d: %s", out.code, out.buf.String())
				}
			}
		})
	}
}
