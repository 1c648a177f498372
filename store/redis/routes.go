package redis

import (
	"context"
	"fmt"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// DefaultMaxRoutedBytes is the default of EventStoreOptions.MaxRoutedBytes:
// a POST body of the handler's default bound (4 MiB, which a client's
// response to an elicitation may fill) and room for the envelope.
const DefaultMaxRoutedBytes = 4<<20 + 16<<10

var (
	_ eventstore.Replicas       = (*EventStore)(nil)
	_ eventstore.SessionUpdater = (*EventStore)(nil)
)

// ReplicaID names this process among the replicas: its holder id, whose
// liveness key SessionHeld checks (see sessions.go). It starts the
// heartbeat, once.
func (s *EventStore) ReplicaID() string {
	s.startHolder()
	return s.holder.id
}

func (s *EventStore) replicaChannel(id string) string { return s.prefix + "replica:" + id }
func (s *EventStore) allReplicasChannel() string      { return s.prefix + "replicas" }

// SendTo publishes msg on the Pub/Sub channel of replica to, or on the one
// every replica listens to when to is "". A message to a replica that no
// process listens for (PUBLISH counted no receiver) fails with
// eventstore.ErrNoReplica; one over MaxRoutedBytes with
// ErrMessageTooLarge; Redis not answering within the timeout, with ErrDown.
func (s *EventStore) SendTo(ctx context.Context, to string, msg []byte) error {
	if len(msg) > s.opts.MaxRoutedBytes {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrMessageTooLarge, len(msg), s.opts.MaxRoutedBytes)
	}
	ch := s.allReplicasChannel()
	if to != "" {
		ch = s.replicaChannel(to)
	}
	n, err := call(ctx, &s.breaker, s.opts.Timeout, "send to replica", func(ctx context.Context) (int64, error) {
		return s.rdb.Publish(ctx, ch, msg).Result()
	})
	if err != nil {
		return err
	}
	if n == 0 && to != "" {
		return fmt.Errorf("%w: %s", eventstore.ErrNoReplica, to)
	}
	return nil
}

// Listen subscribes to this replica's channel and to the one of every
// replica, and delivers what arrives on either, one message at a time,
// until stop is called. It returns once Redis confirmed both
// subscriptions (within the timeout, or ErrDown). A lost connection is
// re-established as the Bus does; what was published meanwhile is lost,
// and once receiving again Listen calls deliver(nil) to say so (once per
// subscription that lost something).
func (s *EventStore) Listen(ctx context.Context, deliver func(msg []byte)) (stop func(), err error) {
	var mu sync.Mutex // deliver never runs concurrently with itself
	one := func(m []byte) {
		// nil is the Bus's loss signal, passed on: the handler re-reads
		// the records of the sessions it holds.
		mu.Lock()
		defer mu.Unlock()
		deliver(m)
	}
	opts := BusOptions{Timeout: s.opts.Timeout, MaxMessageBytes: s.opts.MaxRoutedBytes}
	own := NewBus(s.rdb, "", opts)
	own.channel = s.replicaChannel(s.ReplicaID())
	all := NewBus(s.rdb, "", opts)
	all.channel = s.allReplicasChannel()
	stopOwn, err := own.Subscribe(ctx, one)
	if err != nil {
		return nil, err
	}
	stopAll, err := all.Subscribe(ctx, one)
	if err != nil {
		stopOwn()
		return nil, err
	}
	return func() { stopOwn(); stopAll() }, nil
}

// renewLua renews the expiry of a session's hash as an append does (see
// appendBatchScript): only when less than a TTL is left, then to TTL plus
// a sixteenth, noting it in the field x, so that a record update never
// shortens an expiry an append set, and the appends keep knowing when
// their hash expires. KEYS[1]: the session's hash; ttl in ms.
const renewLua = `
local function renew(key, ttl)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local x = tonumber(redis.call('HGET', key, 'x') or '0') or 0
  if x - now < ttl then
    x = now + ttl + math.floor(ttl / 16)
    redis.call('HSET', key, 'x', x)
    redis.call('PEXPIREAT', key, x)
  end
end
`

// updateScript replaces the record of a session that has one, and renews
// the expiry of its hash. KEYS: the session's hash. ARGV: record, TTL in
// ms.
var updateScript = goredis.NewScript(renewLua + `
if redis.call('HEXISTS', KEYS[1], 'rec') == 0 then return 0 end
redis.call('HSET', KEYS[1], 'rec', ARGV[1])
renew(KEYS[1], tonumber(ARGV[2]))
return 1
`)

// touchScript renews the expiry of a session's hash, if it has a record.
// KEYS: the session's hash. ARGV: TTL in ms.
var touchScript = goredis.NewScript(renewLua + `
if redis.call('HEXISTS', KEYS[1], 'rec') == 0 then return 0 end
renew(KEYS[1], tonumber(ARGV[1]))
return 1
`)

// UpdateSession replaces the record of a session, keeping its holder; it
// reports false, writing nothing, when the session has no record (never
// recorded, deleted or expired), so that a session ended on one replica
// is not brought back by a late update from another.
func (s *EventStore) UpdateSession(ctx context.Context, sessionID string, record []byte) (bool, error) {
	if len(record) > MaxSessionRecordBytes {
		return false, fmt.Errorf("%w: %d bytes, more than %d", ErrRecordTooLarge, len(record), MaxSessionRecordBytes)
	}
	key := s.key(sessionID)
	n, err := call(ctx, &s.breaker, s.opts.Timeout, "update session", func(ctx context.Context) (int64, error) {
		return updateScript.Run(ctx, s.rdb, []string{key}, record, s.opts.TTL.Milliseconds()).Int64()
	})
	return n == 1, err
}

// TouchSession renews the expiry of a session's hash (its record and its
// events), as an append does; a session without a record is left alone.
func (s *EventStore) TouchSession(ctx context.Context, sessionID string) error {
	key := s.key(sessionID)
	_, err := call(ctx, &s.breaker, s.opts.Timeout, "touch session", func(ctx context.Context) (int64, error) {
		return touchScript.Run(ctx, s.rdb, []string{key}, s.opts.TTL.Milliseconds()).Int64()
	})
	return err
}

// ReplicaAlive reports whether the replica named still renews its
// liveness key: false within three heartbeats of its death, at once after
// its Close.
func (s *EventStore) ReplicaAlive(ctx context.Context, replica string) (bool, error) {
	return call(ctx, &s.breaker, s.opts.Timeout, "replica alive", func(ctx context.Context) (bool, error) {
		n, err := s.rdb.Exists(ctx, s.holderKey(replica)).Result()
		return n == 1, err
	})
}
