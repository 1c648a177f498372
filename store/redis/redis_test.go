package redis_test

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/redis"
	"github.com/mcpstack/mcpstack/store/storetest"
)

// newClient connects to MCPSTACK_REDIS_URL, skipping the test when it is
// unset unless MCPSTACK_REQUIRE_SERVICES=1 (scripts/services.sh starts a
// server and prints it). The client is closed when the test ends.
func newClient(t testing.TB) *goredis.Client {
	t.Helper()
	u := os.Getenv("MCPSTACK_REDIS_URL")
	if u == "" {
		if os.Getenv("MCPSTACK_REQUIRE_SERVICES") == "1" {
			t.Fatal("MCPSTACK_REDIS_URL is unset and MCPSTACK_REQUIRE_SERVICES=1: run scripts/services.sh")
		}
		t.Skip("MCPSTACK_REDIS_URL is unset (scripts/services.sh starts a server)")
	}
	opt, err := goredis.ParseURL(u)
	if err != nil {
		t.Fatalf("MCPSTACK_REDIS_URL: %v", err)
	}
	c := goredis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("redis at %s: %v", u, err)
	}
	return c
}

// freshPrefix returns a key prefix of the test's own; its keys are deleted
// when the test ends.
func freshPrefix(t testing.TB, c *goredis.Client) string {
	t.Helper()
	prefix := "test:" + rand.Text()[:16] + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		keys, err := c.Keys(ctx, prefix+"*").Result()
		if err == nil && len(keys) > 0 {
			err = c.Del(ctx, keys...).Err()
		}
		if err != nil {
			t.Errorf("delete the test's keys: %v", err)
		}
	})
	return prefix
}

func TestContract(t *testing.T) {
	newClient(t)
	t.Parallel()
	storetest.Run(t, func(t *testing.T) authserver.Store {
		c := newClient(t)
		return redis.New(c, freshPrefix(t, c))
	})
}

// TestSingleUseAcrossClients races many goroutines, spread over several
// clients with their own connections (as separate processes would be), to
// take one code, use one refresh token and record one nonce: in each round
// exactly one wins, and the others get ErrAlreadyUsed with the record.
func TestSingleUseAcrossClients(t *testing.T) {
	first := newClient(t)
	t.Parallel()
	prefix := freshPrefix(t, first)
	stores := []authserver.Store{redis.New(first, prefix)}
	for range 3 {
		stores = append(stores, redis.New(newClient(t), prefix))
	}

	storetest.RunRace(t, stores)
}

// TestExpiry checks that records are keys expiring with them: their TTL is
// the record's expiry, and once it passes the code, the refresh token, the
// revocation and the nonce are gone. Clients and signing keys never expire.
func TestExpiry(t *testing.T) {
	c := newClient(t)
	t.Parallel()
	ctx := t.Context()
	prefix := freshPrefix(t, c)
	s := redis.New(c, prefix)
	now := time.Now()
	soon := now.Add(300 * time.Millisecond)
	later := now.Add(time.Hour)

	for _, err := range []error{
		s.CreateClient(ctx, authserver.Client{Metadata: oauth.ClientMetadata{ClientID: "app"}, IssuedAt: now}),
		s.SaveSigningKey(ctx, authserver.SigningKey{ID: "k1", Algorithm: "ES256", PKCS8: []byte{1}, CreatedAt: now}),
		s.SaveCode(ctx, authserver.Code{Hash: "short", ExpiresAt: soon}),
		s.SaveCode(ctx, authserver.Code{Hash: "long", ExpiresAt: later}),
		s.SaveCode(ctx, authserver.Code{Hash: "past", ExpiresAt: now.Add(-time.Minute)}),
		s.SaveRefreshToken(ctx, authserver.RefreshToken{Hash: "rt", ExpiresAt: soon}),
		s.RevokeFamily(ctx, "f", soon),
		s.RevokeFamily(ctx, "extended", soon),
		s.RevokeFamily(ctx, "extended", later),
		s.RevokeFamily(ctx, "extended", now), // does not shorten it
		s.UseNonce(ctx, "jti", soon),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for key, exp := range map[string]time.Time{"code:long": later, "family:extended": later, "code:short": soon, "nonce:jti": soon} {
		ttl, err := c.PTTL(ctx, prefix+key).Result()
		if want := exp.Sub(now); err != nil || ttl > want || ttl < want-time.Second {
			t.Errorf("TTL of %s: %v, %v; want about %v", key, ttl, err, want)
		}
	}
	for _, key := range []string{"client:app", "{signing-keys}", "{signing-keys}:order"} {
		if ttl, err := c.PTTL(ctx, prefix+key).Result(); err != nil || ttl != -1 {
			t.Errorf("TTL of %s: %v, %v; want none (-1ns)", key, ttl, err)
		}
	}
	if _, err := s.TakeCode(ctx, "past"); !errors.Is(err, authserver.ErrNotFound) {
		t.Errorf("code saved already expired: %v", err)
	}
	if err := s.UseNonce(ctx, "jti", later); !errors.Is(err, authserver.ErrAlreadyUsed) {
		t.Errorf("live nonce: %v", err)
	}

	time.Sleep(time.Until(soon) + 100*time.Millisecond)
	if _, err := s.TakeCode(ctx, "short"); !errors.Is(err, authserver.ErrNotFound) {
		t.Errorf("expired code: %v", err)
	}
	if _, err := s.TakeCode(ctx, "long"); err != nil {
		t.Errorf("live code: %v", err)
	}
	if _, err := s.RefreshToken(ctx, "rt"); !errors.Is(err, authserver.ErrNotFound) {
		t.Errorf("expired refresh token: %v", err)
	}
	if r, err := s.FamilyRevoked(ctx, "f"); err != nil || r {
		t.Errorf("revocation past its time: %v, %v", r, err)
	}
	if r, err := s.FamilyRevoked(ctx, "extended"); err != nil || !r {
		t.Errorf("extended revocation: %v, %v", r, err)
	}
	if err := s.UseNonce(ctx, "jti", later); err != nil {
		t.Errorf("expired nonce not reusable: %v", err)
	}
	if _, err := s.Client(ctx, "app"); err != nil {
		t.Errorf("client: %v", err)
	}
	if keys, err := s.SigningKeys(ctx); err != nil || len(keys) != 1 {
		t.Errorf("signing keys: %+v, %v", keys, err)
	}
}

// TestPrefixes keeps stores with different prefixes apart in one database,
// and lets stores with the same prefix share everything.
func TestPrefixes(t *testing.T) {
	c := newClient(t)
	t.Parallel()
	ctx := t.Context()
	p1, p2 := freshPrefix(t, c), freshPrefix(t, c)
	a, b, a2 := redis.New(c, p1), redis.New(c, p2), redis.New(newClient(t), p1)
	for _, s := range []*redis.Store{a, b} {
		if err := s.CreateClient(ctx, authserver.Client{Metadata: oauth.ClientMetadata{ClientID: "app"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveSigningKey(ctx, authserver.SigningKey{ID: "k", PKCS8: []byte{1}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a2.CreateClient(ctx, authserver.Client{Metadata: oauth.ClientMetadata{ClientID: "app"}}); !errors.Is(err, authserver.ErrExists) {
		t.Fatalf("same prefix, same client: %v", err)
	}
	if err := a2.SaveSigningKey(ctx, authserver.SigningKey{ID: "k", PKCS8: []byte{1}}); !errors.Is(err, authserver.ErrExists) {
		t.Fatalf("same prefix, same key: %v", err)
	}
}
