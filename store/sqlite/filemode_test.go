//go:build unix

package sqlite_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/store/sqlite"
)

// TestFileModes checks #17.15: under the usual umask the database and its
// -wal and -shm files are created 0600, since they hold the private
// signing key.
func TestFileModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "as.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A write makes sure the -wal and -shm files exist.
	if err := s.SaveSigningKey(t.Context(), authserver.SigningKey{ID: "k", Algorithm: "ES256", PKCS8: []byte{1}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %04o, want 0600", filepath.Base(p), m)
		}
	}
}

// TestRefusesSharedFile checks #17.15: a database file (or -wal, -shm)
// the group or others may access is refused, with the chmod to run.
func TestRefusesSharedFile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		suffix string
		mode   fs.FileMode
		ok     bool
	}{
		{"world readable", "", 0o644, false},
		{"group readable", "", 0o640, false},
		{"group writable", "", 0o620, false},
		{"others only", "", 0o604, false},
		{"wal world readable", "-wal", 0o644, false},
		{"shm group readable", "-shm", 0o640, false},
		{"owner only", "", 0o600, true},
		{"owner read only", "", 0o400, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "as.db")
			s, err := sqlite.Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			target := path + tc.suffix
			if tc.suffix != "" {
				if err := os.WriteFile(target, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(target, tc.mode); err != nil {
				t.Fatal(err)
			}
			s, err = sqlite.Open(t.Context(), path)
			if tc.ok {
				if err != nil && errors.Is(err, sqlite.ErrInsecureFile) {
					t.Fatalf("refused: %v", err)
				}
				if s != nil {
					s.Close()
				}
				return
			}
			if s != nil {
				s.Close()
			}
			var fe *sqlite.FileModeError
			if !errors.Is(err, sqlite.ErrInsecureFile) || !errors.As(err, &fe) || fe.Path != target {
				t.Fatalf("got %v, want a FileModeError for %s", err, target)
			}
			if want := "chmod 600 " + target; !strings.Contains(err.Error(), want) {
				t.Errorf("message %q does not say %q", err, want)
			}
		})
	}
}
