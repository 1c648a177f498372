package redis_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/mcp/eventstore"
	"github.com/mcpstack/mcpstack/store/redis"
)

func seqs(events []eventstore.Event) []int64 {
	var out []int64
	for _, e := range events {
		out = append(out, e.Seq)
	}
	return out
}

func appendN(t *testing.T, s *redis.EventStore, session, stream string, from, to int64, size int) {
	t.Helper()
	for seq := from; seq <= to; seq++ {
		data := []byte(fmt.Sprintf("%0*d", size, seq))
		if err := s.Append(context.Background(), session, stream, seq, data); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEventStore runs the cases of the in-memory store's test (package
// mcp) against the Redis store: the same bounds give the same answers.
func TestEventStore(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	type opts = redis.EventStoreOptions
	tests := []struct {
		name    string
		opts    opts
		fill    func(t *testing.T, s *redis.EventStore)
		session string
		stream  string
		after   int64
		want    []int64 // nil with wantErr false: no events
		wantErr bool
	}{
		{"all events", opts{}, func(t *testing.T, s *redis.EventStore) { appendN(t, s, "a", "1", 1, 5, 4) }, "a", "1", 0, []int64{1, 2, 3, 4, 5}, false},
		{"events after an id", opts{}, func(t *testing.T, s *redis.EventStore) { appendN(t, s, "a", "1", 1, 5, 4) }, "a", "1", 3, []int64{4, 5}, false},
		{"nothing missed", opts{}, func(t *testing.T, s *redis.EventStore) { appendN(t, s, "a", "1", 1, 5, 4) }, "a", "1", 5, nil, false},
		{"an id never sent", opts{}, func(t *testing.T, s *redis.EventStore) { appendN(t, s, "a", "1", 1, 5, 4) }, "a", "1", 6, nil, true},
		{"a negative id", opts{}, func(t *testing.T, s *redis.EventStore) { appendN(t, s, "a", "1", 1, 5, 4) }, "a", "1", -1, nil, true},
		{"unknown stream", opts{}, func(t *testing.T, s *redis.EventStore) { appendN(t, s, "a", "1", 1, 5, 4) }, "a", "2", 0, nil, true},
		{"unknown session", opts{}, func(t *testing.T, s *redis.EventStore) { appendN(t, s, "a", "1", 1, 5, 4) }, "b", "1", 0, nil, true},
		{"streams are separate", opts{}, func(t *testing.T, s *redis.EventStore) {
			appendN(t, s, "a", "1", 1, 3, 4)
			appendN(t, s, "a", "2", 1, 2, 4)
			appendN(t, s, "b", "1", 1, 9, 4)
		}, "a", "1", 1, []int64{2, 3}, false},
		{"ids with braces and colons stay apart", opts{}, func(t *testing.T, s *redis.EventStore) {
			appendN(t, s, "a}:s:x", "1", 1, 3, 4)
			appendN(t, s, "a", "x}:1", 1, 2, 4)
		}, "a}:s:x", "1", 0, []int64{1, 2, 3}, false},
		{"per-stream bound: the rest is kept", opts{MaxEventsPerStream: 3}, func(t *testing.T, s *redis.EventStore) { appendN(t, s, "a", "1", 1, 6, 4) }, "a", "1", 3, []int64{4, 5, 6}, false},
		{"per-stream bound: evicted events are unavailable", opts{MaxEventsPerStream: 3}, func(t *testing.T, s *redis.EventStore) { appendN(t, s, "a", "1", 1, 6, 4) }, "a", "1", 2, nil, true},
		{"per-session bytes: the oldest stream loses first", opts{MaxBytesPerSession: 20}, func(t *testing.T, s *redis.EventStore) {
			appendN(t, s, "a", "old", 1, 3, 4)
			appendN(t, s, "a", "new", 1, 3, 4)
		}, "a", "old", 0, nil, true},
		{"per-session bytes: the newer stream is whole", opts{MaxBytesPerSession: 20}, func(t *testing.T, s *redis.EventStore) {
			appendN(t, s, "a", "old", 1, 3, 4)
			appendN(t, s, "a", "new", 1, 3, 4)
		}, "a", "new", 0, []int64{1, 2, 3}, false},
		{"per-session bytes: what is left of the old stream", opts{MaxBytesPerSession: 20}, func(t *testing.T, s *redis.EventStore) {
			appendN(t, s, "a", "old", 1, 3, 4)
			appendN(t, s, "a", "new", 1, 3, 4)
		}, "a", "old", 1, []int64{2, 3}, false},
		{"per-session bytes: other sessions unaffected", opts{MaxBytesPerSession: 20}, func(t *testing.T, s *redis.EventStore) {
			appendN(t, s, "b", "x", 1, 5, 4)
			appendN(t, s, "a", "x", 1, 4, 4)
			appendN(t, s, "b", "y", 1, 5, 4)
		}, "a", "x", 0, []int64{1, 2, 3, 4}, false},
		{"streams bound: the oldest stream is forgotten", opts{MaxStreamsPerSession: 2}, func(t *testing.T, s *redis.EventStore) {
			appendN(t, s, "a", "1", 1, 1, 4)
			appendN(t, s, "a", "2", 1, 1, 4)
			appendN(t, s, "a", "3", 1, 1, 4)
		}, "a", "1", 0, nil, true},
		{"streams bound: the others stay", opts{MaxStreamsPerSession: 2}, func(t *testing.T, s *redis.EventStore) {
			appendN(t, s, "a", "1", 1, 1, 4)
			appendN(t, s, "a", "2", 1, 1, 4)
			appendN(t, s, "a", "3", 1, 1, 4)
		}, "a", "2", 0, []int64{1}, false},
		{"a stream emptied by eviction still resumes at its end", opts{MaxBytesPerSession: 8}, func(t *testing.T, s *redis.EventStore) {
			appendN(t, s, "a", "old", 1, 2, 4)
			appendN(t, s, "a", "new", 1, 2, 4)
		}, "a", "old", 2, nil, false},
		{"a gap in seq makes the events before it unavailable", opts{}, func(t *testing.T, s *redis.EventStore) {
			appendN(t, s, "a", "1", 1, 2, 4)
			appendN(t, s, "a", "1", 5, 6, 4)
		}, "a", "1", 2, nil, true},
		{"after a gap", opts{}, func(t *testing.T, s *redis.EventStore) {
			appendN(t, s, "a", "1", 1, 2, 4)
			appendN(t, s, "a", "1", 5, 6, 4)
		}, "a", "1", 4, []int64{5, 6}, false},
		{"a first event after 1", opts{}, func(t *testing.T, s *redis.EventStore) { appendN(t, s, "a", "1", 7, 8, 4) }, "a", "1", 6, []int64{7, 8}, false},
		{"deleted session", opts{}, func(t *testing.T, s *redis.EventStore) {
			appendN(t, s, "a", "1", 1, 2, 4)
			appendN(t, s, "a", "2", 1, 2, 4)
			if err := s.DeleteSession(context.Background(), "a"); err != nil {
				t.Fatal(err)
			}
		}, "a", "2", 0, nil, true},
		{"a session started again after deletion", opts{}, func(t *testing.T, s *redis.EventStore) {
			appendN(t, s, "a", "1", 1, 2, 4)
			s.DeleteSession(context.Background(), "a")
			appendN(t, s, "a", "1", 1, 1, 4)
		}, "a", "1", 0, []int64{1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := redis.NewEventStore(c, freshPrefix(t, c), tt.opts)
			tt.fill(t, s)
			got, err := s.After(ctx, tt.session, tt.stream, tt.after)
			if tt.wantErr {
				if !errors.Is(err, eventstore.ErrUnavailable) || errors.Is(err, redis.ErrDown) {
					t.Fatalf("After: %v %v, want eventstore.ErrUnavailable", seqs(got), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(seqs(got)) != fmt.Sprint(tt.want) {
				t.Fatalf("events %v, want %v", seqs(got), tt.want)
			}
			for _, e := range got {
				if string(e.Data) != fmt.Sprintf("%04d", e.Seq) {
					t.Errorf("event %d holds %q", e.Seq, e.Data)
				}
			}
		})
	}
}

func TestEventStoreOrder(t *testing.T) {
	c := newClient(t)
	s := redis.NewEventStore(c, freshPrefix(t, c), redis.EventStoreOptions{})
	appendN(t, s, "a", "1", 1, 3, 1)
	for _, seq := range []int64{3, 2} {
		err := s.Append(context.Background(), "a", "1", seq, []byte("x"))
		if err == nil || errors.Is(err, redis.ErrDown) {
			t.Errorf("event %d after event 3: %v", seq, err)
		}
	}
	if got, err := s.After(context.Background(), "a", "1", 0); err != nil || len(got) != 3 {
		t.Fatalf("the refused events changed the stream: %v %v", seqs(got), err)
	}
}

// TestEventStoreBounded: however many events pass, a session's keys hold
// at most its byte budget and stream bound, the byte count matches the
// events kept, and the keys expire TTL (to TTL + TTL/16) after the last
// append.
func TestEventStoreBounded(t *testing.T) {
	c := newClient(t)
	prefix := freshPrefix(t, c)
	s := redis.NewEventStore(c, prefix, redis.EventStoreOptions{MaxBytesPerSession: 1000, MaxStreamsPerSession: 8, TTL: time.Hour})
	for stream := range 50 {
		appendN(t, s, "a", fmt.Sprint(stream), 1, 40, 10)
	}
	ctx := context.Background()
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var streams, kept int
	for _, k := range keys {
		// Renewed in steps (see appendBatchScript): at least TTL after the
		// last append, at most TTL/16 more.
		if ttl := c.PTTL(ctx, k).Val(); ttl < time.Hour-time.Minute || ttl > time.Hour+time.Hour/16 {
			t.Errorf("key %s expires in %v, want within [TTL, TTL+TTL/16]", k, ttl)
		}
		if !strings.Contains(k, ":s:") {
			continue
		}
		streams++
		for _, e := range c.XRange(ctx, k, "-", "+").Val() {
			kept += len(e.Values["d"].(string))
		}
	}
	if streams > 8 {
		t.Fatalf("%d stream keys, bound 8", streams)
	}
	meta := prefix + "ev:{a}"
	counted, _ := strconv.Atoi(c.HGet(ctx, meta, "bytes").Val())
	if kept > 1000 || counted != kept {
		t.Fatalf("%d bytes kept, %d counted; budget 1000", kept, counted)
	}
	if n := c.HLen(ctx, meta).Val(); n > 3+2*8 {
		t.Fatalf("the session's hash has %d fields: forgotten streams left some", n)
	}
}

// TestEventStoreConcurrent: appends from many goroutines on two stores
// (two replicas) to one Redis, with replays and a session deleted midway.
func TestEventStoreConcurrent(t *testing.T) {
	c := newClient(t)
	prefix := freshPrefix(t, c)
	stores := []*redis.EventStore{
		redis.NewEventStore(c, prefix, redis.EventStoreOptions{MaxEventsPerStream: 50}),
		redis.NewEventStore(newClient(t), prefix, redis.EventStoreOptions{MaxEventsPerStream: 50}),
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			s := stores[g%2]
			session := fmt.Sprint("s", g%3)
			stream := fmt.Sprint(g)
			for seq := int64(1); seq <= 200; seq++ {
				if err := s.Append(context.Background(), session, stream, seq, []byte("x")); err != nil {
					t.Error(err)
					return
				}
				if seq%20 == 0 && session != "s2" {
					if _, err := stores[(g+1)%2].After(context.Background(), session, stream, seq-10); err != nil {
						t.Error(err)
						return
					}
				}
				if g == 7 && seq == 100 {
					s.DeleteSession(context.Background(), "s2")
				}
			}
		})
	}
	wg.Wait()
	for g := range 6 {
		session, stream := fmt.Sprint("s", g%3), fmt.Sprint(g)
		if session == "s2" {
			continue
		}
		got, err := stores[g%2].After(context.Background(), session, stream, 150)
		if err != nil || len(got) != 50 {
			t.Errorf("%s/%s: %d events, %v", session, stream, len(got), err)
		}
	}
}

// TestEventStoreRedisDown: with nothing listening, every call fails with
// ErrDown within the store's timeout, never with ErrEventsUnavailable
// (which would make the handler refuse a resume that may work later).
func TestEventStoreRedisDown(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: closedAddr(t), MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	s := redis.NewEventStore(c, "x:", redis.EventStoreOptions{Timeout: 2 * time.Second})
	ctx := context.Background()
	for name, f := range map[string]func() error{
		"Append":        func() error { return s.Append(ctx, "a", "1", 1, []byte("x")) },
		"After":         func() error { _, err := s.After(ctx, "a", "1", 0); return err },
		"DeleteSession": func() error { return s.DeleteSession(ctx, "a") },
	} {
		start := time.Now()
		err := f()
		if !errors.Is(err, redis.ErrDown) || !errors.Is(err, eventstore.ErrStoreUnavailable) || errors.Is(err, eventstore.ErrUnavailable) {
			t.Errorf("%s: %v, want ErrDown", name, err)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s took %v", name, d)
		}
	}
	// A caller that gives up is told so, not that Redis is down.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Append(cctx, "a", "1", 1, nil); !errors.Is(err, context.Canceled) || errors.Is(err, redis.ErrDown) {
		t.Errorf("Append with an ended context: %v", err)
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
