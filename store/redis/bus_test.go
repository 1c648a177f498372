package redis_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/mcp/eventstore"
	"github.com/mcpstack/mcpstack/store/redis"
)

// received collects what a subscription delivers; "" is the loss signal.
type received struct {
	mu   sync.Mutex
	msgs []string
	more chan struct{}
}

func newReceived() *received { return &received{more: make(chan struct{}, 1)} }

func (r *received) deliver(m []byte) {
	r.mu.Lock()
	if m == nil {
		r.msgs = append(r.msgs, "")
	} else {
		r.msgs = append(r.msgs, string(m))
	}
	r.mu.Unlock()
	select {
	case r.more <- struct{}{}:
	default:
	}
}

func (r *received) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

// waitFor returns the messages once ok holds for them, or fails after a
// generous bound.
func (r *received) waitFor(t *testing.T, what string, ok func([]string) bool) []string {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		got := r.snapshot()
		if ok(got) {
			return got
		}
		select {
		case <-r.more:
		case <-deadline:
			t.Fatalf("waiting for %s, got %q", what, got)
		}
	}
}

func count(n int) func([]string) bool { return func(m []string) bool { return len(m) >= n } }

// TestBus: two replicas (two clients) on one Redis and prefix: each
// subscription, the publisher's included, gets each message once and in
// order; another prefix hears nothing; messages over the bound are
// refused; stop ends delivery.
func TestBus(t *testing.T) {
	ctx := context.Background()
	c1, c2 := newClient(t), newClient(t)
	prefix := freshPrefix(t, c1)
	buses := []*redis.Bus{redis.NewBus(c1, prefix, redis.BusOptions{MaxMessageBytes: 100}), redis.NewBus(c2, prefix, redis.BusOptions{MaxMessageBytes: 100})}
	other := redis.NewBus(c1, prefix+"other:", redis.BusOptions{})
	var recs []*received
	for _, b := range append(buses, buses[0]) {
		r := newReceived()
		stop, err := b.Subscribe(ctx, r.deliver)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		recs = append(recs, r)
	}
	elsewhere := newReceived()
	stopOther, err := other.Subscribe(ctx, elsewhere.deliver)
	if err != nil {
		t.Fatal(err)
	}
	defer stopOther()

	var want []string
	for i := range 20 {
		m := fmt.Sprintf("m%d", i)
		want = append(want, m)
		if err := buses[i%2].Publish(ctx, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	// Messages of one publisher arrive in order; all arrive once.
	for i, r := range recs {
		r.waitFor(t, "20 messages", count(20))
		time.Sleep(100 * time.Millisecond) // a duplicate would show now
		got := r.snapshot()
		if len(got) != 20 {
			t.Fatalf("subscription %d got %d messages: %q", i, len(got), got)
		}
		for pub := range 2 {
			var mine, wantMine []string
			for _, m := range got {
				var n int
				fmt.Sscanf(m, "m%d", &n)
				if n%2 == pub {
					mine = append(mine, m)
				}
			}
			for j := pub; j < 20; j += 2 {
				wantMine = append(wantMine, want[j])
			}
			if strings.Join(mine, ",") != strings.Join(wantMine, ",") {
				t.Errorf("subscription %d, publisher %d: %q, want %q", i, pub, mine, wantMine)
			}
		}
	}
	if got := elsewhere.snapshot(); len(got) != 0 {
		t.Errorf("a bus with another prefix got %q", got)
	}
	if err := buses[0].Publish(ctx, make([]byte, 101)); !errors.Is(err, redis.ErrMessageTooLarge) {
		t.Errorf("a message over the bound: %v", err)
	}
	// A subscription drops an oversized message someone else published.
	if err := c1.Publish(ctx, prefix+"changes", strings.Repeat("x", 101)).Err(); err != nil {
		t.Fatal(err)
	}
	buses[1].Publish(ctx, []byte("last"))
	got := recs[0].waitFor(t, "the last message", count(21))
	if got[20] != "last" {
		t.Errorf("after an oversized message: %q", got[20:])
	}
}

// TestBusRedisDown: with nothing listening, Publish and Subscribe fail
// with ErrDown within the timeout.
func TestBusRedisDown(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: closedAddr(t), MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	b := redis.NewBus(c, "x:", redis.BusOptions{Timeout: 2 * time.Second})
	start := time.Now()
	if err := b.Publish(context.Background(), []byte("x")); !errors.Is(err, redis.ErrDown) {
		t.Errorf("Publish: %v, want ErrDown", err)
	}
	if _, err := b.Subscribe(context.Background(), func([]byte) {}); !errors.Is(err, redis.ErrDown) {
		t.Errorf("Subscribe: %v, want ErrDown", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
}

// throwaway is a redis-server of the test's own, on a port of its own,
// that the test may stop, freeze and restart (the shared one is never
// touched).
type throwaway struct {
	t    *testing.T
	addr string
	cmd  *exec.Cmd
}

func startThrowaway(t *testing.T) *throwaway {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("no redis-server")
	}
	newClient(t) // skips unless the services are configured
	r := &throwaway{t: t, addr: closedAddr(t)}
	r.start()
	t.Cleanup(func() {
		if r.cmd != nil {
			r.cmd.Process.Signal(syscall.SIGCONT)
			r.cmd.Process.Kill()
			r.cmd.Wait()
		}
	})
	return r
}

func (r *throwaway) start() {
	r.t.Helper()
	_, port, _ := net.SplitHostPort(r.addr)
	r.cmd = exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", r.t.TempDir())
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	c := goredis.NewClient(&goredis.Options{Addr: r.addr})
	defer c.Close()
	for i := 0; ; i++ {
		if c.Ping(context.Background()).Err() == nil {
			return
		}
		if i > 200 {
			r.t.Fatalf("redis-server on %s does not answer", r.addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill ends the server at once (SIGKILL).
func (r *throwaway) kill() {
	r.cmd.Process.Kill()
	r.cmd.Wait()
	r.cmd = nil
}

func (r *throwaway) signal(s syscall.Signal) {
	if err := r.cmd.Process.Signal(s); err != nil {
		r.t.Fatal(err)
	}
}

func (r *throwaway) client() *goredis.Client {
	c := goredis.NewClient(&goredis.Options{Addr: r.addr, MaxRetries: -1, ContextTimeoutEnabled: true,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
	r.t.Cleanup(func() { c.Close() })
	return c
}

// TestBusRedisReturns: a subscription outlives Redis going away: while it
// is down (killed, or frozen) publishing fails with ErrDown within the
// timeout; once it is back, the subscription reports the loss with
// deliver(nil) and delivers what is published from then on.
func TestBusRedisReturns(t *testing.T) {
	ctx := context.Background()
	srv := startThrowaway(t)
	opts := redis.BusOptions{Timeout: time.Second, HealthCheck: 500 * time.Millisecond, RetryInterval: 100 * time.Millisecond}
	pub := redis.NewBus(srv.client(), "p:", opts)
	sub := redis.NewBus(srv.client(), "p:", opts)
	r := newReceived()
	stop, err := sub.Subscribe(ctx, r.deliver)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := pub.Publish(ctx, []byte("before")); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "the first message", count(1))

	srv.kill()
	start := time.Now()
	if err := pub.Publish(ctx, []byte("while down")); !errors.Is(err, redis.ErrDown) {
		t.Fatalf("Publish while Redis is down: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Publish took %v with a 1s timeout", d)
	}
	srv.start()
	// Publish until the subscription is back: each attempt before it
	// resubscribed is lost, as the contract allows.
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; ; n++ {
		if time.Now().After(deadline) {
			t.Fatalf("the subscription did not come back: %q", r.snapshot())
		}
		pub.Publish(ctx, []byte(fmt.Sprint("after", n)))
		got := r.snapshot()
		if len(got) >= 3 && strings.HasPrefix(got[len(got)-1], "after") {
			if got[0] != "before" || got[1] != "" {
				t.Fatalf("after Redis returned: %q, want before, the loss signal, then the new messages", got)
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Frozen: publishing times out with ErrDown; thawed, it works again.
	srv.signal(syscall.SIGSTOP)
	start = time.Now()
	if err := pub.Publish(ctx, []byte("frozen")); !errors.Is(err, redis.ErrDown) {
		t.Errorf("Publish to a frozen Redis: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Publish to a frozen Redis took %v with a 1s timeout", d)
	}
	srv.signal(syscall.SIGCONT)
	n := len(r.snapshot())
	deadline = time.Now().Add(60 * time.Second)
	for {
		if err := pub.Publish(ctx, []byte("thawed")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Publish does not work after Redis thawed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.waitFor(t, "a message after the thaw", func(m []string) bool { return len(m) > n && m[len(m)-1] == "thawed" })
}

// TestEventStoreRedisReturns: the event store through a frozen and a
// restarted Redis: calls fail with ErrDown within the timeout, events kept
// before a freeze are all there after it, and appends work again once
// Redis is back.
func TestEventStoreRedisReturns(t *testing.T) {
	ctx := context.Background()
	srv := startThrowaway(t)
	s := redis.NewEventStore(srv.client(), "e:", redis.EventStoreOptions{Timeout: time.Second})
	appendN(t, s, "a", "1", 1, 3, 4)
	srv.signal(syscall.SIGSTOP)
	start := time.Now()
	if err := s.Append(ctx, "a", "1", 4, []byte("0004")); !errors.Is(err, redis.ErrDown) {
		t.Errorf("Append to a frozen Redis: %v", err)
	}
	if _, err := s.After(ctx, "a", "1", 0); !errors.Is(err, redis.ErrDown) {
		t.Errorf("After on a frozen Redis: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("two calls took %v with a 1s timeout", d)
	}
	srv.signal(syscall.SIGCONT)
	var got []eventstore.Event
	var err error
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got, err = s.After(ctx, "a", "1", 0); err == nil {
			break
		}
	}
	// The append that timed out may or may not have been carried out
	// (Redis ran it once thawed): either way the stream is whole.
	if err != nil || len(got) < 3 || got[0].Seq != 1 || got[len(got)-1].Seq != int64(len(got)) {
		t.Fatalf("after the thaw: %v %v", seqs(got), err)
	}
	if err := s.Append(ctx, "a", "1", 5, []byte("0005")); err != nil {
		t.Fatalf("Append after the thaw: %v", err)
	}
	srv.kill()
	if err := s.Append(ctx, "a", "1", 6, []byte("0006")); !errors.Is(err, redis.ErrDown) {
		t.Errorf("Append to a killed Redis: %v", err)
	}
	srv.start()
	// A Redis without persistence came back empty: the stream is gone,
	// which After reports as unavailable, not as Redis being down; new
	// events are kept again.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, err = s.After(ctx, "a", "1", 0)
		if !errors.Is(err, redis.ErrDown) || time.Now().After(deadline) {
			break
		}
	}
	if !errors.Is(err, eventstore.ErrUnavailable) {
		t.Fatalf("After on the restarted Redis: %v", err)
	}
	appendN(t, s, "a", "1", 7, 8, 4)
	if got, err := s.After(ctx, "a", "1", 6); err != nil || fmt.Sprint(seqs(got)) != "[7 8]" {
		t.Fatalf("after the restart: %v %v", seqs(got), err)
	}
}
