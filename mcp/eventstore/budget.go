package eventstore

import (
	"errors"
	"sync/atomic"
)

// ErrBudgetExhausted is returned (wrapped) when bytes cannot be buffered
// for a peer because a Budget has no room for them: by Memory.Append for
// an event it could not keep, and by the HTTP transports (mcphttp) for a
// message they refused to queue.
var ErrBudgetExhausted = errors.New("eventstore: the process-wide buffer budget is exhausted")

// DefaultBudgetBytes is the size of the process-wide buffer budget that
// mcphttp handlers use unless told otherwise: 256 MiB, which a public
// server can hold while leaving room for everything else it does, and 64
// times the default bound of one POST body.
const DefaultBudgetBytes = 256 << 20

// A Budget bounds the bytes that a process holds on behalf of its peers
// altogether: the events a Memory store keeps for resumption, the
// messages that the HTTP transports queue for clients that have not read
// them yet, and the request bodies they hold while the requests run. The
// per-session and per-stream bounds of those places do not bound their
// sum, which grows with the number of sessions; a Budget does.
//
// Every holder asks for room with TryAcquire before it keeps bytes and
// gives it back with Release when it lets them go; what to do when
// TryAcquire says no (evict, refuse, answer with an error) is the holder's
// decision, documented where it holds. A Budget is safe for concurrent use
// and costs one atomic compare-and-swap per call. A nil *Budget is an
// unlimited one: its TryAcquire always succeeds, and Release does nothing.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// NewBudget returns a budget of limit bytes. A limit of zero or less
// returns nil, the unlimited budget.
func NewBudget(limit int64) *Budget {
	if limit <= 0 {
		return nil
	}
	return &Budget{limit: limit}
}

// TryAcquire takes n bytes of the budget and reports true, or reports
// false and takes nothing if that would take the budget past its limit.
// The caller that got true calls Release(n) once it no longer holds the
// bytes.
func (b *Budget) TryAcquire(n int) bool {
	if b == nil || n <= 0 {
		return true
	}
	for {
		u := b.used.Load()
		if u+int64(n) > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+int64(n)) {
			return true
		}
	}
}

// Release gives back n bytes that TryAcquire took.
func (b *Budget) Release(n int) {
	if b != nil && n > 0 {
		b.used.Add(-int64(n))
	}
}

// Used returns the bytes taken now.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// Limit returns the budget's limit, or zero for the unlimited budget.
func (b *Budget) Limit() int64 {
	if b == nil {
		return 0
	}
	return b.limit
}
