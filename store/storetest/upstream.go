package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
)

// runUpstream checks the records of sign-in through an upstream provider
// (#23): the per-user client approvals, the single-use upstream state, also
// under concurrent takes, and the replaced upstream grant.
func runUpstream(t *testing.T, newStore func(t *testing.T) authserver.Store) {
	ctx := context.Background()
	now := time.Now().Truncate(time.Second).UTC()
	t.Run("client approvals are per user and per client", func(t *testing.T) {
		s := newStore(t)
		if err := s.ApproveClient(ctx, "alice", "a", now); err != nil {
			t.Fatal(err)
		}
		if err := s.ApproveClient(ctx, "alice", "a", now); err != nil {
			t.Fatalf("second approval: %v", err)
		}
		for _, tc := range []struct {
			sub, client string
			want        bool
		}{{"alice", "a", true}, {"alice", "b", false}, {"bob", "a", false}, {"alic", "ea", false}} {
			got, err := s.ClientApproved(ctx, tc.sub, tc.client)
			if err != nil || got != tc.want {
				t.Errorf("ClientApproved(%q, %q) = %v, %v; want %v", tc.sub, tc.client, got, err, tc.want)
			}
		}
	})
	t.Run("upstream states are single use", func(t *testing.T) {
		s := newStore(t)
		st := authserver.UpstreamState{Hash: "h1", Data: []byte("data"), ExpiresAt: now.Add(10 * time.Minute)}
		if err := s.SaveUpstreamState(ctx, st); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveUpstreamState(ctx, st); !errors.Is(err, authserver.ErrExists) {
			t.Fatalf("saved twice: %v", err)
		}
		got, err := s.TakeUpstreamState(ctx, "h1")
		if err != nil || !bytes.Equal(got.Data, st.Data) || !got.ExpiresAt.Equal(st.ExpiresAt) || got.Hash != "h1" {
			t.Fatalf("take: %+v, %v", got, err)
		}
		for _, h := range []string{"h1", "never"} {
			if _, err := s.TakeUpstreamState(ctx, h); !errors.Is(err, authserver.ErrNotFound) {
				t.Fatalf("take %s again: %v", h, err)
			}
		}
	})
	t.Run("concurrent takes of one upstream state", func(t *testing.T) {
		s := newStore(t)
		for i := range 5 {
			h := fmt.Sprintf("race-%d", i)
			if err := s.SaveUpstreamState(ctx, authserver.UpstreamState{Hash: h, Data: []byte("x"), ExpiresAt: now.Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
			var wins atomic.Int32
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					if _, err := s.TakeUpstreamState(ctx, h); err == nil {
						wins.Add(1)
					} else if !errors.Is(err, authserver.ErrNotFound) {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if n := wins.Load(); n != 1 {
				t.Fatalf("%d takes of one state succeeded", n)
			}
		}
	})
	t.Run("upstream grants", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.UpstreamGrant(ctx, "alice"); !errors.Is(err, authserver.ErrNotFound) {
			t.Fatalf("unknown grant: %v", err)
		}
		for _, v := range []string{"one", "two"} {
			if err := s.SaveUpstreamGrant(ctx, authserver.UpstreamGrant{Subject: "alice", Sealed: []byte(v), UpdatedAt: now}); err != nil {
				t.Fatal(err)
			}
		}
		g, err := s.UpstreamGrant(ctx, "alice")
		if err != nil || string(g.Sealed) != "two" || !g.UpdatedAt.Equal(now) || g.Subject != "alice" {
			t.Fatalf("grant %+v, %v", g, err)
		}
	})
}
