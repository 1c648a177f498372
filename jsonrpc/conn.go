package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// A Handler answers the requests and notifications that a Conn receives.
//
// For a request, Handle returns the result (encoded with encoding/json, or
// used as is when it is a json.RawMessage) or an error. An *Error (found
// with errors.As) is sent as it is; any other error is logged and sent as
// -32603 "Internal error", so that internals do not leak to the peer.
//
// For a notification, the result and error are ignored. Notifications are
// handled one at a time, in order, on the connection's read loop: a
// notification handler must not block. Requests are handled concurrently.
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
	// MaxQueued bounds how many inbound requests may wait for a slot before
	// the connection stops reading; zero means 1024.
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
type Conn struct {
	stream  Stream
	handler Handler
	log     *slog.Logger
	opts    ConnOptions

	ctx    context.Context // canceled when the connection ends
	cancel context.CancelCauseFunc

	nextID atomic.Int64

	mu       sync.Mutex
	pending  map[ID]chan *Response // outbound calls awaiting a response
	inflight map[ID]*inbound       // inbound requests being handled
	recent   map[ID]struct{}       // completed inbound ids, bounded
	ring     []ID
	ringNext int
	closed   bool
	err      error

	slots  chan struct{} // handler concurrency
	queued chan struct{} // waiting handlers

	batchOK  atomic.Bool
	done     chan struct{}
	handlers sync.WaitGroup
}

type inbound struct {
	cancel    context.CancelFunc
	cancelled atomic.Bool
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
	if opts.MaxConcurrency <= 0 {
		opts.MaxConcurrency = 64
	}
	if opts.MaxQueued <= 0 {
		opts.MaxQueued = 1024
	}
	if opts.RememberIDs == 0 {
		opts.RememberIDs = 1024
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	handler := opts.Handler
	if handler == nil {
		handler = HandlerFunc(func(context.Context, *Request) (any, error) { return nil, ErrMethodNotFound })
	}
	c := &Conn{
		stream:   s,
		handler:  handler,
		log:      log,
		opts:     opts,
		pending:  make(map[ID]chan *Response),
		inflight: make(map[ID]*inbound),
		slots:    make(chan struct{}, opts.MaxConcurrency),
		queued:   make(chan struct{}, opts.MaxQueued),
		done:     make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	go c.readLoop()
	return c
}

// SetBatchEnabled turns on or off the processing of JSON arrays of messages.
// MCP allows batches only in sessions at protocol version 2025-03-26; when
// off (the default), a batch is answered with -32600.
func (c *Conn) SetBatchEnabled(on bool) { c.batchOK.Store(on) }

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Wait blocks until the connection has ended and its handlers have returned,
// and returns why it ended: nil for a clean end of input or Close.
func (c *Conn) Wait() error {
	<-c.done
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
	c.mu.Unlock()
	c.cancel(ErrClosed)
	_ = c.stream.Close()
	for _, ch := range pending {
		close(ch)
	}
}

func (c *Conn) readLoop() {
	defer close(c.done)
	for {
		m, err := c.stream.Read(c.ctx)
		if err != nil {
			var de *DecodeError
			if errors.As(err, &de) {
				c.log.Warn("jsonrpc: malformed message", "code", de.Err.Code, "error", de.Err.Message)
				c.write(context.Background(), de.Response())
				continue
			}
			c.mu.Lock()
			closed := c.closed
			c.mu.Unlock()
			if closed || errors.Is(err, ErrClosed) || isEOF(err) {
				err = nil
			}
			c.shutdown(err)
			return
		}
		c.deliver(m, nil)
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
			c.log.Error("jsonrpc: notification handler panicked", "method", req.Method, "panic", p)
		}
	}()
	if _, err := c.handler.Handle(ctx, req); err != nil {
		c.log.Debug("jsonrpc: notification handler failed", "method", req.Method, "error", err)
	}
}

func (c *Conn) startRequest(req *Request, batch *batchReply) {
	idv := any(req.ID) // boxed once for both contexts below
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
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
	ctx, cancel := context.WithCancel(&requestContext{Context: c.ctx, id: idv, values: req.values})
	in := &inbound{cancel: cancel}
	c.inflight[req.ID] = in
	c.mu.Unlock()

	if batch == nil && c.opts.Inline != nil && c.opts.Inline(req.Method) {
		resp := c.run(ctx, req)
		cancel()
		c.finish(req.ID)
		c.reply(batch, idv, resp)
		return
	}
	c.queued <- struct{}{}
	c.handlers.Add(1)
	go func() {
		defer c.handlers.Done()
		c.slots <- struct{}{}
		<-c.queued
		resp := c.run(ctx, req)
		<-c.slots
		cancel()
		c.finish(req.ID)
		if in.cancelled.Load() {
			resp = nil
			c.log.Debug("jsonrpc: response suppressed after cancellation", "id", req.ID.String())
		}
		c.reply(batch, idv, resp)
	}()
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

func (c *Conn) run(ctx context.Context, req *Request) (resp *Response) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("jsonrpc: handler panicked", "method", req.Method, "panic", p)
			resp = &Response{ID: req.ID, Error: ErrInternal}
		}
	}()
	result, err := c.handler.Handle(ctx, req)
	if err != nil {
		var je *Error
		if errors.As(err, &je) {
			return &Response{ID: req.ID, Error: je}
		}
		c.log.Error("jsonrpc: handler failed", "method", req.Method, "error", err)
		return &Response{ID: req.ID, Error: ErrInternal}
	}
	raw, err := marshalValue(result)
	if err != nil {
		c.log.Error("jsonrpc: cannot encode result", "method", req.Method, "error", err)
		return &Response{ID: req.ID, Error: ErrInternal}
	}
	return &Response{ID: req.ID, Result: raw}
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
	delete(c.inflight, id)
	n := c.opts.RememberIDs
	if n < 0 {
		return
	}
	if c.recent == nil {
		c.recent = make(map[ID]struct{})
	}
	if len(c.ring) < n {
		c.ring = append(c.ring, id)
	} else {
		delete(c.recent, c.ring[c.ringNext])
		c.ring[c.ringNext] = id
		c.ringNext = (c.ringNext + 1) % n
	}
	c.recent[id] = struct{}{}
}

// CancelInbound cancels the context of the inbound request id, if it is
// still being handled, and suppresses its response. It reports whether the
// request was found. MCP calls it on notifications/cancelled.
func (c *Conn) CancelInbound(id ID) bool {
	c.mu.Lock()
	in, ok := c.inflight[id]
	c.mu.Unlock()
	if !ok {
		return false
	}
	in.cancelled.Store(true)
	in.cancel()
	return true
}

func (c *Conn) handleResponse(r *Response) {
	if !r.ID.IsValid() {
		if r.Error != nil {
			c.log.Warn("jsonrpc: peer reported an error without an id", "code", r.Error.Code, "message", r.Error.Message)
		}
		return
	}
	c.mu.Lock()
	ch, ok := c.pending[r.ID]
	if ok {
		delete(c.pending, r.ID)
	}
	c.mu.Unlock()
	if !ok {
		c.log.Debug("jsonrpc: response to an unknown or abandoned request dropped", "id", r.ID.String())
		return
	}
	ch <- r
}

func (c *Conn) write(ctx context.Context, m Message) {
	if err := c.stream.Write(ctx, m); err != nil {
		c.log.Debug("jsonrpc: write failed", "error", err)
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
// result (which may be nil to discard it, or a *json.RawMessage). An error
// response is returned as an *Error. If ctx ends first, the call is
// abandoned: a late response is dropped and ConnOptions.OnCancel is told.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	return c.CallID(ctx, c.NewID(), method, params, result)
}

// CallID is Call with an id from NewID, for callers that must know the id
// before the request is sent.
func (c *Conn) CallID(ctx context.Context, id ID, method string, params, result any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return fmt.Errorf("jsonrpc: call %s: %w", method, err)
	}
	if c.opts.Timeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
			defer cancel()
		}
	}
	ch := make(chan *Response, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.pending[id] = ch
	c.mu.Unlock()

	if err := c.stream.Write(ctx, &Request{ID: id, Method: method, Params: raw}); err != nil {
		c.forget(id)
		return fmt.Errorf("jsonrpc: call %s: %w", method, err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return ErrClosed
		}
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
		if err := json.Unmarshal(resp.Result, result); err != nil {
			return fmt.Errorf("jsonrpc: result of %s: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		if c.forget(id) && c.opts.OnCancel != nil {
			c.opts.OnCancel(id, context.Cause(ctx))
		}
		return fmt.Errorf("jsonrpc: call %s: %w", method, context.Cause(ctx))
	}
}

// forget removes an outbound call; it reports whether it was still pending.
func (c *Conn) forget(id ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pending[id]
	delete(c.pending, id)
	return ok
}
