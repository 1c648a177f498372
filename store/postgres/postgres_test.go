package postgres_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/postgres"
	"github.com/mcpstack/mcpstack/store/storetest"
)

// serverURL returns MCPSTACK_POSTGRES_URL, skipping the test when it is
// unset unless MCPSTACK_REQUIRE_SERVICES=1 (scripts/services.sh starts a
// server and prints it).
func serverURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("MCPSTACK_POSTGRES_URL")
	if u == "" {
		if os.Getenv("MCPSTACK_REQUIRE_SERVICES") == "1" {
			t.Fatal("MCPSTACK_POSTGRES_URL is unset and MCPSTACK_REQUIRE_SERVICES=1: run scripts/services.sh")
		}
		t.Skip("MCPSTACK_POSTGRES_URL is unset (scripts/services.sh starts a server)")
	}
	return u
}

// freshSchema creates an empty schema of its own for the test, dropped when
// it ends, and returns a connection string whose search_path is that schema.
func freshSchema(t *testing.T) string {
	t.Helper()
	base := serverURL(t)
	conn, err := pgx.Connect(t.Context(), base)
	if err != nil {
		t.Fatalf("connect to %s: %v", base, err)
	}
	defer conn.Close(context.Background())
	name := "test_" + strings.ToLower(rand.Text()[:16])
	if _, err := conn.Exec(t.Context(), "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("MCPSTACK_POSTGRES_URL must be a postgres:// URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

func open(t *testing.T, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestContract(t *testing.T) {
	serverURL(t)
	t.Parallel()
	storetest.Run(t, func(t *testing.T) authserver.Store { return open(t, freshSchema(t)) })
}

// TestSingleUseAcrossPools races many goroutines, spread over several
// stores with their own pools (as separate processes would be), to take one
// code, use one refresh token and record one nonce: in each round exactly
// one wins, and the others get ErrAlreadyUsed with the record.
func TestSingleUseAcrossPools(t *testing.T) {
	dsn := freshSchema(t)
	t.Parallel()
	ctx := t.Context()

	// The stores open together, so their migrations race too.
	stores := make([]authserver.Store, 4)
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() {
			s, err := postgres.Open(ctx, dsn)
			if err != nil {
				t.Errorf("open %d: %v", i, err)
				return
			}
			t.Cleanup(s.Close)
			stores[i] = s
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	storetest.RunRace(t, stores)
}

// TestReopen closes a store and opens the schema again: the schema is not
// migrated twice and everything written, used flags included, is there.
func TestReopen(t *testing.T) {
	dsn := freshSchema(t)
	t.Parallel()
	ctx := t.Context()
	now := time.Now().Truncate(time.Microsecond).UTC()
	exp := now.Add(time.Hour)

	s1, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	client := authserver.Client{Metadata: oauth.ClientMetadata{ClientID: "app", RedirectURIs: []string{"http://127.0.0.1/cb"}},
		SecretHash: []byte{9, 8, 7}, IssuedAt: now}
	for _, err := range []error{
		s1.CreateClient(ctx, client),
		s1.SaveCode(ctx, authserver.Code{Hash: "used", FamilyID: "f1", ExpiresAt: exp}),
		s1.SaveCode(ctx, authserver.Code{Hash: "fresh", FamilyID: "f2", Scopes: []string{"a"}, ExpiresAt: exp}),
		s1.SaveRefreshToken(ctx, authserver.RefreshToken{Hash: "rt", FamilyID: "f1", ExpiresAt: exp}),
		s1.RevokeFamily(ctx, "f1", exp),
		s1.UseNonce(ctx, "jti", exp),
		s1.SaveSigningKey(ctx, authserver.SigningKey{ID: "k1", Algorithm: "ES256", PKCS8: []byte{1}, CreatedAt: now}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s1.TakeCode(ctx, "used"); err != nil {
		t.Fatal(err)
	}
	if _, err := s1.UseRefreshToken(ctx, "rt"); err != nil {
		t.Fatal(err)
	}
	s1.Close()

	s2 := open(t, dsn)
	if v, err := s2.Version(ctx); err != nil || v != 5 {
		t.Fatalf("version after reopening: %d, %v", v, err)
	}
	if c, err := s2.Client(ctx, "app"); err != nil || !c.IssuedAt.Equal(now) || string(c.SecretHash) != "\x09\x08\x07" {
		t.Fatalf("client after reopening: %+v, %v", c, err)
	}
	if c, err := s2.TakeCode(ctx, "used"); !errors.Is(err, authserver.ErrAlreadyUsed) || c.FamilyID != "f1" {
		t.Fatalf("used code after reopening: %+v, %v", c, err)
	}
	if c, err := s2.TakeCode(ctx, "fresh"); err != nil || c.Scopes[0] != "a" || !c.ExpiresAt.Equal(exp) {
		t.Fatalf("fresh code after reopening: %+v, %v", c, err)
	}
	if _, err := s2.UseRefreshToken(ctx, "rt"); !errors.Is(err, authserver.ErrAlreadyUsed) {
		t.Fatalf("used refresh token after reopening: %v", err)
	}
	if r, err := s2.FamilyRevoked(ctx, "f1"); err != nil || !r {
		t.Fatalf("revocation after reopening: %v, %v", r, err)
	}
	if err := s2.UseNonce(ctx, "jti", exp); !errors.Is(err, authserver.ErrAlreadyUsed) {
		t.Fatalf("nonce after reopening: %v", err)
	}
	if keys, err := s2.SigningKeys(ctx); err != nil || len(keys) != 1 || keys[0].ID != "k1" || !keys[0].CreatedAt.Equal(now) {
		t.Fatalf("keys after reopening: %+v, %v", keys, err)
	}
}

// TestExpiry checks what expiry does: a revocation and a nonce end at their
// time, and Prune deletes expired rows, keeping used codes and refresh
// tokens for an hour after expiry so that a late replay is still reuse.
func TestExpiry(t *testing.T) {
	dsn := freshSchema(t)
	t.Parallel()
	ctx := t.Context()
	s := open(t, dsn)
	now := time.Now()

	for _, err := range []error{
		s.SaveCode(ctx, authserver.Code{Hash: "long-gone", ExpiresAt: now.Add(-2 * time.Hour)}),
		s.SaveCode(ctx, authserver.Code{Hash: "just-expired", ExpiresAt: now.Add(-time.Minute)}),
		s.SaveRefreshToken(ctx, authserver.RefreshToken{Hash: "rt-long-gone", ExpiresAt: now.Add(-2 * time.Hour)}),
		s.SaveRefreshToken(ctx, authserver.RefreshToken{Hash: "rt-live", ExpiresAt: now.Add(time.Hour)}),
		s.RevokeFamily(ctx, "ended", now.Add(-time.Second)),
		s.RevokeFamily(ctx, "extended", now.Add(-time.Second)),
		s.RevokeFamily(ctx, "extended", now.Add(time.Hour)),
		s.RevokeFamily(ctx, "extended", now.Add(-time.Hour)), // does not shorten it
		s.UseNonce(ctx, "old", now.Add(-time.Second)),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if r, err := s.FamilyRevoked(ctx, "ended"); err != nil || r {
		t.Fatalf("revocation past its time: %v, %v", r, err)
	}
	if r, err := s.FamilyRevoked(ctx, "extended"); err != nil || !r {
		t.Fatalf("extended revocation: %v, %v", r, err)
	}
	if err := s.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"long-gone"} {
		if _, err := s.TakeCode(ctx, h); !errors.Is(err, authserver.ErrNotFound) {
			t.Errorf("pruned code %s: %v", h, err)
		}
	}
	if _, err := s.TakeCode(ctx, "just-expired"); err != nil {
		t.Errorf("code within the grace period: %v", err)
	}
	if _, err := s.RefreshToken(ctx, "rt-long-gone"); !errors.Is(err, authserver.ErrNotFound) {
		t.Errorf("pruned refresh token: %v", err)
	}
	if _, err := s.RefreshToken(ctx, "rt-live"); err != nil {
		t.Errorf("live refresh token: %v", err)
	}
	if r, err := s.FamilyRevoked(ctx, "extended"); err != nil || !r {
		t.Errorf("extended revocation after pruning: %v, %v", r, err)
	}
	if err := s.UseNonce(ctx, "old", now.Add(time.Hour)); err != nil {
		t.Errorf("expired nonce not reusable: %v", err)
	}
}

// TestNewerSchema refuses a database migrated by a later program.
func TestNewerSchema(t *testing.T) {
	dsn := freshSchema(t)
	t.Parallel()
	ctx := t.Context()
	open(t, dsn)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (99, now())`); err != nil {
		t.Fatal(err)
	}
	if s, err := postgres.Open(ctx, dsn); err == nil {
		s.Close()
		t.Fatal("opened a schema at version 99")
	}
}
