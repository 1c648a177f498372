package jsonrpc

import (
	"context"
	"errors"
)

// This file is the read-loop driver of a Conn (NewConn): the goroutines
// that read the stream, with the read token (readtoken.go) that lets one
// of them at a time do it, and the dispatch of what they read.

// reader is the state of a Conn that reads its stream (see NewConn),
// which a push connection does without. Guarded by the Conn's mu, except
// for the channels.
type reader struct {
	token readToken

	cancel context.CancelCauseFunc // cancels the Conn's ctx

	intr interruptibleStream // the stream, if its reads can be given up; else nil

	// The background reader is a role, not one goroutine (see serveHere):
	// standby counts the goroutines waiting for it (at most one once the
	// others have seen it), serving those running a handler they read.
	standby, serving int
}

// NewConn returns a connection over s and starts reading from it.
func NewConn(s Stream, opts ConnOptions) *Conn {
	x := &struct { // one allocation for both
		Conn
		reader
	}{}
	c := &x.Conn
	c.init(s, opts)
	c.done = make(chan struct{})
	rd := &x.reader
	c.rd = rd
	if is, ok := s.(interruptibleStream); ok && is.interruptible() {
		rd.intr = is
	}
	c.slots = make(chan struct{}, c.opts.MaxConcurrency)
	c.ctx, rd.cancel = context.WithCancelCause(context.Background())
	rd.token = newReadToken() // held by the background reader
	rd.standby = 1
	go c.background()
	return c
}

// shutdownReader ends a connection made by NewConn, whose closed is set;
// c.mu is held, and unlocked here.
func (c *Conn) shutdownReader(pending map[ID]*call) {
	t := &c.rd.token
	t.close()
	// Whoever holds the read token closes done when it gives the token up;
	// if nobody does, done is closed here and the token is kept forever.
	free := t.take()
	c.mu.Unlock()
	c.rd.cancel(ErrClosed)
	_ = c.stream.Close()
	for _, cl := range pending {
		close(cl.ch)
	}
	if free {
		t.grace.Stop()
		close(c.done)
	}
}

// background is the background reader's goroutine.
func (c *Conn) background() {
	for {
		select {
		case <-c.done:
			return
		case <-c.rd.token.wake:
			c.mu.Lock()
			c.rd.standby--
			c.mu.Unlock()
		case <-c.rd.token.grace.C:
			c.mu.Lock()
			if !c.rd.token.expire(c.rd.serving > 0) {
				c.mu.Unlock()
				continue
			}
			c.rd.standby--
			c.mu.Unlock()
		}
		if !c.readBackground() {
			return
		}
	}
}

// readBackground reads for the background reader, holding the token, until
// it passes the token on. It reports true if its goroutine is to wait for
// the token again (it is counted in standby), false if it is to end: the
// connection has ended, or another goroutine waits already.
func (c *Conn) readBackground() bool {
	for {
		m, ok := c.read(context.Background())
		if !ok {
			return false
		}
		if m == nil {
			continue
		}
		var leave bool // the last call that may read was answered
		switch m := m.(type) {
		case *Response:
			leave = c.handleResponse(m)
		case *Request:
			switch c.serveHere(m) {
			case roleDispatch:
				c.dispatch(m, nil)
			case roleStandby:
				return true
			case roleEnd:
				return false
			}
		default:
			c.dispatch(m, nil)
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			close(c.done)
			return false
		}
		if c.rd.token.handToWaiter() {
			return c.standByLocked()
		}
		if leave && len(c.pending) == 0 {
			// Calls that may read are being made: leave the next one to
			// read itself.
			c.rd.token.release()
			return c.standByLocked()
		}
		c.mu.Unlock()
	}
}

// standByLocked decides what a goroutine of the background reader does
// once it no longer holds the token nor runs a handler: it waits for the
// token again if no other goroutine does (reporting true), else it ends.
// It unlocks c.mu.
func (c *Conn) standByLocked() bool {
	wait := c.rd.standby == 0 && !c.closed
	if wait {
		c.rd.standby++
	}
	c.mu.Unlock()
	return wait
}

// role is what a goroutine of the background reader does next, once it
// has served a request it read (see serveHere).
type role int

const (
	roleDispatch role = iota // it did not serve the request: dispatch must
	roleRead                 // it holds the token (again) and reads on
	roleStandby              // it waits for the token (counted in standby)
	roleEnd                  // its goroutine ends
)

// serveHere serves req, a request the background reader read, on the
// reading goroutine itself, when that costs no ordering and no bound: req
// is not a notification, nor an inline method (which dispatch handles on
// the read loop), and a handler slot is free at once. It reports what the
// goroutine does next: roleDispatch if it did not serve req.
//
// Before the handler runs, the token passes on as when a call is answered
// (see passLocked): to a caller waiting to read, else to the background
// reader if calls are pending that may not read, else it is freed; and
// another goroutine waits for the background reader's role, started here
// if none does. So a handler that blocks, or runs long, does not stall
// reading: a caller takes the free token at once (a call the handler makes
// on this connection reads its own response), and the waiting goroutine
// takes it when the grace timer finds it free while a handler runs (within
// about two readGrace). A handler that returns sooner gets its answer
// written with no hand-off between goroutines, and its goroutine takes the
// token back if it is still free, to read the next message.
func (c *Conn) serveHere(req *Request) role {
	if req.IsNotification() || c.inline(req.Method) {
		return roleDispatch
	}
	select {
	case c.slots <- struct{}{}:
	default:
		// Every slot is taken: the request waits for one on a
		// goroutine of its own, if MaxQueued do not wait already.
		return roleDispatch
	}
	in := c.admit(req, nil, nil)
	if in == nil {
		<-c.slots
		return roleRead // refused, or the connection ended
	}
	c.mu.Lock()
	if c.rd.standby == 0 {
		c.rd.standby++
		go c.background()
	}
	c.rd.serving++
	end := c.passLocked()
	c.mu.Unlock()
	if end {
		close(c.done)
	}
	c.serve(req, in, nil)
	c.handlers.Done()
	c.mu.Lock()
	c.rd.serving--
	if !c.closed && c.rd.token.take() {
		c.mu.Unlock()
		return roleRead
	}
	if c.standByLocked() {
		return roleStandby
	}
	return roleEnd
}

// read reads one message for the token's holder. A malformed message is
// answered and reported as (nil, true). When the stream ends, read shuts the
// connection down, closes done and reports false: the token dies with it.
//
// If watch can end (and then c.rd.intr is not nil), the read is given up
// when watch ends, reported as (nil, true).
func (c *Conn) read(watch context.Context) (Message, bool) {
	var m Message
	var err error
	if watch.Done() != nil {
		m, err = c.rd.intr.readInterruptible(watch)
		if err == errReadInterrupted {
			return nil, true
		}
	} else {
		m, err = c.stream.Read(c.ctx)
	}
	if err == nil {
		return m, true
	}
	var de *DecodeError
	if errors.As(err, &de) {
		c.opts.Logger.Warn("jsonrpc: malformed message", "code", de.Err.Code, "error", de.Err.Message)
		c.write(context.Background(), de.Response())
		return nil, true
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed || errors.Is(err, ErrClosed) || isEOF(err) {
		err = nil
	}
	c.shutdown(err)
	close(c.done)
	return nil, false
}

// await waits for the response to cl, a call that may read, reading it
// itself when it holds or is given the read token, until ctx ends. A
// context that can end is watched only if c.rd.intr is not nil (see
// roundTrip). A push connection has no token to take: its caller waits
// for Deliver to hand it its response.
func (c *Conn) await(ctx context.Context, cl *call) (*Response, awaited) {
	if c.rd == nil {
		return c.awaitOthers(ctx, cl)
	}
	c.mu.Lock()
	lead := false
	if c.pending[cl.id] == cl {
		if lead = c.rd.token.take(); !lead {
			c.rd.token.wait(cl)
		}
	}
	c.mu.Unlock()
	for !lead {
		select {
		case r, ok := <-cl.ch:
			if !ok {
				return nil, awaitClosed
			}
			if r != tokenHandoff {
				return r, awaitAnswered
			}
			lead = true
		case <-ctx.Done(): // nil, never ready, if ctx cannot end
			return c.leave(cl)
		}
	}
	return c.lead(ctx, cl)
}

// leave ends the wait of cl, whose context has ended, while it does not
// hold the read token: it leaves the queue of waiting callers, or, if it
// is no longer in it, takes what was sent it meanwhile (the token, which
// it passes on, or its response, or the end of the connection).
func (c *Conn) leave(cl *call) (*Response, awaited) {
	c.mu.Lock()
	if c.pending[cl.id] == cl && cl.waiting {
		delete(c.pending, cl.id)
		c.rd.token.leave(cl)
		c.mu.Unlock()
		return nil, awaitAbandoned
	}
	c.mu.Unlock()
	// Out of the queue but pending, cl was handed the token, sent under
	// c.mu; answered, its response is on its way; at the end of the
	// connection (no longer pending either), cl.ch is being closed.
	r, ok := <-cl.ch
	if !ok {
		return nil, awaitClosed
	}
	if r != tokenHandoff {
		return r, awaitAnswered
	}
	return c.giveUp(cl)
}

// lead reads, holding the token, until the response to cl arrives, and
// returns it; or until the connection ends, or ctx does (see await).
func (c *Conn) lead(ctx context.Context, cl *call) (*Response, awaited) {
	// A ctx that can end can give the read up: c.rd.intr is then not nil
	// (see roundTrip).
	watch := ctx
	for {
		m, ok := c.read(watch)
		if !ok {
			return nil, awaitClosed
		}
		if m == nil && watch.Err() != nil {
			return c.giveUp(cl)
		}
		if r, isResponse := m.(*Response); isResponse && r.ID == cl.id {
			c.mu.Lock()
			if c.pending[cl.id] == cl {
				delete(c.pending, cl.id)
				end := c.passLocked()
				c.mu.Unlock()
				if end {
					close(c.done)
				}
				return r, awaitAnswered
			}
			c.mu.Unlock()
		}
		if m != nil {
			c.dispatch(m, nil)
		}
		// A batch may have carried the response, or the connection ended.
		select {
		case r, ok := <-cl.ch:
			c.mu.Lock()
			end := c.passLocked()
			c.mu.Unlock()
			if end {
				close(c.done)
			}
			if !ok {
				return nil, awaitClosed
			}
			return r, awaitAnswered
		default:
		}
	}
}

// giveUp ends the wait of cl, whose caller holds the read token and whose
// context has ended: it forgets cl and passes the token on.
func (c *Conn) giveUp(cl *call) (*Response, awaited) {
	c.mu.Lock()
	forgot := c.pending[cl.id] == cl
	if forgot {
		delete(c.pending, cl.id)
	}
	end := c.passLocked()
	c.mu.Unlock()
	if end {
		close(c.done)
	}
	if forgot {
		return nil, awaitAbandoned
	}
	// The holder is the only one to hand out responses, and it has
	// taken any for cl from cl.ch: the connection has ended.
	return nil, awaitClosed
}

// passLocked passes the token on from its holder (see readToken.pass),
// unless the connection is closed: then it reports true, and the holder
// must close done. c.mu is held.
func (c *Conn) passLocked() bool {
	if c.closed {
		return true
	}
	c.rd.token.pass(len(c.pending) > 0)
	return false
}

// dispatch handles a message that the read loop read: a request on a
// goroutine of its own (or inline, see ConnOptions.Inline), a
// notification in order on the read loop, a response to its call. Its
// answers go into batch, if it belongs to one.
func (c *Conn) dispatch(m Message, batch *batchReply) {
	switch m := m.(type) {
	case *Request:
		if m.IsNotification() {
			c.handleNotification(m)
			if batch != nil {
				batch.add(nil)
			}
			return
		}
		c.startRequest(m, batch)
	case *Response:
		c.handleResponse(m)
		if batch != nil {
			batch.add(nil)
		}
	case *DecodeError:
		if batch != nil {
			batch.add(m.Response())
		}
	case Batch:
		if batch != nil || !c.batchOK.Load() {
			c.write(context.Background(), &Response{Error: NewError(CodeInvalidRequest, "Invalid Request: batches are not supported in this session")})
			return
		}
		b := &batchReply{c: c, waiting: len(m) + 1}
		for _, e := range m {
			c.dispatch(e, b)
		}
		b.add(nil)
	}
}

// handleNotification handles a notification on the read loop.
func (c *Conn) handleNotification(req *Request) {
	var ctx context.Context = c.ctx
	if req.values != nil {
		ctx = &requestContext{Context: c.ctx, values: req.values}
	}
	c.notify(ctx, req)
}

// notify runs the handler of a notification.
func (c *Conn) notify(ctx context.Context, req *Request) {
	defer func() {
		if p := recover(); p != nil {
			c.opts.Logger.Error("jsonrpc: notification handler panicked", "method", req.Method, "panic", p)
		}
	}()
	if _, err := c.opts.Handler.Handle(ctx, req); err != nil {
		c.opts.Logger.Debug("jsonrpc: notification handler failed", "method", req.Method, "error", err)
	}
}

// startRequest admits req and has it handled: inline, or on a goroutine
// of its own once a handler slot is free. The read loop never waits for a
// slot: it must go on reading, as the handlers holding the slots may wait
// for the answers to their own calls; a request that finds MaxQueued
// waiting already is refused (see queueLocked).
func (c *Conn) startRequest(req *Request, batch *batchReply) {
	in := c.admit(req, nil, batch)
	if in == nil {
		return
	}
	if batch == nil && c.inline(req.Method) {
		resp := c.run(in, req)
		c.finish(in)
		c.reply(nil, in, resp)
		c.handlers.Done()
		return
	}
	select {
	case c.slots <- struct{}{}:
		go func() {
			defer c.handlers.Done()
			c.serve(req, in, batch)
		}()
		return
	default:
	}
	c.mu.Lock()
	queued := c.queueLocked()
	c.mu.Unlock()
	if !queued {
		c.refuseOverloaded(req, in, batch)
		c.handlers.Done()
		return
	}
	go func() {
		defer c.handlers.Done()
		ok := acquire(c.slots, &in.ctx)
		c.mu.Lock()
		c.waiting--
		c.mu.Unlock()
		if !ok { // cancelled, or the connection closed
			c.finish(in)
			c.reply(batch, in, nil)
			return
		}
		c.serve(req, in, batch)
	}()
}

// serve runs the handler of req, admitted as in, holding a handler slot,
// which it frees, and sends its answer unless req was cancelled.
func (c *Conn) serve(req *Request, in *inbound, batch *batchReply) {
	resp := c.run(in, req)
	<-c.slots
	c.finish(in)
	c.reply(batch, in, c.answer(in, resp))
}
