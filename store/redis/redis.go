// Package redis is an [authserver.Store] in Redis, through
// github.com/redis/go-redis/v9.
//
// Pick it when several processes share one authorization server (replicas
// behind a load balancer) and the deployment already runs Redis. Every
// process uses the same Redis and key prefix; what one issues, the others
// honour, and single use holds across all of them. For one process
// store/sqlite is simpler; store/postgres keeps the state in a database
// that is backed up like the rest.
//
// Codes, refresh tokens, nonces and family revocations are keys that expire
// with the record (PXAT, to the millisecond), so Redis itself deletes what is
// over; clients and signing keys never expire. Whether anything survives a
// Redis restart is Redis's persistence configuration: without it, a restart
// signs every client out and forgets registered clients and signing keys.
//
// Single use is atomic in Redis: a code or refresh token is claimed by a
// Lua script that flips its used flag and returns it, and a nonce by
// SET NX. Of any number of concurrent callers, on any number of clients,
// exactly one wins. Redeeming a code and rotating a refresh token are one
// script too, which spends the old record and creates the new refresh
// token, or does neither.
//
// That script touches two records, which Redis Cluster accepts only when
// they hash to one slot: on a cluster, give a prefix with a hash tag, such
// as "myapp:{as}:", which puts every key of the store on one slot. Every
// other script touches keys of one hash slot whatever the prefix (the tests
// run on a single Redis only).
//
// The package also holds what replicas of an MCP server share (see the
// README, "Running several replicas"): [EventStore], the events of
// Streamable HTTP streams (one hash per session), so that a stream resumes
// through any replica; [Bus], change notices on Redis Pub/Sub; and
// [Store.SealSecrets], the keys that seal 2026-07-28 requestState. The
// first two bound each call by a timeout of their own and report a Redis
// that does not answer with [ErrDown]. [EventStore] is also the
// mcphttp.Options.Replicas of those replicas (the session records, the
// messages routed between them, their liveness), and it writes events by
// group commit: the appends of every stream that arrive while a batch is
// in flight go to Redis together in the next round trip
// (EventStoreOptions.MaxBatch, MaxBatchBytes, MaxQueued), so a busy
// replica pays a round trip per batch, not per event. [TaskStore] is the taskstore.Store of the replicas' tasks, each
// replica holding a lease on the tasks it runs, so that those of a
// replica that died are reported failed.
//
// It needs Redis 6.2 or later.
package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// Store is a Redis authserver.Store. It is safe for concurrent use, and any
// number of Stores, in any number of processes, may share one Redis and
// prefix.
type Store struct {
	rdb    goredis.UniversalClient
	prefix string
}

var _ authserver.Store = (*Store)(nil)

// New returns a store that keeps its records in rdb under keys starting
// with prefix, such as "myapp:authserver:". Stores meant to share state use
// the same prefix; different prefixes keep them apart in one database. The
// caller keeps the client and closes it.
func New(rdb goredis.UniversalClient, prefix string) *Store {
	return &Store{rdb: rdb, prefix: prefix}
}

// Key layout, under the prefix:
//
//	client:ID             string, JSON clientRecord; expires at its
//	                      UnusedExpiresAt until used, then never
//	code:HASH             hash {data: JSON Code, used: 0|1}, expires with the code
//	refresh:HASH          hash {data: JSON RefreshToken, used: 0|1}, expires with the token
//	family:ID             string, revocation end in Unix ms, expires then
//	nonce:KEY             string "1", expires at the given time
//	{signing-keys}        hash ID -> JSON SigningKey, no expiry
//	{signing-keys}:order  sorted set of IDs scored by creation (Unix µs)
//	{cookie-keys}         hash ID -> JSON CookieKey, no expiry
//	{cookie-keys}:order   sorted set of IDs scored by creation (Unix µs)
//	seal-secrets          list of base64 requestState secrets, newest
//	                      first, no expiry (SealSecrets)
//
// The two signing-key keys share the hash tag {signing-keys} (or the one in
// the prefix), so a script may update both on a cluster; so do the two
// cookie-key keys.
func (s *Store) key(kind, id string) string { return s.prefix + kind + ":" + id }

// Lua scripts. Each one touches keys of a single hash slot.
var (
	// saveOnce: KEYS[1] the record, ARGV[1] data, ARGV[2] expiry in Unix ms.
	// Returns 1, or 0 if the key exists.
	saveOnce = goredis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'data', ARGV[1], 'used', '0')
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return 1`)

	// take: KEYS[1] the record. Returns false if it does not exist, else
	// {data, used before this call}, marking it used.
	take = goredis.NewScript(`
local r = redis.call('HMGET', KEYS[1], 'data', 'used')
if not r[1] then return false end
if r[2] == '0' then redis.call('HSET', KEYS[1], 'used', '1') end
return {r[1], r[2]}`)

	// spend: KEYS[1] the record to spend, KEYS[2] (optional) the refresh
	// token to create, ARGV[1] its data, ARGV[2] its expiry in Unix ms.
	// Returns false if KEYS[1] does not exist; {data, used} if it was used
	// (nothing changes); {data, 'exists'} if KEYS[2] exists (nothing
	// changes); else marks KEYS[1] used, creates KEYS[2] and returns
	// {data, '0'}. Every check comes before the first write, so a refusal
	// leaves both keys as they were.
	spend = goredis.NewScript(`
local r = redis.call('HMGET', KEYS[1], 'data', 'used')
if not r[1] then return false end
if r[2] ~= '0' then return {r[1], r[2]} end
if #KEYS > 1 and redis.call('EXISTS', KEYS[2]) == 1 then return {r[1], 'exists'} end
redis.call('HSET', KEYS[1], 'used', '1')
if #KEYS > 1 then
  redis.call('HSET', KEYS[2], 'data', ARGV[1], 'used', '0')
  redis.call('PEXPIREAT', KEYS[2], ARGV[2])
end
return {r[1], '0'}`)

	// revoke: KEYS[1] the family, ARGV[1] the end in Unix ms. Keeps the later
	// end of an existing revocation.
	revoke = goredis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > cur then redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[1]) end
return 1`)

	// saveKey: KEYS[1] the key hash, KEYS[2] the order set, ARGV[1] id,
	// ARGV[2] JSON, ARGV[3] score. Returns 1, or 0 if the id is taken.
	saveKey = goredis.NewScript(`
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1`)
)

// unixMilli returns t in Unix milliseconds, at least 1: Redis refuses an
// absolute expiry of 0 or less, and one in the past deletes the key at once,
// which is what a record already expired should get.
func unixMilli(t time.Time) int64 { return max(t.UnixMilli(), 1) }

// clientRecord is a client as stored.
type clientRecord struct {
	Metadata   json.RawMessage `json:"metadata"`
	SecretHash []byte          `json:"secret_hash,omitempty"`
	IssuedAt   time.Time       `json:"issued_at"`
	// UnusedExpiresAt is also the key's expiry until MarkClientUsed.
	UnusedExpiresAt time.Time `json:"unused_expires_at,omitzero"`
}

// CreateClient implements authserver.Store.
func (s *Store) CreateClient(ctx context.Context, c authserver.Client) error {
	m, err := json.Marshal(c.Metadata)
	if err != nil {
		return fmt.Errorf("redis: client %s: %w", c.ID(), err)
	}
	b, err := json.Marshal(clientRecord{Metadata: m, SecretHash: c.SecretHash, IssuedAt: c.IssuedAt, UnusedExpiresAt: c.UnusedExpiresAt})
	if err != nil {
		return fmt.Errorf("redis: client %s: %w", c.ID(), err)
	}
	// A client that may be pruned expires by itself: Redis does the
	// pruning, and PruneClients has nothing to do.
	args := goredis.SetArgs{Mode: "NX"}
	if !c.UnusedExpiresAt.IsZero() {
		args.ExpireAt = time.UnixMilli(unixMilli(c.UnusedExpiresAt))
	}
	err = s.rdb.SetArgs(ctx, s.key("client", c.ID()), b, args).Err()
	if errors.Is(err, goredis.Nil) {
		return fmt.Errorf("redis: client %s: %w", c.ID(), authserver.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("redis: create client %s: %w", c.ID(), err)
	}
	return nil
}

// MarkClientUsed implements authserver.Store: the record is rewritten
// without UnusedExpiresAt, and a SET without expiry makes the key
// persistent. XX keeps a client that expired meanwhile deleted.
func (s *Store) MarkClientUsed(ctx context.Context, id string) error {
	key := s.key("client", id)
	b, err := s.rdb.Get(ctx, key).Bytes()
	if errors.Is(err, goredis.Nil) {
		return fmt.Errorf("redis: client %s: %w", id, authserver.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("redis: client %s: %w", id, err)
	}
	var rec clientRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return fmt.Errorf("redis: client %s: %w", id, err)
	}
	rec.UnusedExpiresAt = time.Time{}
	if b, err = json.Marshal(rec); err != nil {
		return fmt.Errorf("redis: client %s: %w", id, err)
	}
	err = s.rdb.SetArgs(ctx, key, b, goredis.SetArgs{Mode: "XX"}).Err()
	if errors.Is(err, goredis.Nil) {
		return fmt.Errorf("redis: client %s: %w", id, authserver.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("redis: client %s: %w", id, err)
	}
	return nil
}

// PruneClients implements authserver.Store. Redis expires unused clients
// at their UnusedExpiresAt by itself, so there is nothing to do.
func (s *Store) PruneClients(context.Context, time.Time) (int, error) { return 0, nil }

// Client implements authserver.Store.
func (s *Store) Client(ctx context.Context, id string) (authserver.Client, error) {
	b, err := s.rdb.Get(ctx, s.key("client", id)).Bytes()
	if errors.Is(err, goredis.Nil) {
		return authserver.Client{}, fmt.Errorf("redis: client %s: %w", id, authserver.ErrNotFound)
	}
	if err != nil {
		return authserver.Client{}, fmt.Errorf("redis: client %s: %w", id, err)
	}
	var rec clientRecord
	var m oauth.ClientMetadata
	if err := json.Unmarshal(b, &rec); err != nil {
		return authserver.Client{}, fmt.Errorf("redis: client %s: %w", id, err)
	}
	if err := json.Unmarshal(rec.Metadata, &m); err != nil {
		return authserver.Client{}, fmt.Errorf("redis: client %s: %w", id, err)
	}
	c := authserver.Client{Metadata: m, SecretHash: rec.SecretHash, IssuedAt: rec.IssuedAt.UTC()}
	if !rec.UnusedExpiresAt.IsZero() {
		c.UnusedExpiresAt = rec.UnusedExpiresAt.UTC()
	}
	return c, nil
}

// save stores a single-use record that expires at exp.
func (s *Store) save(ctx context.Context, kind, hash string, v any, exp time.Time) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("redis: save %s: %w", kind, err)
	}
	n, err := saveOnce.Run(ctx, s.rdb, []string{s.key(kind, hash)}, b, unixMilli(exp)).Int()
	if err != nil {
		return fmt.Errorf("redis: save %s: %w", kind, err)
	}
	if n == 0 {
		return fmt.Errorf("redis: save %s: %w", kind, authserver.ErrExists)
	}
	return nil
}

// get decodes a single-use record into v, marking it used if mark is set.
// The error is nil for the caller that found it unused, ErrAlreadyUsed
// (with v filled) when it was used before, ErrNotFound when there is none.
func (s *Store) get(ctx context.Context, kind, hash string, mark bool, v any) error {
	var data, used string
	if mark {
		var err error
		if data, used, err = recordReply(kind, take.Run(ctx, s.rdb, []string{s.key(kind, hash)})); err != nil {
			return err
		}
	} else {
		r, err := s.rdb.HMGet(ctx, s.key(kind, hash), "data", "used").Result()
		if err != nil {
			return fmt.Errorf("redis: %s: %w", kind, err)
		}
		d, ok1 := r[0].(string)
		u, ok2 := r[1].(string)
		if !ok1 || !ok2 {
			return fmt.Errorf("redis: %s: %w", kind, authserver.ErrNotFound)
		}
		data, used = d, u
	}
	if err := json.Unmarshal([]byte(data), v); err != nil {
		return fmt.Errorf("redis: %s: %w", kind, err)
	}
	if used != "0" {
		return fmt.Errorf("redis: %s: %w", kind, authserver.ErrAlreadyUsed)
	}
	return nil
}

// recordReply reads the reply of the take and spend scripts on a record of
// kind: nil (the record does not exist) is ErrNotFound, anything but two
// strings {data, used} an error.
func recordReply(kind string, reply *goredis.Cmd) (data, used string, err error) {
	r, err := reply.StringSlice()
	if errors.Is(err, goredis.Nil) {
		return "", "", fmt.Errorf("redis: %s: %w", kind, authserver.ErrNotFound)
	}
	if err != nil {
		return "", "", fmt.Errorf("redis: %s: %w", kind, err)
	}
	if len(r) != 2 {
		return "", "", fmt.Errorf("redis: %s: unexpected script reply %q", kind, r)
	}
	return r[0], r[1], nil
}

// SaveCode implements authserver.Store. The code's key expires with it.
func (s *Store) SaveCode(ctx context.Context, c authserver.Code) error {
	return s.save(ctx, "code", c.Hash, c, c.ExpiresAt)
}

// TakeCode implements authserver.Store.
func (s *Store) TakeCode(ctx context.Context, hash string) (authserver.Code, error) {
	var c authserver.Code
	err := s.get(ctx, "code", hash, true, &c)
	return c, err
}

// Code implements authserver.Store.
func (s *Store) Code(ctx context.Context, hash string) (authserver.Code, error) {
	var c authserver.Code
	err := s.get(ctx, "code", hash, false, &c)
	return c, err
}

// RedeemCode implements authserver.Store: one script marks the code used
// and creates the refresh token.
func (s *Store) RedeemCode(ctx context.Context, hash string, first *authserver.RefreshToken) (authserver.Code, error) {
	var c authserver.Code
	err := s.spend(ctx, "code", hash, first, &c)
	return c, err
}

// RotateRefreshToken implements authserver.Store: one script marks the old
// token used and creates the new one.
func (s *Store) RotateRefreshToken(ctx context.Context, hash string, next authserver.RefreshToken) (authserver.RefreshToken, error) {
	var t authserver.RefreshToken
	err := s.spend(ctx, "refresh", hash, &next, &t)
	return t, err
}

// spend runs the spend script on the record kind:hash and, unless next is
// nil, the refresh token next, decoding the spent record into v.
func (s *Store) spend(ctx context.Context, kind, hash string, next *authserver.RefreshToken, v any) error {
	keys := []string{s.key(kind, hash)}
	var args []any
	if next != nil {
		b, err := json.Marshal(next)
		if err != nil {
			return fmt.Errorf("redis: %s: %w", kind, err)
		}
		keys = append(keys, s.key("refresh", next.Hash))
		args = []any{b, unixMilli(next.ExpiresAt)}
	}
	data, used, err := recordReply(kind, spend.Run(ctx, s.rdb, keys, args...))
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(data), v); err != nil {
		return fmt.Errorf("redis: %s: %w", kind, err)
	}
	switch used {
	case "0":
		return nil
	case "exists":
		return fmt.Errorf("redis: save refresh: %w", authserver.ErrExists)
	default:
		return fmt.Errorf("redis: %s: %w", kind, authserver.ErrAlreadyUsed)
	}
}

// SaveRefreshToken implements authserver.Store. The token's key expires
// with it.
func (s *Store) SaveRefreshToken(ctx context.Context, t authserver.RefreshToken) error {
	return s.save(ctx, "refresh", t.Hash, t, t.ExpiresAt)
}

// UseRefreshToken implements authserver.Store.
func (s *Store) UseRefreshToken(ctx context.Context, hash string) (authserver.RefreshToken, error) {
	var t authserver.RefreshToken
	err := s.get(ctx, "refresh", hash, true, &t)
	return t, err
}

// RefreshToken implements authserver.Store.
func (s *Store) RefreshToken(ctx context.Context, hash string) (authserver.RefreshToken, error) {
	var t authserver.RefreshToken
	err := s.get(ctx, "refresh", hash, false, &t)
	return t, err
}

// RevokeFamily implements authserver.Store. The revocation's key expires
// at until; revoking a family again keeps the later time.
func (s *Store) RevokeFamily(ctx context.Context, familyID string, until time.Time) error {
	if err := revoke.Run(ctx, s.rdb, []string{s.key("family", familyID)}, unixMilli(until)).Err(); err != nil {
		return fmt.Errorf("redis: revoke family: %w", err)
	}
	return nil
}

// FamilyRevoked implements authserver.Store.
func (s *Store) FamilyRevoked(ctx context.Context, familyID string) (bool, error) {
	n, err := s.rdb.Exists(ctx, s.key("family", familyID)).Result()
	if err != nil {
		return false, fmt.Errorf("redis: family revoked: %w", err)
	}
	return n == 1, nil
}

// UseNonce implements authserver.Store: one SET NX whose key expires at
// until.
func (s *Store) UseNonce(ctx context.Context, key string, until time.Time) error {
	err := s.rdb.Do(ctx, "SET", s.key("nonce", key), "1", "NX", "PXAT", unixMilli(until)).Err()
	if errors.Is(err, goredis.Nil) {
		return fmt.Errorf("redis: nonce: %w", authserver.ErrAlreadyUsed)
	}
	if err != nil {
		return fmt.Errorf("redis: nonce: %w", err)
	}
	return nil
}

// cookieKeys returns the names of the hash holding the cookie keys and of
// the sorted set ordering them.
func (s *Store) cookieKeys() (data, order string) {
	data = s.prefix + "{cookie-keys}"
	return data, data + ":order"
}

// SaveCookieKey implements authserver.Store.
func (s *Store) SaveCookieKey(ctx context.Context, k authserver.CookieKey) error {
	data, order := s.cookieKeys()
	return saveOrdered(ctx, s.rdb, data, order, "cookie key", k.ID, k, k.CreatedAt)
}

// saveOrdered stores rec as JSON under id in the hash data and ranks id by
// created (to the microsecond) in the sorted set order, with the saveKey
// script: ErrExists, and nothing written, when id is taken.
func saveOrdered(ctx context.Context, rdb goredis.UniversalClient, data, order, what, id string, rec any, created time.Time) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("redis: %s %s: %w", what, id, err)
	}
	n, err := saveKey.Run(ctx, rdb, []string{data, order}, id, b, created.UnixMicro()).Int()
	if err != nil {
		return fmt.Errorf("redis: %s %s: %w", what, id, err)
	}
	if n == 0 {
		return fmt.Errorf("redis: %s %s: %w", what, id, authserver.ErrExists)
	}
	return nil
}

// CookieKeys implements authserver.Store: oldest first by creation time
// to the microsecond, then by id.
func (s *Store) CookieKeys(ctx context.Context) ([]authserver.CookieKey, error) {
	data, order := s.cookieKeys()
	return orderedRecords[authserver.CookieKey](ctx, s.rdb, data, order, "cookie key")
}

// orderedRecords reads the JSON records of the hash data in the order of
// the sorted set order.
func orderedRecords[T any](ctx context.Context, rdb goredis.UniversalClient, data, order, what string) ([]T, error) {
	ids, err := rdb.ZRange(ctx, order, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: %ss: %w", what, err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	vals, err := rdb.HMGet(ctx, data, ids...).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: %ss: %w", what, err)
	}
	out := make([]T, 0, len(vals))
	for i, v := range vals {
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("redis: %s %s: listed but missing", what, ids[i])
		}
		var rec T
		if err := json.Unmarshal([]byte(str), &rec); err != nil {
			return nil, fmt.Errorf("redis: %s %s: %w", what, ids[i], err)
		}
		out = append(out, rec)
	}
	return out, nil
}

// signingKeys returns the names of the hash holding the signing keys and of
// the sorted set ordering them.
func (s *Store) signingKeys() (data, order string) {
	data = s.prefix + "{signing-keys}"
	return data, data + ":order"
}

// SaveSigningKey implements authserver.Store.
func (s *Store) SaveSigningKey(ctx context.Context, k authserver.SigningKey) error {
	data, order := s.signingKeys()
	return saveOrdered(ctx, s.rdb, data, order, "signing key", k.ID, k, k.CreatedAt)
}

// SigningKeys implements authserver.Store: oldest first by creation time
// to the microsecond, then by id.
func (s *Store) SigningKeys(ctx context.Context) ([]authserver.SigningKey, error) {
	data, order := s.signingKeys()
	return orderedRecords[authserver.SigningKey](ctx, s.rdb, data, order, "signing key")
}

// ApproveClient implements authserver.Store: one hash per user, a field per
// approved client, kept until deleted.
func (s *Store) ApproveClient(ctx context.Context, subject, clientID string, at time.Time) error {
	if err := s.rdb.HSet(ctx, s.key("approvals", subject), clientID, at.UnixNano()).Err(); err != nil {
		return fmt.Errorf("redis: client approval: %w", err)
	}
	return nil
}

// ClientApproved implements authserver.Store.
func (s *Store) ClientApproved(ctx context.Context, subject, clientID string) (bool, error) {
	ok, err := s.rdb.HExists(ctx, s.key("approvals", subject), clientID).Result()
	if err != nil {
		return false, fmt.Errorf("redis: client approval: %w", err)
	}
	return ok, nil
}

type upstreamStateRecord struct {
	Data      []byte    `json:"d"`
	ExpiresAt time.Time `json:"e"`
}

// SaveUpstreamState implements authserver.Store: SET NX with the record's
// expiry, so Redis forgets it on its own.
func (s *Store) SaveUpstreamState(ctx context.Context, st authserver.UpstreamState) error {
	b, err := json.Marshal(upstreamStateRecord{Data: st.Data, ExpiresAt: st.ExpiresAt})
	if err != nil {
		return err
	}
	err = s.rdb.Do(ctx, "SET", s.key("upstream-state", st.Hash), b, "NX", "PXAT", unixMilli(st.ExpiresAt)).Err()
	if errors.Is(err, goredis.Nil) {
		return fmt.Errorf("redis: upstream state: %w", authserver.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("redis: upstream state: %w", err)
	}
	return nil
}

// TakeUpstreamState implements authserver.Store: GETDEL is atomic.
func (s *Store) TakeUpstreamState(ctx context.Context, hash string) (authserver.UpstreamState, error) {
	b, err := s.rdb.GetDel(ctx, s.key("upstream-state", hash)).Bytes()
	if errors.Is(err, goredis.Nil) {
		return authserver.UpstreamState{}, authserver.ErrNotFound
	}
	if err != nil {
		return authserver.UpstreamState{}, fmt.Errorf("redis: upstream state: %w", err)
	}
	var r upstreamStateRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return authserver.UpstreamState{}, fmt.Errorf("redis: upstream state: %w", err)
	}
	return authserver.UpstreamState{Hash: hash, Data: r.Data, ExpiresAt: r.ExpiresAt.UTC()}, nil
}

// SaveUpstreamGrant implements authserver.Store.
func (s *Store) SaveUpstreamGrant(ctx context.Context, g authserver.UpstreamGrant) error {
	b, err := json.Marshal(g)
	if err != nil {
		return err
	}
	if err := s.rdb.Set(ctx, s.key("upstream-grant", g.Subject), b, 0).Err(); err != nil {
		return fmt.Errorf("redis: upstream grant: %w", err)
	}
	return nil
}

// UpstreamGrant implements authserver.Store.
func (s *Store) UpstreamGrant(ctx context.Context, subject string) (authserver.UpstreamGrant, error) {
	b, err := s.rdb.Get(ctx, s.key("upstream-grant", subject)).Bytes()
	if errors.Is(err, goredis.Nil) {
		return authserver.UpstreamGrant{}, authserver.ErrNotFound
	}
	if err != nil {
		return authserver.UpstreamGrant{}, fmt.Errorf("redis: upstream grant: %w", err)
	}
	var g authserver.UpstreamGrant
	if err := json.Unmarshal(b, &g); err != nil {
		return authserver.UpstreamGrant{}, fmt.Errorf("redis: upstream grant: %w", err)
	}
	g.UpdatedAt = g.UpdatedAt.UTC()
	return g, nil
}
