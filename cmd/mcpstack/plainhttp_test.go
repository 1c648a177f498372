package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// TestPlainHTTPRefused checks #17.16: the commands that serve OAuth over
// plain HTTP refuse a listening address other hosts can reach, whatever
// the issuer says.
func TestPlainHTTPRefused(t *testing.T) {
	for _, args := range [][]string{
		{"authserver", "--dev-user", "me", "--db", ":memory:", "--addr", "0.0.0.0:0", "--issuer", "http://localhost:9000"},
		{"authserver", "--dev-user", "me", "--db", ":memory:", "--addr", "0.0.0.0:0", "--issuer", "https://as.example"},
		{"authserver", "--dev-user", "me", "--db", ":memory:", "--addr", "0.0.0.0:0"},
		{"serve", "--addr", "0.0.0.0:0", "--issuer", "http://127.0.0.1:1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			// Refused, the command returns at once; the deadline only
			// ends a server that (wrongly) started.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var out, errb bytes.Buffer
			code := run(ctx, args, &stdio{in: strings.NewReader(""), out: &out, err: &errb})
			if code != exitUsage || !strings.Contains(errb.String(), "refusing to serve plain HTTP") {
				t.Fatalf("exit %d, stderr:\n%s", code, errb.String())
			}
		})
	}
}

func TestCheckPlainHTTP(t *testing.T) {
	for _, tc := range []struct {
		addr       string
		tls, allow bool
		ok         bool
	}{
		{"127.0.0.1:0", false, false, true},
		{"localhost:0", false, false, true},
		{"0.0.0.0:0", false, false, false},
		{"0.0.0.0:0", true, false, true},
		{"0.0.0.0:0", false, true, true},
	} {
		ln, err := net.Listen("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		err = checkPlainHTTP(ln, tc.tls, tc.allow, "fix it")
		ln.Close()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, errUsage)) {
			t.Errorf("%s tls=%v allow=%v: %v", tc.addr, tc.tls, tc.allow, err)
		}
	}
}
