package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recStream is a Stream that records what is written to it, with the
// request id each write's context carries.
type recStream struct {
	mu      sync.Mutex
	msgs    []Message
	ids     []ID
	written chan struct{} // signalled on every write (while not full)
	closed  bool
}

func newRecStream() *recStream { return &recStream{written: make(chan struct{}, 100)} }

func (s *recStream) Read(context.Context) (Message, error) {
	return nil, errors.New("recStream: not readable")
}

func (s *recStream) Write(ctx context.Context, m Message) error {
	id, _ := RequestIDFromContext(ctx)
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.ids = append(s.ids, id)
	s.mu.Unlock()
	select {
	case s.written <- struct{}{}:
	default:
	}
	return nil
}

func (s *recStream) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

func (s *recStream) all() ([]Message, []ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...), append([]ID(nil), s.ids...)
}

// waitWrite waits for the next write; it fails the test after 10s.
func (s *recStream) waitWrite(t *testing.T) {
	t.Helper()
	select {
	case <-s.written:
	case <-time.After(10 * time.Second):
		t.Fatal("no write within 10s")
	}
}

type valueKey struct{}

func newPushTest(t *testing.T, h Handler, opts ConnOptions) (*Conn, *recStream) {
	t.Helper()
	s := newRecStream()
	opts.Handler = h
	c := NewPushConn(s, opts)
	t.Cleanup(func() { c.Close() })
	return c, s
}

func TestDeliverRequest(t *testing.T) {
	inline := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		switch req.Method {
		case "echo":
			id, _ := RequestIDFromContext(ctx)
			return map[string]any{"params": req.Params, "id": id.String(), "value": ctx.Value(valueKey{})}, nil
		case "jsonerr":
			return nil, NewError(-32001, "custom")
		case "err":
			return nil, errors.New("secret internals")
		case "panic":
			panic("boom")
		case "inline":
			close(inline)
			return nil, nil
		}
		return nil, ErrMethodNotFound
	})
	tests := []struct {
		name     string
		method   string
		wantCode int64  // 0 for a result
		wantRes  string // substring of the result
	}{
		{"result", "echo", 0, `"value":"carried"`},
		{"request id in the handler's context", "echo", 0, `"id":"7"`},
		{"error passed through", "jsonerr", -32001, ""},
		{"other error hidden", "err", CodeInternalError, ""},
		{"panic recovered", "panic", CodeInternalError, ""},
		{"unknown method", "nope", CodeMethodNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, s := newPushTest(t, h, ConnOptions{})
			ctx := context.WithValue(context.Background(), valueKey{}, "carried")
			c.Deliver(ctx, &Request{ID: Int64ID(7), Method: tt.method, Params: json.RawMessage(`{"a":1}`)})
			// The response was written before Deliver returned.
			msgs, ids := s.all()
			if len(msgs) != 1 {
				t.Fatalf("%d messages written, want 1", len(msgs))
			}
			r, ok := msgs[0].(*Response)
			if !ok || r.ID != Int64ID(7) {
				t.Fatalf("wrote %#v, want the response to id 7", msgs[0])
			}
			if ids[0] != Int64ID(7) {
				t.Errorf("write context carries id %v, want 7", ids[0])
			}
			if tt.wantCode == 0 {
				if r.Error != nil || !contains(string(r.Result), tt.wantRes) {
					t.Fatalf("result %s, error %v; want a result with %s", r.Result, r.Error, tt.wantRes)
				}
				return
			}
			if r.Error == nil || r.Error.Code != tt.wantCode {
				t.Fatalf("error %v, want code %d", r.Error, tt.wantCode)
			}
			if contains(r.Error.Message, "secret") {
				t.Errorf("internals leaked: %q", r.Error.Message)
			}
		})
	}
	t.Run("handled in the caller's goroutine", func(t *testing.T) {
		c, _ := newPushTest(t, h, ConnOptions{})
		c.Deliver(context.Background(), &Request{ID: Int64ID(1), Method: "inline"})
		select {
		case <-inline:
		default:
			t.Fatal("the handler had not run when Deliver returned")
		}
	})
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestDeliverNotification(t *testing.T) {
	var got []string
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		got = append(got, req.Method+"="+ctx.Value(valueKey{}).(string))
		if req.Method == "panic" {
			panic("boom")
		}
		return "ignored", nil
	})
	c, s := newPushTest(t, h, ConnOptions{})
	ctx := context.WithValue(context.Background(), valueKey{}, "v")
	c.Deliver(ctx, &Request{Method: "a"})
	c.Deliver(ctx, &Request{Method: "panic"})
	c.Deliver(ctx, &Request{Method: "b"})
	if want := []string{"a=v", "panic=v", "b=v"}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("handled %v, want %v", got, want)
	}
	if msgs, _ := s.all(); len(msgs) != 0 {
		t.Fatalf("a notification was answered: %v", msgs)
	}
}

func TestDeliverResponse(t *testing.T) {
	c, s := newPushTest(t, nil, ConnOptions{})
	type result struct {
		v   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		var v string
		err := c.Call(context.Background(), "ask", nil, &v)
		done <- result{v, err}
	}()
	s.waitWrite(t)
	msgs, _ := s.all()
	req, ok := msgs[0].(*Request)
	if !ok || req.Method != "ask" {
		t.Fatalf("wrote %#v, want the call", msgs[0])
	}
	// A response to no call is dropped; the right one completes the call.
	c.Deliver(context.Background(), &Response{ID: Int64ID(999), Result: json.RawMessage(`"stray"`)})
	c.Deliver(context.Background(), &Response{ID: req.ID, Result: json.RawMessage(`"answer"`)})
	select {
	case r := <-done:
		if r.err != nil || r.v != "answer" {
			t.Fatalf("Call = %q, %v; want answer", r.v, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call was not completed")
	}
}

func TestDeliverDuplicateID(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "wait" {
			close(started)
			<-release
		}
		return "ok", nil
	})
	tests := []struct {
		name     string
		inflight bool // the first request is still being handled
	}{
		{"completed", false},
		{"in flight", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, s := newPushTest(t, h, ConnOptions{})
			var wg sync.WaitGroup
			if tt.inflight {
				release = make(chan struct{})
				started = make(chan struct{})
				wg.Go(func() { c.Deliver(context.Background(), &Request{ID: StringID("x"), Method: "wait"}) })
				<-started
			} else {
				c.Deliver(context.Background(), &Request{ID: StringID("x"), Method: "m"})
			}
			c.Deliver(context.Background(), &Request{ID: StringID("x"), Method: "m"})
			close(release)
			wg.Wait()
			msgs, _ := s.all()
			var refused, answered int
			for _, m := range msgs {
				r := m.(*Response)
				switch {
				case r.Error != nil && r.Error.Code == CodeInvalidRequest:
					refused++
				case r.Error == nil:
					answered++
				}
			}
			if refused != 1 || answered != 1 {
				t.Fatalf("%d refused, %d answered; want 1 and 1: %v", refused, answered, msgs)
			}
		})
	}
	t.Run("forgotten after RememberIDs", func(t *testing.T) {
		c, s := newPushTest(t, h, ConnOptions{RememberIDs: 2})
		for _, n := range []int64{1, 2, 3, 1} { // 1 is forgotten once 3 completes
			c.Deliver(context.Background(), &Request{ID: Int64ID(n), Method: "m"})
		}
		c.Deliver(context.Background(), &Request{ID: Int64ID(3), Method: "m"}) // remembered
		msgs, _ := s.all()
		for i, m := range msgs {
			r := m.(*Response)
			if wantErr := i == 4; (r.Error != nil) != wantErr {
				t.Errorf("answer %d: error %v, want error %v", i, r.Error, wantErr)
			}
		}
	})
	t.Run("many ids remembered", func(t *testing.T) {
		c, s := newPushTest(t, h, ConnOptions{})
		for n := range int64(100) { // past the linear search
			c.Deliver(context.Background(), &Request{ID: Int64ID(n), Method: "m"})
		}
		c.Deliver(context.Background(), &Request{ID: Int64ID(3), Method: "m"})
		msgs, _ := s.all()
		if r := msgs[len(msgs)-1].(*Response); r.Error == nil || r.Error.Code != CodeInvalidRequest {
			t.Fatalf("reused id answered with %v", r)
		}
	})
}

func TestDeliverCancellation(t *testing.T) {
	started := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		close(started)
		<-ctx.Done()
		return "too late", nil
	})
	t.Run("CancelInbound", func(t *testing.T) {
		started = make(chan struct{})
		c, s := newPushTest(t, h, ConnOptions{})
		deliverCtx, cancelDeliver := context.WithCancel(context.Background())
		returned := make(chan struct{})
		go func() {
			c.Deliver(deliverCtx, &Request{ID: Int64ID(1), Method: "slow"})
			close(returned)
		}()
		<-started
		cancelDeliver() // Deliver's context does not cancel the request
		if c.CancelInbound(Int64ID(2)) {
			t.Error("CancelInbound found a request never delivered")
		}
		select {
		case <-returned:
			t.Fatal("the request ended with Deliver's context")
		default:
		}
		if !c.CancelInbound(Int64ID(1)) {
			t.Fatal("CancelInbound did not find the request")
		}
		<-returned
		if msgs, _ := s.all(); len(msgs) != 0 {
			t.Fatalf("the cancelled request was answered: %v", msgs)
		}
	})
	t.Run("Close", func(t *testing.T) {
		started = make(chan struct{})
		c, s := newPushTest(t, h, ConnOptions{})
		returned := make(chan struct{})
		go func() {
			c.Deliver(context.Background(), &Request{ID: Int64ID(1), Method: "slow"})
			close(returned)
		}()
		<-started
		select {
		case <-c.Done():
			t.Fatal("done before Close")
		default:
		}
		c.Close()
		<-returned // the handler's context was cancelled
		<-c.Done()
		if err := c.Wait(); err != nil {
			t.Fatalf("Wait = %v", err)
		}
		if !s.closed {
			t.Error("the stream was not closed")
		}
		// Later messages are ignored.
		c.Deliver(context.Background(), &Request{ID: Int64ID(2), Method: "slow"})
	})
}

func TestDeliverMaxConcurrency(t *testing.T) {
	release := make(chan struct{})
	running := make(chan string, 2)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		running <- req.Method
		if req.Method == "first" {
			<-release
		}
		return nil, nil
	})
	c, s := newPushTest(t, h, ConnOptions{MaxConcurrency: 1, Inline: func(m string) bool { return m == "ping" }})
	first := make(chan struct{})
	go func() {
		c.Deliver(context.Background(), &Request{ID: Int64ID(1), Method: "first"})
		close(first)
	}()
	if m := <-running; m != "first" {
		t.Fatalf("%s ran first", m)
	}
	second := make(chan struct{})
	go func() {
		c.Deliver(context.Background(), &Request{ID: Int64ID(2), Method: "second"})
		close(second)
	}()
	// An inline method does not wait for the slot.
	c.Deliver(context.Background(), &Request{ID: Int64ID(3), Method: "ping"})
	if m := <-running; m != "ping" {
		t.Fatalf("%s ran while the only slot was taken", m)
	}
	close(release)
	<-second
	if m := <-running; m != "second" {
		t.Fatalf("ran %s, want second", m)
	}
	// Deliver returns once its answer is written: wait for the first's
	// too, which may still be on its way when the second is answered.
	<-first
	if msgs, _ := s.all(); len(msgs) != 3 {
		t.Fatalf("%d answers, want 3", len(msgs))
	}
}

func TestDeliverBatch(t *testing.T) {
	var arrived sync.WaitGroup
	arrived.Add(2)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.IsNotification() {
			return nil, nil
		}
		// Each request waits for the other: they must run concurrently.
		arrived.Done()
		arrived.Wait()
		return req.Method, nil
	})
	t.Run("enabled", func(t *testing.T) {
		c, s := newPushTest(t, h, ConnOptions{})
		c.SetBatchEnabled(true)
		c.Deliver(context.Background(), Batch{
			&Request{ID: Int64ID(1), Method: "a"},
			&Request{Method: "note"},
			&Request{ID: Int64ID(2), Method: "b"},
			&DecodeError{Err: NewError(CodeInvalidRequest, "bad")},
		})
		msgs, _ := s.all()
		if len(msgs) != 1 {
			t.Fatalf("%d writes, want one batch", len(msgs))
		}
		b, ok := msgs[0].(Batch)
		if !ok || len(b) != 3 {
			t.Fatalf("wrote %#v, want a batch of 3 responses", msgs[0])
		}
	})
	t.Run("disabled", func(t *testing.T) {
		c, s := newPushTest(t, h, ConnOptions{})
		c.Deliver(context.Background(), Batch{&Request{ID: Int64ID(1), Method: "a"}})
		msgs, _ := s.all()
		if len(msgs) != 1 {
			t.Fatalf("%d writes, want 1", len(msgs))
		}
		if r, ok := msgs[0].(*Response); !ok || r.Error == nil || r.Error.Code != CodeInvalidRequest {
			t.Fatalf("wrote %#v, want -32600", msgs[0])
		}
	})
}

func TestDeliverDecodeError(t *testing.T) {
	c, s := newPushTest(t, nil, ConnOptions{})
	c.Deliver(context.Background(), &DecodeError{ID: Int64ID(4), Err: NewError(CodeParseError, "Parse error")})
	msgs, _ := s.all()
	if len(msgs) != 1 {
		t.Fatalf("%d writes, want 1", len(msgs))
	}
	if r, ok := msgs[0].(*Response); !ok || r.Error == nil || r.Error.Code != CodeParseError {
		t.Fatalf("wrote %#v, want the parse error", msgs[0])
	}
}

// TestDeliverMaxQueued checks that a delivered request finding
// ConnOptions.MaxQueued requests waiting for a handler slot is answered at
// once with CodeOverloaded, alone or in a batch, and that the waiting ones
// are still served (issue #16 item 11: nothing bounded them).
func TestDeliverMaxQueued(t *testing.T) {
	for _, tc := range []struct {
		name  string
		batch bool
	}{{"single", false}, {"batch", true}} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				<-release
				return "ok", nil
			})
			c, s := newPushTest(t, h, ConnOptions{MaxConcurrency: 1, MaxQueued: 2})
			c.SetBatchEnabled(true)
			var wg sync.WaitGroup
			for i := int64(1); i <= 3; i++ { // one runs, two wait
				wg.Go(func() { c.Deliver(context.Background(), &Request{ID: Int64ID(i), Method: "slow"}) })
			}
			waitFor(t, func() bool {
				c.mu.Lock()
				defer c.mu.Unlock()
				return c.waiting == 2
			})
			var over Message = &Request{ID: Int64ID(4), Method: "slow"}
			if tc.batch {
				over = Batch{over}
			}
			refused := make(chan struct{})
			go func() { c.Deliver(context.Background(), over); close(refused) }()
			select {
			case <-refused: // at once, rather than waiting for a slot
			case <-time.After(10 * time.Second):
				close(release)
				t.Fatal("a request beyond MaxQueued waited for a slot")
			}
			msgs, _ := s.all()
			if len(msgs) != 1 {
				t.Fatalf("%d messages written, want the one refusal", len(msgs))
			}
			m := msgs[0]
			if b, ok := m.(Batch); ok && tc.batch && len(b) == 1 {
				m = b[0]
			}
			resp, ok := m.(*Response)
			if !ok || resp.Error == nil || resp.Error.Code != CodeOverloaded || resp.ID != Int64ID(4) {
				t.Fatalf("got %#v, want a CodeOverloaded error for id 4", m)
			}
			close(release)
			wg.Wait()
			if msgs, _ = s.all(); len(msgs) != 4 {
				t.Fatalf("%d messages written, want 4", len(msgs))
			}
			for _, m := range msgs[1:] {
				if r, ok := m.(*Response); !ok || r.Error != nil {
					t.Errorf("waiting request answered %#v", m)
				}
			}
			c.mu.Lock()
			q := c.waiting
			c.mu.Unlock()
			if q != 0 {
				t.Errorf("queued = %d after all were served", q)
			}
		})
	}
}

// waitFor polls cond until it holds, failing the test after 10s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// feedStream is a Stream whose Read hands out requests one by one and
// counts them.
type feedStream struct {
	*recStream
	reads atomic.Int32
	left  atomic.Int32
	done  chan struct{}
}

func (s *feedStream) Read(ctx context.Context) (Message, error) {
	if s.left.Add(-1) < 0 {
		select {
		case <-s.done:
			return nil, io.EOF
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	n := s.reads.Add(1)
	return &Request{ID: Int64ID(int64(n)), Method: "slow"}, nil
}

// TestReadLoopMaxQueued: a connection that reads its stream (stdio) lets
// at most MaxQueued requests wait for a handler slot, so that a client
// cannot queue requests without bound (issue #16 item 11); as on a push
// connection, a request beyond them is refused at once with
// CodeOverloaded, and reading goes on (see TestReadLoopQueueFullCallsBack
// for why it must): with one slot and two places, of 100 requests one
// runs, two wait and 97 are refused before the first is released.
func TestReadLoopMaxQueued(t *testing.T) {
	release := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "ok", nil
	})
	s := &feedStream{recStream: newRecStream(), done: make(chan struct{})}
	s.left.Store(100)
	c := NewConn(s, ConnOptions{Handler: h, MaxConcurrency: 1, MaxQueued: 2})
	defer func() { close(s.done); c.Close() }()
	count := func() (refused, ok int) {
		msgs, _ := s.all()
		for _, m := range msgs {
			r := m.(*Response)
			switch {
			case r.Error != nil && r.Error.Code == CodeOverloaded:
				refused++
			case r.Error == nil:
				ok++
			default:
				t.Fatalf("unexpected answer %+v", r)
			}
		}
		return refused, ok
	}
	waitFor(t, func() bool { refused, _ := count(); return refused == 97 })
	if _, ok := count(); ok != 0 {
		t.Fatalf("%d answered before the release", ok)
	}
	close(release)
	waitFor(t, func() bool { _, ok := count(); return ok == 3 })
	if refused, _ := count(); refused != 97 {
		t.Fatalf("%d refused, want 97", refused)
	}
}

// TestDeliverInlineMakesNoSlots: a push connection that has handled only
// inline requests (an idle MCP session has handled initialize) holds no
// handler slots, which cost an allocation per session; the first request
// that needs one makes them.
func TestDeliverInlineMakesNoSlots(t *testing.T) {
	h := HandlerFunc(func(context.Context, *Request) (any, error) { return "ok", nil })
	c, s := newPushTest(t, h, ConnOptions{Inline: func(m string) bool { return m == "initialize" }})
	c.Deliver(context.Background(), &Request{ID: Int64ID(1), Method: "initialize"})
	if c.slots != nil {
		t.Error("an inline request made the handler slots")
	}
	c.Deliver(context.Background(), &Request{ID: Int64ID(2), Method: "other"})
	if c.slots == nil {
		t.Error("a request that needs a slot did not make them")
	}
	if msgs, _ := s.all(); len(msgs) != 2 {
		t.Errorf("%d answers, want 2", len(msgs))
	}
}
