package redis_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/store/redis"
)

// TestSessionDirectory: a session recorded by one replica is known to
// another, which sees it held while the recording replica runs, and not
// held once that replica closed its store or stopped renewing (died);
// DeleteSession forgets the record.
func TestSessionDirectory(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	prefix := freshPrefix(t, c)
	opts := redis.EventStoreOptions{Heartbeat: 100 * time.Millisecond}
	a, b := redis.NewEventStore(c, prefix, opts), redis.NewEventStore(newClient(t), prefix, opts)
	defer b.Close()

	if _, ok, err := b.SessionRecord(ctx, "s1"); ok || err != nil {
		t.Fatalf("an unknown session: %v %v", ok, err)
	}
	if held, err := b.SessionHeld(ctx, "s1"); held || err != nil {
		t.Fatalf("an unknown session held: %v %v", held, err)
	}
	if err := a.PutSession(ctx, "s1", []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	appendN(t, a, "s1", "1", 1, 2, 4)
	if rec, ok, err := b.SessionRecord(ctx, "s1"); !ok || err != nil || string(rec) != `{"v":1}` {
		t.Fatalf("record at b: %q %v %v", rec, ok, err)
	}
	time.Sleep(500 * time.Millisecond) // past the first TTL: the heartbeat renews it
	if held, err := b.SessionHeld(ctx, "s1"); !held || err != nil {
		t.Fatalf("held while a runs: %v %v", held, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if held, err := b.SessionHeld(ctx, "s1"); held || err != nil {
		t.Fatalf("held after a closed: %v %v", held, err)
	}
	// The events and the record outlive the holder, for resumption.
	if got, err := b.After(ctx, "s1", "1", 0); err != nil || len(got) != 2 {
		t.Fatalf("events after a closed: %v %v", seqs(got), err)
	}

	// A holder that dies: its client goes away, nothing renews its key.
	dying := goredis.NewClient(c.Options())
	d := redis.NewEventStore(dying, prefix, opts)
	if err := d.PutSession(ctx, "s2", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if held, _ := b.SessionHeld(ctx, "s2"); !held {
		t.Fatal("s2 not held right after it was recorded")
	}
	dying.Close()
	deadline := time.Now().Add(30 * time.Second)
	for held := true; held; {
		if time.Now().After(deadline) {
			t.Fatal("s2 still held long after its holder died")
		}
		time.Sleep(50 * time.Millisecond)
		var err error
		if held, err = b.SessionHeld(ctx, "s2"); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()

	if err := b.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := b.SessionRecord(ctx, "s1"); ok || err != nil {
		t.Fatalf("record after DeleteSession: %v %v", ok, err)
	}
	if err := b.PutSession(ctx, "s3", make([]byte, redis.MaxSessionRecordBytes+1)); !errors.Is(err, redis.ErrRecordTooLarge) {
		t.Fatalf("a record over the bound: %v", err)
	}
}

// TestSessionDirectoryRedisDown: the directory's calls fail with ErrDown,
// and fail fast after the first.
func TestSessionDirectoryRedisDown(t *testing.T) {
	ctx := context.Background()
	srv := startThrowaway(t)
	s := redis.NewEventStore(srv.client(), "d:", redis.EventStoreOptions{Timeout: time.Second})
	defer s.Close()
	if err := s.PutSession(ctx, "s", []byte("x")); err != nil {
		t.Fatal(err)
	}
	srv.signal(syscall.SIGSTOP)
	defer srv.signal(syscall.SIGCONT)
	start := time.Now()
	if _, _, err := s.SessionRecord(ctx, "s"); !errors.Is(err, redis.ErrDown) {
		t.Fatalf("SessionRecord on a frozen Redis: %v", err)
	}
	first := time.Since(start)
	start = time.Now()
	for range 10 {
		if _, err := s.SessionHeld(ctx, "s"); !errors.Is(err, redis.ErrDown) {
			t.Fatalf("SessionHeld on a frozen Redis: %v", err)
		}
	}
	if d := time.Since(start); d > first {
		t.Errorf("10 calls after a failure took %v, the first alone %v: no fail-fast", d, first)
	}
}
