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
	// TTL is how long a session's events are kept after its last event
	// (up to TTL/16 longer: the expiry is renewed in steps, not at every
	// event): the bound on what a session that no process deletes (its
	// replica died) leaves in Redis. Zero means DefaultEventTTL; keep it above
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
	// MaxBatch bounds the events written in one round trip by the
	// store's group commit (see Append): the appends that arrive while a
	// batch is in flight go together in the next one, up to MaxBatch.
	// Zero means DefaultMaxBatch.
	MaxBatch int
	// MaxBatchBytes bounds the event data of one batch: a batch takes no
	// more events once it holds this much (it always takes one). Zero
	// means DefaultMaxBatchBytes.
	MaxBatchBytes int
	// MaxQueued bounds the appends waiting for the next batch; past it an
	// Append waits for room, within Timeout. Zero means
	// DefaultMaxQueued.
	MaxQueued int
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
// the session's streams by age. Every change is made by a Lua script, so
// the bounds hold whichever processes append. Appends are group-committed
// (see Append): one script call keeps the events of many streams and
// sessions, in one round trip. All keys of a session share the hash tag
// {SESSION} (unless the prefix has one); on a single Redis one call spans
// sessions, and on a Redis Cluster or Ring (any client other than a
// *goredis.Client) the batch is one call per session, pipelined, so that a
// call touches one slot. The scripts also reach the session's stream keys
// without naming them in KEYS, which Redis Cluster tolerates within one
// slot but does not promise (the tests run on a single Redis only).
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
	commit  *committer
	// The bounds as the append script's first arguments.
	limitArgs [4]any
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
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.MaxBatchBytes <= 0 {
		opts.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if opts.MaxQueued <= 0 {
		opts.MaxQueued = DefaultMaxQueued
	}
	s := &EventStore{rdb: rdb, prefix: prefix, opts: opts}
	// Boxed once: every batch passes them.
	s.limitArgs = [4]any{opts.MaxEventsPerStream, opts.MaxBytesPerSession, opts.MaxStreamsPerSession, opts.TTL.Milliseconds()}
	s.commit = newCommitter(s)
	return s
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

// appendBatchScript keeps a batch of events, in order, applying the
// bounds after each. KEYS: the meta keys of the sessions in the batch (the
// other keys of a session are derived from its meta key). ARGV: max events
// per stream, max bytes per session, max streams per session, TTL in ms,
// then two per event: "K SEQ STREAM" (K the event's session as its
// position in KEYS) and the data. It answers one element per event: 1
// when kept, "ORDER ..." when refused as out of order, "ERR ..." when
// Redis refused a command for it.
//
// The common case costs four commands (HMGET, XADD, HSET, XLEN; a new
// stream costs ZADD, ZCARD and PEXPIREAT instead of XLEN, and the
// eviction of the oldest stream four more): every command a script runs costs Redis
// about a microsecond beyond its own work. Expiry is renewed in steps
// rather than per event: field x of the meta hash holds the time (Redis's
// clock) at which the session's keys expire; when it is less than TTL
// away, every key of the session is given TTL + TTL/16 from now, so that
// the keys outlive the session's last event by at least TTL and at most
// TTL + TTL/16, at one renewal per TTL/16 of activity. A new stream's key
// expires with the others (at x).
var appendBatchScript = goredis.NewScript(`
local maxEv, maxBytes, maxStreams = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local renew = {} -- meta key -> true: renew the session's expiry at the end

-- dropFirst drops the oldest kept event of stream m; false if none is kept.
local function dropFirst(meta, skp, m)
  local e = redis.call('XRANGE', skp .. m, '-', '+', 'COUNT', 1)
  if #e == 0 then return false end
  local n = string.len(e[1][2][2])
  redis.call('XDEL', skp .. m, e[1][1])
  redis.call('HINCRBY', meta, 'b:' .. m, -n)
  redis.call('HINCRBY', meta, 'bytes', -n)
  return true
end
-- clear forgets what is counted for stream m (its events are gone).
local function clear(meta, m)
  local b = tonumber(redis.call('HGET', meta, 'b:' .. m) or '0')
  if b ~= 0 then
    redis.call('HSET', meta, 'b:' .. m, 0)
    redis.call('HINCRBY', meta, 'bytes', -b)
  end
end

local function append(meta, sid, seq, data)
  local zs, skp = meta .. ':streams', meta .. ':s:'
  local sk = skp .. sid
  local v = redis.call('HMGET', meta, 'l:' .. sid, 'b:' .. sid, 'bytes', 'x', 'n')
  local last, kept, total = v[1], tonumber(v[2] or '0'), tonumber(v[3] or '0')
  local x, n = tonumber(v[4] or '0'), tonumber(v[5] or '0')
  if not last then
    n = n + 1
    redis.call('ZADD', zs, n, sid)
    local count = redis.call('ZCARD', zs)
    while count > maxStreams do
      local old = redis.call('ZPOPMIN', zs)[1]
      total = total - tonumber(redis.call('HGET', meta, 'b:' .. old) or '0')
      redis.call('DEL', skp .. old)
      redis.call('HDEL', meta, 'b:' .. old, 'l:' .. old)
      count = count - 1
    end
    kept = 0
  else
    last = tonumber(last)
    if seq <= last then
      return 'ORDER event ' .. seq .. ' after event ' .. last
    end
    if seq ~= last + 1 then
      -- A gap: the events before it could not be replayed whole.
      total = total - kept
      kept = 0
      redis.call('DEL', sk)
    end
  end
  local id = '0-' .. seq
  if not pcall(redis.call, 'XADD', sk, id, 'd', data) then
    -- A key left over from a stream of that id that the session's hash
    -- forgot (it expired first): start the stream afresh.
    redis.call('DEL', sk)
    redis.call('XADD', sk, id, 'd', data)
  end
  total = total + string.len(data)
  redis.call('HSET', meta, 'l:' .. sid, seq, 'b:' .. sid, kept + string.len(data), 'bytes', total, 'n', n)
  if last then
    while redis.call('XLEN', sk) > maxEv do dropFirst(meta, skp, sid) end
  elseif x > now then
    redis.call('PEXPIREAT', sk, x)
  end
  if total > maxBytes then
    local members = redis.call('ZRANGE', zs, 0, -1)
    local i = 1
    while i <= #members and tonumber(redis.call('HGET', meta, 'bytes')) > maxBytes do
      if not dropFirst(meta, skp, members[i]) then
        clear(meta, members[i]) -- expired, or emptied: nothing of it is kept
        i = i + 1
      end
    end
  end
  if x - now < ttl then renew[meta] = true end
  return 1
end

local out = {}
for i = 5, #ARGV, 2 do
  local h = ARGV[i]
  local a = string.find(h, ' ', 1, true)
  local b = string.find(h, ' ', a + 1, true)
  -- One event's failure (a key of another type, say) is its own: the
  -- others of the batch are kept all the same.
  local ok, r = pcall(append, KEYS[tonumber(string.sub(h, 1, a - 1))],
    string.sub(h, b + 1), tonumber(string.sub(h, a + 1, b - 1)), ARGV[i + 1])
  if ok then
    out[#out + 1] = r
  else
    out[#out + 1] = 'ERR ' .. tostring(type(r) == 'table' and r.err or r)
  end
end
local at = now + ttl + math.floor(ttl / 16)
for meta in pairs(renew) do
  local zs, skp = meta .. ':streams', meta .. ':s:'
  for _, m in ipairs(redis.call('ZRANGE', zs, 0, -1)) do
    redis.call('PEXPIREAT', skp .. m, at)
  end
  redis.call('HSET', meta, 'x', at)
  redis.call('PEXPIREAT', meta, at)
  redis.call('PEXPIREAT', zs, at)
end
return out
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

// isOpen reports whether calls fail fast now.
func (b *breaker) isOpen() bool { return time.Now().UnixNano() < b.openUntil.Load() }

// call bounds a command by timeout and classifies its error.
func call[T any](ctx context.Context, b *breaker, timeout time.Duration, what string, f func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("store/redis: %s: %w", what, err)
	}
	if b.isOpen() {
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
// skips some makes the events before it unavailable.
//
// Appends are written in batches (a group commit): Append queues the
// event for the store's one writer, which sends what has gathered while
// the previous batch was in flight, and returns once the event's batch is
// kept in Redis. The events of one stream must be appended by one caller
// at a time (the handler appends under the stream's lock), and reach
// Redis in the order appended; different streams and sessions are
// appended concurrently and share the round trips. Append fails with
// ErrDown when Redis does not answer within the store's Timeout of the
// call (queued behind a full queue included), with ErrClosed after Close,
// and with ctx's error when ctx ends first; the event may then still be
// kept, by the batch that was being written.
func (s *EventStore) Append(ctx context.Context, sessionID, streamID string, seq int64, data []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store/redis: append: %w", err)
	}
	if s.commit.closed() {
		return ErrClosed
	}
	if s.breaker.isOpen() {
		return fmt.Errorf("%w: append: failing fast after a recent failure", ErrDown)
	}
	return s.commit.add(ctx, sessionID, streamID, seq, data)
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
