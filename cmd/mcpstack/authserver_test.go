package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
)

func TestReadUsers(t *testing.T) {
	hash, err := authserver.HashPassword("pw")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file string
		users      []string
		errSub     string
	}{
		{"users and comments", "# users\n\nalice:" + string(hash) + "\n  bob:" + string(hash) + "  \n", []string{"alice", "bob"}, ""},
		{"a plain password", "alice:secret\n", nil, ":1: want name:bcrypt-hash"},
		{"no colon", "# ok\nalice\n", nil, ":2: want name:bcrypt-hash"},
		{"no name", ":" + string(hash) + "\n", nil, ":1: want name:bcrypt-hash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users")
			must(t, os.WriteFile(path, []byte(tt.file), 0o600))
			users := authserver.PasswordUsers{}
			err := readUsers(path, users)
			if tt.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errSub) {
					t.Errorf("error %v, want %q", err, tt.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range tt.users {
				if sub, err := users.Authenticate(context.Background(), u, "pw"); err != nil || sub != u {
					t.Errorf("%s cannot sign in: %v", u, err)
				}
			}
			if len(users) != len(tt.users) {
				t.Errorf("%d users, want %d", len(users), len(tt.users))
			}
		})
	}
	if err := readUsers(filepath.Join(t.TempDir(), "missing"), authserver.PasswordUsers{}); err == nil {
		t.Error("a missing file was read")
	}
}

// TestAuthserverRefusesSharedDB checks #17.15 from the command line: a
// database others may read is refused, and the message says the chmod.
func TestAuthserverRefusesSharedDB(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX modes")
	}
	path := filepath.Join(t.TempDir(), "as.db")
	must(t, os.WriteFile(path, nil, 0o600))
	must(t, os.Chmod(path, 0o644))
	r := runCmd(t, "", "authserver", "--dev-user", "me", "--addr", "127.0.0.1:0", "--db", path)
	if r.code == exitOK || !strings.Contains(r.stderr, "chmod 600 "+path) {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestAuthserverUpstreamFlags checks the --upstream-* flags (#23.4): what
// goes together, what excludes what, and the secret file read.
func TestAuthserverUpstreamFlags(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	must(t, os.WriteFile(secret, []byte("s3cret\n"), 0o600))
	empty := filepath.Join(dir, "empty")
	must(t, os.WriteFile(empty, nil, 0o600))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no client id", []string{"--upstream-issuer", "https://idp.example", "--upstream-client-secret-file", secret}, "--upstream-client-id"},
		{"client id alone", []string{"--upstream-client-id", "x"}, "need --upstream-issuer"},
		{"empty secret", []string{"--upstream-issuer", "https://idp.example", "--upstream-client-id", "x", "--upstream-client-secret-file", empty}, "is empty"},
		{"missing secret file", []string{"--upstream-issuer", "https://idp.example", "--upstream-client-id", "x", "--upstream-client-secret-file", filepath.Join(dir, "nope")}, "--upstream-client-secret-file"},
		{"with dev user", []string{"--dev-user", "me", "--upstream-issuer", "https://idp.example", "--upstream-client-id", "x", "--upstream-client-secret-file", secret}, "excludes"},
		{"state TTL too long", []string{"--upstream-issuer", "https://idp.example", "--upstream-client-id", "x", "--upstream-client-secret-file", secret, "--upstream-state-ttl", "11m", "--db", ":memory:"}, "10 minutes"},
		{"nothing", nil, "--upstream-issuer"},
		{"resource alone", []string{"--dev-user", "me", "--upstream-resource", "https://idp.example/userinfo"}, "--upstream-resource needs --upstream-issuer"},
		{"resource with a fragment", []string{"--upstream-issuer", "https://idp.example", "--upstream-client-id", "x", "--upstream-client-secret-file", secret, "--upstream-resource", "https://idp.example/userinfo#f", "--db", ":memory:"}, "Resource"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, "", append([]string{"authserver", "--addr", "127.0.0.1:0"}, tc.args...)...)
			if r.code == exitOK || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
		})
	}
	r := runCmd(t, "", "authserver", "--help")
	for _, f := range []string{"-upstream-issuer URL", "-upstream-client-id ID", "-upstream-client-secret-file FILE", "-upstream-scope SCOPE", "-upstream-resource URL", "(default 10m0s)", `(default "sub")`} {
		if !strings.Contains(r.stdout+r.stderr, f) {
			t.Errorf("--help lacks %q", f)
		}
	}
	up, err := upstreamConfig("https://idp.example", "x", secret, "", "", "", "sub", time.Minute, []string{"openid"})
	if err != nil || up.ClientSecret != "s3cret" || up.Issuer != "https://idp.example" {
		t.Fatalf("%+v, %v", up, err)
	}
}
