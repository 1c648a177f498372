package mcp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// Errors of a TaskStore. The task middleware answers ErrTaskNotFound,
// ErrTaskTerminal and ErrInvalidCursor with -32602, and ErrTooManyTasks
// with -32603.
var (
	// ErrTaskNotFound: no such task for this owner (it may have expired,
	// or belong to someone else).
	ErrTaskNotFound = errors.New("mcp: task not found")
	// ErrTaskTerminal: the task already reached a terminal status, which
	// never changes.
	ErrTaskTerminal = errors.New("mcp: task is already in a terminal status")
	// ErrInvalidCursor: a tasks/list cursor the store did not issue.
	ErrInvalidCursor = errors.New("mcp: invalid cursor")
	// ErrTooManyTasks: the store or the owner is at its limit of tasks.
	ErrTooManyTasks = errors.New("mcp: too many tasks")
)

// TaskOutcome is what a task-augmented request produced: the result it
// would have returned (a JSON object), or its JSON-RPC error.
type TaskOutcome struct {
	Result json.RawMessage
	Error  *jsonrpc.Error
}

// A TaskStore keeps the tasks of a receiver and their outcomes. Every
// method is scoped to an owner: a task of another owner is reported as
// ErrTaskNotFound. Implementations must be safe for concurrent use.
type TaskStore interface {
	// Create stores a new task in status working for owner and returns
	// it. ttl is the retention the requestor asked for, in milliseconds
	// (nil: none asked); the store may shorten it and reports what it
	// chose in Task.TTL.
	Create(ctx context.Context, owner string, ttl *int64) (*Task, error)
	// Get returns the task.
	Get(ctx context.Context, owner, id string) (*Task, error)
	// SetStatus moves a non-terminal task to working or input_required;
	// it fails with ErrTaskTerminal for a terminal task.
	SetStatus(ctx context.Context, owner, id string, status TaskStatus, message string) (*Task, error)
	// Finish moves a non-terminal task to a terminal status and stores its
	// outcome; it fails with ErrTaskTerminal for a terminal task.
	Finish(ctx context.Context, owner, id string, status TaskStatus, message string, out TaskOutcome) (*Task, error)
	// Outcome returns the outcome stored by Finish; a task that is not
	// terminal has none yet (nil, nil).
	Outcome(ctx context.Context, owner, id string) (*TaskOutcome, error)
	// Wait blocks until the task is terminal and returns it, or until ctx
	// ends, or the task is deleted (ErrTaskNotFound).
	Wait(ctx context.Context, owner, id string) (*Task, error)
	// List returns a page of the owner's tasks, oldest first, starting at
	// cursor (empty for the first page), and the cursor of the next page
	// (empty on the last).
	List(ctx context.Context, owner, cursor string) (tasks []Task, next string, err error)
}

// MemoryTaskStoreOptions configure a MemoryTaskStore. The zero value is
// usable.
type MemoryTaskStoreOptions struct {
	// DefaultTTL is the retention of a task whose requestor asked for
	// none; zero means one hour.
	DefaultTTL time.Duration
	// MaxTTL caps the retention a requestor may ask for; zero means 24
	// hours. Tasks are never kept without limit: Task.TTL is never null.
	MaxTTL time.Duration
	// MaxTasks bounds the tasks kept in all; zero means 10000. When it is
	// reached, expired tasks go first, then the oldest finished ones; if
	// every task is still running, Create fails with ErrTooManyTasks.
	MaxTasks int
	// MaxActivePerOwner bounds the unfinished tasks of one owner; zero
	// means 100. Beyond it Create fails with ErrTooManyTasks.
	MaxActivePerOwner int
	// PageSize is the number of tasks per List page; zero means 100.
	PageSize int
	// PollInterval is the tasks/get interval suggested to requestors;
	// zero means one second.
	PollInterval time.Duration
	// Now returns the current time; nil means time.Now. Tests use it to
	// expire tasks without waiting.
	Now func() time.Time
}

// MemoryTaskStore is a TaskStore in memory, for one process. Task ids are
// 128-bit random values, so that they cannot be guessed even when tasks
// are bound to nothing stronger than a session. A task is deleted once
// its TTL has passed since its creation (checked on every access),
// finished or not. Its zero value is not usable: call NewMemoryTaskStore.
type MemoryTaskStore struct {
	opts MemoryTaskStoreOptions

	mu    sync.Mutex
	tasks map[string]*memTask // by id
	seq   uint64
}

type memTask struct {
	owner   string
	seq     uint64
	task    Task
	expires time.Time
	out     *TaskOutcome
	done    chan struct{} // closed when terminal or deleted
	in      *memInput     // the extension's input exchange; nil until used
}

// NewMemoryTaskStore returns an empty store.
func NewMemoryTaskStore(opts *MemoryTaskStoreOptions) *MemoryTaskStore {
	s := &MemoryTaskStore{tasks: make(map[string]*memTask)}
	if opts != nil {
		s.opts = *opts
	}
	o := &s.opts
	if o.DefaultTTL <= 0 {
		o.DefaultTTL = time.Hour
	}
	if o.MaxTTL <= 0 {
		o.MaxTTL = 24 * time.Hour
	}
	if o.DefaultTTL > o.MaxTTL {
		o.DefaultTTL = o.MaxTTL
	}
	if o.MaxTasks <= 0 {
		o.MaxTasks = 10000
	}
	if o.MaxActivePerOwner <= 0 {
		o.MaxActivePerOwner = 100
	}
	if o.PageSize <= 0 {
		o.PageSize = 100
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return s
}

// taskTime formats t as the protocol's ISO 8601 timestamps.
func taskTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func newTaskID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// sweep deletes expired tasks; s.mu is held.
func (s *MemoryTaskStore) sweep(now time.Time) {
	for id, t := range s.tasks {
		if !now.Before(t.expires) {
			s.delete(id, t)
		}
	}
}

func (s *MemoryTaskStore) delete(id string, t *memTask) {
	delete(s.tasks, id)
	if !t.task.Status.Terminal() {
		close(t.done)
	}
}

// Create implements TaskStore.
func (s *MemoryTaskStore) Create(_ context.Context, owner string, ttl *int64) (*Task, error) {
	now := s.opts.Now()
	d := s.opts.DefaultTTL
	if ttl != nil {
		d = min(time.Duration(*ttl)*time.Millisecond, s.opts.MaxTTL)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	active := 0
	for _, t := range s.tasks {
		if t.owner == owner && !t.task.Status.Terminal() {
			active++
		}
	}
	if active >= s.opts.MaxActivePerOwner {
		return nil, fmt.Errorf("%w: %d unfinished tasks", ErrTooManyTasks, active)
	}
	if len(s.tasks) >= s.opts.MaxTasks && !s.evictOldestFinished() {
		return nil, fmt.Errorf("%w: the store holds %d unfinished tasks", ErrTooManyTasks, len(s.tasks))
	}
	s.seq++
	ms := d.Milliseconds()
	poll := s.opts.PollInterval.Milliseconds()
	t := &memTask{
		owner:   owner,
		seq:     s.seq,
		expires: now.Add(d),
		done:    make(chan struct{}),
		task: Task{
			TaskID:        newTaskID(),
			Status:        TaskStatusWorking,
			CreatedAt:     taskTime(now),
			LastUpdatedAt: taskTime(now),
			TTL:           &ms,
			PollInterval:  &poll,
		},
	}
	s.tasks[t.task.TaskID] = t
	c := t.task
	return &c, nil
}

func (s *MemoryTaskStore) evictOldestFinished() bool {
	var oldest *memTask
	for _, t := range s.tasks {
		if t.task.Status.Terminal() && (oldest == nil || t.seq < oldest.seq) {
			oldest = t
		}
	}
	if oldest == nil {
		return false
	}
	s.delete(oldest.task.TaskID, oldest)
	return true
}

// lookup returns owner's task id; s.mu is held.
func (s *MemoryTaskStore) lookup(owner, id string) (*memTask, error) {
	s.sweep(s.opts.Now())
	t, ok := s.tasks[id]
	if !ok || t.owner != owner {
		return nil, ErrTaskNotFound
	}
	return t, nil
}

// Get implements TaskStore.
func (s *MemoryTaskStore) Get(_ context.Context, owner, id string) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	c := t.task
	return &c, nil
}

// SetStatus implements TaskStore.
func (s *MemoryTaskStore) SetStatus(_ context.Context, owner, id string, status TaskStatus, message string) (*Task, error) {
	if status != TaskStatusWorking && status != TaskStatusInputRequired {
		return nil, fmt.Errorf("mcp: SetStatus(%q): use Finish for a terminal status", status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	if t.task.Status.Terminal() {
		return nil, ErrTaskTerminal
	}
	t.task.Status = status
	t.task.StatusMessage = message
	t.task.LastUpdatedAt = taskTime(s.opts.Now())
	c := t.task
	return &c, nil
}

// Finish implements TaskStore.
func (s *MemoryTaskStore) Finish(_ context.Context, owner, id string, status TaskStatus, message string, out TaskOutcome) (*Task, error) {
	if !status.Terminal() {
		return nil, fmt.Errorf("mcp: Finish(%q): not a terminal status", status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	if t.task.Status.Terminal() {
		return nil, ErrTaskTerminal
	}
	t.task.Status = status
	t.task.StatusMessage = message
	t.task.LastUpdatedAt = taskTime(s.opts.Now())
	t.out = &out
	close(t.done)
	c := t.task
	return &c, nil
}

// Outcome implements TaskStore.
func (s *MemoryTaskStore) Outcome(_ context.Context, owner, id string) (*TaskOutcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	return t.out, nil
}

// Wait implements TaskStore.
func (s *MemoryTaskStore) Wait(ctx context.Context, owner, id string) (*Task, error) {
	s.mu.Lock()
	t, err := s.lookup(owner, id)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	done := t.done
	s.mu.Unlock()
	select {
	case <-done:
		return s.Get(ctx, owner, id)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// List implements TaskStore. Cursors are opaque to requestors; a cursor
// stays valid when the tasks around it are deleted.
func (s *MemoryTaskStore) List(_ context.Context, owner, cursor string) ([]Task, string, error) {
	var after uint64
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || len(b) != 8 {
			return nil, "", ErrInvalidCursor
		}
		after = binary.BigEndian.Uint64(b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cursor != "" && after == 0 || after > s.seq {
		return nil, "", ErrInvalidCursor
	}
	s.sweep(s.opts.Now())
	var mine []*memTask
	for _, t := range s.tasks {
		if t.owner == owner && t.seq > after {
			mine = append(mine, t)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].seq < mine[j].seq })
	next := ""
	if len(mine) > s.opts.PageSize {
		mine = mine[:s.opts.PageSize]
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], mine[len(mine)-1].seq)
		next = base64.RawURLEncoding.EncodeToString(b[:])
	}
	out := make([]Task, len(mine))
	for i, t := range mine {
		out[i] = t.task
	}
	return out, next, nil
}
