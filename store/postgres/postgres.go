// Package postgres is an [authserver.Store] in a PostgreSQL database, through
// github.com/jackc/pgx/v5 and its connection pool.
//
// Pick it when several processes share one authorization server: replicas
// behind a load balancer, or a server restarted while another still runs.
// Every process opens the same database; what one issues, the others honour,
// and single use holds across all of them. For one process store/sqlite is
// simpler; store/redis suits deployments that already run Redis.
//
// The schema is created and upgraded by numbered migrations when a store
// opens, under an advisory lock, so several processes may start at once.
// The tables live in the connection's current schema: put search_path in the
// connection string (…?search_path=authserver) to keep them apart from the
// application's own.
//
// Each single-use operation is one statement: an UPDATE … WHERE NOT used
// RETURNING for codes and refresh tokens, an INSERT … ON CONFLICT for nonces.
// PostgreSQL locks the row and re-checks the condition, so of any number of
// concurrent callers, on any number of connections, exactly one wins.
// Redeeming a code and rotating a refresh token put that statement and the
// INSERT of the new refresh token in one transaction: both or neither.
package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// PruneInterval is how often a store deletes expired rows, at most: the
// first write after the interval has passed does it.
const PruneInterval = 5 * time.Minute

// pruneGrace is how long used codes and refresh tokens are kept after they
// expire, so that a replay shortly after expiry is still reported as reuse
// (and revokes the family) rather than as an unknown value.
const pruneGrace = time.Hour

// Store is a PostgreSQL authserver.Store. It is safe for concurrent use, and
// any number of Stores, in any number of processes, may share one database.
type Store struct {
	pool      *pgxpool.Pool
	ownPool   bool
	now       func() time.Time
	nextPrune atomic.Int64 // Unix nanoseconds
}

var _ authserver.Store = (*Store)(nil)

// migrations are applied in order; migration i brings the schema to
// version i+1. Append only: never edit one that was released.
var migrations = []string{
	`CREATE TABLE clients (
		id TEXT PRIMARY KEY,
		metadata JSONB NOT NULL,
		secret_hash BYTEA,
		issued_at TIMESTAMPTZ NOT NULL
	);
	CREATE TABLE codes (
		hash TEXT PRIMARY KEY,
		data JSONB NOT NULL,
		used BOOLEAN NOT NULL DEFAULT false,
		expires_at TIMESTAMPTZ NOT NULL
	);
	CREATE INDEX codes_expires_at ON codes (expires_at);
	CREATE TABLE refresh_tokens (
		hash TEXT PRIMARY KEY,
		family_id TEXT NOT NULL,
		data JSONB NOT NULL,
		used BOOLEAN NOT NULL DEFAULT false,
		expires_at TIMESTAMPTZ NOT NULL
	);
	CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
	CREATE INDEX refresh_tokens_expires_at ON refresh_tokens (expires_at);
	CREATE TABLE revoked_families (
		id TEXT PRIMARY KEY,
		until TIMESTAMPTZ NOT NULL
	);
	CREATE TABLE nonces (
		key TEXT PRIMARY KEY,
		until TIMESTAMPTZ NOT NULL
	);
	CREATE INDEX nonces_until ON nonces (until);
	CREATE TABLE signing_keys (
		id TEXT PRIMARY KEY,
		algorithm TEXT NOT NULL,
		pkcs8 BYTEA NOT NULL,
		created_at TIMESTAMPTZ NOT NULL
	);`,
	// 2: cookie keys, shared by the servers on the store (#17.17).
	`CREATE TABLE cookie_keys (
		id TEXT PRIMARY KEY,
		secret BYTEA NOT NULL,
		created_at TIMESTAMPTZ NOT NULL
	);`,
	// 3: clients registered but never used can be pruned (#17.8).
	`ALTER TABLE clients ADD COLUMN unused_expires_at TIMESTAMPTZ;
	CREATE INDEX clients_unused_expires_at ON clients (unused_expires_at) WHERE unused_expires_at IS NOT NULL;`,
	// 4: sign-in through an upstream provider (#23): the per-user
	// registry of approved clients, pending upstream states, and the
	// users' upstream tokens (encrypted by the server).
	`CREATE TABLE client_approvals (
		subject TEXT NOT NULL,
		client_id TEXT NOT NULL,
		approved_at TIMESTAMPTZ NOT NULL,
		PRIMARY KEY (subject, client_id)
	);
	CREATE TABLE upstream_states (
		hash TEXT PRIMARY KEY,
		data BYTEA NOT NULL,
		expires_at TIMESTAMPTZ NOT NULL
	);
	CREATE TABLE upstream_grants (
		subject TEXT PRIMARY KEY,
		sealed BYTEA NOT NULL,
		updated_at TIMESTAMPTZ NOT NULL
	);`,
	// 5: per-address rate limits shared by the servers on the store
	// (#21): each bucket's theoretical arrival time; a row whose time has
	// passed is a full bucket, and is pruned.
	`CREATE TABLE rate_limits (
		key TEXT PRIMARY KEY,
		tat TIMESTAMPTZ NOT NULL
	);
	CREATE INDEX rate_limits_tat ON rate_limits (tat);`,
}

// Open connects to the database named by dsn, a pgx connection string (a
// postgres:// URL or key=value pairs), and brings its schema up to date.
// The store owns the pool: [Store.Close] closes it.
func Open(ctx context.Context, dsn string) (*Store, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s, err := New(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownPool = true
	return s, nil
}

// New returns a store on an existing pool, after bringing the schema up to
// date. The caller keeps the pool: [Store.Close] leaves it open.
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	s := &Store{pool: pool, now: time.Now}
	if err := s.migrate(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Close closes the pool if [Open] made it, and does nothing otherwise.
func (s *Store) Close() {
	if s.ownPool {
		s.pool.Close()
	}
}

// Version returns the schema version: the number of migrations applied.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("postgres: schema version: %w", err)
	}
	return v, nil
}

// migrate applies the missing migrations in one transaction, holding an
// advisory lock named after the current schema so that processes starting
// together take turns.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: migrations: %w", err)
	}
	defer tx.Rollback(ctx) // a no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('mcpstack/authserver ' || current_schema()))`); err != nil {
		return fmt.Errorf("postgres: migrations: lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY,
		applied_at TIMESTAMPTZ NOT NULL
	)`); err != nil {
		return fmt.Errorf("postgres: migrations: %w", err)
	}
	var v int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return fmt.Errorf("postgres: migrations: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("postgres: schema version %d is newer than this program (%d)", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		if _, err := tx.Exec(ctx, migrations[i]); err != nil {
			return fmt.Errorf("postgres: migration %d: %w", i+1, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`, i+1, s.now()); err != nil {
			return fmt.Errorf("postgres: migration %d: %w", i+1, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: migrations: %w", err)
	}
	return nil
}

// isUnique reports a unique_violation.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// CreateClient implements authserver.Store.
func (s *Store) CreateClient(ctx context.Context, c authserver.Client) error {
	m, err := json.Marshal(c.Metadata)
	if err != nil {
		return fmt.Errorf("postgres: client %s: %w", c.ID(), err)
	}
	var unused *time.Time
	if !c.UnusedExpiresAt.IsZero() {
		unused = &c.UnusedExpiresAt
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO clients (id, metadata, secret_hash, issued_at, unused_expires_at) VALUES ($1, $2, $3, $4, $5)`,
		c.ID(), string(m), c.SecretHash, c.IssuedAt, unused)
	if isUnique(err) {
		return fmt.Errorf("postgres: client %s: %w", c.ID(), authserver.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("postgres: create client %s: %w", c.ID(), err)
	}
	return nil
}

// Client implements authserver.Store.
func (s *Store) Client(ctx context.Context, id string) (authserver.Client, error) {
	var meta string
	var c authserver.Client
	var unused *time.Time
	err := s.pool.QueryRow(ctx, `SELECT metadata, secret_hash, issued_at, unused_expires_at FROM clients WHERE id = $1`, id).
		Scan(&meta, &c.SecretHash, &c.IssuedAt, &unused)
	if errors.Is(err, pgx.ErrNoRows) {
		return authserver.Client{}, fmt.Errorf("postgres: client %s: %w", id, authserver.ErrNotFound)
	}
	if err != nil {
		return authserver.Client{}, fmt.Errorf("postgres: client %s: %w", id, err)
	}
	var m oauth.ClientMetadata
	if err := json.Unmarshal([]byte(meta), &m); err != nil {
		return authserver.Client{}, fmt.Errorf("postgres: client %s: %w", id, err)
	}
	c.Metadata = m
	c.IssuedAt = c.IssuedAt.UTC()
	if unused != nil {
		c.UnusedExpiresAt = unused.UTC()
	}
	return c, nil
}

// MarkClientUsed implements authserver.Store.
func (s *Store) MarkClientUsed(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE clients SET unused_expires_at = NULL WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("postgres: client %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: client %s: %w", id, authserver.ErrNotFound)
	}
	return nil
}

// PruneClients implements authserver.Store.
func (s *Store) PruneClients(ctx context.Context, now time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM clients WHERE unused_expires_at IS NOT NULL AND unused_expires_at <= $1`, now)
	if err != nil {
		return 0, fmt.Errorf("postgres: pruning clients: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// SaveCode implements authserver.Store.
func (s *Store) SaveCode(ctx context.Context, c authserver.Code) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("postgres: save code: %w", err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO codes (hash, data, expires_at) VALUES ($1, $2, $3)`, c.Hash, string(b), c.ExpiresAt)
	if isUnique(err) {
		return fmt.Errorf("postgres: save code: %w", authserver.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("postgres: save code: %w", err)
	}
	s.maybePrune(ctx)
	return nil
}

// take marks a single-use row of table used and decodes its data into v, in
// one statement: the UPDATE claims the row if nobody has, and the SELECT
// returns it anyway when the UPDATE found it used. The error is nil for the
// one caller that claimed it, ErrAlreadyUsed (with v filled) for the others,
// ErrNotFound when there is no such row. With mark false it only reads.
func (s *Store) take(ctx context.Context, table, hash string, mark bool, v any) error {
	return take(ctx, s.pool, table, hash, mark, v)
}

// querier is what a pool and a transaction share.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

func take(ctx context.Context, db querier, table, hash string, mark bool, v any) error {
	q := `SELECT data, used FROM ` + table + ` WHERE hash = $1`
	if mark {
		q = `WITH claimed AS (UPDATE ` + table + ` SET used = true WHERE hash = $1 AND NOT used RETURNING data)
			SELECT data, false FROM claimed
			UNION ALL
			SELECT data, true FROM ` + table + ` WHERE hash = $1 AND NOT EXISTS (SELECT 1 FROM claimed)`
	}
	var data string
	var used bool
	err := db.QueryRow(ctx, q, hash).Scan(&data, &used)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("postgres: %s: %w", table, authserver.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("postgres: %s: %w", table, err)
	}
	if err := json.Unmarshal([]byte(data), v); err != nil {
		return fmt.Errorf("postgres: %s: %w", table, err)
	}
	if used {
		return fmt.Errorf("postgres: %s: %w", table, authserver.ErrAlreadyUsed)
	}
	return nil
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

// spend claims a single-use row of table and inserts next (unless nil) in
// one transaction, decoding the row into v. The claim locks the row, so a
// concurrent spender waits and then finds it used; any failure, including
// the connection dropping before COMMIT, rolls both back.
func (s *Store) spend(ctx context.Context, table, hash string, next *authserver.RefreshToken, v any) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: %s: %w", table, err)
	}
	defer tx.Rollback(ctx) // a no-op after Commit
	if err := take(ctx, tx, table, hash, true, v); err != nil {
		return err
	}
	if next != nil {
		if err := insertRefresh(ctx, tx, *next); err != nil {
			return err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: %s: %w", table, err)
	}
	if next != nil {
		s.maybePrune(ctx)
	}
	return nil
}

func insertRefresh(ctx context.Context, db querier, t authserver.RefreshToken) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("postgres: save refresh token: %w", err)
	}
	_, err = db.Exec(ctx, `INSERT INTO refresh_tokens (hash, family_id, data, expires_at) VALUES ($1, $2, $3, $4)`,
		t.Hash, t.FamilyID, string(b), t.ExpiresAt)
	if isUnique(err) {
		return fmt.Errorf("postgres: save refresh token: %w", authserver.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("postgres: save refresh token: %w", err)
	}
	return nil
}

// SaveRefreshToken implements authserver.Store.
func (s *Store) SaveRefreshToken(ctx context.Context, t authserver.RefreshToken) error {
	if err := insertRefresh(ctx, s.pool, t); err != nil {
		return err
	}
	s.maybePrune(ctx)
	return nil
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

// RevokeFamily implements authserver.Store. Revoking a family again keeps
// the later of the two times.
func (s *Store) RevokeFamily(ctx context.Context, familyID string, until time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO revoked_families (id, until) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET until = GREATEST(revoked_families.until, excluded.until)`, familyID, until)
	if err != nil {
		return fmt.Errorf("postgres: revoke family: %w", err)
	}
	return nil
}

// FamilyRevoked implements authserver.Store. A revocation counts until the
// time given to RevokeFamily.
func (s *Store) FamilyRevoked(ctx context.Context, familyID string) (bool, error) {
	var revoked bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM revoked_families WHERE id = $1 AND until > $2)`,
		familyID, s.now()).Scan(&revoked)
	if err != nil {
		return false, fmt.Errorf("postgres: family revoked: %w", err)
	}
	return revoked, nil
}

// UseNonce implements authserver.Store. The insert claims the key unless a
// row for it exists that has not expired; an expired row is taken over.
func (s *Store) UseNonce(ctx context.Context, key string, until time.Time) error {
	tag, err := s.pool.Exec(ctx, `INSERT INTO nonces (key, until) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET until = excluded.until WHERE nonces.until < $3`, key, until, s.now())
	if err != nil {
		return fmt.Errorf("postgres: nonce: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: nonce: %w", authserver.ErrAlreadyUsed)
	}
	s.maybePrune(ctx)
	return nil
}

// SaveSigningKey implements authserver.Store.
func (s *Store) SaveSigningKey(ctx context.Context, k authserver.SigningKey) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO signing_keys (id, algorithm, pkcs8, created_at) VALUES ($1, $2, $3, $4)`,
		k.ID, k.Algorithm, k.PKCS8, k.CreatedAt)
	if isUnique(err) {
		return fmt.Errorf("postgres: signing key %s: %w", k.ID, authserver.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("postgres: signing key %s: %w", k.ID, err)
	}
	return nil
}

// SigningKeys implements authserver.Store. Creation times are kept to the
// microsecond; keys created in the same microsecond are ordered by id.
func (s *Store) SigningKeys(ctx context.Context) ([]authserver.SigningKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, algorithm, pkcs8, created_at FROM signing_keys ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: signing keys: %w", err)
	}
	keys, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (authserver.SigningKey, error) {
		var k authserver.SigningKey
		err := row.Scan(&k.ID, &k.Algorithm, &k.PKCS8, &k.CreatedAt)
		k.CreatedAt = k.CreatedAt.UTC()
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: signing keys: %w", err)
	}
	return keys, nil
}

// SaveCookieKey implements authserver.Store.
func (s *Store) SaveCookieKey(ctx context.Context, k authserver.CookieKey) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO cookie_keys (id, secret, created_at) VALUES ($1, $2, $3)`,
		k.ID, k.Secret, k.CreatedAt)
	if isUnique(err) {
		return fmt.Errorf("postgres: cookie key %s: %w", k.ID, authserver.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("postgres: cookie key %s: %w", k.ID, err)
	}
	return nil
}

// CookieKeys implements authserver.Store. Creation times are kept to the
// microsecond; keys created in the same microsecond are ordered by id.
func (s *Store) CookieKeys(ctx context.Context) ([]authserver.CookieKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, secret, created_at FROM cookie_keys ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: cookie keys: %w", err)
	}
	keys, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (authserver.CookieKey, error) {
		var k authserver.CookieKey
		err := row.Scan(&k.ID, &k.Secret, &k.CreatedAt)
		k.CreatedAt = k.CreatedAt.UTC()
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: cookie keys: %w", err)
	}
	return keys, nil
}

// maybePrune prunes when PruneInterval has passed since the last time this
// store did. A failure is not the caller's: the next interval tries again.
func (s *Store) maybePrune(ctx context.Context) {
	now := s.now()
	next := s.nextPrune.Load()
	if now.UnixNano() < next || !s.nextPrune.CompareAndSwap(next, now.Add(PruneInterval).UnixNano()) {
		return
	}
	_ = s.Prune(ctx)
}

// Prune deletes expired rows: nonces and family revocations past their
// time, codes and refresh tokens an hour after they expired (until then a
// replay is still reported as reuse). Stores call it by themselves every
// [PruneInterval] on writes; calling it from a timer as well is harmless.
func (s *Store) Prune(ctx context.Context) error {
	now := s.now()
	grace := now.Add(-pruneGrace)
	for _, q := range []struct {
		sql string
		t   time.Time
	}{
		{`DELETE FROM codes WHERE expires_at < $1`, grace},
		{`DELETE FROM refresh_tokens WHERE expires_at < $1`, grace},
		{`DELETE FROM revoked_families WHERE until < $1`, now},
		{`DELETE FROM nonces WHERE until < $1`, now},
		{`DELETE FROM upstream_states WHERE expires_at < $1`, grace},
		{`DELETE FROM rate_limits WHERE tat < $1`, now},
	} {
		if _, err := s.pool.Exec(ctx, q.sql, q.t); err != nil {
			return fmt.Errorf("postgres: prune: %w", err)
		}
	}
	return nil
}

// ApproveClient implements authserver.Store.
func (s *Store) ApproveClient(ctx context.Context, subject, clientID string, at time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO client_approvals (subject, client_id, approved_at) VALUES ($1, $2, $3)
		ON CONFLICT (subject, client_id) DO UPDATE SET approved_at = excluded.approved_at`, subject, clientID, at)
	if err != nil {
		return fmt.Errorf("postgres: client approval: %w", err)
	}
	return nil
}

// ClientApproved implements authserver.Store.
func (s *Store) ClientApproved(ctx context.Context, subject, clientID string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM client_approvals WHERE subject = $1 AND client_id = $2)`, subject, clientID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("postgres: client approval: %w", err)
	}
	return ok, nil
}

// SaveUpstreamState implements authserver.Store.
func (s *Store) SaveUpstreamState(ctx context.Context, st authserver.UpstreamState) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO upstream_states (hash, data, expires_at) VALUES ($1, $2, $3)`, st.Hash, st.Data, st.ExpiresAt)
	if isUnique(err) {
		return fmt.Errorf("postgres: upstream state: %w", authserver.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("postgres: upstream state: %w", err)
	}
	s.maybePrune(ctx)
	return nil
}

// TakeUpstreamState implements authserver.Store: one DELETE ... RETURNING,
// so that of two concurrent takes only one gets the row.
func (s *Store) TakeUpstreamState(ctx context.Context, hash string) (authserver.UpstreamState, error) {
	st := authserver.UpstreamState{Hash: hash}
	err := s.pool.QueryRow(ctx, `DELETE FROM upstream_states WHERE hash = $1 RETURNING data, expires_at`, hash).Scan(&st.Data, &st.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return authserver.UpstreamState{}, authserver.ErrNotFound
	}
	if err != nil {
		return authserver.UpstreamState{}, fmt.Errorf("postgres: upstream state: %w", err)
	}
	st.ExpiresAt = st.ExpiresAt.UTC()
	return st, nil
}

// SaveUpstreamGrant implements authserver.Store.
func (s *Store) SaveUpstreamGrant(ctx context.Context, g authserver.UpstreamGrant) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO upstream_grants (subject, sealed, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (subject) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`, g.Subject, g.Sealed, g.UpdatedAt)
	if err != nil {
		return fmt.Errorf("postgres: upstream grant: %w", err)
	}
	return nil
}

// UpstreamGrant implements authserver.Store.
func (s *Store) UpstreamGrant(ctx context.Context, subject string) (authserver.UpstreamGrant, error) {
	g := authserver.UpstreamGrant{Subject: subject}
	err := s.pool.QueryRow(ctx, `SELECT sealed, updated_at FROM upstream_grants WHERE subject = $1`, subject).Scan(&g.Sealed, &g.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return authserver.UpstreamGrant{}, authserver.ErrNotFound
	}
	if err != nil {
		return authserver.UpstreamGrant{}, fmt.Errorf("postgres: upstream grant: %w", err)
	}
	g.UpdatedAt = g.UpdatedAt.UTC()
	return g, nil
}
