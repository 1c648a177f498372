package taskstore

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"sync"
	"time"
)

// Defaults of [Options] (and of the shared stores, which take the
// same bounds).
const (
	DefaultTTL               = time.Hour
	DefaultMaxTTL            = 24 * time.Hour
	DefaultMaxTasks          = 10000
	DefaultMaxActivePerOwner = 100
	DefaultPageSize          = 100
	DefaultPollInterval      = time.Second
)

// Options configure a [Memory] store. Zero values mean the defaults.
type Options struct {
	// DefaultTTL is the retention of a task whose requestor asked for
	// none; zero means DefaultTTL.
	DefaultTTL time.Duration
	// MaxTTL caps the retention a requestor may ask for; zero means
	// DefaultMaxTTL. Tasks are never kept without limit.
	MaxTTL time.Duration
	// MaxTasks bounds the tasks kept in all; zero means DefaultMaxTasks.
	// When it is reached, expired tasks go first, then the oldest finished
	// ones; if every task is still running, Create fails with ErrTooMany.
	MaxTasks int
	// MaxActivePerOwner bounds the unfinished tasks of one owner; zero
	// means DefaultMaxActivePerOwner. Beyond it Create fails with
	// ErrTooMany.
	MaxActivePerOwner int
	// PageSize is the number of tasks per List page; zero means
	// DefaultPageSize.
	PageSize int
	// PollInterval is the interval between polls suggested to requestors;
	// zero means DefaultPollInterval.
	PollInterval time.Duration
	// Now returns the current time; nil means time.Now. Tests use it to
	// expire tasks without waiting.
	Now func() time.Time
}

// Defaults returns o with every zero field set to its default (and
// DefaultTTL no longer than MaxTTL).
func (o Options) Defaults() Options {
	if o.DefaultTTL <= 0 {
		o.DefaultTTL = DefaultTTL
	}
	if o.MaxTTL <= 0 {
		o.MaxTTL = DefaultMaxTTL
	}
	o.DefaultTTL = min(o.DefaultTTL, o.MaxTTL)
	if o.MaxTasks <= 0 {
		o.MaxTasks = DefaultMaxTasks
	}
	if o.MaxActivePerOwner <= 0 {
		o.MaxActivePerOwner = DefaultMaxActivePerOwner
	}
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// TTLFor returns the retention of a task whose requestor asked for ttl
// (nil: none), within o's bounds; o has its defaults.
func (o Options) TTLFor(ttl *time.Duration) time.Duration {
	if ttl == nil {
		return o.DefaultTTL
	}
	return max(min(*ttl, o.MaxTTL), 0)
}

// Memory is a [Store] in memory, for one process: the default of
// mcp.Tasks. A task is deleted once its TTL has passed since its creation
// (checked on every access), finished or not. Its zero value is not
// usable: call NewMemory.
type Memory struct {
	opts Options

	mu    sync.Mutex
	tasks map[string]*memTask // by id
	seq   uint64
}

type memTask struct {
	rec     Record
	expires time.Time
	out     json.RawMessage
	done    chan struct{} // closed when terminal or deleted
	pending map[string]json.RawMessage
	answers map[string]json.RawMessage
	changed chan struct{} // closed and replaced on every input change
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty store.
func NewMemory(opts Options) *Memory {
	return &Memory{opts: opts.Defaults(), tasks: make(map[string]*memTask)}
}

// sweep deletes expired tasks; s.mu is held.
func (s *Memory) sweep(now time.Time) {
	for id, t := range s.tasks {
		if !now.Before(t.expires) {
			s.delete(id, t)
		}
	}
}

func (s *Memory) delete(id string, t *memTask) {
	delete(s.tasks, id)
	if !t.rec.Status.Terminal() {
		close(t.done)
	}
}

// Create implements Store.
func (s *Memory) Create(_ context.Context, owner string, ttl *time.Duration) (Record, error) {
	now := s.opts.Now()
	d := s.opts.TTLFor(ttl)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	active := 0
	for _, t := range s.tasks {
		if t.rec.Owner == owner && !t.rec.Status.Terminal() {
			active++
		}
	}
	if active >= s.opts.MaxActivePerOwner {
		return Record{}, fmt.Errorf("%w: %d unfinished tasks", ErrTooMany, active)
	}
	if len(s.tasks) >= s.opts.MaxTasks && !s.evictOldestFinished() {
		return Record{}, fmt.Errorf("%w: the store holds %d unfinished tasks", ErrTooMany, len(s.tasks))
	}
	s.seq++
	t := &memTask{
		expires: now.Add(d),
		done:    make(chan struct{}),
		changed: make(chan struct{}),
		rec: Record{ID: NewID(), Owner: owner, Seq: s.seq, Status: Working,
			Created: now, Updated: now, TTL: d, PollInterval: s.opts.PollInterval},
	}
	s.tasks[t.rec.ID] = t
	return t.rec, nil
}

func (s *Memory) evictOldestFinished() bool {
	var oldest *memTask
	for _, t := range s.tasks {
		if t.rec.Status.Terminal() && (oldest == nil || t.rec.Seq < oldest.rec.Seq) {
			oldest = t
		}
	}
	if oldest == nil {
		return false
	}
	s.delete(oldest.rec.ID, oldest)
	return true
}

// lookup returns owner's task id; s.mu is held.
func (s *Memory) lookup(owner, id string) (*memTask, error) {
	s.sweep(s.opts.Now())
	t, ok := s.tasks[id]
	if !ok || t.rec.Owner != owner {
		return nil, ErrNotFound
	}
	return t, nil
}

// Get implements Store.
func (s *Memory) Get(_ context.Context, owner, id string) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookup(owner, id)
	if err != nil {
		return Record{}, err
	}
	return t.rec, nil
}

// live returns owner's task id if it is not terminal; s.mu is held.
func (s *Memory) live(owner, id string) (*memTask, error) {
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	if t.rec.Status.Terminal() {
		return nil, ErrTerminal
	}
	return t, nil
}

// SetStatus implements Store.
func (s *Memory) SetStatus(_ context.Context, owner, id string, status Status, message string) (Record, error) {
	if status != Working && status != InputRequired {
		return Record{}, fmt.Errorf("%w: SetStatus(%q): use Finish for a terminal status", ErrBadStatus, status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.live(owner, id)
	if err != nil {
		return Record{}, err
	}
	t.rec.Status, t.rec.Message, t.rec.Updated = status, message, s.opts.Now()
	return t.rec, nil
}

// Finish implements Store.
func (s *Memory) Finish(_ context.Context, owner, id string, status Status, message string, outcome json.RawMessage) (Record, error) {
	if !status.Terminal() {
		return Record{}, fmt.Errorf("%w: Finish(%q): not a terminal status", ErrBadStatus, status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.live(owner, id)
	if err != nil {
		return Record{}, err
	}
	t.rec.Status, t.rec.Message, t.rec.Updated = status, message, s.opts.Now()
	t.out = append(json.RawMessage(nil), outcome...)
	close(t.done)
	return t.rec, nil
}

// Outcome implements Store.
func (s *Memory) Outcome(_ context.Context, owner, id string) (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	return t.out, nil
}

// Wait implements Store.
func (s *Memory) Wait(ctx context.Context, owner, id string) (Record, error) {
	s.mu.Lock()
	t, err := s.lookup(owner, id)
	if err != nil {
		s.mu.Unlock()
		return Record{}, err
	}
	done := t.done
	s.mu.Unlock()
	select {
	case <-done:
		return s.Get(ctx, owner, id)
	case <-ctx.Done():
		return Record{}, ctx.Err()
	}
}

// List implements Store.
func (s *Memory) List(_ context.Context, owner, cursor string) ([]Record, string, error) {
	after, err := ParseCursor(cursor)
	if err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if after > s.seq {
		return nil, "", ErrInvalidCursor
	}
	s.sweep(s.opts.Now())
	var mine []Record
	for _, t := range s.tasks {
		if t.rec.Owner == owner && t.rec.Seq > after {
			mine = append(mine, t.rec)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].Seq < mine[j].Seq })
	next := ""
	if len(mine) > s.opts.PageSize {
		mine = mine[:s.opts.PageSize]
		next = Cursor(mine[len(mine)-1].Seq)
	}
	return mine, next, nil
}

// signal wakes the AwaitInput calls of t; s.mu is held.
func (t *memTask) signal() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// RequestInput implements Store.
func (s *Memory) RequestInput(_ context.Context, owner, id string, reqs map[string]json.RawMessage) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.live(owner, id)
	if err != nil {
		return Record{}, err
	}
	if t.pending == nil {
		t.pending = make(map[string]json.RawMessage, len(reqs))
	}
	maps.Copy(t.pending, reqs)
	t.rec.Status, t.rec.Updated = InputRequired, s.opts.Now()
	t.signal()
	return t.rec, nil
}

// PendingInput implements Store.
func (s *Memory) PendingInput(_ context.Context, owner, id string) (map[string]json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	if len(t.pending) == 0 {
		return nil, nil
	}
	return maps.Clone(t.pending), nil
}

// ProvideInput implements Store.
func (s *Memory) ProvideInput(_ context.Context, owner, id string, responses map[string]json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookup(owner, id)
	if err != nil {
		return err
	}
	if t.rec.Status.Terminal() {
		return nil
	}
	took := false
	for k, v := range responses {
		if _, ok := t.pending[k]; !ok {
			continue
		}
		delete(t.pending, k)
		if t.answers == nil {
			t.answers = make(map[string]json.RawMessage)
		}
		t.answers[k] = v
		took = true
	}
	if !took {
		return nil
	}
	if len(t.pending) == 0 && t.rec.Status == InputRequired {
		t.rec.Status = Working
	}
	t.rec.Updated = s.opts.Now()
	t.signal()
	return nil
}

// AwaitInput implements Store.
func (s *Memory) AwaitInput(ctx context.Context, owner, id string, keys []string) (map[string]json.RawMessage, error) {
	for {
		s.mu.Lock()
		t, err := s.live(owner, id)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		if out, ok := takeAnswers(t.answers, keys); ok {
			s.mu.Unlock()
			return out, nil
		}
		changed, done := t.changed, t.done
		s.mu.Unlock()
		wait := time.NewTimer(time.Minute)
		select {
		case <-changed:
		case <-done: // finished or deleted: the next lookup says which
		case <-ctx.Done():
			wait.Stop()
			return nil, ctx.Err()
		case <-wait.C:
			// The task's TTL may pass with no change: look again (lookup
			// sweeps it).
		}
		wait.Stop()
	}
}

// takeAnswers removes and returns the answers to keys from answers if
// every key has one.
func takeAnswers(answers map[string]json.RawMessage, keys []string) (map[string]json.RawMessage, bool) {
	out := make(map[string]json.RawMessage, len(keys))
	for _, k := range keys {
		v, ok := answers[k]
		if !ok {
			return nil, false
		}
		out[k] = v
	}
	for _, k := range keys {
		delete(answers, k)
	}
	return out, true
}
