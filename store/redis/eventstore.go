package redis

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// ErrDown reports that Redis could not carry out a command of an
// [EventStore] or a [Bus] in time: it refused the connection, did not answer
// within the store's timeout, or answered with an error of its own (out of
// memory, loading, read-only replica). The message was not kept or
// delivered; the caller may answer 503 and let its client retry. It wraps
// eventstore.ErrStoreUnavailable, on which the Streamable HTTP handler
// answers 503; errors wrap it together with the client's error.
var ErrDown = fmt.Errorf("store/redis: Redis is down or did not answer in time: %w", eventstore.ErrStoreUnavailable)

// Defaults of [EventStoreOptions] (the bounds are those of the in-memory
// eventstore.Memory), and the shared timeout of the store and the bus.
const (
	DefaultMaxEventsPerStream   = eventstore.DefaultMaxEventsPerStream
	DefaultMaxBytesPerSession   = eventstore.DefaultMaxBytesPerSession
	DefaultMaxStreamsPerSession = eventstore.DefaultMaxStreamsPerSession
	DefaultEventTTL             = time.Hour
	DefaultTimeout              = 2 * time.Second
)

var (
	_ eventstore.Store            = (*EventStore)(nil)
	_ eventstore.SessionDirectory = (*EventStore)(nil)
)

// EventStoreOptions bounds an [EventStore]. Zero values mean the defaults.
type EventStoreOptions struct {
	// MaxEventsPerStream bounds the events kept per stream (the oldest
	// go first); zero means DefaultMaxEventsPerStream.
	MaxEventsPerStream int
	// MaxBytesPerSession bounds the bytes of event data kept per session;
	// past it, the oldest events of the session's oldest streams go
	// first. Zero means DefaultMaxBytesPerSession.
	MaxBytesPerSession int
	// MaxStreamsPerSession bounds the streams remembered per session; past
	// it the oldest stream is forgotten. Zero means
	// DefaultMaxStreamsPerSession.
	MaxStreamsPerSession int
	// TTL is how long a session's events are kept after its last event:
	// the bound on what a session that no process deletes (its replica
	// died) leaves in Redis. Zero means DefaultEventTTL; keep it above
	// the handler's session timeout.
	TTL time.Duration
	// Timeout bounds each call, whatever the caller's context (the
	// handler appends under the stream's lock, with no deadline of its
	// own): past it the call fails with ErrDown. Zero means
	// DefaultTimeout. It holds only if the client honours context
	// deadlines (goredis.Options.ContextTimeoutEnabled) or has read and
	// dial timeouts no longer than it.
	Timeout time.Duration
	// Heartbeat is how often a process that recorded sessions
	// (PutSession) renews its liveness; the other replicas take it for
	// gone three heartbeats after its last renewal, and then end the
	// resumed streams of its sessions once they have delivered every
	// kept event. Zero means DefaultHeartbeat.
	Heartbeat time.Duration
	// MaxRoutedBytes bounds a message sent between replicas (SendTo; see
	// routes.go): SendTo refuses a longer one, Listen drops one. Zero
	// means DefaultMaxRoutedBytes.
	MaxRoutedBytes int
}

// EventStore keeps the events of Streamable HTTP SSE streams in Redis, so
// that a client can resume a stream (GET with Last-Event-ID) through any
// replica, also after the one that produced the events died. It has the
// eventstore.Store and eventstore.SessionDirectory; the replicas that share
// sessions give it the same Redis and prefix.
//
// Each stream is a Redis Stream whose entry ids are 0-SEQ, so a replay
// after an event id is one XRANGE; a hash per session counts the bytes kept
// and remembers each stream's last sequence number, and a sorted set orders
// the session's streams by age. Every change is one Lua script, so the
// bounds hold whichever processes append. All keys of a session share the
// hash tag {SESSION} (unless the prefix has one), so the scripts touch one
// slot; the scripts also reach the session's other stream keys, which
// Redis Cluster tolerates within one slot but does not promise (the tests
// run on a single Redis only).
//
// It is also the handler's session directory (eventstore.SessionDirectory): a
// replica that does not hold a session can replay its streams, and tell
// whether the replica that holds it still runs (a liveness key renewed
// every Heartbeat). Close ends that.
//
// Safe for concurrent use by any number of processes.
type EventStore struct {
	rdb     goredis.UniversalClient
	prefix  string
	opts    EventStoreOptions
	breaker breaker
	holder  holder
}

// NewEventStore returns an event store with its keys under prefix (such as
// "myapp:mcp:"). The caller keeps the client and closes it.
func NewEventStore(rdb goredis.UniversalClient, prefix string, opts EventStoreOptions) *EventStore {
	if opts.MaxEventsPerStream <= 0 {
		opts.MaxEventsPerStream = DefaultMaxEventsPerStream
	}
	if opts.MaxBytesPerSession <= 0 {
		opts.MaxBytesPerSession = DefaultMaxBytesPerSession
	}
	if opts.MaxStreamsPerSession <= 0 {
		opts.MaxStreamsPerSession = DefaultMaxStreamsPerSession
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultEventTTL
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.MaxRoutedBytes <= 0 {
		opts.MaxRoutedBytes = DefaultMaxRoutedBytes
	}
	return &EventStore{rdb: rdb, prefix: prefix, opts: opts}
}

// Key layout, under the prefix, for session SID:
//
//	ev:{SID}            hash: bytes (kept in the session), n (streams
//	                    created), l:STREAM (last seq appended), b:STREAM
//	                    (bytes kept of the stream)
//	ev:{SID}:streams    sorted set of stream ids, by creation
//	ev:{SID}:s:STREAM   stream; entry 0-SEQ has field d, the message
//
// All three expire TTL after the session's last append.
func (s *EventStore) keys(sessionID string) (meta, streams, streamPrefix string) {
	meta = s.prefix + "ev:{" + sessionID + "}"
	return meta, meta + ":streams", meta + ":s:"
}

// appendScript keeps one event and applies the bounds. KEYS: meta,
// streams, the stream. ARGV: stream id, seq, data, max events, max bytes,
// max streams, TTL in ms, the prefix of the session's stream keys.
var appendScript = goredis.NewScript(`
local meta, zs, sk = KEYS[1], KEYS[2], KEYS[3]
local sid, seq, data = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local maxEv, maxBytes, maxStreams = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local ttl, skp = ARGV[7], ARGV[8]

local function bytesOf(m)
  return tonumber(redis.call('HGET', meta, 'b:' .. m) or '0')
end
-- dropFirst drops the oldest kept event of stream m; false if none is kept.
local function dropFirst(m)
  local e = redis.call('XRANGE', skp .. m, '-', '+', 'COUNT', 1)
  if #e == 0 then return false end
  local n = string.len(e[1][2][2])
  redis.call('XDEL', skp .. m, e[1][1])
  redis.call('HINCRBY', meta, 'b:' .. m, -n)
  redis.call('HINCRBY', meta, 'bytes', -n)
  return true
end
-- clear forgets what is counted for stream m (its events are gone).
local function clear(m)
  local b = bytesOf(m)
  if b ~= 0 then
    redis.call('HSET', meta, 'b:' .. m, 0)
    redis.call('HINCRBY', meta, 'bytes', -b)
  end
end

local last = redis.call('HGET', meta, 'l:' .. sid)
if not last then
  local n = redis.call('HINCRBY', meta, 'n', 1)
  redis.call('ZADD', zs, n, sid)
  redis.call('DEL', sk)
  while redis.call('ZCARD', zs) > maxStreams do
    local old = redis.call('ZRANGE', zs, 0, 0)[1]
    clear(old)
    redis.call('DEL', skp .. old)
    redis.call('HDEL', meta, 'b:' .. old, 'l:' .. old)
    redis.call('ZREM', zs, old)
  end
else
  last = tonumber(last)
  if seq <= last then
    return redis.error_reply('ORDER event ' .. seq .. ' after event ' .. last)
  end
  if seq ~= last + 1 then
    -- A gap: the events before it could not be replayed whole.
    clear(sid)
    redis.call('DEL', sk)
  end
end
redis.call('XADD', sk, '0-' .. seq, 'd', data)
redis.call('HSET', meta, 'l:' .. sid, seq)
redis.call('HINCRBY', meta, 'b:' .. sid, string.len(data))
redis.call('HINCRBY', meta, 'bytes', string.len(data))
while redis.call('XLEN', sk) > maxEv do dropFirst(sid) end
if tonumber(redis.call('HGET', meta, 'bytes')) > maxBytes then
  local members = redis.call('ZRANGE', zs, 0, -1)
  local i = 1
  while i <= #members and tonumber(redis.call('HGET', meta, 'bytes')) > maxBytes do
    if not dropFirst(members[i]) then
      clear(members[i]) -- expired, or emptied: nothing of it is kept
      i = i + 1
    end
  end
end
redis.call('PEXPIRE', meta, ttl)
redis.call('PEXPIRE', zs, ttl)
redis.call('PEXPIRE', sk, ttl)
return 1
`)

// afterScript returns {1, seq, data, seq, data, ...} for the events after
// ARGV[2], or {0} if any of them is not kept. KEYS: meta, the stream.
// ARGV: stream id, after.
var afterScript = goredis.NewScript(`
local meta, sk = KEYS[1], KEYS[2]
local last = redis.call('HGET', meta, 'l:' .. ARGV[1])
if not last then return {0} end
last = tonumber(last)
local after = tonumber(ARGV[2])
if after > last then return {0} end
if after == last then return {1} end
local first = redis.call('XRANGE', sk, '-', '+', 'COUNT', 1)
if #first == 0 then return {0} end
local f = tonumber(string.match(first[1][1], '^0%-(%d+)$'))
if f == nil or after < f - 1 then return {0} end
local r = redis.call('XRANGE', sk, '0-' .. (after + 1), '+')
if #r ~= last - after then return {0} end
local out = {1}
for _, e in ipairs(r) do
  out[#out + 1] = tonumber(string.match(e[1], '^0%-(%d+)$'))
  out[#out + 1] = e[2][2]
end
return out
`)

// deleteScript deletes a session's keys. KEYS: meta, streams. ARGV: the
// prefix of the session's stream keys.
var deleteScript = goredis.NewScript(`
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  redis.call('DEL', ARGV[1] .. m)
end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
`)

// breaker makes calls fail fast for a while after Redis failed to answer
// one: a frozen Redis would otherwise cost every caller the whole timeout,
// and the Streamable HTTP handler appends events under a stream's lock.
// For one timeout after a failure, calls fail with ErrDown at once; the
// first call after that tries Redis again.
type breaker struct {
	openUntil atomic.Int64 // Unix ns
}

// call bounds a command by timeout and classifies its error.
func call[T any](ctx context.Context, b *breaker, timeout time.Duration, what string, f func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("store/redis: %s: %w", what, err)
	}
	if time.Now().UnixNano() < b.openUntil.Load() {
		return zero, fmt.Errorf("%w: %s: failing fast after a recent failure", ErrDown, what)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := f(cctx)
	if err == nil {
		return v, nil
	}
	if ctx.Err() != nil {
		// The caller gave up; Redis is not to blame.
		return v, fmt.Errorf("store/redis: %s: %w", what, ctx.Err())
	}
	var rerr goredis.Error
	if !errors.As(err, &rerr) {
		// No answer at all (refused, reset, timed out), as opposed to an
		// error reply: spare the next callers the wait.
		b.openUntil.Store(time.Now().Add(timeout).UnixNano())
	}
	return v, fmt.Errorf("%w: %s: %w", ErrDown, what, err)
}

// errOrder reports an event appended out of order.
var errOrder = errors.New("store/redis: event appended out of order")

// Append keeps data as event seq of the stream, evicting old events to
// stay within the bounds, and keeps the session's events TTL longer. Seq
// must be greater than that of the stream's previous event; a seq that
// skips some makes the events before it unavailable. It fails with ErrDown
// when Redis does not answer within the timeout.
func (s *EventStore) Append(ctx context.Context, sessionID, streamID string, seq int64, data []byte) error {
	meta, zs, skp := s.keys(sessionID)
	_, err := call(ctx, &s.breaker, s.opts.Timeout, "append", func(ctx context.Context) (any, error) {
		return appendScript.Run(ctx, s.rdb, []string{meta, zs, skp + streamID},
			streamID, seq, data, s.opts.MaxEventsPerStream, s.opts.MaxBytesPerSession,
			s.opts.MaxStreamsPerSession, s.opts.TTL.Milliseconds(), skp).Result()
	})
	var rerr goredis.Error
	if errors.As(err, &rerr) && len(rerr.Error()) > 6 && rerr.Error()[:6] == "ORDER " {
		return fmt.Errorf("%w: stream %q: %s", errOrder, streamID, rerr.Error()[6:])
	}
	return err
}

// After returns the events of the stream after seq after, in order. If any
// of them is no longer kept, or the stream is unknown, the error wraps
// eventstore.ErrUnavailable; if Redis does not answer in time, ErrDown.
func (s *EventStore) After(ctx context.Context, sessionID, streamID string, after int64) ([]eventstore.Event, error) {
	meta, _, skp := s.keys(sessionID)
	res, err := call(ctx, &s.breaker, s.opts.Timeout, "replay", func(ctx context.Context) ([]any, error) {
		return afterScript.Run(ctx, s.rdb, []string{meta, skp + streamID}, streamID, after).Slice()
	})
	if err != nil {
		return nil, err
	}
	if len(res) == 0 || res[0] != int64(1) || len(res)%2 != 1 {
		return nil, fmt.Errorf("stream %q after event %d: %w", streamID, after, eventstore.ErrUnavailable)
	}
	if len(res) == 1 {
		return nil, nil
	}
	out := make([]eventstore.Event, 0, len(res)/2)
	for i := 1; i < len(res); i += 2 {
		seq, ok1 := res[i].(int64)
		data, ok2 := res[i+1].(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("store/redis: replay of stream %q: unexpected reply %T, %T", streamID, res[i], res[i+1])
		}
		out = append(out, eventstore.Event{Seq: seq, Data: []byte(data)})
	}
	return out, nil
}

// DeleteSession discards the events of every stream of a session.
func (s *EventStore) DeleteSession(ctx context.Context, sessionID string) error {
	meta, zs, skp := s.keys(sessionID)
	_, err := call(ctx, &s.breaker, s.opts.Timeout, "delete session", func(ctx context.Context) (any, error) {
		return deleteScript.Run(ctx, s.rdb, []string{meta, zs}, skp).Result()
	})
	return err
}
