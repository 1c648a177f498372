package sqlite

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A database made by the previous release (schema 1) is brought to the
// current schema with its clients intact, none of them prunable.
func TestUpgradeFromSchema1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`,
		migrations[0],
		`INSERT INTO schema_migrations(version, applied_at) VALUES (1, 0)`,
		`INSERT INTO clients(id, metadata, secret_hash, issued_at) VALUES ('old', '{"client_id":"old"}', NULL, 0)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	// The old release created the file with the umask's mode; its owner
	// is told to chmod it, as Open's error says.
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Version(t.Context()); err != nil || v != len(migrations) {
		t.Fatalf("version %d, %v", v, err)
	}
	c, err := s.Client(t.Context(), "old")
	if err != nil || c.ID() != "old" || !c.UnusedExpiresAt.IsZero() {
		t.Fatalf("old client after upgrade: %+v, %v", c, err)
	}
	if n, err := s.PruneClients(t.Context(), time.Now().Add(1000*time.Hour)); err != nil || n != 0 {
		t.Fatalf("PruneClients pruned %d old clients, %v", n, err)
	}
}
