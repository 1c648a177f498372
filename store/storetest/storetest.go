// Package storetest checks that an [authserver.Store] implementation keeps
// the contract: round trips, ErrNotFound, ErrExists, and single use of codes,
// refresh tokens and nonces, also under concurrent calls.
package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// Run runs the contract tests against stores made by newStore (a fresh,
// empty store per call).
func Run(t *testing.T, newStore func(t *testing.T) authserver.Store) {
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	t.Run("clients", func(t *testing.T) {
		s := newStore(t)
		c := authserver.Client{Metadata: oauth.ClientMetadata{ClientID: "c1", ClientName: "One",
			RedirectURIs: []string{"http://127.0.0.1/cb"}, Extra: nil}, SecretHash: []byte{1, 2, 3}, IssuedAt: now.UTC()}
		if err := s.CreateClient(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateClient(ctx, c); !errors.Is(err, authserver.ErrExists) {
			t.Fatalf("second create: %v", err)
		}
		got, err := s.Client(ctx, "c1")
		if err != nil || got.ID() != "c1" || got.Metadata.ClientName != "One" || !slices.Equal(got.SecretHash, c.SecretHash) ||
			!slices.Equal(got.Metadata.RedirectURIs, c.Metadata.RedirectURIs) || !got.IssuedAt.Equal(c.IssuedAt) {
			t.Fatalf("got %+v, %v", got, err)
		}
		if _, err := s.Client(ctx, "nope"); !errors.Is(err, authserver.ErrNotFound) {
			t.Fatalf("unknown client: %v", err)
		}
	})
	t.Run("unused clients are pruned", func(t *testing.T) {
		s := newStore(t)
		mk := func(id string, unused time.Time) {
			t.Helper()
			c := authserver.Client{Metadata: oauth.ClientMetadata{ClientID: id}, IssuedAt: now.UTC(), UnusedExpiresAt: unused}
			if err := s.CreateClient(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		mk("keep", time.Time{})
		mk("stale", now.Add(-time.Minute))
		mk("fresh", now.Add(time.Hour))
		mk("used", now.Add(-time.Second)) // used in time: marked below before pruning
		if err := s.MarkClientUsed(ctx, "used"); err != nil && !errors.Is(err, authserver.ErrNotFound) {
			t.Fatal(err)
		}
		if err := s.MarkClientUsed(ctx, "nope"); !errors.Is(err, authserver.ErrNotFound) {
			t.Fatalf("MarkClientUsed of an unknown client: %v", err)
		}
		n, err := s.PruneClients(ctx, now)
		if err != nil || n > 2 {
			t.Fatalf("PruneClients = %d, %v", n, err)
		}
		if _, err := s.Client(ctx, "stale"); !errors.Is(err, authserver.ErrNotFound) {
			t.Fatalf("a client unused past its UnusedExpiresAt survived pruning: %v", err)
		}
		for _, id := range []string{"keep", "fresh"} {
			if _, err := s.Client(ctx, id); err != nil {
				t.Fatalf("%s pruned: %v", id, err)
			}
		}
		got, err := s.Client(ctx, "fresh")
		if err != nil || !got.UnusedExpiresAt.Equal(now.Add(time.Hour)) {
			t.Fatalf("UnusedExpiresAt round trip: %v, %v", got.UnusedExpiresAt, err)
		}
		// A client marked used keeps no expiry, and pruning never takes it.
		mk("later", now.Add(time.Hour))
		if err := s.MarkClientUsed(ctx, "later"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Client(ctx, "later"); err != nil || !got.UnusedExpiresAt.IsZero() {
			t.Fatalf("after MarkClientUsed: %v, %v", got.UnusedExpiresAt, err)
		}
		if _, err := s.PruneClients(ctx, now.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"keep", "later"} {
			if _, err := s.Client(ctx, id); err != nil {
				t.Fatalf("%s pruned: %v", id, err)
			}
		}
	})
	t.Run("codes are single use", func(t *testing.T) {
		s := newStore(t)
		c := authserver.Code{Hash: "h1", ClientID: "c", RedirectURI: "r", CodeChallenge: "ch", Resource: "res",
			Subject: "alice", Scopes: []string{"a", "b"}, FamilyID: "f", ExpiresAt: now.Add(time.Minute)}
		if err := s.SaveCode(ctx, c); err != nil {
			t.Fatal(err)
		}
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				got, err := s.TakeCode(ctx, "h1")
				switch {
				case err == nil:
					wins.Add(1)
				case !errors.Is(err, authserver.ErrAlreadyUsed) || got.FamilyID != "f":
					t.Errorf("TakeCode: %+v %v", got, err)
				}
				if got.Subject != "alice" || !slices.Equal(got.Scopes, c.Scopes) || !got.ExpiresAt.Equal(c.ExpiresAt) {
					t.Errorf("TakeCode returned %+v", got)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d callers took the code", wins.Load())
		}
		if _, err := s.TakeCode(ctx, "nope"); !errors.Is(err, authserver.ErrNotFound) {
			t.Fatalf("unknown code: %v", err)
		}
	})
	t.Run("refresh tokens are single use", func(t *testing.T) {
		s := newStore(t)
		rt := authserver.RefreshToken{Hash: "r1", FamilyID: "f", ClientID: "c", Subject: "alice", Resource: "res",
			Scopes: []string{"a"}, ExpiresAt: now.Add(time.Hour)}
		if err := s.SaveRefreshToken(ctx, rt); err != nil {
			t.Fatal(err)
		}
		if got, err := s.RefreshToken(ctx, "r1"); err != nil || got.FamilyID != "f" {
			t.Fatalf("peek: %+v %v", got, err)
		}
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				got, err := s.UseRefreshToken(ctx, "r1")
				if err == nil {
					wins.Add(1)
				} else if !errors.Is(err, authserver.ErrAlreadyUsed) || got.FamilyID != "f" {
					t.Errorf("UseRefreshToken: %+v %v", got, err)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d callers used the token", wins.Load())
		}
		if _, err := s.UseRefreshToken(ctx, "nope"); !errors.Is(err, authserver.ErrNotFound) {
			t.Fatalf("unknown token: %v", err)
		}
	})
	t.Run("families", func(t *testing.T) {
		s := newStore(t)
		if r, err := s.FamilyRevoked(ctx, "f"); err != nil || r {
			t.Fatalf("fresh family revoked: %v %v", r, err)
		}
		if err := s.RevokeFamily(ctx, "f", now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if r, err := s.FamilyRevoked(ctx, "f"); err != nil || !r {
			t.Fatalf("revoked family: %v %v", r, err)
		}
	})
	t.Run("nonces", func(t *testing.T) {
		s := newStore(t)
		if err := s.UseNonce(ctx, "n", now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.UseNonce(ctx, "n", now.Add(time.Hour)); !errors.Is(err, authserver.ErrAlreadyUsed) {
			t.Fatalf("second use: %v", err)
		}
		if err := s.UseNonce(ctx, "old", now.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.UseNonce(ctx, "old", now.Add(time.Hour)); err != nil {
			t.Fatalf("expired nonce not reusable: %v", err)
		}
	})
	t.Run("signing keys", func(t *testing.T) {
		s := newStore(t)
		for i, id := range []string{"k1", "k2"} {
			if err := s.SaveSigningKey(ctx, authserver.SigningKey{ID: id, Algorithm: "ES256", PKCS8: []byte{byte(i)},
				CreatedAt: now.Add(time.Duration(i) * time.Minute).UTC()}); err != nil {
				t.Fatal(err)
			}
		}
		keys, err := s.SigningKeys(ctx)
		if err != nil || len(keys) != 2 || keys[0].ID != "k1" || keys[1].ID != "k2" || keys[1].PKCS8[0] != 1 {
			t.Fatalf("keys %+v %v", keys, err)
		}
	})
}
