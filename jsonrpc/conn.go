package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// A Handler answers the requests and notifications that a Conn receives.
//
// For a request, Handle returns the result (encoded with encoding/json, or
// used as is when it is a json.RawMessage) or an error. An *Error (found
// with errors.As) is sent as it is; any other error is logged and sent as
// -32603 "Internal error", so that internals do not leak to the peer.
//
// For a notification, the result and error are ignored. Notifications are
// handled one at a time, in order, on the connection's read loop (the
// goroutine reading the connection: a background goroutine, or a caller
// waiting in Call for its response, see Conn): a notification handler must
// not block, nor make a call on the same connection and wait for it.
// Requests are handled concurrently.
type Handler interface {
	Handle(ctx context.Context, req *Request) (any, error)
}

// HandlerFunc adapts a function to the Handler interface.
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// Handle calls f(ctx, req).
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// ConnOptions configure a Conn. The zero value is usable: it answers every
// request with -32601.
type ConnOptions struct {
	// Handler handles inbound requests and notifications.
	Handler Handler
	// Logger receives diagnostics: dropped responses, handler failures,
	// malformed input. Nil discards them.
	Logger *slog.Logger
	// MaxConcurrency bounds how many inbound requests are handled at once;
	// zero means 64. Requests beyond it wait for a slot.
	MaxConcurrency int
	// MaxQueued bounds how many inbound requests may wait for a slot; zero
	// means 1024. A connection that reads its stream stops reading while
	// that many wait; on a push connection (see NewPushConn) a request
	// delivered beyond them is answered at once with CodeOverloaded.
	MaxQueued int
	// RememberIDs is how many completed inbound request ids the connection
	// remembers to refuse their reuse; zero means 1024, negative means none.
	// In-flight ids are always checked. Memory is about 48 bytes per id.
	RememberIDs int
	// Timeout applies to outbound calls whose context has no deadline; zero
	// means no default timeout.
	Timeout time.Duration
	// Inline, if set, names methods whose requests are handled on the read
	// loop itself, as notifications are, instead of on a goroutine of their
	// own. It suits methods that answer at once without blocking, such as
	// ping: their answer does not wait for a free handler slot, and saves a
	// goroutine hand-off.
	Inline func(method string) bool
	// OnCancel, if set, is called when an outbound call is abandoned before
	// its response arrived (its context ended), with the call's id and the
	// context's error. MCP uses it to send notifications/cancelled.
	OnCancel func(id ID, cause error)
}

// Conn is one end of a JSON-RPC connection, in which both sides may send
// requests and notifications. It reads from its Stream until the stream
// ends or Close is called.
//
// One goroutine at a time reads the stream. A call reads it itself while
// it waits, and so gets its response without a hand-off between
// goroutines, when its context cannot end (such as context.Background,
// with no Timeout), or when the stream's reads can be given up midway
// (a LineStream over an os.Pipe, a pollable standard input or a net.Conn);
// a background goroutine reads otherwise.
type Conn struct {
	stream Stream
	opts   ConnOptions

	ctx    context.Context // canceled when the connection ends
	cancel context.CancelCauseFunc

	nextID atomic.Int64

	mu      sync.Mutex
	pending map[ID]*call // outbound calls awaiting a response
	closed  bool
	// reading is true while the read token is held, or on its way to a
	// caller (see the comment on background); always for a push
	// connection. Guarded by mu.
	reading      bool
	ended        bool // a push connection's done is closed, or to be made closed
	deferResults bool // the stream is an EncodingStream
	batchOK      atomic.Bool
	err          error

	slots chan struct{}        // handler concurrency
	spare atomic.Pointer[call] // a call whose caller has returned, for reuse

	// done is closed when the connection has ended. A push connection
	// makes it on first use (see Done), as most are never asked; guarded
	// by mu then.
	done     chan struct{}
	handlers sync.WaitGroup

	rd   *readState // the read loop's state; nil for a push connection
	push *pushState // &pushed for a push connection (see NewPushConn); nil otherwise

	pushed pushState
}

// readState is the state of a Conn that reads its stream (see NewConn),
// which a push connection does without: its inbound bookkeeping and the
// read token's. Guarded by the Conn's mu, except for the channels.
type readState struct {
	inflight map[ID]*inbound // inbound requests being handled
	recent   map[ID]struct{} // completed inbound ids, bounded
	ring     []ID
	ringNext int

	queued chan struct{} // waiting handlers

	intr interruptibleStream // the stream, if its reads can be given up; else nil

	// The read token: at most one goroutine reads the stream at a time (see
	// the comment on background).
	waitHead, waitTail *call         // callers waiting that may take the token, oldest first
	grace              *time.Timer   // armed whenever the token is free (see release)
	armed              bool          // grace is running
	frees, seenFrees   uint64        // times the token was freed; as of grace's last check
	wake               chan struct{} // hands the token to the background reader

	// The background reader is a role, not one goroutine (see serveHere):
	// standby counts the goroutines waiting for it (at most one once the
	// others have seen it), serving those running a handler they read.
	standby, serving int
}

// readGrace is how long the read token must stay free before the
// background reader takes it to read unsolicited messages (between one and
// two periods of the grace timer, see releaseLocked). It lets a caller that
// makes calls one after the other read its own responses, instead of
// finding the background reader blocked in Read and paying for a goroutine
// hand-off. A message that arrives while no call waits, such as a
// notification after the last call, is read within about twice this.
//
// It is a millisecond because the runtime's timers do not fire much sooner
// than that when its threads sleep in the network poller, and because a
// timer that fires often costs the callers time (measured with
// BenchmarkStdioPing in package mcp: 50µs was slower).
const readGrace = time.Millisecond

// readToken is what a caller waiting on its channel receives when the read
// token is handed to it, instead of a response. It is never sent to the
// peer nor changed: only its address matters.
var readToken = new(Response)

// call is an outbound call awaiting its response.
type call struct {
	id ID
	// ch receives the response, or the Conn's token sentinel when the read
	// token is handed to the caller; it is closed when the connection ends.
	// At most one value is ever sent on it.
	ch chan *Response
	// mayRead is set if the caller may take the read token: its context
	// cannot end, or the stream's reads can be interrupted when it does.
	mayRead    bool
	waiting    bool // in the queue of callers that may take the read token
	prev, next *call
}

type inbound struct {
	cancel    context.CancelFunc // for a request read by the read loop
	pushed    *pushedRequest     // for a delivered one (no method value to allocate)
	cancelled atomic.Bool
}

// end cancels the handler's context.
func (in *inbound) end() {
	if in.pushed != nil {
		in.pushed.cancel()
		return
	}
	in.cancel()
}

type ctxKey int

const requestIDKey ctxKey = iota

// RequestIDFromContext returns the id of the inbound request whose handler
// owns ctx: the context a Handler is called with, and contexts derived from
// it. Transports use it to route messages that belong to a request.
func RequestIDFromContext(ctx context.Context) (ID, bool) {
	id, ok := ctx.Value(requestIDKey).(ID)
	return id, ok
}

// WithRequestID returns a context carrying id as RequestIDFromContext
// reports it.
func WithRequestID(ctx context.Context, id ID) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}

// NewConn returns a connection over s and starts reading from it.
func NewConn(s Stream, opts ConnOptions) *Conn {
	x := &struct { // one allocation for both
		Conn
		readState
	}{}
	c := &x.Conn
	c.init(s, opts)
	c.done = make(chan struct{})
	// The read token starts taken by the background reader, so that a
	// message sent before the first call is read at once.
	c.reading = true
	rd := &x.readState
	c.rd = rd
	if is, ok := s.(interruptibleStream); ok && is.interruptible() {
		rd.intr = is
	}
	rd.inflight = make(map[ID]*inbound)
	c.slots = make(chan struct{}, c.opts.MaxConcurrency)
	rd.queued = make(chan struct{}, c.opts.MaxQueued)
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	rd.wake = make(chan struct{}, 1)
	rd.wake <- struct{}{} // the background reader has the token
	rd.grace = time.NewTimer(readGrace)
	rd.grace.Stop()
	rd.standby = 1
	go c.background()
	return c
}

// init sets the options and stream of a new connection, with their
// defaults.
func (c *Conn) init(s Stream, opts ConnOptions) {
	if opts.MaxConcurrency <= 0 {
		opts.MaxConcurrency = 64
	}
	if opts.MaxQueued <= 0 {
		opts.MaxQueued = 1024
	}
	if opts.RememberIDs == 0 {
		opts.RememberIDs = 1024
	}
	// A push connection keeps its ring position in an int32 (see
	// pushState); two billion ids (about 96 GiB) is beyond any use anyway.
	opts.RememberIDs = min(opts.RememberIDs, math.MaxInt32)
	opts.MaxQueued = min(opts.MaxQueued, math.MaxInt32)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Handler == nil {
		opts.Handler = HandlerFunc(func(context.Context, *Request) (any, error) { return nil, ErrMethodNotFound })
	}
	c.stream = s
	c.opts = opts
	_, c.deferResults = s.(EncodingStream)
}

// Stream returns the stream the connection reads and writes (for a push
// connection, the transport's stream that Deliver serves). A transport
// uses it to reach its own state from a connection it was handed; others
// must not read or write it.
func (c *Conn) Stream() Stream { return c.stream }

// SetBatchEnabled turns on or off the processing of JSON arrays of messages.
// MCP allows batches only in sessions at protocol version 2025-03-26; when
// off (the default), a batch is answered with -32600.
func (c *Conn) SetBatchEnabled(on bool) { c.batchOK.Store(on) }

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} {
	if c.push == nil {
		return c.done
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.ended {
			close(c.done)
		}
	}
	return c.done
}

// Wait blocks until the connection has ended and its handlers have returned,
// and returns why it ended: nil for a clean end of input or Close.
func (c *Conn) Wait() error {
	<-c.Done()
	c.handlers.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the connection: it closes the stream, cancels the handlers'
// contexts and fails the calls awaiting a response with ErrClosed.
func (c *Conn) Close() error {
	c.shutdown(nil)
	return nil
}

func (c *Conn) shutdown(err error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.err = err
	pending := c.pending
	c.pending = nil
	if c.push != nil {
		c.mu.Unlock()
		c.shutdownPush(pending)
		return
	}
	c.rd.waitHead, c.rd.waitTail = nil, nil
	// Whoever holds the read token closes done when it gives the token up;
	// if nobody does, done is closed here and the token is kept forever.
	free := !c.reading
	c.reading = true
	c.mu.Unlock()
	c.cancel(ErrClosed)
	_ = c.stream.Close()
	for _, cl := range pending {
		close(cl.ch)
	}
	if free {
		c.rd.grace.Stop()
		close(c.done)
	}
}

// The read token.
//
// At most one goroutine reads the stream at a time: the holder of the read
// token. A caller waiting for its response in CallID that may read (whose
// context cannot end, or any caller over an interruptible stream, see
// below) takes the token when it is free and reads itself, dispatching every
// message it reads as a dedicated read loop would (a response to another
// caller goes to that caller's channel, a request to a handler, a
// notification to the handler inline, in order), until it reads its own
// response, which it returns with no hand-off to another goroutine. It then
// passes the token to the oldest caller waiting that may read (by sending
// the token sentinel on its channel), else to the background reader if
// calls are pending that may not read, else frees it.
//
// A caller whose context can end must return as soon as it ends. It reads
// only when the stream's reads can be interrupted (see
// interruptibleStream): it reads with readInterruptible, which gives up
// when its context ends, losing nothing, and passes the token on as when
// it has its response. It waits for the token on its channel and its
// context at once, and a caller that leaves the queue of waiting callers
// passes the token on if it was handed to it meanwhile. Over any other
// stream, as Read cannot be abandoned midway, such a caller never reads:
// it waits on its channel, and the background reader reads for it.
//
// The background reader (one goroutine per Conn) reads the messages that
// arrive while no call is waiting: requests and notifications from the
// peer, and the end of the stream. It takes the free token only once it has
// been free for readGrace, so that it does not take it in the short gap
// between two calls made one after the other; and it gives the token up
// again as soon as a caller may read, or the last pending call that may
// read is answered.
//
// The token is never held while a request is written, nor left free for
// longer than readGrace: a Write may have to wait for reading to progress
// (the peer blocked writing to us, or a transport such as Streamable HTTP
// whose Write returns once the answer has been read).
//
// Once the connection is closed, the token is never passed on: its holder
// closes done instead, and done is closed exactly once, by the holder or
// by shutdown when the token was free.

// background is the background reader's goroutine.
func (c *Conn) background() {
	for {
		select {
		case <-c.done:
			return
		case <-c.rd.wake:
			c.mu.Lock()
			c.rd.standby--
			c.mu.Unlock()
		case <-c.rd.grace.C:
			c.mu.Lock()
			if c.reading {
				c.rd.armed = false // the next release arms it again
				c.mu.Unlock()
				continue
			}
			if c.rd.frees != c.rd.seenFrees && c.rd.serving == 0 {
				// Taken and freed again since the last look.
				c.rd.seenFrees = c.rd.frees
				c.rd.grace.Reset(readGrace)
				c.mu.Unlock()
				continue
			}
			// Free for a whole period, or free while a handler runs
			// on the goroutine that read its request (which may block
			// or be long: see serveHere): taken even with calls
			// pending, as they are writing their requests and a
			// stream's Write may wait for reading to progress.
			c.rd.armed = false
			c.reading = true
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
			case roleDeliver:
				c.deliver(m, nil)
			case roleStandby:
				return true
			case roleEnd:
				return false
			}
		default:
			c.deliver(m, nil)
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			close(c.done)
			return false
		}
		if w := c.popWaiterLocked(); w != nil {
			w.ch <- readToken
			return c.standByLocked()
		}
		if leave && len(c.pending) == 0 {
			// Calls that may read are being made: leave the next one to
			// read itself.
			c.releaseLocked()
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
	roleDeliver role = iota // it did not serve the request: deliver must
	roleRead                // it holds the token (again) and reads on
	roleStandby             // it waits for the token (counted in standby)
	roleEnd                 // its goroutine ends
)

// serveHere serves req, a request the background reader read, on the
// reading goroutine itself, when that costs no ordering and no bound: req
// is not a notification, nor an inline method (which deliver handles on
// the read loop), and a handler slot is free at once. It reports what the
// goroutine does next: roleDeliver if it did not serve req.
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
	if req.IsNotification() || c.opts.Inline != nil && c.opts.Inline(req.Method) {
		return roleDeliver
	}
	select {
	case c.slots <- struct{}{}:
	default:
		// Every slot is taken: the request waits in the queue, whose
		// bound (MaxQueued) stops reading when full.
		return roleDeliver
	}
	ctx, in, idv, ok := c.admit(req, nil)
	if !ok {
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
	c.handlers.Add(1)
	c.mu.Unlock()
	if end {
		close(c.done)
	}
	c.serve(ctx, req, in, idv, nil)
	c.handlers.Done()
	c.mu.Lock()
	c.rd.serving--
	if !c.closed && c.takeLocked() {
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
			c.deliver(m, nil)
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

// passLocked passes the token on from its holder: to the oldest caller
// waiting that may read, else to the background reader if calls are
// pending, else nowhere (the token is free).
// It reports true if the connection is closed: the holder must close done.
// c.mu is held.
func (c *Conn) passLocked() bool {
	if c.closed {
		return true
	}
	if w := c.popWaiterLocked(); w != nil {
		w.ch <- readToken // w.ch is empty: w is waiting and unanswered
		return false
	}
	if len(c.pending) > 0 {
		c.rd.wake <- struct{}{} // empty: the background reader is not reading
		return false
	}
	c.releaseLocked()
	return false
}

// releaseLocked frees the token. The background reader takes it once it
// has stayed free for a whole period of the grace timer, which is armed
// here unless it runs already: arming it on every release, and stopping it
// on every take, would cost a timer update per call, and each update can
// wake an idle thread of the runtime. c.mu is held.
func (c *Conn) releaseLocked() {
	c.reading = false
	c.rd.frees++
	if !c.rd.armed {
		c.rd.armed = true
		c.rd.seenFrees = c.rd.frees
		c.rd.grace.Reset(readGrace)
	}
}

// takeLocked takes the free token for a caller. c.mu is held.
func (c *Conn) takeLocked() bool {
	if c.reading {
		return false
	}
	c.reading = true
	return true
}

// enqueueLocked queues cl among the callers waiting that may take the
// read token, which a push connection never passes on: it queues nothing.
func (c *Conn) enqueueLocked(cl *call) {
	if c.rd == nil {
		return
	}
	cl.waiting = true
	cl.prev, cl.next = c.rd.waitTail, nil
	if c.rd.waitTail != nil {
		c.rd.waitTail.next = cl
	} else {
		c.rd.waitHead = cl
	}
	c.rd.waitTail = cl
}

func (c *Conn) dequeueLocked(cl *call) {
	if !cl.waiting {
		return
	}
	cl.waiting = false
	if cl.prev != nil {
		cl.prev.next = cl.next
	} else {
		c.rd.waitHead = cl.next
	}
	if cl.next != nil {
		cl.next.prev = cl.prev
	} else {
		c.rd.waitTail = cl.prev
	}
	cl.prev, cl.next = nil, nil
}

func (c *Conn) popWaiterLocked() *call {
	w := c.rd.waitHead
	if w != nil {
		c.dequeueLocked(w)
	}
	return w
}

// batchReply collects the responses to the requests of one batch.
type batchReply struct {
	mu        sync.Mutex
	responses Batch
	waiting   int
	c         *Conn
}

func (b *batchReply) add(r *Response) {
	b.mu.Lock()
	if r != nil {
		b.responses = append(b.responses, r)
	}
	b.waiting--
	done := b.waiting == 0
	b.mu.Unlock()
	if done && len(b.responses) > 0 {
		b.c.write(context.Background(), b.responses)
	}
}

func (c *Conn) deliver(m Message, batch *batchReply) {
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
			c.deliver(e, b)
		}
		b.add(nil)
	}
}

func (c *Conn) handleNotification(req *Request) {
	ctx := req.withValues(c.ctx)
	defer func() {
		if p := recover(); p != nil {
			c.opts.Logger.Error("jsonrpc: notification handler panicked", "method", req.Method, "panic", p)
		}
	}()
	if _, err := c.opts.Handler.Handle(ctx, req); err != nil {
		c.opts.Logger.Debug("jsonrpc: notification handler failed", "method", req.Method, "error", err)
	}
}

func (c *Conn) startRequest(req *Request, batch *batchReply) {
	ctx, in, idv, ok := c.admit(req, batch)
	if !ok {
		return
	}
	if batch == nil && c.opts.Inline != nil && c.opts.Inline(req.Method) {
		resp := c.run(ctx, req, nil)
		in.cancel()
		c.finish(req.ID)
		c.reply(batch, idv, resp)
		return
	}
	c.rd.queued <- struct{}{}
	c.handlers.Add(1)
	go func() {
		defer c.handlers.Done()
		c.slots <- struct{}{}
		<-c.rd.queued
		c.serve(ctx, req, in, idv, batch)
	}()
}

// admit registers req among the inbound requests in flight and returns
// its handler's context, its bookkeeping and its id boxed (idv). It
// reports false if req is not to be handled: the connection is closed, or
// req reuses an id, which it answers.
func (c *Conn) admit(req *Request, batch *batchReply) (context.Context, *inbound, any, bool) {
	idv := any(req.ID) // boxed once for both contexts below
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, nil, nil, false
	}
	_, dupInflight := c.rd.inflight[req.ID]
	_, dupRecent := c.rd.recent[req.ID]
	if dupInflight || dupRecent {
		c.mu.Unlock()
		c.opts.Logger.Warn("jsonrpc: request id reused", "id", req.ID.String(), "method", req.Method)
		c.reply(batch, idv, &Response{ID: req.ID, Error: Errorf(CodeInvalidRequest, "Invalid Request: id %s was already used in this session", req.ID.AppendJSON(nil))})
		return nil, nil, nil, false
	}
	ctx, cancel := context.WithCancel(&requestContext{Context: c.ctx, id: idv, values: req.values})
	in := &inbound{cancel: cancel}
	c.rd.inflight[req.ID] = in
	c.mu.Unlock()
	return ctx, in, idv, true
}

// serve runs the handler of req, admitted, holding a handler slot, which
// it frees, and sends its answer unless req was cancelled.
func (c *Conn) serve(ctx context.Context, req *Request, in *inbound, idv any, batch *batchReply) {
	resp := c.run(ctx, req, nil)
	<-c.slots
	in.cancel()
	c.finish(req.ID)
	if in.cancelled.Load() {
		resp = nil
		c.opts.Logger.Debug("jsonrpc: response suppressed after cancellation", "id", req.ID.String())
	}
	c.reply(batch, idv, resp)
}

// requestContext is the context of an inbound request before its cancel is
// added: the connection's context, the request's id as
// RequestIDFromContext reports it, and the values of the request's carrier
// (see Request.WithValues), looked up in that order. It is one allocation
// where WithRequestID over Request.withValues would be two.
type requestContext struct {
	context.Context
	id     any             // the request's ID
	values context.Context // nil when the request carries none
}

func (c *requestContext) Value(key any) any {
	if key == requestIDKey {
		return c.id
	}
	if v := c.Context.Value(key); v != nil {
		return v
	}
	if c.values != nil {
		return c.values.Value(key)
	}
	return nil
}

// reply sends the answer to an inbound request: into its batch's reply, or
// on the stream with a context carrying the request's id (idv, boxed).
// A nil r sends nothing.
func (c *Conn) reply(batch *batchReply, idv any, r *Response) {
	if batch != nil {
		batch.add(r)
		return
	}
	if r != nil {
		c.write(context.WithValue(context.Background(), requestIDKey, idv), r)
	}
}

// run calls the handler for req and returns its answer, built in into
// (a new Response when into is nil).
func (c *Conn) run(ctx context.Context, req *Request, into *Response) (resp *Response) {
	if into == nil {
		into = new(Response)
	}
	answer := func(r Response) *Response { *into = r; return into }
	defer func() {
		if p := recover(); p != nil {
			c.opts.Logger.Error("jsonrpc: handler panicked", "method", req.Method, "panic", p)
			resp = answer(Response{ID: req.ID, Error: ErrInternal})
		}
	}()
	result, err := c.opts.Handler.Handle(ctx, req)
	if err != nil {
		var je *Error
		if errors.As(err, &je) {
			return answer(Response{ID: req.ID, Error: je})
		}
		c.opts.Logger.Error("jsonrpc: handler failed", "method", req.Method, "error", err)
		return answer(Response{ID: req.ID, Error: ErrInternal})
	}
	if a, ok := result.(JSONAppender); ok && c.deferResults {
		return answer(Response{ID: req.ID, value: a}) // see EncodingStream
	}
	raw, err := marshalValue(result)
	if err != nil {
		c.opts.Logger.Error("jsonrpc: cannot encode result", "method", req.Method, "error", err)
		return answer(Response{ID: req.ID, Error: ErrInternal})
	}
	return answer(Response{ID: req.ID, Result: raw})
}

func marshalValue(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case json.RawMessage:
		if !Valid(v) {
			return nil, errSyntax
		}
		return v, nil
	case JSONAppender:
		return v.AppendJSON(nil)
	}
	return json.Marshal(v)
}

func (c *Conn) finish(id ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.rd.inflight, id)
	n := c.opts.RememberIDs
	if n < 0 {
		return
	}
	if c.rd.recent == nil {
		c.rd.recent = make(map[ID]struct{})
	}
	if len(c.rd.ring) < n {
		c.rd.ring = append(c.rd.ring, id)
	} else {
		delete(c.rd.recent, c.rd.ring[c.rd.ringNext])
		c.rd.ring[c.rd.ringNext] = id
		c.rd.ringNext = (c.rd.ringNext + 1) % n
	}
	c.rd.recent[id] = struct{}{}
}

// CancelInbound cancels the context of the inbound request id, if it is
// still being handled, and suppresses its response. It reports whether the
// request was found. MCP calls it on notifications/cancelled.
func (c *Conn) CancelInbound(id ID) bool {
	c.mu.Lock()
	var in *inbound
	var ok bool
	if c.push != nil {
		in, ok = c.push.lookup(id)
	} else {
		in, ok = c.rd.inflight[id]
	}
	c.mu.Unlock()
	if !ok {
		return false
	}
	in.cancelled.Store(true)
	in.end()
	return true
}

// handleResponse hands r to its call. It reports whether that call was
// one that may read (see Conn.background).
func (c *Conn) handleResponse(r *Response) bool {
	if !r.ID.IsValid() {
		if r.Error != nil {
			c.opts.Logger.Warn("jsonrpc: peer reported an error without an id", "code", r.Error.Code, "message", r.Error.Message)
		}
		return false
	}
	c.mu.Lock()
	cl, ok := c.pending[r.ID]
	if ok {
		delete(c.pending, r.ID)
		c.dequeueLocked(cl)
	}
	c.mu.Unlock()
	if !ok {
		c.opts.Logger.Debug("jsonrpc: response to an unknown or abandoned request dropped", "id", r.ID.String())
		return false
	}
	mayRead := cl.mayRead // cl may be reused once r is received
	cl.ch <- r
	return mayRead
}

func (c *Conn) write(ctx context.Context, m Message) {
	if err := c.stream.Write(ctx, m); err != nil {
		c.opts.Logger.Debug("jsonrpc: write failed", "error", err)
	}
	if c.deferResults {
		c.logEncodeErrors(m)
	}
}

// logEncodeErrors logs the results of m that an EncodingStream's Write
// could not encode (see Response.encodeErr).
func (c *Conn) logEncodeErrors(m Message) {
	switch m := m.(type) {
	case *Response:
		if m.encodeErr != nil {
			c.opts.Logger.Error("jsonrpc: cannot encode result", "id", m.ID.String(), "error", m.encodeErr)
		}
	case Batch:
		for _, e := range m {
			c.logEncodeErrors(e)
		}
	}
}

// Notify sends a notification. ctx is passed to the stream, so a
// notification sent from a handler's context travels with that request.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return fmt.Errorf("jsonrpc: notify %s: %w", method, err)
	}
	if c.isClosed() {
		return ErrClosed
	}
	return c.stream.Write(ctx, &Request{Method: method, Params: raw})
}

func marshalParams(params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	}
	return json.Marshal(params)
}

func (c *Conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// NewID allocates the id of an outbound request. Ids are integers, counted
// from 1, and never reused on one connection.
func (c *Conn) NewID() ID { return Int64ID(c.nextID.Add(1)) }

// Call sends a request and waits for its response, decoding the result into
// result (which may be nil to discard it, or a *json.RawMessage). The
// result is decoded as encoding/json does, but with exact member names (a
// member matching a field only when case is ignored sets nothing) and a
// member repeated for one field refused: see internal/strictjson. An error
// response is returned as an *Error. If ctx ends first, the call is
// abandoned: a late response is dropped and ConnOptions.OnCancel is told.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	return c.CallID(ctx, c.NewID(), method, params, result)
}

// CallID is Call with an id from NewID, for callers that must know the id
// before the request is sent.
//
// While it waits, a call may read the connection itself, and so handle the
// peer's notifications and inline requests on its own goroutine: a call
// whose context cannot end (its Done channel is nil, as for
// context.Background, and no Timeout applies), and any call over a stream
// whose reads can be given up when the call's context ends, such as a
// LineStream over an os.Pipe or a net.Conn; see the comment on background.
func (c *Conn) CallID(ctx context.Context, id ID, method string, params, result any) error {
	resp, err := c.roundTrip(ctx, id, method, params)
	if err != nil {
		return err
	}
	return decodeResponse(method, resp, result)
}

// CallRaw is Call returning the result as it came, without decoding it:
// for callers that pass it on, it saves an allocation.
func (c *Conn) CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	resp, err := c.roundTrip(ctx, c.NewID(), method, params)
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// roundTrip sends a request and waits for its response.
func (c *Conn) roundTrip(ctx context.Context, id ID, method string, params any) (*Response, error) {
	raw, err := marshalParams(params)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: call %s: %w", method, err)
	}
	if c.opts.Timeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
			defer cancel()
		}
	}
	cl := c.newCall(id)
	cl.mayRead = ctx.Done() == nil || c.rd != nil && c.rd.intr != nil
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if c.pending == nil {
		c.pending = make(map[ID]*call)
	}
	c.pending[id] = cl
	c.mu.Unlock()

	if err := c.stream.Write(ctx, &Request{ID: id, Method: method, Params: raw}); err != nil {
		c.forget(id)
		return nil, fmt.Errorf("jsonrpc: call %s: %w", method, err)
	}
	if cl.mayRead {
		resp, how := c.await(ctx, cl)
		switch how {
		case awaitAnswered:
			c.spare.Store(cl) // nothing more is sent on cl.ch
			return resp, nil
		case awaitClosed:
			return nil, ErrClosed
		}
		if c.opts.OnCancel != nil {
			c.opts.OnCancel(id, context.Cause(ctx))
		}
		return nil, fmt.Errorf("jsonrpc: call %s: %w", method, context.Cause(ctx))
	}
	c.mu.Lock()
	if c.pending[id] == cl && c.takeLocked() {
		c.rd.wake <- struct{}{} // empty: the background reader is not reading
	}
	c.mu.Unlock()
	select {
	case resp, ok := <-cl.ch:
		if !ok {
			return nil, ErrClosed
		}
		c.spare.Store(cl) // nothing more is sent on cl.ch
		return resp, nil
	case <-ctx.Done():
		if c.forget(id) && c.opts.OnCancel != nil {
			c.opts.OnCancel(id, context.Cause(ctx))
		}
		return nil, fmt.Errorf("jsonrpc: call %s: %w", method, context.Cause(ctx))
	}
}

// awaited is how the wait of a call that may read ended (see await).
type awaited int

const (
	awaitAnswered  awaited = iota // its response came
	awaitClosed                   // the connection ended first
	awaitAbandoned                // its context ended first; it is forgotten
)

// await waits for the response to cl, a call that may read, reading it
// itself when it holds or is given the read token, until ctx ends. A
// context that can end is watched only if c.rd.intr is not nil (see
// roundTrip).
func (c *Conn) await(ctx context.Context, cl *call) (*Response, awaited) {
	c.mu.Lock()
	lead := false
	if c.pending[cl.id] == cl {
		if lead = c.takeLocked(); !lead {
			c.enqueueLocked(cl)
		}
	}
	c.mu.Unlock()
	for !lead {
		select {
		case r, ok := <-cl.ch:
			if !ok {
				return nil, awaitClosed
			}
			if r != readToken {
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
		c.dequeueLocked(cl)
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
	if r != readToken {
		return r, awaitAnswered
	}
	return c.giveUp(cl)
}

// newCall returns a call for id, reusing one whose call has returned.
func (c *Conn) newCall(id ID) *call {
	cl := c.spare.Swap(nil)
	if cl == nil {
		cl = &call{ch: make(chan *Response, 1)}
	}
	cl.id = id
	return cl
}

// decodeResponse returns the error of resp, or decodes its result into
// result as Call documents.
func decodeResponse(method string, resp *Response, result any) error {
	if resp.Error != nil {
		return resp.Error
	}
	if result == nil {
		return nil
	}
	if rm, ok := result.(*json.RawMessage); ok {
		*rm = resp.Result
		return nil
	}
	if err := strictjson.Unmarshal(resp.Result, result); err != nil {
		return fmt.Errorf("jsonrpc: result of %s: %w", method, err)
	}
	return nil
}

// forget removes an outbound call; it reports whether it was still pending.
func (c *Conn) forget(id ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, ok := c.pending[id]
	if ok {
		delete(c.pending, id)
		c.dequeueLocked(cl)
	}
	return ok
}
