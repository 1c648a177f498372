// Package storetest checks that an [authserver.Store] implementation keeps
// the contract: round trips, ErrNotFound, ErrExists, and single use of codes,
// refresh tokens and nonces, also under concurrent calls; code redemption
// and refresh rotation that change both records or neither; and, through an
// authorization server on the store, refreshes that lose no grant when
// clients give up mid-request or a store call fails ([RefreshStorm]).
package storetest

import (
	"context"
	"errors"
	"fmt"
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
	t.Run("cookie keys", func(t *testing.T) {
		s := newStore(t)
		if keys, err := s.CookieKeys(ctx); err != nil || len(keys) != 0 {
			t.Fatalf("empty store: %+v %v", keys, err)
		}
		// Saved out of order; read oldest first, then by id.
		for _, k := range []struct {
			id  string
			min int
		}{{"c3", 2}, {"c1", 0}, {"c2b", 1}, {"c2a", 1}} {
			if err := s.SaveCookieKey(ctx, authserver.CookieKey{ID: k.id, Secret: []byte(k.id),
				CreatedAt: now.Add(time.Duration(k.min) * time.Minute).UTC()}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SaveCookieKey(ctx, authserver.CookieKey{ID: "c1", Secret: []byte("x"), CreatedAt: now}); !errors.Is(err, authserver.ErrExists) {
			t.Fatalf("second save: %v", err)
		}
		keys, err := s.CookieKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, k := range keys {
			ids = append(ids, k.ID)
			if string(k.Secret) != k.ID {
				t.Errorf("key %s has secret %q", k.ID, k.Secret)
			}
		}
		if !slices.Equal(ids, []string{"c1", "c2a", "c2b", "c3"}) || !keys[0].CreatedAt.Equal(now) {
			t.Fatalf("keys %v, first created %v", ids, keys[0].CreatedAt)
		}
	})
	t.Run("logins shared and rotated", func(t *testing.T) {
		sharedLogins(t, newStore(t))
	})
	t.Run("signing key rotations followed", func(t *testing.T) {
		sharedSigningKeys(t, newStore(t))
	})
	runSpend(t, newStore)
	runRotation(t, newStore)
	runUpstream(t, newStore)
}

// runSpend checks RedeemCode and RotateRefreshToken: both records change
// or neither does, and of concurrent spenders exactly one wins.
func runSpend(t *testing.T, newStore func(t *testing.T) authserver.Store) {
	ctx := context.Background()
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	rt := func(h, fam string) authserver.RefreshToken {
		return authserver.RefreshToken{Hash: h, FamilyID: fam, ClientID: "c", Subject: "alice", Resource: "res",
			Scopes: []string{"a"}, ExpiresAt: exp}
	}
	// usable reports whether a refresh token is stored and unused.
	usable := func(t *testing.T, s authserver.Store, h string) bool {
		t.Helper()
		_, err := s.RefreshToken(ctx, h)
		if err != nil && !errors.Is(err, authserver.ErrAlreadyUsed) && !errors.Is(err, authserver.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	t.Run("rotate refresh token", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			next     string // hash of the successor
			useFirst bool   // the old token was used before
			old      string // the hash presented
			want     error
			oldAfter bool // the old token is usable after
			newAfter bool // the successor is usable after
		}{
			{name: "success", next: "n1", old: "o", want: nil, newAfter: true},
			{name: "successor exists", next: "taken", old: "o", want: authserver.ErrExists, oldAfter: true},
			{name: "old already used", next: "n1", old: "o", useFirst: true, want: authserver.ErrAlreadyUsed},
			{name: "unknown", next: "n1", old: "nope", want: authserver.ErrNotFound, oldAfter: true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := newStore(t)
				for _, h := range []string{"o", "taken"} {
					if err := s.SaveRefreshToken(ctx, rt(h, "f")); err != nil {
						t.Fatal(err)
					}
				}
				if tc.useFirst {
					if _, err := s.UseRefreshToken(ctx, "o"); err != nil {
						t.Fatal(err)
					}
				}
				got, err := s.RotateRefreshToken(ctx, tc.old, rt(tc.next, "f"))
				if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
					t.Fatalf("RotateRefreshToken: %v, want %v", err, tc.want)
				}
				if !errors.Is(err, authserver.ErrNotFound) && (got.FamilyID != "f" || got.Subject != "alice") {
					t.Fatalf("RotateRefreshToken returned %+v", got)
				}
				if u := usable(t, s, "o"); u != tc.oldAfter {
					t.Fatalf("old token usable %v, want %v", u, tc.oldAfter)
				}
				if u := usable(t, s, tc.next); u != (tc.newAfter || tc.next == "taken") {
					t.Fatalf("successor usable %v", u)
				}
			})
		}
	})
	t.Run("redeem code", func(t *testing.T) {
		for _, tc := range []struct {
			name      string
			first     *authserver.RefreshToken
			takeFirst bool
			want      error
			codeAfter bool // the code is still unused after
			newAfter  bool
		}{
			{name: "with refresh token", first: &authserver.RefreshToken{Hash: "n1", FamilyID: "f", ExpiresAt: exp}, newAfter: true},
			{name: "without refresh token", first: nil},
			{name: "refresh token hash taken", first: &authserver.RefreshToken{Hash: "taken", FamilyID: "f", ExpiresAt: exp},
				want: authserver.ErrExists, codeAfter: true},
			{name: "code already taken", first: &authserver.RefreshToken{Hash: "n1", FamilyID: "f", ExpiresAt: exp},
				takeFirst: true, want: authserver.ErrAlreadyUsed},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := newStore(t)
				if err := s.SaveCode(ctx, authserver.Code{Hash: "c1", ClientID: "c", Subject: "alice", FamilyID: "f", ExpiresAt: exp}); err != nil {
					t.Fatal(err)
				}
				if err := s.SaveRefreshToken(ctx, rt("taken", "g")); err != nil {
					t.Fatal(err)
				}
				if tc.takeFirst {
					if _, err := s.TakeCode(ctx, "c1"); err != nil {
						t.Fatal(err)
					}
				}
				if c, err := s.Code(ctx, "c1"); (err == nil) != !tc.takeFirst || c.Subject != "alice" {
					t.Fatalf("Code before: %+v %v", c, err)
				}
				got, err := s.RedeemCode(ctx, "c1", tc.first)
				if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) || got.FamilyID != "f" {
					t.Fatalf("RedeemCode: %+v %v, want %v", got, err, tc.want)
				}
				_, cerr := s.Code(ctx, "c1")
				if (cerr == nil) != tc.codeAfter {
					t.Fatalf("code unused after: %v, want %v", cerr == nil, tc.codeAfter)
				}
				if u := usable(t, s, "n1"); u != tc.newAfter {
					t.Fatalf("refresh token usable %v, want %v", u, tc.newAfter)
				}
				if _, err := s.RedeemCode(ctx, "nope", nil); !errors.Is(err, authserver.ErrNotFound) {
					t.Fatalf("unknown code: %v", err)
				}
			})
		}
	})
	t.Run("concurrent rotations of one token", func(t *testing.T) {
		s := newStore(t)
		if err := s.SaveRefreshToken(ctx, rt("o", "f")); err != nil {
			t.Fatal(err)
		}
		var wins atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				_, err := s.RotateRefreshToken(ctx, "o", rt(fmt.Sprintf("n%d", i), "f"))
				switch {
				case err == nil:
					wins.Add(1)
				case !errors.Is(err, authserver.ErrAlreadyUsed):
					t.Errorf("RotateRefreshToken: %v", err)
				}
			})
		}
		wg.Wait()
		stored := 0
		for i := range 8 {
			if usable(t, s, fmt.Sprintf("n%d", i)) {
				stored++
			}
		}
		if wins.Load() != 1 || stored != 1 {
			t.Fatalf("%d rotations won, %d successors stored; want 1 and 1", wins.Load(), stored)
		}
	})
}
