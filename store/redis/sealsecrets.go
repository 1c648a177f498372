package redis

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"
)

// SealSecretSize is the size of the secret SealSecrets creates: 256 bits,
// the least a seal.Ring accepts.
const SealSecretSize = 32

// ErrBadSealSecret is returned by SealSecrets when an entry of the list is
// not standard base64 (someone wrote it by hand), and by AddSealSecret for
// a secret shorter than SealSecretSize.
var ErrBadSealSecret = errors.New("redis: bad seal secret")

// sealSecretsKey is the list of the ring's secrets, newest first, each
// standard base64 with padding, so that an operator can rotate with
// redis-cli (README, "Running several replicas"):
//
//	seal-secrets   list, newest first, no expiry
func (s *Store) sealSecretsKey() string { return s.prefix + "seal-secrets" }

// sealSecretsInit: KEYS[1] the list, ARGV[1] a fresh secret. Pushes the
// secret only if the list does not exist yet (the SET NX of a list), then
// returns the list: of any number of replicas starting at once on a fresh
// prefix, exactly one secret wins and every one reads it.
var sealSecretsInit = goredis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('RPUSH', KEYS[1], ARGV[1]) end
return redis.call('LRANGE', KEYS[1], 0, -1)`)

// SealSecrets returns the secrets of the key ring with which the replicas
// of one MCP server seal the requestState of multi round-trip requests
// (revision 2026-07-28, basic/patterns/mrtr), newest first: the order
// seal.NewRing takes, which seals with the first and opens with every one.
// On a prefix that holds none yet it first creates one random secret of
// SealSecretSize bytes, atomically, so that replicas sharing a Redis and
// prefix need no other key material in common.
//
// A replica calls it once, when it starts; the ring it builds does not
// change while it runs, so a secret added by AddSealSecret takes effect
// at each replica's next start. It fails with ErrBadSealSecret if an entry
// is not base64, and otherwise with the error of Redis (bound it by ctx).
// Safe for concurrent use.
func (s *Store) SealSecrets(ctx context.Context) ([][]byte, error) {
	fresh := make([]byte, SealSecretSize)
	_, _ = rand.Read(fresh) // crypto/rand.Read never fails (Go 1.24 and later)
	list, err := sealSecretsInit.Run(ctx, s.rdb, []string{s.sealSecretsKey()}, base64.StdEncoding.EncodeToString(fresh)).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("redis: seal secrets: %w", err)
	}
	out := make([][]byte, 0, len(list))
	for i, e := range list {
		b, err := base64.StdEncoding.DecodeString(e)
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d of %s is not standard base64", ErrBadSealSecret, i, s.sealSecretsKey())
		}
		out = append(out, b)
	}
	return out, nil
}

// AddSealSecret makes secret (at least SealSecretSize bytes of
// high-entropy data) the newest of the ring SealSecrets returns: replicas
// that start after it seal with it, and still open what the older secrets
// sealed. Replicas already running know only the older ones until they
// restart (see the README for the order of a rotation). Removing an old
// secret, once what it sealed has expired, is left to the operator
// (RPOP of the list).
func (s *Store) AddSealSecret(ctx context.Context, secret []byte) error {
	if len(secret) < SealSecretSize {
		return fmt.Errorf("%w: %d bytes; at least %d", ErrBadSealSecret, len(secret), SealSecretSize)
	}
	if err := s.rdb.LPush(ctx, s.sealSecretsKey(), base64.StdEncoding.EncodeToString(secret)).Err(); err != nil {
		return fmt.Errorf("redis: add seal secret: %w", err)
	}
	return nil
}
