package jsonrpc

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
)

// inbound is an inbound request being handled, by either driver: its
// handler's context, whether CancelInbound cancelled it, and its answer.
// It is one allocation per request.
type inbound struct {
	ctx       handlerContext
	cancelled atomic.Bool // by CancelInbound: its answer is not sent
	resp      Response    // the answer, built here by run
	result    deferredResult
}

// inboundSet is the inbound bookkeeping of a connection, the same for
// both drivers: the requests in flight, and the ids of the recent
// completed ones, whose reuse is refused. Most sessions have few requests
// in flight and have completed few, and an idle one should hold little
// memory, so both are searched linearly while small. Guarded by the
// connection's mu.
type inboundSet struct {
	active  []activeRequest // in flight, while there are few
	active1 [1]activeRequest
	// byID holds the requests in flight instead of active, once more than
	// linearIDs were in flight at once.
	byID   map[ID]*inbound
	recent recentIDs
}

type activeRequest struct {
	id ID
	in *inbound
}

// linearIDs is how many ids are searched linearly before a map is built
// for them.
const linearIDs = 16

// lookup returns the request in flight with id.
func (s *inboundSet) lookup(id ID) (*inbound, bool) {
	if s.byID != nil {
		in, ok := s.byID[id]
		return in, ok
	}
	for _, a := range s.active {
		if a.id == id {
			return a.in, true
		}
	}
	return nil, false
}

// used reports whether id is in flight or among the recent ones.
func (s *inboundSet) used(id ID) bool {
	if _, ok := s.lookup(id); ok {
		return true
	}
	return s.recent.has(id)
}

// start adds a request to those in flight.
func (s *inboundSet) start(id ID, in *inbound) {
	if s.byID != nil {
		s.byID[id] = in
		return
	}
	if s.active == nil {
		s.active = s.active1[:0]
	}
	if len(s.active) == linearIDs {
		s.byID = make(map[ID]*inbound, 2*linearIDs)
		for _, a := range s.active {
			s.byID[a.id] = a.in
		}
		s.byID[id] = in
		s.active, s.active1 = nil, [1]activeRequest{}
		return
	}
	full := len(s.active) == cap(s.active)
	s.active = append(s.active, activeRequest{id, in})
	if full { // active has left active1, if it was there: keep no stale copy
		s.active1 = [1]activeRequest{}
	}
}

// finish moves id from the requests in flight to the recent ids, of
// which it keeps at most n (none if n < 0).
func (s *inboundSet) finish(id ID, n int) {
	if s.byID != nil {
		delete(s.byID, id)
	} else {
		for i, a := range s.active {
			if a.id == id {
				last := len(s.active) - 1
				s.active[i] = s.active[last]
				s.active[last] = activeRequest{}
				s.active = s.active[:last]
				break
			}
		}
	}
	s.recent.add(id, n)
}

// snapshot returns the requests in flight.
func (s *inboundSet) snapshot() []*inbound {
	var out []*inbound
	for _, a := range s.active {
		out = append(out, a.in)
	}
	for _, in := range s.byID {
		out = append(out, in)
	}
	return out
}

// recentIDs is a bounded set of the most recent ids added: a ring, searched
// linearly while short, and indexed by maps once longer than linearIDs.
type recentIDs struct {
	ring  []ID // oldest first from next once full
	next  int32
	ring1 [1]ID // ring's first backing array: an idle session keeps one id
	// The ids of ring, once it is longer than linearIDs, by kind: maps
	// keyed by an int64 or a string are faster than ones keyed by ID.
	num map[int64]struct{}
	str map[string]struct{}
}

// has reports whether id is in the set.
func (r *recentIDs) has(id ID) bool {
	if r.num == nil {
		return slices.Contains(r.ring, id)
	}
	var ok bool
	switch id.kind {
	case idInt:
		_, ok = r.num[id.num]
	case idString:
		_, ok = r.str[id.str]
	}
	return ok
}

// add adds id, forgetting the oldest once the set holds n; it keeps
// nothing if n < 0.
func (r *recentIDs) add(id ID, n int) {
	if n < 0 {
		return
	}
	if len(r.ring) < n {
		if r.ring == nil {
			r.ring = r.ring1[:0]
		}
		full := len(r.ring) == cap(r.ring)
		r.ring = append(r.ring, id)
		if full { // ring has left ring1, if it was there: keep no stale copy
			r.ring1 = [1]ID{}
		}
		if r.num != nil {
			r.index(id)
		} else if len(r.ring) > linearIDs {
			r.num = make(map[int64]struct{}, len(r.ring))
			r.str = make(map[string]struct{})
			for _, x := range r.ring {
				r.index(x)
			}
		}
		return
	}
	if r.num != nil {
		r.unindex(r.ring[r.next])
		r.index(id)
	}
	r.ring[r.next] = id
	r.next = int32((int(r.next) + 1) % n)
}

func (r *recentIDs) index(id ID) {
	switch id.kind {
	case idInt:
		r.num[id.num] = struct{}{}
	case idString:
		r.str[id.str] = struct{}{}
	}
}

func (r *recentIDs) unindex(id ID) {
	switch id.kind {
	case idInt:
		delete(r.num, id.num)
	case idString:
		delete(r.str, id.str)
	}
}

// requestContext is the context of an inbound message before any cancel:
// the connection's context, then the message's id as RequestIDFromContext
// reports it (none for a notification), then the values of the request's
// carrier (see Request.WithValues), then those of Deliver's context,
// looked up in that order. The connection's come first so that package
// context finds its cancellation and propagates it without a goroutine.
type requestContext struct {
	context.Context                 // the connection's
	id              ID              // the request's; invalid for a notification
	values          context.Context // the request's carrier, or nil
	outer           context.Context // Deliver's context (values only), or nil
}

func (c *requestContext) Value(key any) any {
	if key == requestIDKey {
		if !c.id.IsValid() {
			return nil
		}
		return c.id // boxed only when asked: most handlers never ask
	}
	if v := c.Context.Value(key); v != nil {
		return v
	}
	if c.values != nil {
		if v := c.values.Value(key); v != nil {
			return v
		}
	}
	if c.outer != nil {
		return c.outer.Value(key)
	}
	return nil
}

// handlerContext is the context of a request's handler: its
// requestContext, canceled when the request ends (or the connection's
// context is). It behaves as context.WithCancel over the requestContext,
// which it makes only when it must (for Done, and for values other than
// the request's id, among which is the one by which package context finds
// a cancelable parent); most handlers never ask, and their requests spare
// its allocations and its locking.
type handlerContext struct {
	requestContext

	made      atomic.Bool // real is set, and will not change
	mu        sync.Mutex
	real      context.Context // context.WithCancel(&requestContext), once made
	cancelRe  context.CancelFunc
	cancelled bool // cancel was called
}

// ctx returns the real cancelable context, making it on first use.
func (h *handlerContext) ctx() context.Context {
	if h.made.Load() {
		return h.real
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.real == nil {
		h.real, h.cancelRe = context.WithCancel(&h.requestContext)
		if h.cancelled {
			h.cancelRe()
		}
		h.made.Store(true)
	}
	return h.real
}

func (h *handlerContext) Done() <-chan struct{} { return h.ctx().Done() }

func (h *handlerContext) Err() error {
	h.mu.Lock()
	real, cancelled := h.real, h.cancelled
	h.mu.Unlock()
	if real != nil {
		return real.Err()
	}
	if cancelled {
		return context.Canceled
	}
	return h.requestContext.Context.Err()
}

// Value answers from the requestContext, which holds every value the
// real context would (context.WithCancel adds none of its own), except
// the key by which package context finds a cancelable parent (for
// WithCancel's propagation without a goroutine, and for Cause): that key
// is an *int, so only *int keys make the real context. Asking for a
// middleware's value (a span, a session) thus costs no allocation.
func (h *handlerContext) Value(key any) any {
	if _, ok := key.(*int); ok {
		return h.ctx().Value(key)
	}
	return h.requestContext.Value(key)
}

// cancel ends the context; it may be called more than once.
func (h *handlerContext) cancel() {
	h.mu.Lock()
	h.cancelled = true
	f := h.cancelRe
	h.mu.Unlock()
	if f != nil {
		f()
	}
}

// deferredResult is a handler's result that a Conn leaves to the encoder
// of its stream (see Response): AppendMessage appends it straight into the
// message's buffer, checked and compacted as a json.RawMessage result is,
// which saves a copy and an allocation of the size of the result. A
// result that fails to encode is logged here and answered with -32603.
type deferredResult struct {
	v   JSONAppender
	log *slog.Logger
}

// appendTo appends the encoding of d's result to b; on failure it logs
// why and returns b and the error.
func (d *deferredResult) appendTo(b []byte, id ID) ([]byte, error) {
	out, err := appendValue(b, d.v)
	if err != nil {
		d.log.Error("jsonrpc: cannot encode result", "id", id.String(), "error", err)
		return b, err
	}
	return out, nil
}

// appendValue appends the encoding of v as appendRaw would append it after
// v.AppendJSON(nil): checked, and compacted if it spans several lines.
func appendValue(b []byte, v JSONAppender) ([]byte, error) {
	b0 := len(b)
	out, err := v.AppendJSON(b)
	if err != nil {
		return b, err
	}
	raw := out[b0:]
	if len(raw) == 0 { // as a nil Result
		return append(out, "{}"...), nil
	}
	if err := validate(raw); err != nil {
		return b, err
	}
	if bytes.IndexByte(raw, '\n') >= 0 || bytes.IndexByte(raw, '\r') >= 0 {
		return appendRaw(out[:b0], bytes.Clone(raw))
	}
	if t := bytes.TrimSpace(raw); len(t) != len(raw) {
		n := copy(out[b0:], t)
		out = out[:b0+n]
	}
	return out, nil
}
