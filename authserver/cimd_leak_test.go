package authserver_test

import (
	"bytes"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// syncBuffer is a log destination safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCIMDFetchErrorsNotShown checks #17.13: when a Client ID Metadata
// Document cannot be fetched, the error page and the token endpoint say so
// in general terms, and the detail (resolver, addresses, dial, TLS, status,
// content type) goes to the log only.
func TestCIMDFetchErrorsNotShown(t *testing.T) {
	ca := newCA(t)
	d := newDocServer(t, ca)
	tests := []struct {
		name     string
		path     string
		resolve  string // address client.test resolves to; "" for none
		tls      bool   // trust the test CA
		inLog    string // detail the log must carry and the answers must not
		wantCode oauth.ErrorCode
	}{
		{"no such host", "/good.json", "", true, "test resolver: no such host", oauth.InvalidClient},
		{"private address", "/good.json", "10.0.0.1", true, "10.0.0.1 is private", oauth.InvalidClient},
		{"untrusted certificate", "/good.json", "127.0.0.1", false, "x509", oauth.InvalidClient},
		{"status", "/missing.json", "127.0.0.1", true, "status 404", oauth.InvalidClient},
		{"content type", "/text.json", "127.0.0.1", true, "text/plain", oauth.InvalidClient},
		{"size", "/big.json", "127.0.0.1", true, "byte limit", oauth.InvalidClient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncBuffer
			f := authserver.NewCIMDFetcher()
			f.Resolver = mapResolver{}
			if tt.resolve != "" {
				f.Resolver = mapResolver{"client.test": addrs(tt.resolve)}
			}
			f.AllowLoopback = true
			if tt.tls {
				f.TLSConfig = ca.clientTLS()
			} else {
				f.TLSConfig = &tls.Config{}
			}
			f.Timeout = 2 * time.Second
			a := newAS(t, func(c *authserver.Config) {
				trustAll(c)
				c.CIMD = f
				c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			}, nil)
			resp := a.authorize(t, authParams(d.base+tt.path, loopbackRedirect, verifier))
			page, _ := io.ReadAll(resp.Body)
			resp.Body = io.NopCloser(bytes.NewReader(page))
			wantPageError(t, resp, http.StatusBadRequest, tt.wantCode)
			st, body := a.post(t, "/token", codeForm(d.base+tt.path, "x", loopbackRedirect, verifier))
			wantError(t, st, body, http.StatusUnauthorized, oauth.InvalidClient)
			desc, _ := body["error_description"].(string)
			for what, text := range map[string]string{"page": string(page), "token answer": desc} {
				if !strings.Contains(text, "could not be fetched") {
					t.Errorf("%s lacks the generic reason:\n%s", what, text)
				}
				for _, leak := range []string{tt.inLog, "10.0.0.1", "127.0.0.1:", "dial", "lookup", "x509", "certificate", "status", "resolver"} {
					if strings.Contains(text, leak) {
						t.Errorf("%s shows %q:\n%s", what, leak, text)
					}
				}
			}
			if !strings.Contains(logs.String(), tt.inLog) {
				t.Errorf("the log lacks %q:\n%s", tt.inLog, logs.String())
			}
		})
	}
}
