// Package sqlite is an [authserver.Store] in an SQLite database, through the
// pure-Go driver modernc.org/sqlite (no cgo). The schema is created and
// upgraded by numbered migrations when the store opens, and everything
// survives a restart.
//
// Every single-use operation is one UPDATE ... RETURNING or one upsert;
// redeeming a code and rotating a refresh token, which spend one record and
// create another, are one transaction.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime"
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
	// 2: cookie keys, shared by the servers on the store (#17.17).
	`CREATE TABLE cookie_keys (
		id TEXT PRIMARY KEY,
		secret BLOB NOT NULL,
		created_at INTEGER NOT NULL
	);`,
	// 3: clients registered but never used can be pruned (#17.8).
	`ALTER TABLE clients ADD COLUMN unused_expires_at INTEGER;
	CREATE INDEX clients_unused_expires_at ON clients(unused_expires_at) WHERE unused_expires_at IS NOT NULL;`,
	// 4: sign-in through an upstream provider (#23): the per-user
	// registry of approved clients, pending upstream states, and the
	// users' upstream tokens (encrypted by the server).
	`CREATE TABLE client_approvals (
		subject TEXT NOT NULL,
		client_id TEXT NOT NULL,
		approved_at INTEGER NOT NULL,
		PRIMARY KEY (subject, client_id)
	);
	CREATE TABLE upstream_states (
		hash TEXT PRIMARY KEY,
		data BLOB NOT NULL,
		expires_at INTEGER NOT NULL
	);
	CREATE TABLE upstream_grants (
		subject TEXT PRIMARY KEY,
		sealed BLOB NOT NULL,
		updated_at INTEGER NOT NULL
	);`,
}

// Open opens (creating if needed) the database file at path and brings its
// schema up to date. Use ":memory:" for a private in-memory database.
//
// The database holds the private signing keys, so a new file is created
// with mode 0600 whatever the umask (SQLite gives its -wal and -shm files
// the database file's mode), and a database file, -wal or -shm file that
// the group or others may access is refused with a [*FileModeError]
// (matching [ErrInsecureFile]) that says the chmod to run.
func Open(ctx context.Context, path string) (*Store, error) {
	if path != ":memory:" {
		if err := prepareFile(path); err != nil {
			return nil, err
		}
	}
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

// ErrInsecureFile reports a database file that users other than its owner
// may access. [*FileModeError] unwraps to it.
var ErrInsecureFile = errors.New("sqlite: database file accessible to group or others")

// FileModeError reports a database file (or its -wal or -shm file) whose
// mode lets the group or others in.
type FileModeError struct {
	// Path is the file at fault; Mode its permission bits.
	Path string
	Mode fs.FileMode
}

// Error says what is wrong and the command that fixes it.
func (e *FileModeError) Error() string {
	return fmt.Sprintf("sqlite: %s has mode %04o, so group or others may read it, and it holds the private signing key; run: chmod 600 %s",
		e.Path, e.Mode.Perm(), shellQuote(e.Path))
}

// Unwrap returns [ErrInsecureFile].
func (e *FileModeError) Unwrap() error { return ErrInsecureFile }

// prepareFile refuses a database (or -wal, -shm) file the group or others
// may access, and creates a missing database file with mode 0600, so that
// SQLite never creates it under the umask (usually 0644). Windows has no
// such mode bits, so nothing is checked there.
func prepareFile(path string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sqlite: %w", err)
		}
		if fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
			return &FileModeError{Path: p, Mode: fi.Mode().Perm()}
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sqlite: creating the database: %w", err)
	}
	return f.Close()
}

// shellQuote quotes p for a POSIX shell when it needs quoting.
func shellQuote(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+:@%,") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
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

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// take marks a single-use row used and returns its data: ErrAlreadyUsed
// (with the data) if it was, ErrNotFound if there is none.
func (s *Store) take(ctx context.Context, table, hash string, mark bool, v any) error {
	return take(ctx, s.db, table, hash, mark, v)
}

func take(ctx context.Context, db querier, table, hash string, mark bool, v any) error {
	var data string
	var err error
	if mark {
		err = db.QueryRowContext(ctx, `UPDATE `+table+` SET used = 1 WHERE hash = ? AND used = 0 RETURNING data`, hash).Scan(&data)
	} else {
		var used bool
		err = db.QueryRowContext(ctx, `SELECT data, used FROM `+table+` WHERE hash = ?`, hash).Scan(&data, &used)
		if err == nil && used {
			err = authserver.ErrAlreadyUsed
		}
	}
	if errors.Is(err, sql.ErrNoRows) && mark {
		err = db.QueryRowContext(ctx, `SELECT data FROM `+table+` WHERE hash = ?`, hash).Scan(&data)
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

// Code implements authserver.Store.
func (s *Store) Code(ctx context.Context, hash string) (authserver.Code, error) {
	var c authserver.Code
	err := s.take(ctx, "codes", hash, false, &c)
	return c, err
}

// RedeemCode implements authserver.Store: one transaction marks the code
// used and inserts the refresh token.
func (s *Store) RedeemCode(ctx context.Context, hash string, first *authserver.RefreshToken) (authserver.Code, error) {
	var c authserver.Code
	err := s.spend(ctx, "codes", hash, first, &c)
	return c, err
}

// RotateRefreshToken implements authserver.Store: one transaction marks
// the old token used and inserts the new one.
func (s *Store) RotateRefreshToken(ctx context.Context, hash string, next authserver.RefreshToken) (authserver.RefreshToken, error) {
	var t authserver.RefreshToken
	err := s.spend(ctx, "refresh_tokens", hash, &next, &t)
	return t, err
}

// spend marks a single-use row of table used and inserts next (unless
// nil) in one transaction, decoding the row into v. Any failure rolls both
// back.
func (s *Store) spend(ctx context.Context, table, hash string, next *authserver.RefreshToken, v any) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", table, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err := take(ctx, tx, table, hash, true, v); err != nil {
		return err
	}
	if next != nil {
		if err := insertRefresh(ctx, tx, *next); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: %s: %w", table, err)
	}
	return nil
}

func insertRefresh(ctx context.Context, db querier, t authserver.RefreshToken) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, `INSERT INTO refresh_tokens(hash, family_id, data, expires_at) VALUES (?, ?, ?, ?)`,
		t.Hash, t.FamilyID, string(b), t.ExpiresAt.Unix())
	if isUnique(err) {
		return authserver.ErrExists
	}
	return err
}

// SaveRefreshToken implements authserver.Store.
func (s *Store) SaveRefreshToken(ctx context.Context, t authserver.RefreshToken) error {
	return insertRefresh(ctx, s.db, t)
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

// SaveCookieKey implements authserver.Store.
func (s *Store) SaveCookieKey(ctx context.Context, k authserver.CookieKey) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO cookie_keys(id, secret, created_at) VALUES (?, ?, ?)`,
		k.ID, k.Secret, k.CreatedAt.UnixNano())
	if isUnique(err) {
		return fmt.Errorf("sqlite: cookie key %s: %w", k.ID, authserver.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("sqlite: cookie key %s: %w", k.ID, err)
	}
	return nil
}

// CookieKeys implements authserver.Store.
func (s *Store) CookieKeys(ctx context.Context) ([]authserver.CookieKey, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, secret, created_at FROM cookie_keys ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: cookie keys: %w", err)
	}
	defer rows.Close()
	var out []authserver.CookieKey
	for rows.Next() {
		var k authserver.CookieKey
		var created int64
		if err := rows.Scan(&k.ID, &k.Secret, &created); err != nil {
			return nil, fmt.Errorf("sqlite: cookie keys: %w", err)
		}
		k.CreatedAt = time.Unix(0, created).UTC()
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: cookie keys: %w", err)
	}
	return out, nil
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
		`DELETE FROM upstream_states WHERE expires_at < ?`,
	} {
		_, _ = s.db.ExecContext(ctx, q, now-3600)
	}
}

// ApproveClient implements authserver.Store.
func (s *Store) ApproveClient(ctx context.Context, subject, clientID string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO client_approvals(subject, client_id, approved_at) VALUES (?, ?, ?)
		ON CONFLICT(subject, client_id) DO UPDATE SET approved_at = excluded.approved_at`, subject, clientID, at.UnixNano())
	if err != nil {
		return fmt.Errorf("sqlite: client approval: %w", err)
	}
	return nil
}

// ClientApproved implements authserver.Store.
func (s *Store) ClientApproved(ctx context.Context, subject, clientID string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM client_approvals WHERE subject = ? AND client_id = ?`, subject, clientID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("sqlite: client approval: %w", err)
	}
	return n > 0, nil
}

// SaveUpstreamState implements authserver.Store.
func (s *Store) SaveUpstreamState(ctx context.Context, st authserver.UpstreamState) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO upstream_states(hash, data, expires_at) VALUES (?, ?, ?)`,
		st.Hash, st.Data, st.ExpiresAt.UnixNano())
	if isUnique(err) {
		return fmt.Errorf("sqlite: upstream state: %w", authserver.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("sqlite: upstream state: %w", err)
	}
	s.prune(ctx)
	return nil
}

// TakeUpstreamState implements authserver.Store: one DELETE ... RETURNING,
// so that of two concurrent takes only one gets the row.
func (s *Store) TakeUpstreamState(ctx context.Context, hash string) (authserver.UpstreamState, error) {
	st := authserver.UpstreamState{Hash: hash}
	var exp int64
	err := s.db.QueryRowContext(ctx, `DELETE FROM upstream_states WHERE hash = ? RETURNING data, expires_at`, hash).Scan(&st.Data, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return authserver.UpstreamState{}, authserver.ErrNotFound
	}
	if err != nil {
		return authserver.UpstreamState{}, fmt.Errorf("sqlite: upstream state: %w", err)
	}
	st.ExpiresAt = time.Unix(0, exp).UTC()
	return st, nil
}

// SaveUpstreamGrant implements authserver.Store.
func (s *Store) SaveUpstreamGrant(ctx context.Context, g authserver.UpstreamGrant) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO upstream_grants(subject, sealed, updated_at) VALUES (?, ?, ?)
		ON CONFLICT(subject) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`,
		g.Subject, g.Sealed, g.UpdatedAt.UnixNano())
	if err != nil {
		return fmt.Errorf("sqlite: upstream grant: %w", err)
	}
	return nil
}

// UpstreamGrant implements authserver.Store.
func (s *Store) UpstreamGrant(ctx context.Context, subject string) (authserver.UpstreamGrant, error) {
	g := authserver.UpstreamGrant{Subject: subject}
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT sealed, updated_at FROM upstream_grants WHERE subject = ?`, subject).Scan(&g.Sealed, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return authserver.UpstreamGrant{}, authserver.ErrNotFound
	}
	if err != nil {
		return authserver.UpstreamGrant{}, fmt.Errorf("sqlite: upstream grant: %w", err)
	}
	g.UpdatedAt = time.Unix(0, at).UTC()
	return g, nil
}
