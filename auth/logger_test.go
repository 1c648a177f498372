package auth_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpstack/mcpstack/auth"
)

// TestNilLoggerDiscards: a Middleware whose Options.Logger is nil logs
// nothing, to slog.Default or anywhere, as every package of the module
// does (#18 item 8: one logger default); a Logger given receives the line.
// It changes slog.Default, so it does not run in parallel.
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
			opts := auth.Options{
				Resource: resource,
				// A failure other than an invalid token is logged.
				Verifier: auth.VerifierFunc(func(context.Context, string) (*auth.Principal, error) {
					return nil, errors.New("the introspection endpoint is down")
				}),
			}
			if tc.own {
				opts.Logger = slog.New(slog.NewTextHandler(&own, nil))
			}
			m, err := auth.NewMiddleware(opts)
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodPost, resource, nil)
			req.Header.Set("Authorization", "Bearer abc")
			rec := httptest.NewRecorder()
			m.Wrap(http.NotFoundHandler()).ServeHTTP(rec, req)
			if rec.Code != http.StatusServiceUnavailable {
				t.Fatalf("status %d, want 503", rec.Code)
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
