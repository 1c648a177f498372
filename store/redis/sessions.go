package redis

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// DefaultHeartbeat is the default of EventStoreOptions.Heartbeat.
const DefaultHeartbeat = 2 * time.Second

// MaxSessionRecordBytes bounds a record given to [EventStore.PutSession] or
// [EventStore.UpdateSession]. A record shared by replicas holds the
// client's initialize params (capabilities, clientInfo and its icons),
// rarely over a few kilobytes; a larger one is refused, and the session
// then stays on the replica that created it.
const MaxSessionRecordBytes = 16 << 10

// ErrRecordTooLarge reports a session record over MaxSessionRecordBytes.
var ErrRecordTooLarge = errors.New("store/redis: session record too large")

// holder is the liveness of this process as the holder of the sessions
// it recorded: the key PREFIX+"holder:"+ID, which a goroutine renews every
// Heartbeat and which expires three heartbeats after the process stopped
// renewing it (it died, or Close deleted it).
type holder struct {
	once   sync.Once
	id     string
	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
}

func (s *EventStore) holderKey(id string) string { return s.prefix + "holder:" + id }

// start gives the store its holder id and starts the heartbeat, once.
func (s *EventStore) startHolder() {
	s.holder.once.Do(func() {
		s.holder.id = rand.Text()
		s.holder.stop = make(chan struct{})
		s.holder.done = make(chan struct{})
		go s.heartbeat()
	})
}

func (s *EventStore) heartbeat() {
	defer close(s.holder.done)
	t := time.NewTicker(s.opts.Heartbeat)
	defer t.Stop()
	for {
		// A failed renewal is retried at the next tick; three in a row
		// and the other replicas take this one for gone, which only
		// makes them end resumed streams sooner. The first is at once:
		// a replica that routes messages (routes.go) is alive from its
		// start.
		_, _ = call(context.Background(), &s.breaker, s.opts.Timeout, "heartbeat", func(ctx context.Context) (string, error) {
			return s.rdb.Set(ctx, s.holderKey(s.holder.id), 1, 3*s.opts.Heartbeat).Result()
		})
		select {
		case <-s.holder.stop:
			return
		case <-t.C:
		}
	}
}

// Close stops the heartbeat of this process and deletes its liveness key,
// so that the other replicas know at once that the sessions it recorded
// will get no more events. Call it after the Streamable HTTP handler has
// shut down; the store is not to be used afterwards. The client stays
// open.
func (s *EventStore) Close() error {
	s.commit.close() // appends fail with ErrClosed from now on
	var err error
	s.holder.closed.Do(func() {
		s.startHolder() // so that there is something to stop
		close(s.holder.stop)
		<-s.holder.done
		_, err = call(context.Background(), &s.breaker, s.opts.Timeout, "close", func(ctx context.Context) (int64, error) {
			return s.rdb.Del(ctx, s.holderKey(s.holder.id)).Result()
		})
	})
	return err
}

// PutSession records a session created by this process, with this
// process as its holder, in the session's hash (so that it expires and is
// deleted with the session's events). It is the handler's session
// directory (mcp.SessionDirectory).
func (s *EventStore) PutSession(ctx context.Context, sessionID string, record []byte) error {
	if len(record) > MaxSessionRecordBytes {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrRecordTooLarge, len(record), MaxSessionRecordBytes)
	}
	s.startHolder()
	meta := s.key(sessionID)
	_, err := call(ctx, &s.breaker, s.opts.Timeout, "record session", func(ctx context.Context) ([]goredis.Cmder, error) {
		return s.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			p.Set(ctx, s.holderKey(s.holder.id), 1, 3*s.opts.Heartbeat)
			p.HSet(ctx, meta, "rec", record, "holder", s.holder.id)
			p.PExpire(ctx, meta, s.opts.TTL)
			return nil
		})
	})
	return err
}

// SessionRecord returns the record of a session, or ok false if there is
// none (never recorded, deleted, or expired with the session's events).
func (s *EventStore) SessionRecord(ctx context.Context, sessionID string) ([]byte, bool, error) {
	meta := s.key(sessionID)
	v, err := call(ctx, &s.breaker, s.opts.Timeout, "session record", func(ctx context.Context) (string, error) {
		v, err := s.rdb.HGet(ctx, meta, "rec").Result()
		if errors.Is(err, goredis.Nil) {
			return "", nil
		}
		return v, err
	})
	if err != nil || v == "" {
		return nil, false, err
	}
	return []byte(v), true, nil
}

// SessionHeld reports whether the process that recorded the session still
// renews its liveness key: false within three heartbeats of its death, at
// once after its Close.
func (s *EventStore) SessionHeld(ctx context.Context, sessionID string) (bool, error) {
	meta := s.key(sessionID)
	return call(ctx, &s.breaker, s.opts.Timeout, "session holder", func(ctx context.Context) (bool, error) {
		id, err := s.rdb.HGet(ctx, meta, "holder").Result()
		if errors.Is(err, goredis.Nil) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		n, err := s.rdb.Exists(ctx, s.holderKey(id)).Result()
		return n == 1, err
	})
}
