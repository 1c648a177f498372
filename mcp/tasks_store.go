package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp/taskstore"
)

// Errors of a TaskStore. The task middleware answers ErrTaskNotFound,
// ErrTaskTerminal and ErrInvalidCursor with -32602, and ErrTooManyTasks
// with -32603. They are package taskstore's errors, so that a store
// written against that package (store/redis.TaskStore) reports them.
var (
	// ErrTaskNotFound: no such task for this owner (it may have expired,
	// or belong to someone else).
	ErrTaskNotFound = taskstore.ErrNotFound
	// ErrTaskTerminal: the task already reached a terminal status, which
	// never changes.
	ErrTaskTerminal = taskstore.ErrTerminal
	// ErrInvalidCursor: a tasks/list cursor the store did not issue.
	ErrInvalidCursor = taskstore.ErrInvalidCursor
	// ErrTooManyTasks: the store or the owner is at its limit of tasks.
	ErrTooManyTasks = taskstore.ErrTooMany
)

// TaskOutcome is what a task-augmented request produced: the result it
// would have returned (a JSON object), or its JSON-RPC error.
type TaskOutcome struct {
	Result json.RawMessage
	Error  *jsonrpc.Error
}

// A TaskStore keeps the tasks of a receiver and their outcomes. Every
// method is scoped to an owner: a task of another owner is reported as
// ErrTaskNotFound. Implementations must be safe for concurrent use. Most
// stores are written against package taskstore, whose contract says what
// runs concurrently and what blocks, and used through NewJSONTaskStore.
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
	// ends, or the task is deleted (ErrTaskNotFound). Tasks also calls it
	// on the process running a task's handler, and ends the handler when
	// it returns: that is how a tasks/cancel served by another replica of
	// a shared store stops the handler.
	Wait(ctx context.Context, owner, id string) (*Task, error)
	// List returns a page of the owner's tasks, oldest first, starting at
	// cursor (empty for the first page), and the cursor of the next page
	// (empty on the last).
	List(ctx context.Context, owner, cursor string) (tasks []Task, next string, err error)
}

// JSONTaskStore is a TaskStore and TaskInputStore on a taskstore.Store,
// the JSON-only seam that stores outside this package implement (such as
// store/redis.TaskStore, shared by the replicas of a server): it converts
// tasks, outcomes and input exchanges to and from JSON. It adds no state
// and no locking of its own; its methods block as the underlying store's
// do. Create one with NewJSONTaskStore.
type JSONTaskStore struct {
	s taskstore.Store
}

var (
	_ TaskStore      = (*JSONTaskStore)(nil)
	_ TaskInputStore = (*JSONTaskStore)(nil)
)

// NewJSONTaskStore returns the TaskStore that keeps its tasks in s; give
// it to TaskOptions.Store.
func NewJSONTaskStore(s taskstore.Store) *JSONTaskStore { return &JSONTaskStore{s: s} }

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

// MemoryTaskStore is a TaskStore (and TaskInputStore) in memory, for one
// process: a JSONTaskStore on a taskstore.Memory. Task ids are 128-bit
// random values, so that they cannot be guessed even when tasks are bound
// to nothing stronger than a session. A task is deleted once its TTL has
// passed since its creation (checked on every access), finished or not.
// Its zero value is not usable: call NewMemoryTaskStore.
type MemoryTaskStore struct {
	JSONTaskStore
}

// NewMemoryTaskStore returns an empty store.
func NewMemoryTaskStore(opts *MemoryTaskStoreOptions) *MemoryTaskStore {
	var o MemoryTaskStoreOptions
	if opts != nil {
		o = *opts
	}
	return &MemoryTaskStore{JSONTaskStore{s: taskstore.NewMemory(taskstore.Options(o))}}
}

// taskTime formats t as the protocol's ISO 8601 timestamps.
func taskTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// taskOf converts a store's record to the protocol's Task.
func taskOf(r taskstore.Record) *Task {
	ttl, poll := r.TTL.Milliseconds(), r.PollInterval.Milliseconds()
	return &Task{TaskID: r.ID, Status: TaskStatus(r.Status), StatusMessage: r.Message,
		CreatedAt: taskTime(r.Created), LastUpdatedAt: taskTime(r.Updated), TTL: &ttl, PollInterval: &poll}
}

func taskOrErr(r taskstore.Record, err error) (*Task, error) {
	if err != nil {
		return nil, err
	}
	return taskOf(r), nil
}

// Create implements TaskStore.
func (s *JSONTaskStore) Create(ctx context.Context, owner string, ttl *int64) (*Task, error) {
	var d *time.Duration
	if ttl != nil {
		v := time.Duration(*ttl) * time.Millisecond
		d = &v
	}
	return taskOrErr(s.s.Create(ctx, owner, d))
}

// Get implements TaskStore.
func (s *JSONTaskStore) Get(ctx context.Context, owner, id string) (*Task, error) {
	return taskOrErr(s.s.Get(ctx, owner, id))
}

// SetStatus implements TaskStore.
func (s *JSONTaskStore) SetStatus(ctx context.Context, owner, id string, status TaskStatus, message string) (*Task, error) {
	return taskOrErr(s.s.SetStatus(ctx, owner, id, taskstore.Status(status), message))
}

// outcomeJSON is a TaskOutcome as a store keeps it.
type outcomeJSON struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *jsonrpc.Error  `json:"error,omitempty"`
}

// Finish implements TaskStore.
func (s *JSONTaskStore) Finish(ctx context.Context, owner, id string, status TaskStatus, message string, out TaskOutcome) (*Task, error) {
	b, err := json.Marshal(outcomeJSON(out))
	if err != nil {
		return nil, fmt.Errorf("mcp: task outcome: %w", err)
	}
	return taskOrErr(s.s.Finish(ctx, owner, id, taskstore.Status(status), message, b))
}

// Outcome implements TaskStore.
func (s *JSONTaskStore) Outcome(ctx context.Context, owner, id string) (*TaskOutcome, error) {
	raw, err := s.s.Outcome(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	if raw != nil {
		return decodeOutcome(raw)
	}
	// A terminal task without an outcome was ended by the store itself
	// (its runner's lease lapsed): its status message says why.
	r, err := s.s.Get(ctx, owner, id)
	if err != nil || !r.Status.Terminal() {
		return nil, err
	}
	return &TaskOutcome{Error: jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: "+r.Message)}, nil
}

// decodeOutcome parses an outcome a store kept: exactly one of a JSON
// object result and an error.
func decodeOutcome(raw json.RawMessage) (*TaskOutcome, error) {
	var o outcomeJSON
	if err := strictjson.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("mcp: the stored task outcome: %w", err)
	}
	if (o.Error == nil) == (o.Result == nil) || (o.Result != nil && !isJSONObject(o.Result)) {
		return nil, fmt.Errorf("mcp: the stored task outcome has not exactly one of an object result and an error")
	}
	out := TaskOutcome(o)
	return &out, nil
}

// Wait implements TaskStore.
func (s *JSONTaskStore) Wait(ctx context.Context, owner, id string) (*Task, error) {
	return taskOrErr(s.s.Wait(ctx, owner, id))
}

// List implements TaskStore. Cursors are opaque to requestors; a cursor
// stays valid when the tasks around it are deleted.
func (s *JSONTaskStore) List(ctx context.Context, owner, cursor string) ([]Task, string, error) {
	recs, next, err := s.s.List(ctx, owner, cursor)
	if err != nil {
		return nil, "", err
	}
	out := make([]Task, len(recs))
	for i, r := range recs {
		out[i] = *taskOf(r)
	}
	return out, next, nil
}
