package jsonrpc

import (
	"context"
	"sync"
)

// This file is the push driver of a Conn (NewPushConn): its owner hands
// it each inbound message with Deliver.

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
// A Deliver waiting for a handler slot blocks its caller; once
// ConnOptions.MaxQueued requests are waiting, a further one is answered at
// once with CodeOverloaded instead of joining them.
func NewPushConn(s Stream, opts ConnOptions) *Conn {
	c := new(Conn)
	c.init(s, opts)
	// The context of a push connection is never cancelled, so that the
	// contexts of its requests need not be registered with it: that would
	// cost a map and a channel per connection. Closing the connection
	// cancels its requests one by one instead (see shutdownPush).
	c.ctx = context.Background()
	return c
}

// shutdownPush ends a push connection, once: it closes the stream,
// cancels the requests being handled and closes done, which the
// cancellation of the connection's context and the end of its read loop
// do for a connection made by NewConn; then it fails the calls awaiting a
// response.
func (c *Conn) shutdownPush(pending map[ID]*call) {
	_ = c.stream.Close()
	c.cancelInbound()
	c.mu.Lock()
	c.ended = true
	if c.done != nil { // else Done makes it closed
		close(c.done)
	}
	c.mu.Unlock()
	for _, cl := range pending {
		close(cl.ch)
	}
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
//     methods that ConnOptions.Inline names); Deliver waits for a slot,
//     unless ConnOptions.MaxQueued requests wait already: then the request
//     is answered at once with CodeOverloaded.
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
			c.notify(&requestContext{Context: c.ctx, values: m.values, outer: ctx}, m)
			return
		}
		c.servePushed(ctx, m, nil)
	case *Response:
		c.handleResponse(m)
	case *DecodeError:
		c.opts.Logger.Warn("jsonrpc: malformed message", "code", m.Err.Code, "error", m.Err.Message)
		c.write(context.Background(), m.Response())
	case Batch:
		c.deliverBatch(ctx, m)
	}
}

// servePushed handles a request in the caller's goroutine and answers it:
// on the stream, or into batch when it belongs to one.
func (c *Conn) servePushed(ctx context.Context, req *Request, batch *batchReply) {
	in := c.admit(req, ctx, batch)
	if in == nil {
		return
	}
	defer c.handlers.Done()
	var slots chan struct{}
	if !c.inline(req.Method) {
		slots = c.slots // made by admit
	}

	if slots != nil {
		if ok, full := c.acquirePushed(slots, &in.ctx); !ok {
			if full {
				c.refuseOverloaded(req, in, batch)
				return
			}
			c.finish(in)
			c.reply(batch, in, nil)
			return
		}
	}
	resp := c.run(in, req)
	if slots != nil {
		<-slots
	}
	c.finish(in)
	c.reply(batch, in, c.answer(in, resp))
}

// acquirePushed takes a handler slot for a delivered request, as acquire
// does, unless ConnOptions.MaxQueued requests wait for one already: then it
// reports full. Only a request that must wait counts, so the common case
// costs nothing more than acquire's first try.
func (c *Conn) acquirePushed(slots chan struct{}, ctx context.Context) (ok, full bool) {
	select {
	case slots <- struct{}{}:
		return true, false
	default:
	}
	c.mu.Lock()
	queued := c.queueLocked()
	c.mu.Unlock()
	if !queued {
		return false, true
	}
	ok = acquire(slots, ctx)
	c.mu.Lock()
	c.waiting--
	c.mu.Unlock()
	return ok, false
}

// acquire takes a handler slot, waiting for one unless ctx ends first
// (the request was cancelled, or the connection closed). It asks for ctx's
// channel only when it must wait, since that allocates it.
func acquire(slots chan struct{}, ctx context.Context) bool {
	select {
	case slots <- struct{}{}:
		return true
	default:
	}
	select {
	case slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
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
				c.notify(&requestContext{Context: c.ctx, values: e.values, outer: ctx}, e)
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
