package storetest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// RunRateLimit checks an authserver.SharedRateLimiter through several
// handles on one shared state (the stores of several processes): a
// bucket's burst is spent across all of them, the refusal says how long
// until the next event, time refills it, buckets are independent, and of
// concurrent takers exactly the burst wins.
func RunRateLimit(t *testing.T, limiters []authserver.SharedRateLimiter) {
	ctx := context.Background()
	const interval, burst = time.Second, 3
	slack := (burst - 1) * interval
	now := time.Now().Truncate(time.Microsecond)
	take := func(i int, key string, at time.Time) (bool, time.Duration) {
		t.Helper()
		ok, wait, err := limiters[i%len(limiters)].TakeRate(ctx, key, interval, slack, at)
		if err != nil {
			t.Fatal(err)
		}
		return ok, wait
	}
	for i := range burst {
		if ok, _ := take(i, "a", now); !ok {
			t.Fatalf("event %d of the burst refused", i+1)
		}
	}
	if ok, wait := take(burst, "a", now); ok || wait != interval {
		t.Fatalf("past the burst: %v, wait %v; want refused for %v", ok, wait, interval)
	}
	if ok, _ := take(0, "b", now); !ok {
		t.Fatal("another bucket is refused")
	}
	if ok, wait := take(1, "a", now.Add(interval/2)); ok || wait != interval/2 {
		t.Fatalf("half an interval later: %v, wait %v", ok, wait)
	}
	if ok, _ := take(1, "a", now.Add(interval)); !ok {
		t.Fatal("an interval later, refused")
	}
	if ok, _ := take(0, "a", now.Add(interval)); ok {
		t.Fatal("two events an interval later")
	}
	// Long after, the bucket is full again.
	later := now.Add(time.Hour)
	for i := range burst {
		if ok, _ := take(i, "a", later); !ok {
			t.Fatalf("an hour later, event %d refused", i+1)
		}
	}

	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			ok, _, err := limiters[i%len(limiters)].TakeRate(ctx, "race", interval, slack, now)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != burst {
		t.Fatalf("%d of 16 concurrent takers won, want %d", wins.Load(), burst)
	}
}

// RunSharedLoginLimit runs two authorization servers on stores that share
// their state, behind one address that alternates between them, with a
// login limit of 3 attempts: the fourth wrong password is refused as too
// many, whichever server it reaches. Without a shared limiter each server
// would allow 3, and the address 6.
func RunSharedLoginLimit(t *testing.T, stores [2]authserver.Store) {
	ctx := context.Background()
	if err := stores[0].CreateClient(ctx, authserver.Client{Metadata: oauth.ClientMetadata{ClientID: "app",
		RedirectURIs: []string{loginRedirect}, TokenEndpointAuthMethod: "none"}}); err != nil {
		t.Fatal(err)
	}
	hash, err := authserver.HashPassword("pw")
	if err != nil {
		t.Fatal(err)
	}
	var servers [2]loginServer
	for i, st := range stores {
		s, err := authserver.NewServer(ctx, authserver.Config{Issuer: loginIssuer, Store: st,
			Users: authserver.PasswordUsers{"alice": hash}, LoginRate: 0.001, LoginBurst: 3,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		servers[i] = loginServer{t, s}
	}
	refused := 0
	for i := range 4 {
		ls := servers[i%2]
		rec := ls.get()
		csrf := cookie(rec, "as_csrf")
		rec = ls.post(rec.Body.String(), url.Values{"action": {"login"}, "username": {"alice"}, "password": {fmt.Sprint("wrong", i)}}, csrf)
		if strings.Contains(rec.Body.String(), "Too many attempts") {
			refused++
			if i < 3 {
				t.Fatalf("attempt %d refused as too many", i+1)
			}
			if rec.Header().Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
		}
	}
	if refused != 1 {
		t.Fatalf("%d attempts refused as too many, want the 4th", refused)
	}
}
