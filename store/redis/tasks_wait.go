package redis

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpstack/mcpstack/mcp/taskstore"
)

// startLease starts, once, the renewal of this replica's liveness key:
// every Lease/3, so that two renewals may fail before its tasks lapse.
func (s *TaskStore) startLease() {
	s.beat.Do(func() { go s.renew() })
}

func (s *TaskStore) renew() {
	defer close(s.stopped)
	t := time.NewTicker(s.opts.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		// A failed renewal is retried at the next tick.
		_, _ = call(context.Background(), &s.breaker, s.opts.Timeout, "renew task lease", func(ctx context.Context) (string, error) {
			return s.rdb.Set(ctx, s.alivePrefix()+s.replica, 1, s.opts.Lease).Result()
		})
	}
}

// Close stops this replica's lease and deletes its liveness key, so that
// its unfinished tasks fail at their next access (their handlers die with
// the process: call it when the server shuts down), and ends the
// subscription of Wait and AwaitInput (those running then end at their
// next poll or their context). The client stays open.
func (s *TaskStore) Close() error {
	var err error
	s.closed.Do(func() {
		s.startLease() // so that there is something to stop
		close(s.stop)
		<-s.stopped
		s.mu.Lock()
		unsub := s.unsub
		s.unsub = nil
		s.mu.Unlock()
		if unsub != nil {
			unsub()
		}
		_, err = call(context.Background(), &s.breaker, s.opts.Timeout, "end task lease", func(ctx context.Context) (int64, error) {
			return s.rdb.Del(ctx, s.alivePrefix()+s.replica).Result()
		})
	})
	return err
}

// watch registers a waiter for changes of task id and returns its channel
// (one token per change seen) and its removal. The first waiter
// subscribes to the change channel; if that fails, the waiters rely on
// their polls.
func (s *TaskStore) watch(ctx context.Context, id string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if s.waiters[id] == nil {
		s.waiters[id] = make(map[chan struct{}]struct{})
	}
	s.waiters[id][ch] = struct{}{}
	subscribe := s.unsub == nil
	if subscribe {
		s.unsub = func() {} // a subscription is under way
	}
	s.mu.Unlock()
	if subscribe {
		unsub, err := s.bus.Subscribe(ctx, s.deliver)
		s.mu.Lock()
		closing := false
		select {
		case <-s.stop: // Close ran meanwhile and stopped nothing
			closing = true
		default:
		}
		switch {
		case err != nil:
			s.unsub = nil // the next waiter tries again
		case closing:
			s.unsub = nil
		default:
			s.unsub = unsub
		}
		s.mu.Unlock()
		if err == nil && closing {
			unsub()
		}
	}
	return ch, func() {
		s.mu.Lock()
		delete(s.waiters[id], ch)
		if len(s.waiters[id]) == 0 {
			delete(s.waiters, id)
		}
		s.mu.Unlock()
	}
}

// deliver wakes the waiters of the task a change message names, or every
// waiter when messages may have been lost (msg nil).
func (s *TaskStore) deliver(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, set := range s.waiters {
		if msg != nil && id != string(msg) {
			continue
		}
		for ch := range set {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// pause waits for a change, the next poll, or the end of ctx.
func (s *TaskStore) pause(ctx context.Context, changed <-chan struct{}) error {
	t := time.NewTimer(s.opts.PollInterval)
	defer t.Stop()
	select {
	case <-changed:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// Wait implements taskstore.Store. While Redis does not answer it keeps
// trying, at each poll, until ctx ends.
func (s *TaskStore) Wait(ctx context.Context, owner, id string) (taskstore.Record, error) {
	changed, unwatch := s.watch(ctx, id)
	defer unwatch()
	for {
		r, err := s.Get(ctx, owner, id)
		switch {
		case err == nil && r.Status.Terminal():
			return r, nil
		case errors.Is(err, taskstore.ErrNotFound):
			return taskstore.Record{}, err
		case err != nil && ctx.Err() != nil:
			return taskstore.Record{}, ctx.Err()
		}
		if err := s.pause(ctx, changed); err != nil {
			return taskstore.Record{}, err
		}
	}
}

// AwaitInput implements taskstore.Store. While Redis does not answer it
// keeps trying, at each poll, until ctx ends.
func (s *TaskStore) AwaitInput(ctx context.Context, owner, id string, keys []string) (map[string]json.RawMessage, error) {
	changed, unwatch := s.watch(ctx, id)
	defer unwatch()
	args := s.common(owner, id)
	for _, k := range keys {
		args = append(args, k)
	}
	for {
		reply, err := s.run(ctx, "await task input", taskTakeScript, []string{s.taskKey(id)}, args...)
		switch {
		case err == nil:
			if len(reply) != len(keys) {
				return nil, errors.New("store/redis: await task input: a short reply")
			}
			out := make(map[string]json.RawMessage, len(keys))
			for i, k := range keys {
				v, _ := reply[i].(string)
				out[k] = json.RawMessage(v)
			}
			return out, nil
		case errors.Is(err, taskstore.ErrNotFound), errors.Is(err, taskstore.ErrTerminal):
			return nil, err
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		if err := s.pause(ctx, changed); err != nil {
			return nil, err
		}
	}
}
