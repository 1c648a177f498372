package authserver_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/store/memory"
)

// TestNilLoggerDiscards: a server whose Config.Logger is nil logs nothing,
// to slog.Default or anywhere, as every package of the module does (#18
// item 8: one logger default); a Logger given receives the refusal. It
// changes slog.Default, so it does not run in parallel.
func TestNilLoggerDiscards(t *testing.T) {
	for _, tc := range []struct {
		name     string
		own      bool // pass a Logger of the test's own
		wantOwn  bool
		wantDflt bool
	}{
		{name: "nil Logger", own: false, wantOwn: false, wantDflt: false},
		{name: "a Logger", own: true, wantOwn: true, wantDflt: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dflt, own bytes.Buffer
			old := slog.Default()
			slog.SetDefault(slog.New(slog.NewTextHandler(&dflt, nil)))
			defer slog.SetDefault(old)
			cfg := authserver.Config{Issuer: "http://127.0.0.1:9000", Store: memory.New(), DevUser: "alice"}
			if tc.own {
				cfg.Logger = slog.New(slog.NewTextHandler(&own, nil))
			}
			s, err := authserver.NewServer(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			// A refused token request is logged.
			form := url.Values{"grant_type": {"no_such_grant"}, "client_id": {"nobody"}}
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9000/token", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code < 400 {
				t.Fatalf("status %d, want a refusal", rec.Code)
			}
			if got := own.Len() > 0; got != tc.wantOwn {
				t.Errorf("the Logger given logged %v (%q), want %v", got, own.String(), tc.wantOwn)
			}
			if got := dflt.Len() > 0; got != tc.wantDflt {
				t.Errorf("slog.Default logged %v (%q), want %v", got, dflt.String(), tc.wantDflt)
			}
		})
	}
}
