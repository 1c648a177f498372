package jsonrpc

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
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
// A Deliver waiting for a handler slot blocks its caller; once
// ConnOptions.MaxQueued requests are waiting, a further one is answered at
// once with CodeOverloaded instead of joining them.
func NewPushConn(s Stream, opts ConnOptions) *Conn {
	return InitPushConn(new(Conn), s, opts)
}

// InitPushConn makes c, which must be a zero Conn never used before, a
// push connection over s, as NewPushConn does, and returns it. It lets a
// transport keep the connection inside a larger structure of its own, one
// allocation per connection instead of several; c must not be copied
// afterwards.
func InitPushConn(c *Conn, s Stream, opts ConnOptions) *Conn {
	c.init(s, opts)
	// Nobody reads a push connection: the read token is taken for good,
	// and its callers wait for Deliver to hand them their responses.
	c.reading = true
	c.push = &c.pushed
	// The context of a push connection is never cancelled, so that the
	// contexts of its requests need not be registered with it: that would
	// cost a map and a channel per connection. Closing the connection
	// cancels its requests one by one instead (see shutdownPush).
	c.ctx, c.cancel = context.Background(), func(error) {}
	return c
}

// shutdownPush ends a push connection, once: it closes the stream,
// cancels the requests being handled and closes done, which the
// cancellation of the connection's context and the end of its read loop
// do for a connection made by NewConn; then it fails the calls awaiting a
// response.
func (c *Conn) shutdownPush(pending map[ID]*call) {
	_ = c.stream.Close()
	c.mu.Lock()
	active := slices.Clone(c.push.active)
	c.mu.Unlock()
	for _, a := range active {
		a.in.end()
	}
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

// pushState is the inbound bookkeeping of a push connection, in place of
// the maps of a connection with a read loop: most sessions have few
// requests in flight and have completed few, and an idle one should hold
// little memory. Guarded by the connection's mu.
type pushState struct {
	active []activeRequest // requests being handled
	ring   []ID            // completed request ids, oldest first from next once full
	// next and queued share a word, so that a session stays within its
	// allocation size class (RememberIDs fits an int32 in practice).
	next   int32
	queued int32 // requests waiting for a handler slot (guarded by the Conn's mu)
	// The first backing arrays of active and ring: an idle session has
	// handled one request, initialize, and keeps its id.
	active1 [1]activeRequest
	ring1   [1]ID
	// The ids of ring, once it is longer than linearIDs, by kind: maps
	// keyed by an int64 or a string are faster than ones keyed by ID.
	recentNum map[int64]struct{}
	recentStr map[string]struct{}
}

type activeRequest struct {
	id ID
	in *inbound
}

// linearIDs is how many completed ids are searched linearly before a map
// is built for them.
const linearIDs = 16

func (p *pushState) lookup(id ID) (*inbound, bool) {
	for _, a := range p.active {
		if a.id == id {
			return a.in, true
		}
	}
	return nil, false
}

// used reports whether id is in flight or among the remembered ones.
func (p *pushState) used(id ID) bool {
	if _, ok := p.lookup(id); ok {
		return true
	}
	if p.recentNum != nil {
		return p.hasRecent(id)
	}
	return slices.Contains(p.ring, id)
}

// hasRecent, addRecent and deleteRecent use the maps of remembered ids.
func (p *pushState) hasRecent(id ID) bool {
	var ok bool
	switch id.kind {
	case idInt:
		_, ok = p.recentNum[id.num]
	case idString:
		_, ok = p.recentStr[id.str]
	}
	return ok
}

func (p *pushState) addRecent(id ID) {
	switch id.kind {
	case idInt:
		p.recentNum[id.num] = struct{}{}
	case idString:
		p.recentStr[id.str] = struct{}{}
	}
}

func (p *pushState) deleteRecent(id ID) {
	switch id.kind {
	case idInt:
		delete(p.recentNum, id.num)
	case idString:
		delete(p.recentStr, id.str)
	}
}

// start adds a request to the active ones.
func (p *pushState) start(id ID, in *inbound) {
	if p.active == nil {
		p.active = p.active1[:0]
	}
	full := len(p.active) == cap(p.active)
	p.active = append(p.active, activeRequest{id, in})
	if full { // active has left active1, if it was there: keep no stale copy
		p.active1 = [1]activeRequest{}
	}
}

// finish moves id from the active requests to the remembered ids, of
// which it keeps at most n (none if n < 0).
func (p *pushState) finish(id ID, n int) {
	for i, a := range p.active {
		if a.id == id {
			last := len(p.active) - 1
			p.active[i] = p.active[last]
			p.active[last] = activeRequest{}
			p.active = p.active[:last]
			break
		}
	}
	if n < 0 {
		return
	}
	if len(p.ring) < n {
		if p.ring == nil {
			p.ring = p.ring1[:0]
		}
		full := len(p.ring) == cap(p.ring)
		p.ring = append(p.ring, id)
		if full { // ring has left ring1, if it was there: keep no stale copy
			p.ring1 = [1]ID{}
		}
		if p.recentNum != nil {
			p.addRecent(id)
		} else if len(p.ring) > linearIDs {
			p.recentNum = make(map[int64]struct{}, len(p.ring))
			p.recentStr = make(map[string]struct{})
			for _, r := range p.ring {
				p.addRecent(r)
			}
		}
		return
	}
	if p.recentNum != nil {
		p.deleteRecent(p.ring[p.next])
		p.addRecent(id)
	}
	p.ring[p.next] = id
	p.next = int32((int(p.next) + 1) % n)
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
			c.notifyPushed(ctx, m)
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

// pushedContext is the context of a message handled by Deliver, before the
// cancel of a request is added: the connection's context (which is never
// cancelled, see pushStream), with the request's id, the values of the
// request's carrier and those of Deliver's context. It holds the request's
// inbound record too, so that the whole is one allocation.
type pushedContext struct {
	context.Context                 // the connection's
	id              ID              // the request's ID; invalid for a notification
	values          context.Context // the request's carrier, or nil
	outer           context.Context // Deliver's context (values only), or nil
	in              inbound
}

func (p *pushedContext) Value(key any) any {
	if key == requestIDKey {
		if !p.id.IsValid() {
			return nil
		}
		return p.id // boxed only when asked: most handlers never ask
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

// pushedRequest is the context of a request handled by Deliver: its
// pushedContext, cancelled when the request ends. It behaves as
// context.WithCancel over the pushedContext, which it makes only when it
// must (for Done, and for values other than the request's id, among which
// is the one by which package context finds a cancelable parent); most
// handlers never ask, and their requests spare its allocations and its
// locking.
type pushedRequest struct {
	pushedContext

	made      atomic.Bool // real is set, and will not change
	mu        sync.Mutex
	real      context.Context // context.WithCancel(&pushedContext), once made
	cancelRe  context.CancelFunc
	cancelled bool // cancel was called

	resp Response // the answer, built here by run
}

// ctx returns the real cancelable context, making it on first use.
func (p *pushedRequest) ctx() context.Context {
	if p.made.Load() {
		return p.real
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.real == nil {
		p.real, p.cancelRe = context.WithCancel(&p.pushedContext)
		if p.cancelled {
			p.cancelRe()
		}
		p.made.Store(true)
	}
	return p.real
}

func (p *pushedRequest) Done() <-chan struct{} { return p.ctx().Done() }

func (p *pushedRequest) Err() error {
	p.mu.Lock()
	real, cancelled := p.real, p.cancelled
	p.mu.Unlock()
	if real != nil {
		return real.Err()
	}
	if cancelled {
		return context.Canceled
	}
	return nil
}

func (p *pushedRequest) Value(key any) any {
	if key == requestIDKey {
		return p.pushedContext.Value(key)
	}
	return p.ctx().Value(key)
}

// cancel ends the context; it may be called more than once.
func (p *pushedRequest) cancel() {
	p.mu.Lock()
	p.cancelled = true
	f := p.cancelRe
	p.mu.Unlock()
	if f != nil {
		f()
	}
}

// notifyPushed handles a notification in the caller's goroutine.
func (c *Conn) notifyPushed(ctx context.Context, req *Request) {
	hctx := &pushedContext{Context: c.ctx, values: req.values, outer: ctx}
	defer func() {
		if p := recover(); p != nil {
			c.opts.Logger.Error("jsonrpc: notification handler panicked", "method", req.Method, "panic", p)
		}
	}()
	if _, err := c.opts.Handler.Handle(hctx, req); err != nil {
		c.opts.Logger.Debug("jsonrpc: notification handler failed", "method", req.Method, "error", err)
	}
}

// servePushed handles a request in the caller's goroutine and answers it:
// on the stream, or into batch when it belongs to one.
func (c *Conn) servePushed(ctx context.Context, req *Request, batch *batchReply) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		if batch != nil {
			batch.add(nil)
		}
		return
	}
	if c.push.used(req.ID) {
		c.mu.Unlock()
		c.opts.Logger.Warn("jsonrpc: request id reused", "id", req.ID.String(), "method", req.Method)
		c.reply(batch, any(req.ID), &Response{ID: req.ID, Error: Errorf(CodeInvalidRequest, "Invalid Request: id %s was already used in this session", req.ID.AppendJSON(nil))})
		return
	}
	hctx := &pushedRequest{pushedContext: pushedContext{Context: c.ctx, id: req.ID, values: req.values, outer: ctx}}
	pc := &hctx.pushedContext
	pc.in.pushed = hctx
	c.push.start(req.ID, &pc.in)
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
		if ok, full := c.acquirePushed(slots, hctx); !ok {
			hctx.cancel()
			c.finishPushed(req.ID)
			var resp *Response
			if full {
				c.opts.Logger.Warn("jsonrpc: too many requests waiting; refused", "id", req.ID.String(), "method", req.Method, "max_queued", c.opts.MaxQueued)
				resp = &Response{ID: req.ID, Error: Errorf(CodeOverloaded, "Server overloaded: more than %d requests of this session are waiting; retry later", c.opts.MaxQueued)}
			}
			c.reply(batch, any(req.ID), resp)
			return
		}
	}
	resp := c.run(hctx, req, &hctx.resp)
	if slots != nil {
		<-slots
	}
	hctx.cancel()
	c.finishPushed(req.ID)
	if pc.in.cancelled.Load() {
		resp = nil
		c.opts.Logger.Debug("jsonrpc: response suppressed after cancellation", "id", req.ID.String())
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
	p := c.push
	c.mu.Lock()
	if int(p.queued) >= c.opts.MaxQueued {
		c.mu.Unlock()
		return false, true
	}
	p.queued++
	c.mu.Unlock()
	ok = acquire(slots, ctx)
	c.mu.Lock()
	p.queued--
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

// finishPushed ends the bookkeeping of a request that Deliver handled.
func (c *Conn) finishPushed(id ID) {
	c.mu.Lock()
	c.push.finish(id, c.opts.RememberIDs)
	c.mu.Unlock()
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
