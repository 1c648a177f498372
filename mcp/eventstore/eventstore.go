// Package eventstore keeps the events of Streamable HTTP SSE streams so that
// a client can resume a stream it lost (MCP 2025-11-25
// basic/transports#resumability-and-redelivery): the Store interface that
// mcphttp.Handler writes to, and Memory, a bounded in-memory Store. It
// imports nothing of mcp, so that a store of its own package (such as one
// backed by Redis under store/) can implement Store.
//
// A store shared by the replicas of one server also implements
// [SessionDirectory] and [SessionUpdater] (the sessions' records) and
// [Replicas] (messages between replicas, their liveness), which
// mcphttp.Options.Replicas uses to serve a session on every replica.
// Package eventstoretest is the contract test every Store runs.
package eventstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// An Event is one message sent on a Streamable HTTP SSE stream, as a
// Store keeps it.
type Event struct {
	// Seq is the event's position in its stream, counted from 1. The SSE
	// event id that the client sees is the stream id and Seq joined by an
	// underscore, such as "3_17".
	Seq int64
	// Data is one encoded JSON-RPC message.
	Data []byte
}

// ErrUnavailable is returned (wrapped) by Store.After when the
// events asked for cannot all be returned: the stream is unknown, or some of
// its events were discarded. A resumed stream would miss messages, so the
// handler refuses to resume it.
var ErrUnavailable = errors.New("eventstore: the events after this id are no longer available")

// A Store keeps the messages that a Streamable HTTP handler (mcphttp.Handler) sends on its
// SSE streams, so that a client whose connection dropped can resume a stream
// (GET with Last-Event-ID) and receive exactly the messages it missed.
//
// Events are keyed by session id and stream id; within a stream they are
// numbered from 1 in the order sent. The handler calls Append under the
// stream's lock, so a store sees the events of one stream in order and
// never concurrently; different streams are appended concurrently. A store
// that several processes share (such as one backed by Redis) can serve the
// replay of a stream from any of them.
type Store interface {
	// Append keeps data as event seq of the stream. The store may keep
	// data itself: the caller does not modify it afterwards.
	Append(ctx context.Context, sessionID, streamID string, seq int64, data []byte) error
	// After returns the events of the stream whose Seq is greater than
	// after, in order. If any of them is no longer kept, or the stream is
	// unknown, it returns an error wrapping ErrUnavailable.
	After(ctx context.Context, sessionID, streamID string, after int64) ([]Event, error)
	// DeleteSession discards the events of all streams of a session. The
	// handler calls it when the session ends.
	DeleteSession(ctx context.Context, sessionID string) error
}

// Default limits of a Memory store.
const (
	DefaultMaxEventsPerStream   = 1024
	DefaultMaxBytesPerSession   = 1 << 20
	DefaultMaxStreamsPerSession = 256
)

// Memory is a Store that keeps events in memory, within
// bounds: per stream, at most MaxEventsPerStream events; per session, at
// most MaxBytesPerSession bytes of event data and MaxStreamsPerSession
// streams. When a bound is exceeded, the oldest events go first (for the
// byte bound, those of the session's oldest stream), then the oldest
// streams. A client can resume a stream only while every event it missed is
// still kept; otherwise After reports ErrUnavailable.
//
// Memory use is therefore bounded by MaxBytesPerSession (plus about 100
// bytes per event and per stream) times the number of sessions, and a
// session's events are dropped when it ends. With a Budget, the bytes of
// event data kept by all sessions together are bounded too: an event that
// the budget has no room for first evicts the oldest events of the session
// that keeps the most bytes (the one furthest over its fair share, which
// may be the appending session itself), one at a time, until there is
// room; if none is left to evict, the event is not kept, Append returns
// an error wrapping ErrBudgetExhausted, and the stream's earlier events
// are dropped too, so that a resumption from before it gets ErrUnavailable
// rather than a stream with a hole. Retention serves only resumption: a
// client that reads its streams never needs it.
//
// The zero value is ready to use with the default limits. Set the limits
// before first use.
type Memory struct {
	// MaxEventsPerStream bounds the events kept per stream; zero means
	// DefaultMaxEventsPerStream.
	MaxEventsPerStream int
	// MaxBytesPerSession bounds the bytes of event data kept per session;
	// zero means DefaultMaxBytesPerSession.
	MaxBytesPerSession int
	// MaxStreamsPerSession bounds the streams remembered per session; zero
	// means DefaultMaxStreamsPerSession.
	MaxStreamsPerSession int
	// Budget, if set, bounds the bytes of event data kept by all sessions
	// together, shared with whatever else takes from it (such as the
	// queues of an mcphttp.Handler). Nil means no bound beyond the
	// per-session ones.
	Budget *Budget

	mu       sync.Mutex
	sessions map[string]*memSession
}

type memSession struct {
	mu      sync.Mutex
	budget  *Budget
	streams map[string]*memStream
	order   []*memStream // oldest first
	// bytes is written under mu, and read without it when looking for the
	// largest session to evict from (see Memory.reserve).
	bytes   atomic.Int64
	deleted bool
}

// add counts n more bytes kept (n < 0: fewer), giving those dropped back
// to the budget. mu is held.
func (ms *memSession) add(n int) {
	ms.bytes.Add(int64(n))
	if n < 0 {
		ms.budget.Release(-n)
	}
}

type memStream struct {
	id     string
	first  int64    // seq of events[0], or last+1 when none are kept
	last   int64    // highest seq appended
	events [][]byte // events[i] has seq first+i
}

func (s *Memory) limits() (events, bytes, streams int) {
	events, bytes, streams = s.MaxEventsPerStream, s.MaxBytesPerSession, s.MaxStreamsPerSession
	if events <= 0 {
		events = DefaultMaxEventsPerStream
	}
	if bytes <= 0 {
		bytes = DefaultMaxBytesPerSession
	}
	if streams <= 0 {
		streams = DefaultMaxStreamsPerSession
	}
	return events, bytes, streams
}

func (s *Memory) session(id string, create bool) *memSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := s.sessions[id]
	if ms == nil && create {
		if s.sessions == nil {
			s.sessions = make(map[string]*memSession)
		}
		ms = &memSession{streams: make(map[string]*memStream), budget: s.Budget}
		s.sessions[id] = ms
	}
	return ms
}

// Append keeps an event, evicting old ones to stay within the limits. Seq
// must be greater than that of the stream's previous event.
func (s *Memory) Append(ctx context.Context, sessionID, streamID string, seq int64, data []byte) error {
	maxEvents, maxBytes, maxStreams := s.limits()
	for {
		ms := s.session(sessionID, true)
		ms.mu.Lock()
		if ms.deleted { // lost a race with DeleteSession: start afresh
			ms.mu.Unlock()
			continue
		}
		defer ms.mu.Unlock()
		st := ms.streams[streamID]
		if st == nil {
			st = &memStream{id: streamID, first: seq, last: seq - 1}
			ms.streams[streamID] = st
			ms.order = append(ms.order, st)
			for len(ms.order) > maxStreams {
				ms.dropStream(ms.order[0])
			}
		}
		if seq <= st.last {
			return fmt.Errorf("mcp: event store: event %d of stream %q after event %d", seq, streamID, st.last)
		}
		if seq != st.last+1 { // a gap: the events in between are unavailable
			st.clear(ms, seq)
		}
		if !s.reserve(ms, len(data)) {
			// Not kept: neither is anything before it, so that a
			// resumption from there fails rather than skips it.
			st.clear(ms, seq+1)
			st.last = seq
			return fmt.Errorf("event %d of stream %q: %w", seq, streamID, ErrBudgetExhausted)
		}
		st.events = append(st.events, data)
		st.last = seq
		ms.add(len(data))
		for len(st.events) > maxEvents {
			st.dropFirst(ms)
		}
		for ms.bytes.Load() > int64(maxBytes) && ms.evictOldest() {
		}
		return nil
	}
}

// clear drops every kept event of the stream, whose next event will be
// first. ms.mu is held.
func (st *memStream) clear(ms *memSession, first int64) {
	ms.add(-st.size())
	clear(st.events)
	st.events = st.events[:0]
	st.first = first
}

// reserve takes n bytes of the budget for an event of ms, evicting the
// oldest events of the session that keeps the most bytes while the budget
// has no room; it reports false if nothing is left to evict. ms.mu is
// held; another session's lock is only tried, so that two appends that
// evict from each other's sessions cannot deadlock (and Memory.mu is
// never held while waiting for a session's lock).
func (s *Memory) reserve(ms *memSession, n int) bool {
	for !s.Budget.TryAcquire(n) {
		if n > int(s.Budget.Limit()) {
			return false
		}
		victim := s.largest()
		switch {
		case victim == nil || victim.bytes.Load() <= ms.bytes.Load():
			if !ms.evictOldest() {
				return false
			}
		case victim.mu.TryLock():
			if victim.deleted || !victim.evictOldest() {
				// Ended, or emptied meanwhile: evict from our own session
				// so that the loop always makes progress.
				victim.mu.Unlock()
				if !ms.evictOldest() {
					return false
				}
				continue
			}
			victim.mu.Unlock()
		default: // busy appending: its own append makes room, or ours
			if !ms.evictOldest() {
				return false
			}
		}
	}
	return true
}

// largest returns the session that keeps the most bytes of event data,
// or nil if none keeps any.
func (s *Memory) largest() *memSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *memSession
	var most int64
	for _, ms := range s.sessions {
		if b := ms.bytes.Load(); b > most {
			best, most = ms, b
		}
	}
	return best
}

func (st *memStream) size() int {
	n := 0
	for _, e := range st.events {
		n += len(e)
	}
	return n
}

func (st *memStream) dropFirst(ms *memSession) {
	ms.add(-len(st.events[0]))
	st.events[0] = nil
	st.events = st.events[1:]
	st.first++
}

// evictOldest drops the oldest kept event of the session; it reports
// whether there was one.
func (ms *memSession) evictOldest() bool {
	for _, st := range ms.order {
		if len(st.events) > 0 {
			st.dropFirst(ms)
			return true
		}
	}
	return false
}

func (ms *memSession) dropStream(st *memStream) {
	ms.add(-st.size())
	delete(ms.streams, st.id)
	for i, o := range ms.order {
		if o == st {
			ms.order = append(ms.order[:i], ms.order[i+1:]...)
			break
		}
	}
}

// After returns the events of a stream after seq after.
func (s *Memory) After(ctx context.Context, sessionID, streamID string, after int64) ([]Event, error) {
	ms := s.session(sessionID, false)
	if ms == nil {
		return nil, fmt.Errorf("stream %q of session: %w", streamID, ErrUnavailable)
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	st := ms.streams[streamID]
	if st == nil || after < st.first-1 || after > st.last {
		return nil, fmt.Errorf("stream %q after event %d: %w", streamID, after, ErrUnavailable)
	}
	n := st.last - after
	if n == 0 {
		return nil, nil
	}
	out := make([]Event, 0, n)
	for seq := after + 1; seq <= st.last; seq++ {
		out = append(out, Event{Seq: seq, Data: st.events[seq-st.first]})
	}
	return out, nil
}

// DeleteSession drops every event of a session.
func (s *Memory) DeleteSession(ctx context.Context, sessionID string) error {
	s.mu.Lock()
	ms := s.sessions[sessionID]
	delete(s.sessions, sessionID)
	s.mu.Unlock()
	if ms != nil {
		ms.mu.Lock()
		ms.deleted = true
		ms.add(-int(ms.bytes.Load()))
		ms.streams, ms.order = nil, nil
		ms.mu.Unlock()
	}
	return nil
}
