package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// fakeClock is a settable clock for expiry tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func ms(n int64) *int64 { return &n }

func TestMemoryTaskStoreLifecycle(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2025, 11, 25, 12, 0, 0, 0, time.UTC)}
	s := NewMemoryTaskStore(&MemoryTaskStoreOptions{Now: clock.Now, DefaultTTL: time.Minute, MaxTTL: time.Hour, PollInterval: 250 * time.Millisecond})
	task, err := s.Create(ctx, "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Validate(); err != nil {
		t.Fatal(err)
	}
	if task.Status != TaskStatusWorking || *task.TTL != 60000 || *task.PollInterval != 250 || task.CreatedAt != "2025-11-25T12:00:00.000Z" {
		t.Errorf("new task = %+v", task)
	}
	if len(task.TaskID) < 20 {
		t.Errorf("task id %q is too short to be unguessable", task.TaskID)
	}
	if _, err := s.Get(ctx, "bob", task.TaskID); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("another owner's Get = %v, want ErrTaskNotFound", err)
	}
	clock.Add(time.Second)
	got, err := s.SetStatus(ctx, "alice", task.TaskID, TaskStatusInputRequired, "need a name")
	if err != nil || got.Status != TaskStatusInputRequired || got.LastUpdatedAt != "2025-11-25T12:00:01.000Z" || got.CreatedAt != task.CreatedAt {
		t.Fatalf("SetStatus = %+v, %v", got, err)
	}
	if out, err := s.Outcome(ctx, "alice", task.TaskID); out != nil || err != nil {
		t.Errorf("outcome of a running task = %v, %v", out, err)
	}
	if _, err := s.Finish(ctx, "bob", task.TaskID, TaskStatusCompleted, "", TaskOutcome{}); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("another owner's Finish = %v", err)
	}
	res := json.RawMessage(`{"content":[]}`)
	if _, err := s.Finish(ctx, "alice", task.TaskID, TaskStatusCompleted, "", TaskOutcome{Result: res}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []func() error{
		func() error {
			_, err := s.Finish(ctx, "alice", task.TaskID, TaskStatusCancelled, "", TaskOutcome{})
			return err
		},
		func() error {
			_, err := s.SetStatus(ctx, "alice", task.TaskID, TaskStatusWorking, "")
			return err
		},
	} {
		if err := f(); !errors.Is(err, ErrTaskTerminal) {
			t.Errorf("changing a terminal task = %v, want ErrTaskTerminal", err)
		}
	}
	if out, err := s.Outcome(ctx, "alice", task.TaskID); err != nil || string(out.Result) != string(res) {
		t.Errorf("outcome = %+v, %v", out, err)
	}
	if w, err := s.Wait(ctx, "alice", task.TaskID); err != nil || w.Status != TaskStatusCompleted {
		t.Errorf("Wait on a finished task = %+v, %v", w, err)
	}
	// The TTL runs from creation.
	clock.Add(59 * time.Second)
	if _, err := s.Get(ctx, "alice", task.TaskID); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("expired task: %v, want ErrTaskNotFound", err)
	}
}

func TestMemoryTaskStoreTTL(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryTaskStore(&MemoryTaskStoreOptions{DefaultTTL: 2 * time.Hour, MaxTTL: time.Hour})
	tests := []struct {
		ask  *int64
		want int64
	}{
		{nil, 3600000},         // the default, capped by the maximum
		{ms(5000), 5000},       // as asked
		{ms(0), 0},             // as asked: gone at once after creation
		{ms(1 << 40), 3600000}, // capped
	}
	for _, tt := range tests {
		task, err := s.Create(ctx, "o", tt.ask)
		if err != nil {
			t.Fatal(err)
		}
		if *task.TTL != tt.want {
			t.Errorf("ttl asked %v: got %d, want %d", tt.ask, *task.TTL, tt.want)
		}
	}
}

func TestMemoryTaskStoreBounds(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryTaskStore(&MemoryTaskStoreOptions{MaxTasks: 3, MaxActivePerOwner: 2})
	a1, _ := s.Create(ctx, "a", nil)
	if _, err := s.Create(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "a", nil); !errors.Is(err, ErrTooManyTasks) {
		t.Fatalf("third active task of one owner: %v, want ErrTooManyTasks", err)
	}
	if _, err := s.Create(ctx, "b", nil); err != nil {
		t.Fatal(err)
	}
	// The store is full of running tasks.
	if _, err := s.Create(ctx, "c", nil); !errors.Is(err, ErrTooManyTasks) {
		t.Fatalf("full store: %v, want ErrTooManyTasks", err)
	}
	// A finished task makes room: it is evicted.
	s.Finish(ctx, "a", a1.TaskID, TaskStatusFailed, "boom", TaskOutcome{Error: jsonrpc.ErrInternal})
	if _, err := s.Create(ctx, "c", nil); err != nil {
		t.Fatalf("after a task finished: %v", err)
	}
	if _, err := s.Get(ctx, "a", a1.TaskID); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("the oldest finished task was not evicted: %v", err)
	}
}

func TestMemoryTaskStoreList(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryTaskStore(&MemoryTaskStoreOptions{PageSize: 2, MaxActivePerOwner: 10})
	var mine []string
	for i := range 5 {
		a, _ := s.Create(ctx, "a", nil)
		mine = append(mine, a.TaskID)
		if i%2 == 0 {
			s.Create(ctx, "b", nil)
		}
	}
	var got []string
	cursor := ""
	pages := 0
	for {
		page, next, err := s.List(ctx, "a", cursor)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, task := range page {
			got = append(got, task.TaskID)
		}
		if next == "" {
			break
		}
		// Deleting the task a cursor points after does not break it.
		if pages == 1 {
			s.Finish(ctx, "a", mine[1], TaskStatusCancelled, "", TaskOutcome{})
		}
		cursor = next
	}
	if pages != 3 || len(got) != 5 {
		t.Fatalf("%d pages, tasks %v; want 3 pages of a's 5 tasks", pages, got)
	}
	for i := range mine {
		if got[i] != mine[i] {
			t.Errorf("order: got %v, want %v", got, mine)
			break
		}
	}
	for _, c := range []string{"x", "AAAAAAAAAAA", "////", "AQAAAAAAAAA"} {
		if _, _, err := s.List(ctx, "a", c); !errors.Is(err, ErrInvalidCursor) {
			t.Errorf("cursor %q: %v, want ErrInvalidCursor", c, err)
		}
	}
}

func TestMemoryTaskStoreWait(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryTaskStore(nil)
	task, _ := s.Create(ctx, "a", nil)
	got := make(chan *Task, 1)
	go func() {
		w, err := s.Wait(ctx, "a", task.TaskID)
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	s.SetStatus(ctx, "a", task.TaskID, TaskStatusInputRequired, "")
	s.Finish(ctx, "a", task.TaskID, TaskStatusCompleted, "", TaskOutcome{Result: json.RawMessage(`{}`)})
	if w := <-got; w == nil || w.Status != TaskStatusCompleted {
		t.Errorf("Wait = %+v", w)
	}
	cctx, cancel := context.WithCancel(ctx)
	other, _ := s.Create(ctx, "a", nil)
	cancel()
	if _, err := s.Wait(cctx, "a", other.TaskID); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with an ended context = %v", err)
	}
	if _, err := s.Wait(ctx, "b", other.TaskID); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("Wait on another owner's task = %v", err)
	}
}
