package mcp

import (
	"context"
	"maps"
	"time"
)

// TaskInputStore is what a TaskStore also implements to hold the input
// exchanges of the tasks extension (revision 2026-07-28): a task's handler
// asks (RequestInput) and waits (AwaitInput); the client reads the
// pending requests with tasks/get (PendingInput) and answers with
// tasks/update (ProvideInput), possibly on another replica, so the
// exchange lives in the store. Every value is plain JSON, so that a store
// shared by replicas (Redis, SQL) can keep it. Methods are scoped to an
// owner like TaskStore's; implementations must be safe for concurrent use.
type TaskInputStore interface {
	// RequestInput adds reqs to the task's pending input requests and moves
	// it to input_required. It fails with ErrTaskTerminal for a terminal
	// task.
	RequestInput(ctx context.Context, owner, id string, reqs InputRequests) (*Task, error)
	// PendingInput returns the task's pending input requests (nil when
	// none).
	PendingInput(ctx context.Context, owner, id string) (InputRequests, error)
	// ProvideInput keeps the responses to pending requests and drops the
	// rest (responses to unknown or already answered keys are ignored, as
	// the extension asks); an answered key leaves the pending requests,
	// and a task with none left is working again.
	ProvideInput(ctx context.Context, owner, id string, responses InputResponses) error
	// AwaitInput blocks until every key has a response, then removes and
	// returns them; it ends with ctx, or with ErrTaskNotFound when the task
	// is deleted, or ErrTaskTerminal when it is finished (cancelled).
	AwaitInput(ctx context.Context, owner, id string, keys []string) (InputResponses, error)
}

// memInput is a memTask's input exchange.
type memInput struct {
	pending InputRequests
	answers InputResponses
	changed chan struct{} // closed and replaced on every change
}

func (t *memTask) input() *memInput {
	if t.in == nil {
		t.in = &memInput{changed: make(chan struct{})}
	}
	return t.in
}

func (in *memInput) signal() {
	close(in.changed)
	in.changed = make(chan struct{})
}

// RequestInput implements TaskInputStore.
func (s *MemoryTaskStore) RequestInput(_ context.Context, owner, id string, reqs InputRequests) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	if t.task.Status.Terminal() {
		return nil, ErrTaskTerminal
	}
	in := t.input()
	if in.pending == nil {
		in.pending = make(InputRequests, len(reqs))
	}
	maps.Copy(in.pending, reqs)
	t.task.Status = TaskStatusInputRequired
	t.task.LastUpdatedAt = taskTime(s.opts.Now())
	in.signal()
	c := t.task
	return &c, nil
}

// PendingInput implements TaskInputStore.
func (s *MemoryTaskStore) PendingInput(_ context.Context, owner, id string) (InputRequests, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	if t.in == nil || len(t.in.pending) == 0 {
		return nil, nil
	}
	return maps.Clone(t.in.pending), nil
}

// ProvideInput implements TaskInputStore.
func (s *MemoryTaskStore) ProvideInput(_ context.Context, owner, id string, responses InputResponses) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookup(owner, id)
	if err != nil {
		return err
	}
	if t.in == nil || t.task.Status.Terminal() {
		return nil
	}
	in := t.input()
	took := false
	for k, v := range responses {
		if _, ok := in.pending[k]; !ok {
			continue
		}
		delete(in.pending, k)
		if in.answers == nil {
			in.answers = make(InputResponses)
		}
		in.answers[k] = v
		took = true
	}
	if !took {
		return nil
	}
	if len(in.pending) == 0 && t.task.Status == TaskStatusInputRequired {
		t.task.Status = TaskStatusWorking
	}
	t.task.LastUpdatedAt = taskTime(s.opts.Now())
	in.signal()
	return nil
}

// AwaitInput implements TaskInputStore.
func (s *MemoryTaskStore) AwaitInput(ctx context.Context, owner, id string, keys []string) (InputResponses, error) {
	for {
		s.mu.Lock()
		t, err := s.lookup(owner, id)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		if t.task.Status.Terminal() {
			s.mu.Unlock()
			return nil, ErrTaskTerminal
		}
		in := t.input()
		out := make(InputResponses, len(keys))
		for _, k := range keys {
			if v, ok := in.answers[k]; ok {
				out[k] = v
			}
		}
		if len(out) == len(keys) {
			for _, k := range keys {
				delete(in.answers, k)
			}
			s.mu.Unlock()
			return out, nil
		}
		changed, done := in.changed, t.done
		s.mu.Unlock()
		select {
		case <-changed:
		case <-done: // finished or deleted: the next lookup says which
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			// The task's TTL may pass with no change: look again (lookup
			// sweeps it).
		}
	}
}
