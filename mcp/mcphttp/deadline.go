package mcphttp

import (
	"errors"
	"net/http"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// Bounds of the Streamable HTTP handler on its connections and sessions
// (issue #16 items 7 and 11): the deadlines of body reads and of writes,
// set through the ResponseWriter (http.ResponseController's way, without
// its allocation when a writer does not support them), and the answer to
// a request refused for want of room.

// errTooManySessions is why newSession refused a session: MaxSessions are
// open.
var errTooManySessions = errors.New("mcphttp: too many sessions")

// tooManySessions is the message of the 503 that refuses a session.
const tooManySessions = "Service Unavailable: too many sessions; retry later"

// defaultBound is v, or def when v is zero; negative (no bound) stays.
func defaultBound[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// full reports whether MaxSessions sessions are open: a cheap check before
// a session is made; newSession checks again under the lock.
func (h *Handler) full() bool {
	max := h.opts.MaxSessions
	if max <= 0 {
		return false
	}
	h.mu.RLock()
	n := len(h.sessions)
	h.mu.RUnlock()
	return n >= max
}

// writeUnavailable answers 503 with Retry-After (RFC 9110 section 10.2.3)
// and a JSON-RPC error body.
func (h *Handler) writeUnavailable(w http.ResponseWriter, msg string) {
	w.Header()["Retry-After"] = h.retryAfter
	writeHTTPError(w, http.StatusServiceUnavailable, jsonrpc.ID{}, msg)
}

// armWrite gives what is written to w next WriteTimeout from now.
func (h *Handler) armWrite(w http.ResponseWriter) { armWrite(w, h.opts.WriteTimeout) }

// armRead gives the body of the request that w answers ReadTimeout to
// arrive.
func (h *Handler) armRead(w http.ResponseWriter) { armRead(w, h.opts.ReadTimeout) }

// clearRead lifts the read deadline that armRead set.
func (h *Handler) clearRead(w http.ResponseWriter) { clearRead(w, h.opts.ReadTimeout) }

// armWrite gives what is written to w next d from now; d <= 0 leaves the
// deadline as it is.
func armWrite(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		setWriteDeadline(w, time.Now().Add(d))
	}
}

// armRead gives the body of the request that w answers d from now to
// arrive; d <= 0 leaves the deadline as it is.
func armRead(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		setReadDeadline(w, time.Now().Add(d))
	}
}

// clearRead lifts the read deadline of w's connection, once the body is
// read, when the handler manages it (d > 0): net/http reads on in the
// background to notice a client that goes away, and a deadline there
// would end the response (the request's context is cancelled when that
// read fails).
func clearRead(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		setReadDeadline(w, time.Time{})
	}
}

// setWriteDeadline is http.ResponseController.SetWriteDeadline without its
// allocations (the controller's, and its error when w cannot), which a
// request must not cost; a writer without deadlines is left as is.
func setWriteDeadline(w http.ResponseWriter, t time.Time) {
	for {
		switch x := w.(type) {
		case interface{ SetWriteDeadline(time.Time) error }:
			_ = x.SetWriteDeadline(t)
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return
		}
	}
}

// setReadDeadline is setWriteDeadline's counterpart for reads.
func setReadDeadline(w http.ResponseWriter, t time.Time) {
	for {
		switch x := w.(type) {
		case interface{ SetReadDeadline(time.Time) error }:
			_ = x.SetReadDeadline(t)
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return
		}
	}
}
