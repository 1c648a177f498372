package mcp

import (
	"context"
	"encoding/json"
	"fmt"
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

// RequestInput implements TaskInputStore.
func (s *JSONTaskStore) RequestInput(ctx context.Context, owner, id string, reqs InputRequests) (*Task, error) {
	raw := make(map[string]json.RawMessage, len(reqs))
	for k, r := range reqs {
		b, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("mcp: task input request %q: %w", k, err)
		}
		raw[k] = b
	}
	return taskOrErr(s.s.RequestInput(ctx, owner, id, raw))
}

// PendingInput implements TaskInputStore.
func (s *JSONTaskStore) PendingInput(ctx context.Context, owner, id string) (InputRequests, error) {
	raw, err := s.s.PendingInput(ctx, owner, id)
	if err != nil || len(raw) == 0 {
		return nil, err
	}
	reqs := make(InputRequests, len(raw))
	for k, b := range raw {
		var r InputRequest
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("mcp: the stored input request %q: %w", k, err)
		}
		reqs[k] = r
	}
	return reqs, nil
}

// ProvideInput implements TaskInputStore.
func (s *JSONTaskStore) ProvideInput(ctx context.Context, owner, id string, responses InputResponses) error {
	return s.s.ProvideInput(ctx, owner, id, responses)
}

// AwaitInput implements TaskInputStore.
func (s *JSONTaskStore) AwaitInput(ctx context.Context, owner, id string, keys []string) (InputResponses, error) {
	out, err := s.s.AwaitInput(ctx, owner, id, keys)
	if err != nil {
		return nil, err
	}
	return out, nil
}
