package redis_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/mcp/taskstore"
	"github.com/mcpstack/mcpstack/mcp/taskstore/taskstoretest"
	"github.com/mcpstack/mcpstack/store/redis"
)

// TestTaskStoreContract runs the taskstore contract on two replicas: two
// stores, each with its own client, on one Redis and prefix.
func TestTaskStoreContract(t *testing.T) {
	taskstoretest.Run(t, func(t *testing.T, opts taskstore.Options) (taskstore.Store, taskstore.Store) {
		c := newClient(t)
		prefix := freshPrefix(t, c)
		a := redis.NewTaskStore(c, prefix, redis.TaskStoreOptions{Options: opts})
		b := redis.NewTaskStore(newClient(t), prefix, redis.TaskStoreOptions{Options: opts})
		t.Cleanup(func() { a.Close(); b.Close() })
		return a, b
	})
}

// TestTaskStoreLapse: the tasks of a replica that stops renewing its
// lease are failed with LapsedMessage at their next access from another
// replica, and stay failed (the replica's late Finish is refused); Wait
// on another replica returns; the tasks of a live replica stay working
// past the lease.
func TestTaskStoreLapse(t *testing.T) {
	c := newClient(t)
	prefix := freshPrefix(t, c)
	const lease = 3 * time.Second
	opts := redis.TaskStoreOptions{Lease: lease, Options: taskstore.Options{PollInterval: 100 * time.Millisecond}}
	runner := redis.NewTaskStore(c, prefix, opts)
	live := redis.NewTaskStore(newClient(t), prefix, opts)
	other := redis.NewTaskStore(newClient(t), prefix, opts)
	t.Cleanup(func() { runner.Close(); live.Close(); other.Close() })
	ctx := t.Context()

	kept, err := live.Create(ctx, "o", nil)
	if err != nil {
		t.Fatal(err)
	}
	doomed, err := runner.Create(ctx, "o", nil)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan taskstore.Record, 1)
	go func() {
		r, err := other.Wait(ctx, "o", doomed.ID)
		if err != nil {
			t.Error(err)
		}
		waited <- r
	}()
	time.Sleep(lease + lease/2) // renewals every lease/3 keep both alive
	for _, id := range []string{kept.ID, doomed.ID} {
		if r, err := other.Get(ctx, "o", id); err != nil || r.Status != taskstore.Working {
			t.Fatalf("a task of a live replica after more than its lease: %+v, %v", r, err)
		}
	}
	// The replica dies: its liveness key goes (Close deletes it, as its
	// expiry would).
	if err := runner.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := other.Get(ctx, "o", doomed.ID)
	if err != nil || r.Status != taskstore.Failed || r.Message != redis.LapsedMessage {
		t.Fatalf("Get after the runner's lease lapsed = %+v, %v", r, err)
	}
	select {
	case w := <-waited:
		if w.Status != taskstore.Failed {
			t.Fatalf("Wait = %+v", w)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Wait did not return")
	}
	if _, err := runner.Finish(ctx, "o", doomed.ID, taskstore.Completed, "", json.RawMessage(`{}`)); !errors.Is(err, taskstore.ErrTerminal) {
		t.Fatalf("the dead replica's late Finish = %v, want ErrTerminal", err)
	}
	if out, err := other.Outcome(ctx, "o", doomed.ID); out != nil || err != nil {
		t.Fatalf("outcome of a lapsed task = %s, %v (the adapter reports the message)", out, err)
	}
	if r, err := other.Get(ctx, "o", kept.ID); err != nil || r.Status != taskstore.Working {
		t.Fatalf("the live replica's task: %+v, %v", r, err)
	}
}

// TestTaskStoreDown: a store whose Redis does not answer fails within its
// timeout with an error that wraps ErrDown.
func TestTaskStoreDown(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: closedAddr(t), MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	s := redis.NewTaskStore(c, "x:", redis.TaskStoreOptions{Timeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := s.Get(context.Background(), "o", "id")
	if !errors.Is(err, redis.ErrDown) {
		t.Fatalf("Get with Redis down = %v, want ErrDown", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Get took %v", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := s.Wait(ctx, "o", "id"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with Redis down = %v, want its context's end", err)
	}
}

// FuzzTaskIDs: task ids come from requests (tasks/get, tasks/update,
// tasks/cancel), so they are untrusted: whatever they hold, they reach
// no task but one of the caller's, and fail only with ErrNotFound.
func FuzzTaskIDs(f *testing.F) {
	c := newClient(f)
	prefix := freshPrefix(f, c)
	s := redis.NewTaskStore(c, prefix, redis.TaskStoreOptions{})
	f.Cleanup(func() { s.Close() })
	victim, err := s.Create(context.Background(), "victim", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(victim.ID)
	f.Add("")
	f.Add("../" + victim.ID)
	f.Add(victim.ID + "\x00")
	f.Add("seq")
	f.Fuzz(func(t *testing.T, id string) {
		ctx := context.Background()
		if _, err := s.Get(ctx, "attacker", id); !errors.Is(err, taskstore.ErrNotFound) {
			t.Fatalf("Get(%q) = %v", id, err)
		}
		if _, err := s.Finish(ctx, "attacker", id, taskstore.Cancelled, "", nil); !errors.Is(err, taskstore.ErrNotFound) {
			t.Fatalf("Finish(%q) = %v", id, err)
		}
		if err := s.ProvideInput(ctx, "attacker", id, map[string]json.RawMessage{id: json.RawMessage(`{}`)}); !errors.Is(err, taskstore.ErrNotFound) {
			t.Fatalf("ProvideInput(%q) = %v", id, err)
		}
		if r, err := s.Get(ctx, "victim", victim.ID); err != nil || r.Status != taskstore.Working {
			t.Fatalf("the victim's task: %+v, %v", r, err)
		}
	})
}

// BenchmarkTaskStore measures the calls a task's life makes against a
// real Redis: Create and Finish (the runner), Get (every tasks/get).
func BenchmarkTaskStore(b *testing.B) {
	c := newClient(b)
	prefix := freshPrefix(b, c)
	s := redis.NewTaskStore(c, prefix, redis.TaskStoreOptions{Options: taskstore.Options{MaxTasks: 1 << 20, MaxActivePerOwner: 1 << 20}})
	b.Cleanup(func() { s.Close() })
	ctx := context.Background()
	r, err := s.Create(ctx, "o", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Get", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Get(ctx, "o", r.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("CreateFinish", func(b *testing.B) {
		for b.Loop() {
			r, err := s.Create(ctx, "o", nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Finish(ctx, "o", r.ID, taskstore.Completed, "", json.RawMessage(`{"result":{}}`)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
