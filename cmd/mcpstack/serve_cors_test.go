package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServeCORS runs `mcpstack serve --cors-origin`, with and without
// --issuer, and makes the requests a browser would make from a page on
// that origin and on another.
func TestServeCORS(t *testing.T) {
	const page = "http://localhost:6274"
	iss := newTestIssuer(t)
	open := startServe(t, "--cors-origin", page)
	protected := startServe(t, "--cors-origin", page, "--issuer", iss.srv.URL, "--scope", "mcp:read")
	plain := startServe(t)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`
	preflight := map[string]string{"Origin": page, "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version"}
	for _, tc := range []struct {
		name   string
		url    string
		method string
		hdr    map[string]string
		token  bool
		status int
		want   map[string]string // "" means absent, "?" present
	}{
		{"preflight", open, "OPTIONS", preflight, false, 204,
			map[string]string{"Access-Control-Allow-Origin": page, "Access-Control-Allow-Methods": "GET, POST, DELETE", "Vary": "Origin"}},
		{"preflight from another origin", open, "OPTIONS", map[string]string{"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"}, false, 403,
			map[string]string{"Access-Control-Allow-Origin": ""}},
		{"initialize", open, "POST", map[string]string{"Origin": page}, false, 200,
			map[string]string{"Access-Control-Allow-Origin": page, "Mcp-Session-Id": "?", "Access-Control-Expose-Headers": "Mcp-Session-Id, WWW-Authenticate"}},
		{"protected preflight", protected, "OPTIONS", preflight, false, 204,
			map[string]string{"Access-Control-Allow-Origin": page}},
		{"protected 401 readable", protected, "POST", map[string]string{"Origin": page}, false, 401,
			map[string]string{"Access-Control-Allow-Origin": page, "WWW-Authenticate": "?", "Access-Control-Expose-Headers": "Mcp-Session-Id, WWW-Authenticate"}},
		{"protected initialize", protected, "POST", map[string]string{"Origin": page}, true, 200,
			map[string]string{"Access-Control-Allow-Origin": page, "Mcp-Session-Id": "?"}},
		{"protected, another origin", protected, "POST", map[string]string{"Origin": "https://evil.example"}, true, 403,
			map[string]string{"Access-Control-Allow-Origin": ""}},
		{"no CORS without the flag", plain, "POST", map[string]string{"Origin": page}, false, 200,
			map[string]string{"Access-Control-Allow-Origin": "", "Vary": ""}},
		{"no preflight without the flag", plain, "OPTIONS", preflight, false, 405,
			map[string]string{"Access-Control-Allow-Origin": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, tc.url, strings.NewReader(initialize))
			if err != nil {
				t.Fatal(err)
			}
			if tc.method == "POST" {
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
			}
			if tc.token {
				req.Header.Set("Authorization", "Bearer "+iss.token(t, tc.url, "mcp:read"))
			}
			for k, v := range tc.hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			for k, v := range tc.want {
				got := strings.Join(resp.Header.Values(k), ", ")
				if v == "?" && got == "" || v != "?" && got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestCORSOriginFlag(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		inStderr string
	}{
		{[]string{"serve", "--addr", "127.0.0.1:1", "--cors-origin", "*"}, `"*" is not allowed`},
		{[]string{"serve", "--addr", "127.0.0.1:1", "--cors-origin", "localhost:6274"}, "want scheme://host[:port]"},
		{[]string{"serve", "--addr", "127.0.0.1:1", "--cors-origin", "https://app.example/path"}, "want scheme://host[:port]"},
		{[]string{"serve", "--cors-origin", "https://app.example"}, "give --addr too"},
		{[]string{"authserver", "--dev-user", "me", "--cors-origin", "null"}, "want scheme://host[:port]"},
	} {
		t.Run(fmt.Sprint(tc.args), func(t *testing.T) {
			r := runCmd(t, "", tc.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.inStderr) {
				t.Errorf("exit %d, want %d; stderr lacks %q:\n%s", r.code, exitUsage, tc.inStderr, r.stderr)
			}
		})
	}
}
