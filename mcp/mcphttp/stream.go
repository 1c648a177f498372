package mcphttp

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// outMsg is one message queued for an HTTP response.
type outMsg struct {
	seq    int64 // event seq on an SSE stream; 0 in a JSON answer
	data   []byte
	buf    *[]byte // the pooled buffer data is in, or nil (see releaseMsgs)
	resp   bool    // a response (as opposed to a request or notification)
	errRes bool    // an error response
}

// streamWriter is the identity of the HTTP response currently attached to
// a stream, which a pump goroutine writes. It is woken when a message is
// queued, or when another connection took the stream over (the stream's w
// is then another writer).
type streamWriter struct {
	wake chan struct{}
	w    http.ResponseWriter // the response, to cut it (see cutConn); nil if none
}

func newStreamWriter(w http.ResponseWriter) *streamWriter {
	return &streamWriter{wake: make(chan struct{}, 1), w: w}
}

// cutConn ends the connection of the response w while another goroutine
// may be blocked writing to it: the write fails at once, and so does every
// later one. Its caller holds the lock of the stream w is attached to,
// which proves that the handler serving w has not returned (see
// outStream.cutLocked). Setting a deadline does no I/O.
func cutConn(w http.ResponseWriter) {
	if w != nil {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now())
	}
}

func (sw *streamWriter) signal() {
	select {
	case sw.wake <- struct{}{}:
	default:
	}
}

// outStream is one logical stream of server messages: the answer to one
// POST, or the session's standalone GET stream. Its messages are queued for
// the HTTP response attached to it, if any, and kept in the event store
// when it is resumable.
type outStream struct {
	sess *httpSession
	mu   sync.Mutex

	// Set when the stream is made, then read only.
	standalone bool
	counted    bool // counted in the handler's exchanges

	// The other fields are guarded by mu. The bools are together so that
	// the stream and its response stay one 256-byte allocation (see
	// exchange).
	sse       bool
	resumable bool
	done      bool // every request answered
	retired   bool
	lastErr   bool          // the last response sent was an error
	writing   bool          // a goroutine is writing the queue to a direct response (see drainDirect)
	id        string        // "" while a JSON answer
	seq       int64         // last event seq
	delivered int64         // last seq flushed to a client (standalone stream)
	pending   int           // requests not yet answered
	queued    int           // bytes of data in queue
	drained   chan struct{} // if set, closed when writing ends (see waitDrainedLocked)
	queue     []outMsg
	inline    [1]outMsg // the first queued message needs no allocation
	// The HTTP response attached to the stream, if any, is either pumped
	// (w: a goroutine writes what is queued) or direct (direct: the POST's
	// goroutine is running the handlers, and the goroutine that sends a
	// message writes it, and what others queue meanwhile, at once; see
	// drainDirect). At most one is set. No network write happens under
	// mu: a client that does not read must not block those who only
	// queue, nor a GET that takes the stream over.
	w      *streamWriter
	direct *sseConn
}

// send queues one message on the stream, or writes it at once to a
// direct response.
func (st *outStream) send(m jsonrpc.Message, isResp bool) error {
	h := st.sess.h
	buf := h.getBuf()
	data, err := jsonrpc.AppendMessage(*buf, m)
	if err != nil {
		h.bufs.Put(buf) // *buf is still empty
		return err
	}
	*buf = data
	om := outMsg{data: data, buf: buf, resp: isResp}
	if isResp {
		om.errRes = m.(*jsonrpc.Response).Error != nil
	}
	st.mu.Lock()
	if isResp {
		st.pending--
		if st.pending <= 0 {
			st.done = true
		}
		st.lastErr = om.errRes
	}
	c := st.direct
	if c != nil && !st.sse && !isResp {
		// The handler sent something before its result: switch to SSE.
		st.upgradeDirect()
	}
	if st.sse {
		st.seq++
		om.seq = st.seq
		if st.resumable {
			h.appendEvent(st, om.seq, data)
			om.keep(h)
		}
	}
	drain := false
	switch {
	case c != nil && !st.sse:
		st.queue = append(st.queue, om) // the JSON answer, written when the handlers return
	case (c != nil || st.w != nil) && st.full(len(data)):
		// The client does not read: it loses the connection, and will
		// find this message and those before it in the store.
		st.cutLocked()
		h.releaseMsgs([]outMsg{om})
	case c != nil:
		st.enqueue(om)
		if !st.writing {
			st.writing, drain = true, true
		}
	case st.w != nil:
		st.enqueue(om)
		st.w.signal()
	}
	finished := st.done && st.w == nil && st.direct == nil
	st.mu.Unlock()
	if drain {
		st.drainDirect(c)
	}
	if finished {
		st.retire()
	}
	return nil
}

// full reports whether a message of n bytes would take the queue past
// its bounds. mu is held.
func (st *outStream) full(n int) bool {
	o := &st.sess.h.opts
	return len(st.queue) > 0 && (len(st.queue) >= o.MaxQueuedMessages || st.queued+n > o.MaxQueuedBytes)
}

// enqueue appends m to the queue. mu is held.
func (st *outStream) enqueue(m outMsg) {
	st.queue = append(st.queue, m)
	st.queued += len(m.data)
}

// takeQueue empties the queue and returns what it held. mu is held.
func (st *outStream) takeQueue() []outMsg {
	q := st.queue
	st.queue, st.queued = nil, 0
	return q
}

// setQueue makes q the queue. mu is held.
func (st *outStream) setQueue(q []outMsg) {
	st.queue, st.queued = q, 0
	for _, m := range q {
		st.queued += len(m.data)
	}
}

// cutLocked detaches the stream from its HTTP response, if any, and cuts
// that response's connection (see cutConn), dropping what was queued for
// it: the stream goes on, kept in the event store, for a client to
// resume. mu is held, so the handler serving the response has not
// returned: it clears direct or w under mu before it does.
func (st *outStream) cutLocked() {
	switch {
	case st.direct != nil:
		cutConn(st.direct.w)
		st.direct = nil
	case st.w != nil:
		cutConn(st.w.w)
		st.w.signal()
		st.w = nil
	}
	st.sess.h.releaseMsgs(st.takeQueue())
}

// drainDirect writes the queue of st to its direct response c until the
// queue is empty, c is no longer the stream's response (it was cut, or a
// GET took the stream over) or the connection failed. Its caller set
// st.writing: senders meanwhile only queue, and the messages are written
// in the order sent. No lock is held while writing.
func (st *outStream) drainDirect(c *sseConn) {
	h := st.sess.h
	for {
		st.mu.Lock()
		if st.direct != c || len(st.queue) == 0 {
			st.writing = false
			if st.drained != nil {
				close(st.drained)
				st.drained = nil
			}
			st.mu.Unlock()
			return
		}
		q := st.takeQueue()
		id, streamID, resumable := st.eventStreamID(), st.id, st.resumable
		st.mu.Unlock()
		c.start(streamID, 0, resumable) // after upgradeDirect, the first write
		for _, m := range q {
			c.event(id, m.seq, m.data)
		}
		c.flush()
		h.releaseMsgs(q)
	}
}

// waitDrainedLocked waits, with mu held (and released while it waits),
// until no goroutine is writing to the stream's direct response, which may
// have been cut or taken over meanwhile: the POST's handler must not
// return while another goroutine writes to its ResponseWriter. The wait
// ends when that write does, which a cut or the client's going away
// ends.
func (st *outStream) waitDrainedLocked() {
	for st.writing {
		if st.drained == nil {
			st.drained = make(chan struct{})
		}
		ch := st.drained
		st.mu.Unlock()
		<-ch
		st.mu.Lock()
	}
}

// upgradeDirect turns the JSON answer of a direct stream into an SSE
// stream, whose headers and the responses already queued the sender
// writes (see drainDirect). st.mu is held.
func (st *outStream) upgradeDirect() {
	s := st.sess
	st.sse = true
	st.id = s.newStreamID()
	st.resumable = s.h.store != nil && s.id != ""
	for i := range st.queue {
		st.seq++
		st.queue[i].seq = st.seq
		if st.resumable {
			s.h.appendEvent(st, st.seq, st.queue[i].data)
			st.queue[i].keep(s.h)
		}
	}
	for _, m := range st.queue {
		st.queued += len(m.data)
	}
	if st.resumable {
		s.addStream(st)
	}
}

// eventStreamID is the stream part of the event ids of st: none unless it
// is resumable.
func (st *outStream) eventStreamID() string {
	if st.resumable {
		return st.id
	}
	return ""
}

// appendEvent keeps an event of st in the store.
// st.mu is held. Nothing is kept for a session that has ended: its events
// were deleted, and a late one would stay in the store for good (Close
// takes every stream's lock after it marks the session closed, before it
// deletes the session's events, so no append can slip in between).
func (h *Handler) appendEvent(st *outStream, seq int64, data []byte) {
	if st.sess.isClosed() {
		return
	}
	if err := h.store.Append(context.Background(), st.sess.id, st.id, seq, data); err != nil {
		h.log.Warn("mcphttp: event store append failed", "session", st.sess.id, "stream", st.id, "error", err)
	}
}

// answered marks one request as answered without a response (it was
// cancelled).
func (st *outStream) answered() {
	st.mu.Lock()
	st.pending--
	if st.pending <= 0 {
		st.done = true
	}
	if st.w != nil {
		st.w.signal()
	}
	finished := st.done && st.w == nil && st.direct == nil
	st.mu.Unlock()
	if finished {
		st.retire()
	}
}

// retire forgets a finished stream (its events stay in the store).
func (st *outStream) retire() {
	st.mu.Lock()
	if st.retired {
		st.mu.Unlock()
		return
	}
	st.retired = true
	id, sse := st.id, st.sse
	st.mu.Unlock()
	s := st.sess
	if st.counted {
		s.h.exchanges.Add(-1)
	}
	if sse && !st.standalone {
		s.mu.Lock()
		if s.streams[id] == st {
			delete(s.streams, id)
		}
		s.mu.Unlock()
	}
	if s.stateless {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if !closed {
			s.terminate()
		}
	}
}

// detach releases the stream from the HTTP response sw, which is ending.
func (st *outStream) detach(sw *streamWriter) {
	st.mu.Lock()
	if st.w == sw {
		st.w = nil
		st.takeQueue() // kept in the store, or lost with the connection
	}
	finished := st.done && st.w == nil && st.direct == nil
	st.mu.Unlock()
	if finished {
		st.retire()
	}
}

// pump writes the messages of st to the response c until the stream is
// complete, the client goes away, the session ends, another connection
// takes the stream over, or polling asks for a reconnection.
func (h *Handler) pump(r *http.Request, st *outStream, sw *streamWriter, c *sseConn) {
	s := st.sess
	sessionDone := s.doneChan()
	for {
		select {
		case <-sw.wake:
		case <-r.Context().Done():
			st.detach(sw)
			return
		case <-sessionDone:
			h.drainOnClose(st, sw, c)
			return
		}
		st.mu.Lock()
		if st.w != sw { // taken over
			st.mu.Unlock()
			return
		}
		if !st.sse {
			upgrade := false
			for _, m := range st.queue {
				if !m.resp {
					upgrade = true
					break
				}
			}
			if !upgrade {
				if !st.done {
					st.mu.Unlock()
					continue
				}
				q := st.takeQueue()
				st.w = nil
				st.mu.Unlock()
				h.writeJSONAnswer(c, q)
				failedInit := len(q) > 0 && q[len(q)-1].errRes && c.sessionHeader != ""
				h.releaseMsgs(q)
				if failedInit {
					s.terminate() // the initialize failed: the session is useless
				}
				st.retire()
				return
			}
			// The handler sent something before its result: switch to SSE.
			st.sse = true
			st.id = s.newStreamID()
			st.resumable = h.store != nil && s.id != ""
			for i := range st.queue {
				st.seq++
				st.queue[i].seq = st.seq
				if st.resumable {
					h.appendEvent(st, st.seq, st.queue[i].data)
					st.queue[i].keep(h)
				}
			}
			if st.resumable {
				s.addStream(st)
			}
			st.mu.Unlock()
			c.start(st.id, 0, st.resumable)
			st.mu.Lock()
			if st.w != sw { // taken over meanwhile
				st.mu.Unlock()
				return
			}
		}
		q := st.takeQueue()
		done := st.done
		st.mu.Unlock()

		streamID := ""
		if st.resumable {
			streamID = st.id
		}
		limit := h.opts.MaxEventsPerConnection
		cut := false
		for i, m := range q {
			c.event(streamID, m.seq, m.data)
			if c.poll && c.sent >= limit && (i < len(q)-1 || !done) {
				cut = true
				break
			}
		}
		if cut {
			c.buf = appendSSERetry(c.buf[:0], h.opts.RetryInterval)
			c.buf = append(c.buf, '\n')
			c.write(c.buf)
		}
		c.flush()
		h.releaseMsgs(q) // those not written, after a cut, are kept in the store
		if c.failed {
			st.detach(sw)
			return
		}
		if st.standalone && c.lastSeq > 0 {
			st.mu.Lock()
			if c.lastSeq > st.delivered {
				st.delivered = c.lastSeq
			}
			st.mu.Unlock()
		}
		if cut {
			st.detach(sw)
			return
		}
		if done {
			st.detach(sw)
			if len(q) > 0 && q[len(q)-1].errRes && c.sessionHeader != "" {
				s.terminate()
			}
			return
		}
	}
}

// drainOnClose ends a response whose session ended: it writes what is
// queued, and answers a JSON exchange still waiting with 404.
func (h *Handler) drainOnClose(st *outStream, sw *streamWriter, c *sseConn) {
	st.mu.Lock()
	if st.w != sw { // taken over: the queue is the other connection's
		st.mu.Unlock()
		return
	}
	q := st.takeQueue()
	st.w = nil
	sse, done := st.sse, st.done
	st.mu.Unlock()
	defer st.retire()
	if !sse {
		if done {
			h.writeJSONAnswer(c, q)
			h.releaseMsgs(q)
			return
		}
		h.armWrite(c.w)
		writeHTTPError(c.w, http.StatusNotFound, jsonrpc.ID{}, "Not Found: the session ended")
		return
	}
	streamID := ""
	if st.resumable {
		streamID = st.id
	}
	for _, m := range q {
		c.event(streamID, m.seq, m.data)
	}
	if c.prime && h.closing.Load() {
		// Shutdown: the stream ends here, cleanly; tell the client when to
		// come back (to a server sharing the event store) to resume it.
		c.arm()
		c.buf = appendSSERetry(c.buf[:0], h.opts.RetryInterval)
		c.buf = append(c.buf, '\n')
		c.write(c.buf)
	}
	c.flush()
	h.releaseMsgs(q)
}
