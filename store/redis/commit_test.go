package redis_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/mcp/eventstore"
	"github.com/mcpstack/mcpstack/mcp/eventstore/eventstoretest"
	"github.com/mcpstack/mcpstack/store/redis"
)

// evalCalls returns how many script calls the Redis at addr has run
// (EVALSHA and EVAL): a throwaway server's, which no other test uses.
func evalCalls(t *testing.T, c *goredis.Client) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.SplitSeq(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
			continue
		}
		v, _, _ := strings.Cut(rest, ",")
		k, _ := strconv.Atoi(v)
		n += k
	}
	return n
}

// ringOf is a client that is not a *goredis.Client (a Ring of one shard,
// on addr): the store then writes a batch as one script call per session,
// pipelined, as it does on a Redis Cluster.
func ringOf(t *testing.T, addr string) goredis.UniversalClient {
	r := goredis.NewRing(&goredis.RingOptions{Addrs: map[string]string{"a": addr}, MaxRetries: -1})
	t.Cleanup(func() { r.Close() })
	return r
}

// appendStreams appends events 1..n to each of streams streams spread over
// sessions sessions, one goroutine per stream, with events of size
// bytes, and fails t on any error.
func appendStreams(t *testing.T, s eventstore.Store, sessions, streams, n, size int) {
	t.Helper()
	var wg sync.WaitGroup
	for g := range streams {
		wg.Go(func() {
			session, stream := fmt.Sprint("s", g%sessions), fmt.Sprint(g)
			for seq := 1; seq <= n; seq++ {
				data := fmt.Appendf(nil, "%0*d", size, seq)
				if err := s.Append(context.Background(), session, stream, int64(seq), data); err != nil {
					t.Errorf("%s/%s event %d: %v", session, stream, seq, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// checkStreams checks that each stream appendStreams wrote holds its
// events 1..n, whole and in order.
func checkStreams(t *testing.T, s eventstore.Store, sessions, streams, n, size int) {
	t.Helper()
	for g := range streams {
		session, stream := fmt.Sprint("s", g%sessions), fmt.Sprint(g)
		got, err := s.After(context.Background(), session, stream, 0)
		if err != nil || len(got) != n {
			t.Fatalf("%s/%s: %d events, %v", session, stream, len(got), err)
		}
		for i, e := range got {
			if e.Seq != int64(i+1) || string(e.Data) != fmt.Sprintf("%0*d", size, e.Seq) {
				t.Fatalf("%s/%s: event %d is %d holding %q", session, stream, i, e.Seq, e.Data)
			}
		}
	}
}

// TestGroupCommit: appends of many streams of several sessions, at once,
// through one store: every stream is whole and in order, and the store
// wrote them in fewer script calls than events (batches formed), within
// the batch bounds; on a single Redis and on a client that spreads keys
// (one call per session per batch, pipelined).
func TestGroupCommit(t *testing.T) {
	srv := startThrowaway(t)
	admin := srv.client()
	const sessions, streams = 5, 16
	tests := []struct {
		name      string
		ring      bool
		opts      redis.EventStoreOptions
		n, size   int
		minCalls  int // at least this many script calls (the batch bound)
		batchable bool
	}{
		{"single Redis", false, redis.EventStoreOptions{}, 100, 4, 0, true},
		{"spread keys", true, redis.EventStoreOptions{}, 100, 4, 0, false},
		{"MaxBatch", false, redis.EventStoreOptions{MaxBatch: 4}, 50, 4, streams * 50 / 4, true},
		{"MaxBatchBytes", false, redis.EventStoreOptions{MaxBatchBytes: 1500}, 20, 1000, streams * 20 / 2, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rdb goredis.UniversalClient = srv.client()
			if tt.ring {
				rdb = ringOf(t, srv.addr)
			}
			s := redis.NewEventStore(rdb, fmt.Sprint("g", i, ":"), tt.opts)
			defer s.Close()
			before := evalCalls(t, admin)
			appendStreams(t, s, sessions, streams, tt.n, tt.size)
			calls := evalCalls(t, admin) - before
			checkStreams(t, s, sessions, streams, tt.n, tt.size)
			events := streams * tt.n
			t.Logf("%d events in %d script calls", events, calls)
			if tt.batchable && calls >= events {
				t.Errorf("%d events took %d script calls: no batch formed", events, calls)
			}
			if calls < tt.minCalls {
				t.Errorf("%d events took %d script calls, fewer than the batch bound allows (%d)", events, calls, tt.minCalls)
			}
		})
	}
}

// TestEventStoreContractSpread runs the contract on a client that is not
// a *goredis.Client, whose batches are one script call per session.
func TestEventStoreContractSpread(t *testing.T) {
	c := newClient(t)
	eventstoretest.Run(t, func(t *testing.T, l eventstoretest.Limits) eventstore.Store {
		s := redis.NewEventStore(ringOf(t, c.Options().Addr), freshPrefix(t, c), redis.EventStoreOptions{MaxEventsPerStream: l.MaxEventsPerStream, MaxBytesPerSession: l.MaxBytesPerSession, MaxStreamsPerSession: l.MaxStreamsPerSession})
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestGroupCommitCancel: a caller whose context ends while its event's
// batch is in flight (Redis frozen) gets its context's error at once,
// not ErrDown after the timeout; the others of the store are unaffected,
// and the stream goes on once Redis answers, whether or not the
// abandoned event was kept.
func TestGroupCommitCancel(t *testing.T) {
	srv := startThrowaway(t)
	s := redis.NewEventStore(srv.client(), "c:", redis.EventStoreOptions{Timeout: time.Minute})
	defer s.Close()
	appendN(t, s, "a", "1", 1, 1, 4)
	srv.signal(syscall.SIGSTOP)
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { first <- s.Append(ctx, "a", "1", 2, []byte("0002")) }()
	time.Sleep(100 * time.Millisecond) // in flight, most likely; queued else
	second := make(chan error, 1)
	go func() { second <- s.Append(context.Background(), "b", "1", 1, []byte("0001")) }()
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) || errors.Is(err, redis.ErrDown) {
		t.Fatalf("Append whose context ended: %v, want context.Canceled", err)
	}
	srv.signal(syscall.SIGCONT)
	if err := <-second; err != nil {
		t.Fatalf("the other Append: %v", err)
	}
	got, err := s.After(context.Background(), "b", "1", 0)
	if err != nil || fmt.Sprint(eventstoretest.Seqs(got)) != "[1]" {
		t.Fatalf("the other stream: %v %v", eventstoretest.Seqs(got), err)
	}
	// The abandoned event 2 was kept or not; event 3 follows either way,
	// and the stream never holds a hole.
	appendN(t, s, "a", "1", 3, 3, 4)
	got, err = s.After(context.Background(), "a", "1", 2)
	if err != nil || fmt.Sprint(eventstoretest.Seqs(got)) != "[3]" {
		t.Fatalf("after the abandoned event: %v %v", eventstoretest.Seqs(got), err)
	}
	if got, err := s.After(context.Background(), "a", "1", 0); err == nil && fmt.Sprint(eventstoretest.Seqs(got)) != "[1 2 3]" {
		t.Fatalf("the stream: %v", eventstoretest.Seqs(got))
	}
}

// TestGroupCommitRedisFrozen: with Redis frozen, every Append ends with
// ErrDown (eventstore.ErrStoreUnavailable) within the bound, those in
// the batch in flight, those queued behind it and those waiting for room
// in a full queue alike; appends work again once Redis answers.
func TestGroupCommitRedisFrozen(t *testing.T) {
	srv := startThrowaway(t)
	const timeout = time.Second
	s := redis.NewEventStore(srv.client(), "f:", redis.EventStoreOptions{Timeout: timeout, MaxQueued: 4, MaxBatch: 2})
	defer s.Close()
	appendN(t, s, "a", "0", 1, 1, 4)
	srv.signal(syscall.SIGSTOP)
	thawed := false
	defer func() {
		if !thawed {
			srv.signal(syscall.SIGCONT)
		}
	}()
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			start := time.Now()
			err := s.Append(context.Background(), fmt.Sprint("s", g), "1", 1, []byte("0001"))
			if !errors.Is(err, redis.ErrDown) || !errors.Is(err, eventstore.ErrStoreUnavailable) {
				t.Errorf("Append %d to a frozen Redis: %v, want ErrDown", g, err)
			}
			// The bound is the timeout; a loaded machine gets ample slack.
			if d := time.Since(start); d > 20*timeout {
				t.Errorf("Append %d took %v with a %v timeout", g, d, timeout)
			}
		})
	}
	wg.Wait()
	srv.signal(syscall.SIGCONT)
	thawed = true
	var err error
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = s.Append(context.Background(), "a", "0", 2, []byte("0002")); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("Append after the thaw: %v", err)
	}
}

// TestGroupCommitClose: Close ends the appends waiting in the queue
// (Redis frozen) and every later one with an error, never a hang.
func TestGroupCommitClose(t *testing.T) {
	srv := startThrowaway(t)
	s := redis.NewEventStore(srv.client(), "x:", redis.EventStoreOptions{Timeout: 2 * time.Second})
	appendN(t, s, "a", "1", 1, 1, 4)
	srv.signal(syscall.SIGSTOP)
	errs := make(chan error, 8)
	for g := range 8 {
		go func() { errs <- s.Append(context.Background(), fmt.Sprint("s", g), "1", 1, []byte("x")) }()
	}
	time.Sleep(100 * time.Millisecond)
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	for range 8 {
		if err := <-errs; !errors.Is(err, redis.ErrClosed) && !errors.Is(err, redis.ErrDown) {
			t.Errorf("Append pending at Close: %v", err)
		}
	}
	srv.signal(syscall.SIGCONT)
	<-closed
	if err := s.Append(context.Background(), "a", "1", 2, []byte("x")); !errors.Is(err, redis.ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
}

// TestGroupCommitScriptFlushed: a Redis that lost the script (SCRIPT
// FLUSH, a restart) gets it again, on both ways of writing a batch, and
// no event is lost or written twice.
func TestGroupCommitScriptFlushed(t *testing.T) {
	srv := startThrowaway(t)
	admin := srv.client()
	for _, ring := range []bool{false, true} {
		var rdb goredis.UniversalClient = srv.client()
		if ring {
			rdb = ringOf(t, srv.addr)
		}
		s := redis.NewEventStore(rdb, fmt.Sprint("n", ring, ":"), redis.EventStoreOptions{})
		appendStreams(t, s, 2, 4, 1, 4)
		if err := admin.ScriptFlush(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		for seq := int64(2); seq <= 3; seq++ {
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					if err := s.Append(context.Background(), fmt.Sprint("s", g%2), fmt.Sprint(g), seq, fmt.Appendf(nil, "%04d", seq)); err != nil {
						t.Errorf("ring %v: append after SCRIPT FLUSH: %v", ring, err)
					}
				})
			}
			wg.Wait()
		}
		checkStreams(t, s, 2, 4, 3, 4)
		s.Close()
	}
}
