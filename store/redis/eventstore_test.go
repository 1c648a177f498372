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
