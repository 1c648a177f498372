package mcphttp

import "bytes"

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
