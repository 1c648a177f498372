package jsonrpc

import (
	"context"
	"errors"
	"sync"
)

// NewPushConn returns a connection over s that never reads from s: its
// owner hands it each inbound message with Deliver, in the goroutine that
// received the message. It suits transports that receive messages in
// goroutines of their own, such as an HTTP handler serving POSTs, where a
// read loop would add a goroutine per connection and a hand-off per
// message.
//
// A push connection has no goroutine of its own while idle. It writes to s
// as a connection made by NewConn does, and closing it closes s. Done is
// closed by Close; Wait waits for the handlers that Deliver is running.
// ConnOptions.MaxQueued does not apply: a Deliver waiting for a handler
// slot blocks its caller.
func NewPushConn(s Stream, opts ConnOptions) *Conn {
	ps := &pushStream{Stream: s}
	c := newConn(ps, opts, true)
	ps.c = c
	return c
}

// pushStream is the stream of a push connection: Close also marks the
// connection done, which a read loop would otherwise do.
type pushStream struct {
	Stream
	c *Conn
}

var errPushRead = errors.New("jsonrpc: a push connection does not read its stream")

func (p *pushStream) Read(context.Context) (Message, error) { return nil, errPushRead }

func (p *pushStream) Close() error {
	err := p.Stream.Close()
	close(p.c.done)
	return err
}

// Deliver processes one inbound message m in the caller's goroutine, as the
// read loop of a connection made by NewConn would:
//
//   - A request is handled before Deliver returns, and its response (if
//     any) written to the stream. The same rules hold as on the read loop:
//     a reused id is refused with -32600, a handler's panic or non-*Error
//     error is answered with -32603, and the response of a request
//     cancelled with CancelInbound is not sent. At most
//     ConnOptions.MaxConcurrency requests are handled at once (except the
//     methods that ConnOptions.Inline names); Deliver waits for a slot.
//   - A notification is handled before Deliver returns. Notifications
//     delivered by concurrent calls are handled concurrently.
//   - A response completes the outbound call awaiting it.
//   - A *DecodeError is answered with its error response.
//   - A batch (when enabled, see SetBatchEnabled) has its requests handled
//     concurrently and its responses written as one batch; Deliver returns
//     when all are handled.
//
// The handler's context is derived from the connection's, not from ctx:
// it ends when the request is cancelled or the connection closes, never
// because ctx ended, so that a request outlives the exchange that
// delivered it. It carries ctx's values, looked up after the connection's
// and the request's own (see Request.WithValues). The context given to the
// stream's Write for a response carries the request's id, as
// RequestIDFromContext reports it.
//
// Deliver is meant for connections made by NewPushConn; on one made by
// NewConn, it competes with the read loop.
func (c *Conn) Deliver(ctx context.Context, m Message) {
	switch m := m.(type) {
	case *Request:
		if m.IsNotification() {
			c.notifyPushed(ctx, m)
			return
		}
		c.servePushed(ctx, m, nil)
	case *Response:
		c.handleResponse(m)
	case *DecodeError:
		c.log.Warn("jsonrpc: malformed message", "code", m.Err.Code, "error", m.Err.Message)
		c.write(context.Background(), m.Response())
	case Batch:
		c.deliverBatch(ctx, m)
	}
}

// pushedContext is the context of a message handled by Deliver, before the
// cancel of a request is added: the connection's context, then the
// request's id, the values of the request's carrier and those of
// Deliver's context. It holds the request's inbound record too, so that
// the whole is one allocation.
type pushedContext struct {
	context.Context                 // the connection's
	id              any             // the request's ID; nil for a notification
	values          context.Context // the request's carrier, or nil
	outer           context.Context // Deliver's context (values only), or nil
	in              inbound
}

func (p *pushedContext) Value(key any) any {
	if key == requestIDKey {
		return p.id
	}
	if v := p.Context.Value(key); v != nil {
		return v
	}
	if p.values != nil {
		if v := p.values.Value(key); v != nil {
			return v
		}
	}
	if p.outer != nil {
		return p.outer.Value(key)
	}
	return nil
}

// notifyPushed handles a notification in the caller's goroutine.
func (c *Conn) notifyPushed(ctx context.Context, req *Request) {
	hctx := &pushedContext{Context: c.ctx, values: req.values, outer: ctx}
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("jsonrpc: notification handler panicked", "method", req.Method, "panic", p)
		}
	}()
	if _, err := c.handler.Handle(hctx, req); err != nil {
		c.log.Debug("jsonrpc: notification handler failed", "method", req.Method, "error", err)
	}
}

// servePushed handles a request in the caller's goroutine and answers it:
// on the stream, or into batch when it belongs to one.
func (c *Conn) servePushed(ctx context.Context, req *Request, batch *batchReply) {
	idv := any(req.ID) // boxed once, for the handler's context and the write
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		if batch != nil {
			batch.add(nil)
		}
		return
	}
	_, dupInflight := c.inflight[req.ID]
	_, dupRecent := c.recent[req.ID]
	if dupInflight || dupRecent {
		c.mu.Unlock()
		c.log.Warn("jsonrpc: request id reused", "id", req.ID.String(), "method", req.Method)
		c.reply(batch, idv, &Response{ID: req.ID, Error: Errorf(CodeInvalidRequest, "Invalid Request: id %s was already used in this session", req.ID.AppendJSON(nil))})
		return
	}
	pc := &pushedContext{Context: c.ctx, id: idv, values: req.values, outer: ctx}
	hctx, cancel := context.WithCancel(pc)
	pc.in.cancel = cancel
	if c.inflight == nil {
		c.inflight = make(map[ID]*inbound)
	}
	c.inflight[req.ID] = &pc.in
	var slots chan struct{}
	if c.opts.Inline == nil || !c.opts.Inline(req.Method) {
		if c.slots == nil {
			c.slots = make(chan struct{}, c.opts.MaxConcurrency)
		}
		slots = c.slots
	}
	c.handlers.Add(1)
	c.mu.Unlock()
	defer c.handlers.Done()

	if slots != nil {
		select {
		case slots <- struct{}{}:
		case <-c.ctx.Done():
			cancel()
			c.finish(req.ID)
			if batch != nil {
				batch.add(nil)
			}
			return
		}
	}
	resp := c.run(hctx, req)
	if slots != nil {
		<-slots
	}
	cancel()
	c.finish(req.ID)
	if pc.in.cancelled.Load() {
		resp = nil
		c.log.Debug("jsonrpc: response suppressed after cancellation", "id", req.ID.String())
	}
	if batch != nil {
		batch.add(resp)
		return
	}
	if resp != nil {
		// pc carries the id, and unlike hctx is not cancelled.
		c.write(pc, resp)
	}
}

// deliverBatch handles the messages of a batch: notifications and
// responses in order, requests concurrently; it returns once the batch's
// responses are written.
func (c *Conn) deliverBatch(ctx context.Context, b Batch) {
	if !c.batchOK.Load() {
		c.write(context.Background(), &Response{Error: NewError(CodeInvalidRequest, "Invalid Request: batches are not supported in this session")})
		return
	}
	reply := &batchReply{c: c, waiting: len(b) + 1}
	var wg sync.WaitGroup
	for _, e := range b {
		switch e := e.(type) {
		case *Request:
			if e.IsNotification() {
				c.notifyPushed(ctx, e)
				reply.add(nil)
				continue
			}
			wg.Go(func() { c.servePushed(ctx, e, reply) })
		case *Response:
			c.handleResponse(e)
			reply.add(nil)
		case *DecodeError:
			reply.add(e.Response())
		default: // a batch in a batch
			reply.add(&Response{Error: NewError(CodeInvalidRequest, "Invalid Request: a batch must not contain a batch")})
		}
	}
	reply.add(nil)
	wg.Wait()
}
