package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestStoreUnreachableOneLine: a command whose store does not answer
// writes exactly one line to standard error, which names the flag and the
// URL without its password and says what to check; go-redis's own logger
// (which prints each failed dial) stays silent. It runs the real process,
// since that logger writes to os.Stderr, not to the command's streams.
func TestStoreUnreachableOneLine(t *testing.T) {
	closed := closedPort(t)
	for _, tc := range []struct {
		name string
		args []string
		url  string // as it must appear
		kind string
	}{
		{"serve redis", []string{"serve", "--addr", "127.0.0.1:0", "--redis", "redis://:secretpw@" + closed + "/0", "--redis-timeout", "5s"},
			"--redis redis://:xxxxx@" + closed + "/0", "Redis"},
		{"authserver redis", []string{"authserver", "--dev-user", "me", "--addr", "127.0.0.1:0", "--redis", "redis://u:secretpw@" + closed + "/0", "--store-timeout", "5s"},
			"--redis redis://u:xxxxx@" + closed + "/0", "Redis"},
		{"authserver postgres", []string{"authserver", "--dev-user", "me", "--addr", "127.0.0.1:0", "--postgres", "postgres://u:secretpw@" + closed + "/db?sslmode=disable", "--store-timeout", "5s"},
			"--postgres postgres://u:xxxxx@" + closed + "/db", "PostgreSQL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, self(t), tc.args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitFailure {
				t.Fatalf("exit: %v, want %d; stderr:\n%s", err, exitFailure, stderr.String())
			}
			got := stderr.String()
			if n := strings.Count(got, "\n"); n != 1 || !strings.HasSuffix(got, "\n") {
				t.Errorf("stderr has %d lines, want 1:\n%s", n, got)
			}
			for _, want := range []string{tc.url, "does not answer", "check that " + tc.kind + " runs there"} {
				if !strings.Contains(got, want) {
					t.Errorf("stderr lacks %q:\n%s", want, got)
				}
			}
			if strings.Contains(got, "secretpw") {
				t.Errorf("stderr repeats the password:\n%s", got)
			}
		})
	}
}
