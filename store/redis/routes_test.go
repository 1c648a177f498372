package redis_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp/eventstore"
	"github.com/mcpstack/mcpstack/store/redis"
)

// TestReplicaRoutes: two replicas on one Redis. A message sent to one
// replica reaches it and not the other; one sent to all reaches both; one
// to a replica nobody listens for fails with ErrNoReplica; an oversized
// one is refused. A replica is alive from its start and dead at once
// after Close.
func TestReplicaRoutes(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	prefix := freshPrefix(t, c)
	opts := redis.EventStoreOptions{Heartbeat: 100 * time.Millisecond, MaxRoutedBytes: 1 << 10}
	a, b := redis.NewEventStore(c, prefix, opts), redis.NewEventStore(newClient(t), prefix, opts)
	defer b.Close()
	if a.ReplicaID() == b.ReplicaID() || a.ReplicaID() == "" {
		t.Fatalf("replica ids %q, %q", a.ReplicaID(), b.ReplicaID())
	}
	got := map[string]chan string{"a": make(chan string, 8), "b": make(chan string, 8)}
	for name, s := range map[string]*redis.EventStore{"a": a, "b": b} {
		stop, err := s.Listen(ctx, func(m []byte) { got[name] <- string(m) })
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
	}
	recv := func(name, want string) {
		t.Helper()
		select {
		case m := <-got[name]:
			if m != want {
				t.Fatalf("%s received %q, want %q", name, m, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s received nothing, want %q", name, want)
		}
	}
	if err := a.SendTo(ctx, b.ReplicaID(), []byte("to b")); err != nil {
		t.Fatal(err)
	}
	recv("b", "to b")
	if err := b.SendTo(ctx, "", []byte("to all")); err != nil {
		t.Fatal(err)
	}
	recv("a", "to all")
	recv("b", "to all")
	select {
	case m := <-got["a"]:
		t.Fatalf("a received %q, sent to b", m)
	default:
	}
	if err := a.SendTo(ctx, "NOBODY", []byte("x")); !errors.Is(err, eventstore.ErrNoReplica) {
		t.Fatalf("to nobody: %v", err)
	}
	if err := a.SendTo(ctx, b.ReplicaID(), []byte(strings.Repeat("x", 2<<10))); !errors.Is(err, redis.ErrMessageTooLarge) {
		t.Fatalf("oversized: %v", err)
	}
	for _, s := range []*redis.EventStore{a, b} {
		if alive, err := b.ReplicaAlive(ctx, s.ReplicaID()); !alive || err != nil {
			t.Fatalf("alive at start: %v %v", alive, err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if alive, err := b.ReplicaAlive(ctx, a.ReplicaID()); alive || err != nil {
		t.Fatalf("alive after Close: %v %v", alive, err)
	}
}

// TestUpdateSession: an update replaces the record of a session that
// exists and keeps its holder; it writes nothing for a session deleted
// (or never recorded), which must stay deleted.
func TestUpdateSession(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	prefix := freshPrefix(t, c)
	a, b := redis.NewEventStore(c, prefix, redis.EventStoreOptions{}), redis.NewEventStore(newClient(t), prefix, redis.EventStoreOptions{})
	defer a.Close()
	defer b.Close()
	if ok, err := b.UpdateSession(ctx, "s1", []byte("new")); ok || err != nil {
		t.Fatalf("update of an unknown session: %v %v", ok, err)
	}
	if _, ok, _ := b.SessionRecord(ctx, "s1"); ok {
		t.Fatal("an update created a record")
	}
	if err := a.PutSession(ctx, "s1", []byte("old")); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.UpdateSession(ctx, "s1", []byte("new")); !ok || err != nil {
		t.Fatalf("update: %v %v", ok, err)
	}
	if rec, ok, err := a.SessionRecord(ctx, "s1"); !ok || err != nil || string(rec) != "new" {
		t.Fatalf("record after update: %q %v %v", rec, ok, err)
	}
	if held, err := b.SessionHeld(ctx, "s1"); !held || err != nil {
		t.Fatalf("the holder is still a: %v %v", held, err)
	}
	if err := b.TouchSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.UpdateSession(ctx, "s1", []byte("late")); ok || err != nil {
		t.Fatalf("update after delete: %v %v", ok, err)
	}
	if _, ok, _ := a.SessionRecord(ctx, "s1"); ok {
		t.Fatal("a late update brought a deleted session back")
	}
	if _, err := a.UpdateSession(ctx, "s1", make([]byte, redis.MaxSessionRecordBytes+1)); !errors.Is(err, redis.ErrRecordTooLarge) {
		t.Fatalf("oversized record: %v", err)
	}
}

// TestUpdateSessionKeepsExpiry checks that a record update or a touch
// renews the session's hash as an append does, never shortening the
// expiry an append set (appends renew in steps and note the expiry in the
// hash: an update that set a shorter one would leave them believing the
// hash lives longer than it does).
func TestUpdateSessionKeepsExpiry(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	prefix := freshPrefix(t, c)
	const ttl = time.Hour
	s := redis.NewEventStore(c, prefix, redis.EventStoreOptions{TTL: ttl})
	defer s.Close()
	if err := s.PutSession(ctx, "s1", []byte("rec")); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "s1", "0", 1, []byte("x")); err != nil {
		t.Fatal(err)
	}
	key := prefix + "ev:{s1}"
	after := func(step string) {
		t.Helper()
		left, err := c.PTTL(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		// The append set TTL + TTL/16; a renewal to TTL alone would read
		// at most TTL.
		if left <= ttl {
			t.Errorf("after %s the session expires in %v; want more than %v (the append's expiry kept)", step, left, ttl)
		}
	}
	after("the append")
	if ok, err := s.UpdateSession(ctx, "s1", []byte("rec2")); !ok || err != nil {
		t.Fatalf("update: %v %v", ok, err)
	}
	after("an update")
	if err := s.TouchSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	after("a touch")
	if rec, ok, err := s.SessionRecord(ctx, "s1"); !ok || err != nil || string(rec) != "rec2" {
		t.Fatalf("record: %q %v %v", rec, ok, err)
	}
}

// TestTouchSession: a touch renews the expiry of a session's hash (its
// record and events) to the store's TTL when it has aged below it; it
// never brings back a session without a record (never recorded, or
// deleted: a touch racing a DELETE on another replica must not revive its
// key), and it never shortens an expiry.
func TestTouchSession(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	prefix := freshPrefix(t, c)
	const ttl = time.Hour
	s := redis.NewEventStore(c, prefix, redis.EventStoreOptions{TTL: ttl})
	defer s.Close()
	tests := []struct {
		name    string
		setup   func(t *testing.T, id string) // before the touch
		exists  bool                          // the hash exists after the touch
		atLeast time.Duration                 // and expires no sooner
	}{
		{"aged session renewed", func(t *testing.T, id string) {
			if err := s.PutSession(ctx, id, []byte("rec")); err != nil {
				t.Fatal(err)
			}
			// As if the session had been idle for most of its TTL.
			if err := c.PExpire(ctx, prefix+"ev:{"+id+"}", 10*time.Second).Err(); err != nil {
				t.Fatal(err)
			}
		}, true, ttl},
		{"aged session with events renewed", func(t *testing.T, id string) {
			if err := s.PutSession(ctx, id, []byte("rec")); err != nil {
				t.Fatal(err)
			}
			if err := s.Append(ctx, id, "0", 1, []byte("x")); err != nil {
				t.Fatal(err)
			}
			key := prefix + "ev:{" + id + "}"
			// Aged: the expiry noted in the hash and the key's agree.
			at := time.Now().Add(10 * time.Second)
			if err := c.HSet(ctx, key, "x", at.UnixMilli()).Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.PExpireAt(ctx, key, at).Err(); err != nil {
				t.Fatal(err)
			}
		}, true, ttl},
		{"fresh session kept", func(t *testing.T, id string) {
			if err := s.PutSession(ctx, id, []byte("rec")); err != nil {
				t.Fatal(err)
			}
		}, true, ttl - time.Minute},
		{"unknown session not created", func(*testing.T, string) {}, false, 0},
		{"deleted session not revived", func(t *testing.T, id string) {
			if err := s.PutSession(ctx, id, []byte("rec")); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteSession(ctx, id); err != nil {
				t.Fatal(err)
			}
		}, false, 0},
		{"events without a record left alone", func(t *testing.T, id string) {
			if err := s.Append(ctx, id, "0", 1, []byte("x")); err != nil {
				t.Fatal(err)
			}
			if err := c.PExpire(ctx, prefix+"ev:{"+id+"}", 10*time.Second).Err(); err != nil {
				t.Fatal(err)
			}
		}, true, 0},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := "touch" + string(rune('a'+i))
			key := prefix + "ev:{" + id + "}"
			tc.setup(t, id)
			if err := s.TouchSession(ctx, id); err != nil {
				t.Fatal(err)
			}
			n, err := c.Exists(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			if (n == 1) != tc.exists {
				t.Fatalf("after the touch the hash exists: %v; want %v", n == 1, tc.exists)
			}
			if !tc.exists {
				return
			}
			left, err := c.PTTL(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			if left < tc.atLeast {
				t.Errorf("after the touch the session expires in %v; want at least %v", left, tc.atLeast)
			}
			if tc.atLeast == 0 && left > time.Minute {
				t.Errorf("a session without a record was renewed: expires in %v", left)
			}
		})
	}
}

// TestListenReportsLoss: a replica's subscription outlives Redis going
// away, and once it receives again it says that messages may have been
// lost (deliver(nil)), before what follows: the handler then re-reads
// the records of the sessions it holds (a "state" or "end" published
// meanwhile is gone).
func TestListenReportsLoss(t *testing.T) {
	ctx := context.Background()
	srv := startThrowaway(t)
	opts := redis.EventStoreOptions{Timeout: time.Second, Heartbeat: 100 * time.Millisecond}
	a, b := redis.NewEventStore(srv.client(), "p:", opts), redis.NewEventStore(srv.client(), "p:", opts)
	got := make(chan []byte, 64)
	stop, err := a.Listen(ctx, func(m []byte) { got <- m })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := b.SendTo(ctx, a.ReplicaID(), []byte("before")); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if string(m) != "before" {
			t.Fatalf("first message %q", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no first message")
	}
	srv.kill()
	srv.start()
	// Send until a message arrives again: those sent before the
	// subscription is back are lost, as the contract allows.
	var seen []string
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; ; n++ {
		if time.Now().After(deadline) {
			t.Fatalf("the subscription did not come back: %q", seen)
		}
		_ = b.SendTo(ctx, "", []byte(fmt.Sprint("after", n)))
		select {
		case m := <-got:
			if m == nil {
				seen = append(seen, "<loss>")
				continue
			}
			seen = append(seen, string(m))
		case <-time.After(200 * time.Millisecond):
			continue
		}
		break
	}
	if len(seen) < 2 || seen[0] != "<loss>" {
		t.Fatalf("after Redis returned: %q, want the loss signal, then the messages", seen)
	}
}
