package auth_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/auth"
)

func TestCache(t *testing.T) {
	clk := &clock{t: time.Now()}
	var calls atomic.Int32
	exp := clk.Now().Add(time.Minute)
	inner := auth.VerifierFunc(func(ctx context.Context, tok string) (*auth.Principal, error) {
		calls.Add(1)
		if tok == "bad" {
			return nil, &auth.TokenError{Reason: "nope"}
		}
		return &auth.Principal{Subject: tok, Scopes: []string{"s"}, Expiry: exp}, nil
	})
	c := auth.NewCache(inner, auth.CacheOptions{TTL: 2 * time.Minute, Size: 3, Now: clk.Now})
	ctx := context.Background()
	get := func(tok string, wantCalls int32) *auth.Principal {
		t.Helper()
		p, err := c.Verify(ctx, tok)
		if err != nil {
			t.Fatalf("%s: %v", tok, err)
		}
		if p.Subject != tok {
			t.Fatalf("%s: subject %q", tok, p.Subject)
		}
		if n := calls.Load(); n != wantCalls {
			t.Fatalf("%s: %d calls, want %d", tok, n, wantCalls)
		}
		return p
	}
	p := get("a", 1)
	p.Scopes[0] = "mutated" // callers cannot change the cached copy
	if q := get("a", 1); q.Scopes[0] != "s" {
		t.Fatal("cached principal shared with a caller")
	}
	// Failures are not cached.
	for i := range 2 {
		if _, err := c.Verify(ctx, "bad"); err == nil || calls.Load() != int32(2+i) {
			t.Fatal("failure cached or accepted")
		}
	}
	// The token's expiry ends the entry before the TTL does.
	clk.Add(61 * time.Second)
	get("a", 4) // expired: not remembered
	if c.Len() != 0 {
		t.Fatalf("expired principal cached: len %d", c.Len())
	}
	exp = clk.Now().Add(time.Hour)
	get("a", 5)
	get("a", 5)
	if c.Len() != 1 {
		t.Fatalf("len %d", c.Len())
	}
	// The size bound holds.
	for i := range 10 {
		get(fmt.Sprint("t", i), int32(6+i))
	}
	if c.Len() > 3 {
		t.Fatalf("len %d over the bound", c.Len())
	}
}

func TestCacheConcurrent(t *testing.T) {
	var calls atomic.Int32
	inner := auth.VerifierFunc(func(ctx context.Context, tok string) (*auth.Principal, error) {
		calls.Add(1)
		return &auth.Principal{Subject: tok, Expiry: time.Now().Add(time.Hour)}, nil
	})
	c := auth.NewCache(inner, auth.CacheOptions{Size: 8})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				tok := fmt.Sprint("t", (g+i)%16)
				if p, err := c.Verify(context.Background(), tok); err != nil || p.Subject != tok {
					t.Errorf("%s: %v %v", tok, p, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if c.Len() > 8 {
		t.Fatalf("len %d", c.Len())
	}
}
