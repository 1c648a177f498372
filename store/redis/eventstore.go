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
// A session is one hash (see key): each event a field, beside the
// counts that the bounds need (bytes kept, each stream's first and last
// sequence numbers, the streams in the order created), so a replay is one
// HMGET. Every change is made by a Lua script, so the bounds hold
// whichever processes append. Appends are group-committed (see Append):
// one script call keeps the events of many streams and sessions, in one
// round trip. On a single Redis one call spans sessions; on a Redis
// Cluster or Ring (any client other than a *goredis.Client) a batch is one
// call per session, pipelined, so that each call names its one key.
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
	if opts.MaxRoutedBytes <= 0 {
		opts.MaxRoutedBytes = DefaultMaxRoutedBytes
	}
	s := &EventStore{rdb: rdb, prefix: prefix, opts: opts}
	// Boxed once: every batch passes them.
	s.limitArgs = [4]any{opts.MaxEventsPerStream, opts.MaxBytesPerSession, opts.MaxStreamsPerSession, opts.TTL.Milliseconds()}
	s.commit = newCommitter(s)
	return s
}

// Key layout, under the prefix: one hash per session, ev:{SID}, whose
// fields are
//
//	e:STREAM:SEQ   the data of event SEQ of the stream
//	l:STREAM       the last seq appended to the stream
//	f:STREAM       the seq of its first event kept (l+1 when none is)
//	b:STREAM       the bytes of event data kept of the stream
//	o:N            the id of the N-th stream created in the session
//	n, lo, old     streams created; the number and id of the oldest one
//	               still remembered (streams lo..n are)
//	bytes          the bytes of event data kept in the session
//	x              when the hash expires (ms, Redis's clock)
//	rec, holder    the session's record (see PutSession)
//
// One key per session: appending an event is two commands (HMGET, HSET),
// a replay one HMGET, a deletion one DEL, and on a Redis Cluster every
// command of a session names its one key. A stream id may hold any byte:
// the seq after the last colon of e:STREAM:SEQ is a number.
func (s *EventStore) key(sessionID string) string {
	return s.prefix + "ev:{" + sessionID + "}"
}

// appendBatchScript keeps a batch of events, in order, applying the
// bounds after each. KEYS: the keys of the sessions in the batch. ARGV:
// max events per stream, max bytes per session, max streams per session,
// TTL in ms, then two per event: "K SEQ STREAM" (K the event's session as
// its position in KEYS) and the data. It answers one element per event: 1
// when kept, "ORDER ..." when refused as out of order, "ERR ..." when
// Redis refused a command for it.
//
// An event on a live stream costs two commands, HMGET and HSET (and an
// HSTRLEN and an HDEL once the stream holds its bound); one on a new
// stream two more when the oldest stream must be forgotten: each command a
// script runs costs Redis about a microsecond beyond its own work.
// Expiry is renewed in steps rather than per event: when x is less than
// TTL away, the hash is given TTL + TTL/16 from now, so that it outlives
// the session's last event by at least TTL and at most TTL + TTL/16.
var appendBatchScript = goredis.NewScript(`
local maxEv, maxBytes, maxStreams = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function num(v) return tonumber(v or '0') or 0 end
local function ev(m, seq) return 'e:' .. m .. ':' .. string.format('%d', seq) end

-- hdel deletes the fields named in list, a thousand at a time (unpack
-- has a bound).
local function hdel(key, list)
  for i = 1, #list, 1000 do
    redis.call('HDEL', key, unpack(list, i, math.min(i + 999, #list)))
  end
end

-- evictBytes drops the oldest events of the session, oldest stream
-- first, until it keeps at most maxBytes.
local function evictBytes(key)
  local v = redis.call('HMGET', key, 'lo', 'n', 'bytes')
  local i, n, total = num(v[1]), num(v[2]), num(v[3])
  while i <= n and total > maxBytes do
    local m = redis.call('HGET', key, 'o:' .. i)
    if m then
      local w = redis.call('HMGET', key, 'f:' .. m, 'l:' .. m, 'b:' .. m)
      local f, l, b = num(w[1]), num(w[2]), num(w[3])
      local del = {}
      while f <= l and total > maxBytes do
        local e = ev(m, f)
        local sz = redis.call('HSTRLEN', key, e)
        del[#del + 1] = e
        f, b, total = f + 1, b - sz, total - sz
      end
      hdel(key, del)
      redis.call('HSET', key, 'f:' .. m, f, 'b:' .. m, b)
    end
    i = i + 1
  end
  redis.call('HSET', key, 'bytes', total)
end

local function append(key, sid, seq, data)
  local v = redis.call('HMGET', key, 'l:' .. sid, 'f:' .. sid, 'b:' .. sid, 'bytes', 'x', 'n', 'lo', 'old')
  local last = v[1]
  local first, kept, total = num(v[2]), num(v[3]), num(v[4])
  local x, n, lo, old = num(v[5]), num(v[6]), num(v[7]), v[8]
  local del, set = {}, {}
  if not last then
    n = n + 1
    set[#set + 1] = 'o:' .. n
    set[#set + 1] = sid
    if lo == 0 or not old then lo, old = n, sid end
    while n - lo + 1 > maxStreams do
      -- Forget the oldest stream, and learn the next oldest.
      local w = redis.call('HMGET', key, 'f:' .. old, 'l:' .. old, 'b:' .. old, 'o:' .. (lo + 1))
      for q = num(w[1]), num(w[2]) do del[#del + 1] = ev(old, q) end
      del[#del + 1] = 'f:' .. old
      del[#del + 1] = 'l:' .. old
      del[#del + 1] = 'b:' .. old
      del[#del + 1] = 'o:' .. lo
      total = total - num(w[3])
      lo = lo + 1
      old = w[4] or sid -- o:n, the new stream's, is not written yet
    end
    first, kept = seq, 0
  else
    last = tonumber(last)
    if seq <= last then
      return 'ORDER event ' .. seq .. ' after event ' .. last
    end
    if seq ~= last + 1 then
      -- A gap: the events before it could not be replayed whole.
      for q = first, last do del[#del + 1] = ev(sid, q) end
      total = total - kept
      first, kept = seq, 0
    end
  end
  local len = string.len(data)
  kept, total = kept + len, total + len
  while seq - first + 1 > maxEv do
    local e = ev(sid, first)
    local sz = redis.call('HSTRLEN', key, e)
    del[#del + 1] = e
    first, kept, total = first + 1, kept - sz, total - sz
  end
  local renew = x - now < ttl
  if renew then x = now + ttl + math.floor(ttl / 16) end
  hdel(key, del)
  redis.call('HSET', key, ev(sid, seq), data, 'l:' .. sid, seq, 'f:' .. sid, first,
    'b:' .. sid, kept, 'bytes', total, 'n', n, 'lo', lo, 'old', old or sid, 'x', x, unpack(set))
  if renew then redis.call('PEXPIREAT', key, x) end
  if total > maxBytes then evictBytes(key) end
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
return out
`)

// afterScript returns {1, seq, data, seq, data, ...} for the events after
// ARGV[2], or {0} if any of them is not kept. KEYS: the session's key.
// ARGV: stream id, after.
var afterScript = goredis.NewScript(`
local key, sid = KEYS[1], ARGV[1]
local v = redis.call('HMGET', key, 'l:' .. sid, 'f:' .. sid)
if not v[1] then return {0} end
local last, first = tonumber(v[1]), tonumber(v[2] or '0')
local after = tonumber(ARGV[2])
if after > last or after < first - 1 then return {0} end
local out = {1}
for from = after + 1, last, 1000 do
  local to = math.min(from + 999, last)
  local fields = {}
  for q = from, to do fields[#fields + 1] = 'e:' .. sid .. ':' .. string.format('%d', q) end
  local r = redis.call('HMGET', key, unpack(fields))
  for i = 1, #fields do
    if not r[i] then return {0} end
    out[#out + 1] = from + i - 1
    out[#out + 1] = r[i]
  end
end
return out
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
	if err := b.admit(ctx, what); err != nil {
		return zero, err
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := f(cctx)
	return v, b.judge(ctx, timeout, what, err)
}

// admit is what call checks before a command: the caller still waits,
// and Redis did not just fail.
func (b *breaker) admit(ctx context.Context, what string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store/redis: %s: %w", what, err)
	}
	if b.isOpen() {
		return fmt.Errorf("%w: %s: failing fast after a recent failure", ErrDown, what)
	}
	return nil
}

// judge classifies the error of a command run for a caller with context
// ctx: nil stays nil, the caller's giving up is its own error, and any
// other is ErrDown; no answer at all opens the breaker for timeout.
func (b *breaker) judge(ctx context.Context, timeout time.Duration, what string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		// The caller gave up; Redis is not to blame.
		return fmt.Errorf("store/redis: %s: %w", what, ctx.Err())
	}
	var rerr goredis.Error
	if !errors.As(err, &rerr) {
		// No answer at all (refused, reset, timed out), as opposed to an
		// error reply: spare the next callers the wait.
		b.openUntil.Store(time.Now().Add(timeout).UnixNano())
	}
	return fmt.Errorf("%w: %s: %w", ErrDown, what, err)
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
	key := s.key(sessionID)
	res, err := call(ctx, &s.breaker, s.opts.Timeout, "replay", func(ctx context.Context) ([]any, error) {
		return afterScript.Run(ctx, s.rdb, []string{key}, streamID, after).Slice()
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
	key := s.key(sessionID)
	_, err := call(ctx, &s.breaker, s.opts.Timeout, "delete session", func(ctx context.Context) (int64, error) {
		return s.rdb.Del(ctx, key).Result()
	})
	return err
}
