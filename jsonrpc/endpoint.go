package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// This file is the endpoint core that both drivers of a Conn share: the
// read-loop driver (readloop.go, NewConn), which reads its stream, and the
// push driver (push.go, NewPushConn), whose owner hands it the messages.
// The core holds the outbound calls (ids, pending calls, their responses)
// and the inbound requests (admission, the handler's context, the answer,
// the ids in flight and the recent ones, see inbound.go).

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
	// means 1024. A request beyond them is answered at once with
	// CodeOverloaded. A connection that reads its stream goes on reading
	// meanwhile: the handlers holding the slots may be waiting for the
	// answers to their own calls, which only reading brings.
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
	// IDPrefix, if set, makes the ids of outbound requests strings: the
	// prefix followed by the decimal count (see NewID), instead of
	// integers. A transport whose peer may answer through another process
	// than the one that asked (replicas behind a load balancer) names the
	// asking process in it, so that a response can be routed back.
	// Nothing here interprets it; it must not end in a digit, so that two
	// counts never give one id.
	IDPrefix string
}

// Conn is one end of a JSON-RPC connection, in which both sides may send
// requests and notifications. A connection made by NewConn reads from its
// Stream until the stream ends or Close is called; one made by
// NewPushConn is handed its inbound messages with Deliver.
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

	// ctx is the parent of the contexts of the inbound messages: for a
	// connection made by NewConn, canceled when it ends; for a push
	// connection, never (see NewPushConn).
	ctx context.Context

	nextID atomic.Int64

	mu      sync.Mutex
	pending map[ID]*call // outbound calls awaiting a response
	closed  bool
	ended   bool // a push connection's done is closed, or to be made closed
	batchOK atomic.Bool
	waiting int32 // requests waiting for a handler slot (see queueLocked)
	err     error

	in inboundSet // the inbound requests in flight and the recent ids; guarded by mu

	slots chan struct{}        // handler concurrency
	spare atomic.Pointer[call] // a call whose caller has returned, for reuse

	// done is closed when the connection has ended. A push connection
	// makes it on first use (see Done), as most are never asked; guarded
	// by mu then.
	done     chan struct{}
	handlers sync.WaitGroup

	rd *reader // the read-loop driver's state; nil for a push connection
}

// call is an outbound call awaiting its response.
type call struct {
	id ID
	// ch receives the response, or tokenHandoff when the read token is
	// handed to the caller; it is closed when the connection ends. At most
	// one value is ever sent on it.
	ch chan *Response
	// mayRead is set if the caller may take the read token: its context
	// cannot end, or the stream's reads can be interrupted when it does.
	mayRead    bool
	waiting    bool // in the queue of callers that may take the read token
	prev, next *call
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
	// The recent-id ring keeps its position in an int32 (see recentIDs);
	// two billion ids (about 96 GiB) is beyond any use anyway.
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
	if c.rd != nil {
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

// shutdown ends the connection once, with err as the reason Wait reports.
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
	if c.rd == nil {
		c.mu.Unlock()
		c.shutdownPush(pending)
		return
	}
	c.shutdownReader(pending)
}

// cancelInbound cancels the contexts of the requests being handled: a
// push connection's context, their parent, is never canceled, and those
// of a read loop's requests are made only when asked (see handlerContext).
func (c *Conn) cancelInbound() {
	c.mu.Lock()
	active := c.in.snapshot()
	c.mu.Unlock()
	for _, in := range active {
		in.ctx.cancel()
	}
}

// admit registers req, a request to be handled, among the inbound
// requests in flight and returns its record, whose context carries the
// values of outer (nil for none), counted among the handlers that Wait
// waits for (the caller calls c.handlers.Done once it has answered). It
// returns nil if req is not to be handled: the connection is closed
// (batch, if any, is told), or req reuses an id, which it answers.
func (c *Conn) admit(req *Request, outer context.Context, batch *batchReply) *inbound {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		if batch != nil {
			batch.add(nil)
		}
		return nil
	}
	if c.in.used(req.ID) {
		c.mu.Unlock()
		c.opts.Logger.Warn("jsonrpc: request id reused", "id", req.ID.String(), "method", req.Method)
		in := &inbound{ctx: handlerContext{requestContext: requestContext{Context: c.ctx, id: req.ID}}}
		c.reply(batch, in, &Response{ID: req.ID, Error: Errorf(CodeInvalidRequest, "Invalid Request: id %s was already used in this session", req.ID.AppendJSON(nil))})
		return nil
	}
	in := &inbound{ctx: handlerContext{requestContext: requestContext{Context: c.ctx, id: req.ID, values: req.values, outer: outer}}}
	c.in.start(req.ID, in)
	if c.slots == nil && !c.inline(req.Method) {
		// A push connection makes them when a request first needs one:
		// an idle session may have handled only inline requests.
		c.slots = make(chan struct{}, c.opts.MaxConcurrency)
	}
	c.handlers.Add(1)
	c.mu.Unlock()
	return in
}

// queueLocked counts one more request waiting for a handler slot, unless
// ConnOptions.MaxQueued wait already: then it reports false, and the
// request is to be refused (see refuseOverloaded). The waiter uncounts
// itself (c.waiting--) once it has a slot or gave up. c.mu is held.
func (c *Conn) queueLocked() bool {
	if int(c.waiting) >= c.opts.MaxQueued {
		return false
	}
	c.waiting++
	return true
}

// refuseOverloaded answers an admitted request that found MaxQueued
// requests waiting for a handler slot with CodeOverloaded: it was not
// handled, and may be sent again later.
func (c *Conn) refuseOverloaded(req *Request, in *inbound, batch *batchReply) {
	c.finish(in)
	c.opts.Logger.Warn("jsonrpc: too many requests waiting; refused", "id", req.ID.String(), "method", req.Method, "max_queued", c.opts.MaxQueued)
	c.reply(batch, in, &Response{ID: req.ID, Error: Errorf(CodeOverloaded, "Server overloaded: more than %d requests of this session are waiting; retry later", c.opts.MaxQueued)})
}

// inline reports whether requests of method are handled without a
// handler slot (see ConnOptions.Inline).
func (c *Conn) inline(method string) bool {
	return c.opts.Inline != nil && c.opts.Inline(method)
}

// finish ends the bookkeeping of an admitted request: it cancels its
// context and remembers its id.
func (c *Conn) finish(in *inbound) {
	in.ctx.cancel()
	c.mu.Lock()
	c.in.finish(in.ctx.id, c.opts.RememberIDs)
	c.mu.Unlock()
}

// answer returns the answer to in, built by run, unless in was cancelled
// with CancelInbound: then nil.
func (c *Conn) answer(in *inbound, resp *Response) *Response {
	if in.cancelled.Load() {
		c.opts.Logger.Debug("jsonrpc: response suppressed after cancellation", "id", in.ctx.id.String())
		return nil
	}
	return resp
}

// CancelInbound cancels the context of the inbound request id, if it is
// still being handled, and suppresses its response. It reports whether the
// request was found. MCP calls it on notifications/cancelled.
func (c *Conn) CancelInbound(id ID) bool {
	c.mu.Lock()
	in, ok := c.in.lookup(id)
	c.mu.Unlock()
	if !ok {
		return false
	}
	in.cancelled.Store(true)
	in.ctx.cancel()
	return true
}

// run calls the handler for the request of in and returns its answer,
// built in in.resp. A result that is a JSONAppender is left to the
// stream's encoder (see Response), which encodes it straight into the
// message's buffer.
func (c *Conn) run(in *inbound, req *Request) (resp *Response) {
	answer := func(r Response) *Response { in.resp = r; return &in.resp }
	defer func() {
		if p := recover(); p != nil {
			c.opts.Logger.Error("jsonrpc: handler panicked", "method", req.Method, "panic", p)
			resp = answer(Response{ID: req.ID, Error: ErrInternal})
		}
	}()
	result, err := c.opts.Handler.Handle(&in.ctx, req)
	if err != nil {
		var je *Error
		if errors.As(err, &je) {
			return answer(Response{ID: req.ID, Error: je})
		}
		c.opts.Logger.Error("jsonrpc: handler failed", "method", req.Method, "error", err)
		return answer(Response{ID: req.ID, Error: ErrInternal})
	}
	if a, ok := result.(JSONAppender); ok {
		in.result = deferredResult{v: a, log: c.opts.Logger}
		return answer(Response{ID: req.ID, deferred: &in.result})
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
		if err := validate(v); err != nil {
			return nil, err
		}
		return v, nil
	}
	return json.Marshal(v)
}

// reply sends the answer to an inbound request: into its batch's reply, or
// on the stream with the request's context as it was before its cancel
// (it carries the request's id, see RequestIDFromContext). A nil r sends
// nothing.
func (c *Conn) reply(batch *batchReply, in *inbound, r *Response) {
	if batch != nil {
		batch.add(r)
		return
	}
	if r != nil {
		c.write(&in.ctx.requestContext, r)
	}
}

// handleResponse hands r to its call. It reports whether that call was
// one that may read (see the read token in readloop.go).
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
// from 1, and never reused on one connection; with ConnOptions.IDPrefix,
// strings: the prefix followed by that count.
func (c *Conn) NewID() ID {
	n := c.nextID.Add(1)
	if p := c.opts.IDPrefix; p != "" {
		return StringID(p + strconv.FormatInt(n, 10))
	}
	return Int64ID(n)
}

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
// LineStream over an os.Pipe or a net.Conn; see the read token in
// readloop.go.
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
	var resp *Response
	var how awaited
	if cl.mayRead {
		resp, how = c.await(ctx, cl)
	} else {
		resp, how = c.awaitOthers(ctx, cl)
	}
	switch how {
	case awaitAnswered:
		c.spare.Store(cl) // nothing more is sent on cl.ch
		return resp, nil
	case awaitClosed:
		return nil, ErrClosed
	case awaitAbandoned:
		if c.opts.OnCancel != nil {
			c.opts.OnCancel(id, context.Cause(ctx))
		}
	}
	return nil, fmt.Errorf("jsonrpc: call %s: %w", method, context.Cause(ctx))
}

// awaited is how the wait of a call ended (see await).
type awaited int

const (
	awaitAnswered  awaited = iota // its response came
	awaitClosed                   // the connection ended first
	awaitAbandoned                // its context ended first; it is forgotten
)

// awaitOthers waits for the response to cl, a call that does not read
// itself: another goroutine (the background reader, or Deliver's caller)
// hands it its response, until ctx ends.
func (c *Conn) awaitOthers(ctx context.Context, cl *call) (*Response, awaited) {
	c.mu.Lock()
	if c.rd != nil && c.pending[cl.id] == cl && c.rd.token.take() {
		c.rd.token.wakeReader() // the background reader reads for it
	}
	c.mu.Unlock()
	select {
	case resp, ok := <-cl.ch:
		if !ok {
			return nil, awaitClosed
		}
		return resp, awaitAnswered
	case <-ctx.Done():
		if c.forget(cl.id) {
			return nil, awaitAbandoned
		}
		// Answered or closed meanwhile: the caller's context ended
		// first, so it is abandoned anyway (no spare reuse: a response
		// may still be on its way to cl.ch).
		return nil, awaitAbandonedLate
	}
}

// awaitAbandonedLate is awaitAbandoned for a call that was no longer
// pending when its context ended: OnCancel is not told (see roundTrip).
const awaitAbandonedLate awaited = -1

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

// dequeueLocked takes cl out of the read token's queue of waiting
// callers, if it is there. c.mu is held.
func (c *Conn) dequeueLocked(cl *call) {
	if c.rd != nil {
		c.rd.token.leave(cl)
	}
}
