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
	"github.com/mcpstack/mcpstack/mcp/eventstore/eventstoretest"
	"github.com/mcpstack/mcpstack/store/redis"
)

// TestEventStoreContract runs the event stores' contract (the cases the
// in-memory store answers too) against the Redis store.
func TestEventStoreContract(t *testing.T) {
	newClient(t)
	eventstoretest.Run(t, func(t *testing.T, l eventstoretest.Limits) eventstore.Store {
		c := newClient(t)
		s := redis.NewEventStore(c, freshPrefix(t, c), redis.EventStoreOptions{MaxEventsPerStream: l.MaxEventsPerStream, MaxBytesPerSession: l.MaxBytesPerSession, MaxStreamsPerSession: l.MaxStreamsPerSession})
		t.Cleanup(func() { s.Close() })
		return s
	})
}

var (
	appendN = eventstoretest.AppendN
	seqs    = eventstoretest.Seqs
)

// TestEventStoreBounded: however many events pass, a session's hash
// holds at most its byte budget and stream bound, the byte counts match
// the events kept, nothing of a forgotten stream is left, and the hash
// (the session's one key) expires TTL (to TTL + TTL/16) after the last
// append.
func TestEventStoreBounded(t *testing.T) {
	c := newClient(t)
	prefix := freshPrefix(t, c)
	s := redis.NewEventStore(c, prefix, redis.EventStoreOptions{MaxBytesPerSession: 1000, MaxStreamsPerSession: 8, MaxEventsPerStream: 30, TTL: time.Hour})
	defer s.Close()
	for stream := range 50 {
		appendN(t, s, "a", fmt.Sprint(stream), 1, 40, 10)
	}
	ctx := context.Background()
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	key := prefix + "ev:{a}"
	if len(keys) != 1 || keys[0] != key {
		t.Fatalf("keys %v, want the session's one hash", keys)
	}
	// Renewed in steps (see appendBatchScript): at least TTL after the
	// last append, at most TTL/16 more.
	if ttl := c.PTTL(ctx, key).Val(); ttl < time.Hour-time.Minute || ttl > time.Hour+time.Hour/16 {
		t.Errorf("the hash expires in %v, want within [TTL, TTL+TTL/16]", ttl)
	}
	fields := c.HGetAll(ctx, key).Val()
	kept, perStream, events := 0, map[string]int{}, map[string]int{}
	for f, v := range fields {
		rest, ok := strings.CutPrefix(f, "e:")
		if !ok {
			continue
		}
		stream := rest[:strings.LastIndexByte(rest, ':')]
		kept += len(v)
		perStream[stream] += len(v)
		events[stream]++
	}
	if len(perStream) > 8 {
		t.Fatalf("events of %d streams kept, bound 8", len(perStream))
	}
	counted, _ := strconv.Atoi(fields["bytes"])
	if kept > 1000 || counted != kept {
		t.Fatalf("%d bytes kept, %d counted; budget 1000", kept, counted)
	}
	for stream, n := range perStream {
		if b, _ := strconv.Atoi(fields["b:"+stream]); b != n {
			t.Errorf("stream %s: %d bytes kept, %d counted", stream, n, b)
		}
		if events[stream] > 30 {
			t.Errorf("stream %s: %d events kept, bound 30", stream, events[stream])
		}
	}
	// Per remembered stream: l:, f:, b:, o:N; then n, lo, old, bytes, x.
	if n := len(fields) - sumOf(events); n > 5+4*8 {
		t.Fatalf("the session's hash has %d fields beside events: forgotten streams left some", n)
	}
}

func sumOf(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
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
