package mcphttp

import (
	"errors"
	"fmt"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// The process-wide buffer budget (Options.MaxBufferedBytes): every place
// where a handler holds bytes on behalf of a client takes them from one
// eventstore.Budget, and gives them back when it lets them go:
//
//   - a POST body, from before it is read until its messages are handled
//     (readBody; refused with 503);
//   - an encoded outgoing message, from outStream.send until it is
//     written or dropped (outMsg.charged, released by releaseMsgs and
//     uncharge; a response refused becomes an error response, another
//     message an error for its sender: see overBudget);
//   - a 2024-11-05 session's queued messages (sseSession.Write, the same
//     refusals);
//   - the default event store's retention (eventstore.Memory.Budget,
//     which evicts instead of refusing).
//
// A JSON answer to a batch is written in pieces rather than joined in a
// buffer of its own (writeJSONAnswer), so that it holds nothing beyond
// its queued responses. Events replayed from the store to a resuming
// client are the store's, already counted.

// errBodyOverBudget answers a POST whose body the budget has no room for.
//
//lint:ignore ST1005 the message is the body of the 503 answer, after its status text
var errBodyOverBudget = errors.New("Service Unavailable: the server's buffer budget is exhausted; retry later")

// newBudget returns shared if set, else a budget of limit bytes (zero:
// DefaultMaxBufferedBytes; negative: nil, no bound).
func newBudget(shared *eventstore.Budget, limit int64) *eventstore.Budget {
	switch {
	case shared != nil:
		return shared
	case limit == 0:
		limit = DefaultMaxBufferedBytes
	case limit < 0:
		return nil
	}
	return eventstore.NewBudget(limit)
}

// Budget returns the buffer budget the handler takes from (see
// Options.MaxBufferedBytes), nil if it has no bound. Its Used method
// tells how many bytes the handler (and whoever shares the budget) holds
// for clients now.
func (h *Handler) Budget() *eventstore.Budget { return h.budget }

// overBudget is what becomes of an outgoing message m of n bytes when the
// budget has no room for it. A response is replaced by an error response
// to the same request, appended to dst, so that the client is told rather
// than left waiting; the error is small and not charged. Any other
// message is refused with an error wrapping eventstore.ErrBudgetExhausted,
// for the server code that sent it.
func overBudget(dst []byte, m jsonrpc.Message, n int) ([]byte, error) {
	resp, ok := m.(*jsonrpc.Response)
	if !ok {
		return nil, fmt.Errorf("mcphttp: a message of %d bytes for the client: %w", n, eventstore.ErrBudgetExhausted)
	}
	msg := fmt.Sprintf("the answer (%d bytes) cannot be buffered: the server's buffer budget is exhausted; retry later", n)
	return jsonrpc.AppendMessage(dst, &jsonrpc.Response{ID: resp.ID, Error: jsonrpc.NewError(jsonrpc.CodeInternalError, msg)})
}

// uncharge gives the budget back the bytes of q's messages, which are
// dropped without being written (the store keeps them, or the connection
// they were for is gone), without returning their buffers to the pool.
func (h *Handler) uncharge(q []outMsg) {
	for i := range q {
		if q[i].charged {
			h.budget.Release(len(q[i].data))
			q[i].charged = false
		}
	}
}
