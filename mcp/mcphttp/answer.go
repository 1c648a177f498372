package mcphttp

import (
	"bytes"
	"net/http"
	"strconv"
	"time"
)

// sseConn writes one HTTP response: a JSON answer or an SSE stream.
type sseConn struct {
	w             http.ResponseWriter
	sessionHeader string
	prime         bool // start SSE with a priming event (if resumable)
	poll          bool // close after MaxEventsPerConnection messages (if resumable)
	batch         bool // the POST was a batch: a JSON answer is an array
	started       bool
	failed        bool // next to the other flags: a POST's outStream and sseConn fit 256 bytes
	sent          int  // messages sent on this connection
	lastSeq       int64
	buf           []byte
	wt            time.Duration // Options.WriteTimeout: a deadline per event
}

// arm gives the next event WriteTimeout to be written (see
// Options.WriteTimeout).
func (c *sseConn) arm() {
	if c.wt > 0 && !c.failed {
		setWriteDeadline(c.w, time.Now().Add(c.wt))
	}
}

// start writes the headers of an SSE response and, for a resumable stream,
// its priming event, whose id is the stream's position after.
func (c *sseConn) start(stream string, after int64, resumable bool) {
	if c.started {
		return
	}
	c.started = true
	c.arm()
	c.prime = c.prime && resumable
	c.poll = c.poll && resumable
	h := c.w.Header()
	h["Content-Type"] = eventStreamType
	h["Cache-Control"] = noCache
	if c.sessionHeader != "" {
		h.Set(headerSessionID, c.sessionHeader)
	}
	c.w.WriteHeader(http.StatusOK)
	if c.prime {
		c.buf = append(c.buf[:0], "id: "...)
		c.buf = formatEventID(c.buf, stream, after)
		c.buf = append(c.buf, "\ndata: \n\n"...)
		c.write(c.buf)
	}
	c.flush()
}

func (c *sseConn) write(b []byte) {
	if c.failed {
		return
	}
	if _, err := c.w.Write(b); err != nil {
		c.failed = true
	}
}

func (c *sseConn) flush() {
	if c.failed {
		return
	}
	var err error
	if f, ok := c.w.(http.Flusher); ok {
		f.Flush()
	} else {
		err = http.NewResponseController(c.w).Flush()
	}
	if err != nil {
		c.failed = true
	}
}

// directEventMin is the size from which the data of an event on one line
// is written from where it is, rather than copied after the event's
// fields.
const directEventMin = 16 << 10

// event writes one message event. A stream without resumption has no ids.
func (c *sseConn) event(stream string, seq int64, data []byte) {
	c.arm()
	c.buf = c.buf[:0]
	if seq > 0 && stream != "" {
		c.buf = append(c.buf, "id: "...)
		c.buf = formatEventID(c.buf, stream, seq)
		c.buf = append(c.buf, '\n')
	}
	if len(data) >= directEventMin && oneLine(data) {
		// The same bytes as appendSSEEvent's, in three writes.
		c.buf = append(c.buf, "data: "...)
		c.write(c.buf)
		c.write(data)
		c.buf = append(c.buf[:0], '\n', '\n')
	} else {
		c.buf = appendSSEEvent(c.buf, "", "", 0, data)
	}
	c.write(c.buf)
	c.sent++
	c.lastSeq = seq
}

// writeJSONAnswer writes the responses of a POST as application/json: one
// response, or an array for a batch. With no response at all (the requests
// were cancelled), it answers 202.
func (h *Handler) writeJSONAnswer(c *sseConn, q []outMsg) {
	h.armWrite(c.w) // the handlers may have taken long: a fresh deadline for the answer
	hd := c.w.Header()
	if c.sessionHeader != "" {
		hd.Set(headerSessionID, c.sessionHeader)
	}
	switch {
	case len(q) == 0:
		c.w.WriteHeader(http.StatusAccepted)
		return
	case len(q) == 1 && !c.batch:
		hd["Content-Type"] = jsonType
		setContentLength(hd, len(q[0].data))
		c.w.WriteHeader(http.StatusOK)
		c.write(q[0].data)
		return
	}
	hd.Set("Content-Type", "application/json")
	n := 1
	for _, m := range q {
		n += len(m.data) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, m := range q {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m.data...)
	}
	b = append(b, ']')
	setContentLength(hd, len(b))
	c.w.WriteHeader(http.StatusOK)
	c.write(b)
}

// setContentLength declares the length of a JSON answer, written in one
// Write, so that a large one is not sent chunked. net/http declares it
// itself, without allocating, for an answer that fits its buffer (a
// handler that returns after one Write of at most 2 KiB), so only larger
// ones need the header.
func setContentLength(hd http.Header, n int) {
	if n > 2048 {
		hd["Content-Length"] = []string{strconv.Itoa(n)}
	}
}

// oneLine reports whether data holds no line break, so that it can be the
// data of an SSE event as it is.
func oneLine(data []byte) bool {
	return bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') < 0
}

// maxPooledBuf is the largest capacity of a message buffer that is kept
// for reuse: a larger one is left to the garbage collector, so that an
// occasional huge message does not pin its memory.
const maxPooledBuf = 4 << 20

// getBuf returns an empty message buffer, from the pool if it has one.
// Reusing them matters for large messages: the first touch of fresh memory
// costs page faults that dwarf the encoding.
func (h *Handler) getBuf() *[]byte {
	p, _ := h.bufs.Get().(*[]byte)
	if p == nil {
		p = new([]byte)
	}
	if cap(*p) == 0 { // new, or its memory went to the event store (see keep)
		*p = make([]byte, 0, 128)
	}
	return p
}

// releaseMsgs returns the buffers of q's messages to the pool. It is called
// once they are written and nothing else refers to them: the HTTP write
// returned, and a message kept in the event store has no buffer (see
// keep).
func (h *Handler) releaseMsgs(q []outMsg) {
	for i := range q {
		if p := q[i].buf; p != nil && cap(*p) <= maxPooledBuf {
			*p = (*p)[:0]
			h.bufs.Put(p)
		}
		q[i].buf, q[i].data = nil, nil
	}
}

// keep marks m's data as kept by someone else (the event store): its
// memory must not be reused. Only the buffer's holder goes back to the
// pool.
func (m *outMsg) keep(h *Handler) {
	if m.buf != nil {
		*m.buf = nil
		h.bufs.Put(m.buf)
		m.buf = nil
	}
}
