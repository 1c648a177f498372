// Package sqlite is an [authserver.Store] in an SQLite database, through the
// pure-Go driver modernc.org/sqlite (no cgo). The schema is created and
// upgraded by numbered migrations when the store opens, and everything
// survives a restart.
//
// Every single-use operation is one UPDATE ... RETURNING or one upsert, so
// the same statements work on PostgreSQL.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// Store is an SQLite authserver.Store.
type Store struct {
	db     *sql.DB
	now    func() time.Time
	writes atomic.Int64
}

var _ authserver.Store = (*Store)(nil)

// migrations are applied in order; migration i brings the schema to
// version i+1. Append only.
var migrations = []string{
	`CREATE TABLE clients (
		id TEXT PRIMARY KEY,
		metadata TEXT NOT NULL,
		secret_hash BLOB,
		issued_at INTEGER NOT NULL
	);
	CREATE TABLE codes (
		hash TEXT PRIMARY KEY,
		data TEXT NOT NULL,
		used INTEGER NOT NULL DEFAULT 0,
		expires_at INTEGER NOT NULL
	);
	CREATE TABLE refresh_tokens (
		hash TEXT PRIMARY KEY,
		family_id TEXT NOT NULL,
		data TEXT NOT NULL,
		used INTEGER NOT NULL DEFAULT 0,
		expires_at INTEGER NOT NULL
	);
	CREATE INDEX refresh_tokens_family ON refresh_tokens(family_id);
	CREATE TABLE revoked_families (
		id TEXT PRIMARY KEY,
		until INTEGER NOT NULL
	);
	CREATE TABLE nonces (
		key TEXT PRIMARY KEY,
		until INTEGER NOT NULL
	);
	CREATE TABLE signing_keys (
		id TEXT PRIMARY KEY,
		algorithm TEXT NOT NULL,
		pkcs8 BLOB NOT NULL,
		created_at INTEGER NOT NULL
	);`,
	// 2: clients registered but never used can be pruned (#17.8).
	`ALTER TABLE clients ADD COLUMN unused_expires_at INTEGER;
	CREATE INDEX clients_unused_expires_at ON clients(unused_expires_at) WHERE unused_expires_at IS NOT NULL;`,
}

// Open opens (creating if needed) the database file at path and brings its
// schema up to date. Use ":memory:" for a private in-memory database.
func Open(ctx context.Context, path string) (*Store, error) {
	dsn := "file:" + url.PathEscape(path) + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate"
	if path == ":memory:" {
		dsn = ":memory:?_pragma=busy_timeout(5000)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	// One connection: SQLite serialises writers anyway, and an in-memory
	// database exists per connection.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, now: time.Now}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Version returns the schema version.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("sqlite: migrations: %w", err)
	}
	v, err := s.Version(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: migrations: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("sqlite: schema version %d is newer than this program (%d)", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("sqlite: migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqlite: migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)`, i+1, s.now().Unix()); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqlite: migration %d: %w", i+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("sqlite: migration %d: %w", i+1, err)
		}
	}
	return nil
}

func isUnique(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// CreateClient implements authserver.Store.
func (s *Store) CreateClient(ctx context.Context, c authserver.Client) error {
	m, err := json.Marshal(c.Metadata)
	if err != nil {
		return err
	}
	var unused sql.NullInt64
	if !c.UnusedExpiresAt.IsZero() {
		unused = sql.NullInt64{Int64: c.UnusedExpiresAt.UnixNano(), Valid: true}
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO clients(id, metadata, secret_hash, issued_at, unused_expires_at) VALUES (?, ?, ?, ?, ?)`,
		c.ID(), string(m), c.SecretHash, c.IssuedAt.UnixNano(), unused)
	if isUnique(err) {
		return authserver.ErrExists
	}
	return err
}

// Client implements authserver.Store.
func (s *Store) Client(ctx context.Context, id string) (authserver.Client, error) {
	var meta string
	var secret []byte
	var issued int64
	var unused sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT metadata, secret_hash, issued_at, unused_expires_at FROM clients WHERE id = ?`, id).Scan(&meta, &secret, &issued, &unused)
	if errors.Is(err, sql.ErrNoRows) {
		return authserver.Client{}, authserver.ErrNotFound
	}
	if err != nil {
		return authserver.Client{}, err
	}
	var m oauth.ClientMetadata
	if err := json.Unmarshal([]byte(meta), &m); err != nil {
		return authserver.Client{}, fmt.Errorf("sqlite: client %s: %w", id, err)
	}
	c := authserver.Client{Metadata: m, SecretHash: secret, IssuedAt: time.Unix(0, issued).UTC()}
	if unused.Valid {
		c.UnusedExpiresAt = time.Unix(0, unused.Int64).UTC()
	}
	return c, nil
}

// MarkClientUsed implements authserver.Store.
func (s *Store) MarkClientUsed(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE clients SET unused_expires_at = NULL WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("sqlite: client %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("sqlite: client %s: %w", id, authserver.ErrNotFound)
	}
	return nil
}

// PruneClients implements authserver.Store.
func (s *Store) PruneClients(ctx context.Context, now time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM clients WHERE unused_expires_at IS NOT NULL AND unused_expires_at <= ?`, now.UnixNano())
	if err != nil {
		return 0, fmt.Errorf("sqlite: pruning clients: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// SaveCode implements authserver.Store.
func (s *Store) SaveCode(ctx context.Context, c authserver.Code) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO codes(hash, data, expires_at) VALUES (?, ?, ?)`, c.Hash, string(b), c.ExpiresAt.Unix())
	if isUnique(err) {
		return authserver.ErrExists
	}
	s.prune(ctx)
	return err
}

// take marks a single-use row used and returns its data: ErrAlreadyUsed
// (with the data) if it was, ErrNotFound if there is none.
func (s *Store) take(ctx context.Context, table, hash string, mark bool, v any) error {
	var data string
	var err error
	if mark {
		err = s.db.QueryRowContext(ctx, `UPDATE `+table+` SET used = 1 WHERE hash = ? AND used = 0 RETURNING data`, hash).Scan(&data)
	} else {
		var used bool
		err = s.db.QueryRowContext(ctx, `SELECT data, used FROM `+table+` WHERE hash = ?`, hash).Scan(&data, &used)
		if err == nil && used {
			err = authserver.ErrAlreadyUsed
		}
	}
	if errors.Is(err, sql.ErrNoRows) && mark {
		err = s.db.QueryRowContext(ctx, `SELECT data FROM `+table+` WHERE hash = ?`, hash).Scan(&data)
		if err == nil {
			err = authserver.ErrAlreadyUsed
		}
	}
	if errors.Is(err, sql.ErrNoRows) {
		return authserver.ErrNotFound
	}
	if err != nil && !errors.Is(err, authserver.ErrAlreadyUsed) {
		return err
	}
	if uerr := json.Unmarshal([]byte(data), v); uerr != nil {
		return fmt.Errorf("sqlite: %s: %w", table, uerr)
	}
	return err
}

// TakeCode implements authserver.Store.
func (s *Store) TakeCode(ctx context.Context, hash string) (authserver.Code, error) {
	var c authserver.Code
	err := s.take(ctx, "codes", hash, true, &c)
	return c, err
}

// SaveRefreshToken implements authserver.Store.
func (s *Store) SaveRefreshToken(ctx context.Context, t authserver.RefreshToken) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO refresh_tokens(hash, family_id, data, expires_at) VALUES (?, ?, ?, ?)`,
		t.Hash, t.FamilyID, string(b), t.ExpiresAt.Unix())
	if isUnique(err) {
		return authserver.ErrExists
	}
	return err
}

// UseRefreshToken implements authserver.Store.
func (s *Store) UseRefreshToken(ctx context.Context, hash string) (authserver.RefreshToken, error) {
	var t authserver.RefreshToken
	err := s.take(ctx, "refresh_tokens", hash, true, &t)
	return t, err
}

// RefreshToken implements authserver.Store.
func (s *Store) RefreshToken(ctx context.Context, hash string) (authserver.RefreshToken, error) {
	var t authserver.RefreshToken
	err := s.take(ctx, "refresh_tokens", hash, false, &t)
	return t, err
}

// RevokeFamily implements authserver.Store.
func (s *Store) RevokeFamily(ctx context.Context, familyID string, until time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO revoked_families(id, until) VALUES (?, ?)
		ON CONFLICT(id) DO UPDATE SET until = MAX(until, excluded.until)`, familyID, until.Unix())
	return err
}

// FamilyRevoked implements authserver.Store.
func (s *Store) FamilyRevoked(ctx context.Context, familyID string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM revoked_families WHERE id = ?`, familyID).Scan(&n)
	return n > 0, err
}

// UseNonce implements authserver.Store.
func (s *Store) UseNonce(ctx context.Context, key string, until time.Time) error {
	res, err := s.db.ExecContext(ctx, `INSERT INTO nonces(key, until) VALUES (?, ?)
		ON CONFLICT(key) DO UPDATE SET until = excluded.until WHERE nonces.until < ?`, key, until.Unix(), s.now().Unix())
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return authserver.ErrAlreadyUsed
	}
	return nil
}

// SaveSigningKey implements authserver.Store.
func (s *Store) SaveSigningKey(ctx context.Context, k authserver.SigningKey) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO signing_keys(id, algorithm, pkcs8, created_at) VALUES (?, ?, ?, ?)`,
		k.ID, k.Algorithm, k.PKCS8, k.CreatedAt.UnixNano())
	if isUnique(err) {
		return authserver.ErrExists
	}
	return err
}

// SigningKeys implements authserver.Store.
func (s *Store) SigningKeys(ctx context.Context) ([]authserver.SigningKey, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, algorithm, pkcs8, created_at FROM signing_keys ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []authserver.SigningKey
	for rows.Next() {
		var k authserver.SigningKey
		var created int64
		if err := rows.Scan(&k.ID, &k.Algorithm, &k.PKCS8, &created); err != nil {
			return nil, err
		}
		k.CreatedAt = time.Unix(0, created).UTC()
		out = append(out, k)
	}
	return out, rows.Err()
}

// prune deletes long-expired rows every 128th code write.
func (s *Store) prune(ctx context.Context) {
	if s.writes.Add(1)%128 != 0 {
		return
	}
	now := s.now().Unix()
	for _, q := range []string{
		`DELETE FROM codes WHERE expires_at < ?`,
		`DELETE FROM refresh_tokens WHERE expires_at < ?`,
		`DELETE FROM revoked_families WHERE until < ?`,
		`DELETE FROM nonces WHERE until < ?`,
	} {
		_, _ = s.db.ExecContext(ctx, q, now-3600)
	}
}
