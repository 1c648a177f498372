package redis

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/mcp/taskstore"
)

// DefaultTaskLease is the default of TaskStoreOptions.Lease.
const DefaultTaskLease = 30 * time.Second

// LapsedMessage is the status message of a task whose replica stopped
// renewing its lease (it died, or lost Redis for longer than the lease):
// the task is failed, and its handler, if it still runs, is stopped.
const LapsedMessage = "the server replica running the task stopped (its lease lapsed); the task did not finish"

// TaskStoreOptions bound a [TaskStore]. Zero values mean the defaults.
type TaskStoreOptions struct {
	// Options are the bounds the memory store has too: DefaultTTL, MaxTTL,
	// MaxActivePerOwner, PageSize and PollInterval mean the same here.
	// MaxTasks is a bound per owner here (the tasks of all owners are
	// bounded by their TTL): when an owner is at it, its oldest finished
	// task goes; if its oldest ones are all running, Create fails with
	// taskstore.ErrTooMany. Now is ignored: Redis's clock expires tasks.
	taskstore.Options
	// Lease is how long a task stays working after its replica last
	// renewed its liveness (every Lease/3): a replica that dies leaves its
	// tasks working for at most that long, then they are failed with
	// LapsedMessage. Zero means DefaultTaskLease.
	Lease time.Duration
	// Timeout bounds each call, whatever the caller's context; past it
	// the call fails with ErrDown. Zero means DefaultTimeout.
	Timeout time.Duration
}

// TaskStore keeps tasks in Redis (package taskstore's Store), so that
// every replica of a server sharing the Redis and the prefix serves
// tasks/get, tasks/update, tasks/cancel, tasks/result and tasks/list for a
// task that another replica runs (give mcp.NewJSONTaskStore(store) to
// mcp.TaskOptions.Store). Each task is one hash, PREFIX+"task:"+ID, that
// expires TTL after its creation; each change is one Lua script (see
// tasks_lua.go), so the taskstore contract holds across processes: a
// terminal status never changes, one of a cancellation and a completion
// racing wins, the outcome is written once.
//
// The replica that creates a task runs it, and renews a liveness key
// (PREFIX+"tasks:alive:"+REPLICA) every Lease/3; the first access to a
// task after its runner's key lapsed fails it. Wait and AwaitInput learn
// of changes made by any replica on a Redis Pub/Sub channel
// (PREFIX+"tasks:changes", through a [Bus]) and, since Pub/Sub may lose
// messages, also look again every PollInterval.
//
// The scripts reach keys they compute (the task's index and its runner's
// liveness), which a single Redis allows; on Redis Cluster give a prefix
// with a hash tag ("{mcp}:") so that every key is in one slot.
//
// Safe for concurrent use by any number of goroutines and processes.
// Close stops the lease of this replica.
type TaskStore struct {
	rdb     goredis.UniversalClient
	prefix  string
	opts    TaskStoreOptions
	breaker breaker
	replica string
	bus     *Bus

	beat    sync.Once
	stop    chan struct{}
	stopped chan struct{}
	closed  sync.Once

	mu      sync.Mutex
	waiters map[string]map[chan struct{}]struct{} // by task id
	unsub   func()                                // the bus subscription, once someone waits
}

var _ taskstore.Store = (*TaskStore)(nil)

// NewTaskStore returns a task store with its keys under prefix. The
// caller keeps the client and closes it after Close.
func NewTaskStore(rdb goredis.UniversalClient, prefix string, opts TaskStoreOptions) *TaskStore {
	opts.Options = opts.Options.Defaults()
	if opts.Lease <= 0 {
		opts.Lease = DefaultTaskLease
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	return &TaskStore{
		rdb: rdb, prefix: prefix, opts: opts, replica: rand.Text(),
		bus:     NewBus(rdb, prefix+"tasks:", BusOptions{Timeout: opts.Timeout}),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
		waiters: make(map[string]map[chan struct{}]struct{}),
	}
}

func (s *TaskStore) taskKey(id string) string     { return s.prefix + "task:" + id }
func (s *TaskStore) ownerKey(owner string) string { return s.prefix + "tasks:o:" + owner }
func (s *TaskStore) activePrefix() string         { return s.prefix + "tasks:oa:" }
func (s *TaskStore) alivePrefix() string          { return s.prefix + "tasks:alive:" }
func (s *TaskStore) channel() string              { return s.prefix + "tasks:changes" }

// common returns the ARGV every task script starts with (see tasks_lua.go).
func (s *TaskStore) common(owner, id string) []any {
	return []any{owner, time.Now().UnixMilli(), s.alivePrefix(), LapsedMessage, s.channel(), id, s.activePrefix()}
}

// run runs a task script within the timeout and returns its reply, with
// the store's verdicts ("nf", "term", "many") as taskstore's errors.
func (s *TaskStore) run(ctx context.Context, what string, sc *goredis.Script, keys []string, args ...any) ([]any, error) {
	reply, err := call(ctx, &s.breaker, s.opts.Timeout, what, func(ctx context.Context) ([]any, error) {
		return sc.Run(ctx, s.rdb, keys, args...).Slice()
	})
	if err != nil {
		return nil, err
	}
	if len(reply) == 0 {
		return nil, fmt.Errorf("store/redis: %s: an empty reply", what)
	}
	switch reply[0] {
	case "ok":
		return reply[1:], nil
	case "nf":
		return nil, taskstore.ErrNotFound
	case "term":
		return nil, taskstore.ErrTerminal
	case "many":
		return nil, fmt.Errorf("%w: %v tasks", taskstore.ErrTooMany, reply[1:])
	case "wait":
		return nil, errWait
	}
	return nil, fmt.Errorf("store/redis: %s: reply %v", what, reply[0])
}

// errWait is AwaitInput's "not every answer yet".
var errWait = errors.New("store/redis: waiting for input")

// record runs a script whose reply is a record.
func (s *TaskStore) record(ctx context.Context, what string, sc *goredis.Script, owner, id string, keys []string, extra ...any) (taskstore.Record, error) {
	reply, err := s.run(ctx, what, sc, keys, append(s.common(owner, id), extra...)...)
	if err != nil {
		return taskstore.Record{}, err
	}
	return decodeTaskRecord(owner, id, reply)
}

// Create implements taskstore.Store. This replica is the task's runner:
// its lease starts now if it had not.
func (s *TaskStore) Create(ctx context.Context, owner string, ttl *time.Duration) (taskstore.Record, error) {
	s.startLease()
	id := taskstore.NewID()
	d := s.opts.TTLFor(ttl)
	keys := []string{s.prefix + "tasks:seq", s.ownerKey(owner), s.activePrefix() + owner, s.taskKey(id), s.alivePrefix() + s.replica}
	return s.record(ctx, "create task", taskCreateScript, owner, id, keys,
		d.Milliseconds(), s.opts.PollInterval.Milliseconds(), s.replica, s.opts.Lease.Milliseconds(),
		s.opts.MaxActivePerOwner, s.opts.MaxTasks, s.prefix+"task:", s.opts.MaxTTL.Milliseconds())
}

// Get implements taskstore.Store.
func (s *TaskStore) Get(ctx context.Context, owner, id string) (taskstore.Record, error) {
	return s.record(ctx, "get task", taskGetScript, owner, id, []string{s.taskKey(id)})
}

// SetStatus implements taskstore.Store.
func (s *TaskStore) SetStatus(ctx context.Context, owner, id string, status taskstore.Status, message string) (taskstore.Record, error) {
	if status != taskstore.Working && status != taskstore.InputRequired {
		return taskstore.Record{}, fmt.Errorf("%w: SetStatus(%q): use Finish for a terminal status", taskstore.ErrBadStatus, status)
	}
	return s.record(ctx, "set task status", taskSetStatusScript, owner, id, []string{s.taskKey(id)}, string(status), message)
}

// Finish implements taskstore.Store.
func (s *TaskStore) Finish(ctx context.Context, owner, id string, status taskstore.Status, message string, outcome json.RawMessage) (taskstore.Record, error) {
	if !status.Terminal() {
		return taskstore.Record{}, fmt.Errorf("%w: Finish(%q): not a terminal status", taskstore.ErrBadStatus, status)
	}
	return s.record(ctx, "finish task", taskFinishScript, owner, id, []string{s.taskKey(id), s.activePrefix() + owner},
		string(status), message, []byte(outcome))
}

// Outcome implements taskstore.Store.
func (s *TaskStore) Outcome(ctx context.Context, owner, id string) (json.RawMessage, error) {
	reply, err := s.run(ctx, "task outcome", taskOutcomeScript, []string{s.taskKey(id)}, s.common(owner, id)...)
	if err != nil {
		return nil, err
	}
	if len(reply) == 0 || reply[0] == nil {
		return nil, nil
	}
	out, ok := reply[0].(string)
	if !ok || out == "" {
		return nil, nil
	}
	return json.RawMessage(out), nil
}

// List implements taskstore.Store.
func (s *TaskStore) List(ctx context.Context, owner, cursor string) ([]taskstore.Record, string, error) {
	after, err := taskstore.ParseCursor(cursor)
	if err != nil {
		return nil, "", err
	}
	limit := s.opts.PageSize + 1
	reply, err := s.run(ctx, "list tasks", taskListScript, []string{s.ownerKey(owner), s.prefix + "tasks:seq"},
		append(s.common(owner, ""), after, limit, s.prefix+"task:")...)
	if err != nil {
		return nil, "", err
	}
	if len(reply) == 0 {
		return nil, "", errors.New("store/redis: list tasks: an empty reply")
	}
	if last, _ := reply[0].(int64); uint64(last) < after {
		return nil, "", taskstore.ErrInvalidCursor
	}
	const width = 1 + taskRecordFields
	var out []taskstore.Record
	for i := 1; i+width <= len(reply); i += width {
		id, _ := reply[i].(string)
		r, err := decodeTaskRecord(owner, id, reply[i+1:i+width])
		if err != nil {
			return nil, "", err
		}
		out = append(out, r)
	}
	next := ""
	if len(out) > s.opts.PageSize {
		out = out[:s.opts.PageSize]
		next = taskstore.Cursor(out[len(out)-1].Seq)
	}
	return out, next, nil
}

// pairs flattens a map into the key, value ARGV of the input scripts.
func pairs(m map[string]json.RawMessage) []any {
	args := make([]any, 0, 2*len(m))
	for k, v := range m {
		args = append(args, k, []byte(v))
	}
	return args
}

// RequestInput implements taskstore.Store.
func (s *TaskStore) RequestInput(ctx context.Context, owner, id string, reqs map[string]json.RawMessage) (taskstore.Record, error) {
	return s.record(ctx, "request task input", taskRequestInputScript, owner, id, []string{s.taskKey(id)}, pairs(reqs)...)
}

// PendingInput implements taskstore.Store.
func (s *TaskStore) PendingInput(ctx context.Context, owner, id string) (map[string]json.RawMessage, error) {
	reply, err := s.run(ctx, "pending task input", taskPendingScript, []string{s.taskKey(id)}, s.common(owner, id)...)
	if err != nil || len(reply) == 0 {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(reply)/2)
	for i := 0; i+1 < len(reply); i += 2 {
		k, _ := reply[i].(string)
		v, _ := reply[i+1].(string)
		out[k] = json.RawMessage(v)
	}
	return out, nil
}

// ProvideInput implements taskstore.Store.
func (s *TaskStore) ProvideInput(ctx context.Context, owner, id string, responses map[string]json.RawMessage) error {
	_, err := s.run(ctx, "provide task input", taskProvideScript, []string{s.taskKey(id)}, append(s.common(owner, id), pairs(responses)...)...)
	return err
}

// taskRecordFields is the number of fields a record reply holds: seq,
// status, message, created, updated, ttl, poll (taskLuaPrelude's rec).
const taskRecordFields = 7

// maxTaskMessageBytes bounds a status message decoded from Redis.
const maxTaskMessageBytes = 64 << 10

// decodeTaskRecord parses a record reply (strings, or nil for a missing
// field); what comes from Redis is checked as if untrusted: a malformed
// record is an error, never a panic or a half-filled Record.
func decodeTaskRecord(owner, id string, f []any) (taskstore.Record, error) {
	bad := func(what string) (taskstore.Record, error) {
		return taskstore.Record{}, fmt.Errorf("store/redis: task %q: malformed record: %s", id, what)
	}
	if len(f) != taskRecordFields {
		return bad(fmt.Sprintf("%d fields", len(f)))
	}
	str := make([]string, len(f))
	for i, v := range f {
		s, ok := v.(string)
		if !ok {
			return bad(fmt.Sprintf("field %d missing", i))
		}
		str[i] = s
	}
	nums := make([]int64, 0, 5)
	for _, i := range []int{0, 3, 4, 5, 6} {
		n, err := strconv.ParseInt(str[i], 10, 64)
		if err != nil || n < 0 {
			return bad(fmt.Sprintf("field %d is not a count", i))
		}
		nums = append(nums, n)
	}
	st := taskstore.Status(str[1])
	if !st.Valid() || nums[0] == 0 || len(str[2]) > maxTaskMessageBytes || nums[2] < nums[1] {
		return bad("status, sequence, message or times")
	}
	const maxMS = int64(1) << 50 // far beyond any time or TTL; no overflow as a Duration
	if nums[1] > maxMS || nums[2] > maxMS || nums[3] > maxMS || nums[4] > maxMS {
		return bad("time out of range")
	}
	return taskstore.Record{
		ID: id, Owner: owner, Seq: uint64(nums[0]), Status: st, Message: str[2],
		Created: time.UnixMilli(nums[1]).UTC(), Updated: time.UnixMilli(nums[2]).UTC(),
		TTL: time.Duration(nums[3]) * time.Millisecond, PollInterval: time.Duration(nums[4]) * time.Millisecond,
	}, nil
}
