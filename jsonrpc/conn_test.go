package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawPeer drives one end of a pipe by hand, to send exact bytes and read
// exact answers.
type rawPeer struct {
	t *testing.T
	s Stream
}

func (p rawPeer) send(m Message) {
	p.t.Helper()
	if err := p.s.Write(context.Background(), m); err != nil {
		p.t.Fatal(err)
	}
}

func (p rawPeer) recv() Message {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := p.s.Read(ctx)
	if err != nil {
		p.t.Fatalf("read: %v", err)
	}
	return m
}

// recvResponse reads until a response arrives, skipping requests.
func (p rawPeer) recvResponse() *Response {
	p.t.Helper()
	for {
		if r, ok := p.recv().(*Response); ok {
			return r
		}
	}
}

func newTestConn(t *testing.T, h Handler, opts ConnOptions) (*Conn, rawPeer) {
	a, b := NewPipe()
	opts.Handler = h
	c := NewConn(a, opts)
	t.Cleanup(func() { c.Close() })
	return c, rawPeer{t, b}
}

func echoHandler() Handler {
	return HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		switch req.Method {
		case "echo":
			return req.Params, nil
		case "fail":
			return nil, errors.New("secret internal detail")
		case "typed":
			return nil, Errorf(CodeInvalidParams, "bad %s", "thing")
		case "panic":
			panic("boom")
		case "block":
			<-ctx.Done()
			return map[string]string{"late": "yes"}, nil
		}
		return nil, ErrMethodNotFound
	})
}

func TestConnAnswers(t *testing.T) {
	_, p := newTestConn(t, echoHandler(), ConnOptions{})
	tests := []struct {
		method string
		params string
		result string
		code   int64
	}{
		{"echo", `{"a":1}`, `{"a":1}`, 0},
		{"nope", ``, ``, CodeMethodNotFound},
		{"fail", ``, ``, CodeInternalError},
		{"typed", ``, ``, CodeInvalidParams},
		{"panic", ``, ``, CodeInternalError},
	}
	for i, tt := range tests {
		id := StringID(fmt.Sprint("r", i))
		req := &Request{ID: id, Method: tt.method}
		if tt.params != "" {
			req.Params = json.RawMessage(tt.params)
		}
		p.send(req)
		r := p.recvResponse()
		if r.ID != id {
			t.Fatalf("%s: id = %v, want %v", tt.method, r.ID, id)
		}
		if tt.code != 0 {
			if r.Error == nil || r.Error.Code != tt.code {
				t.Fatalf("%s: got %+v, want code %d", tt.method, r, tt.code)
			}
			if tt.method == "fail" && r.Error.Message != "Internal error" {
				t.Errorf("internal detail leaked: %q", r.Error.Message)
			}
			continue
		}
		if string(r.Result) != tt.result {
			t.Errorf("%s: result = %s, want %s", tt.method, r.Result, tt.result)
		}
	}
}

func TestConnNotificationsNeverAnswered(t *testing.T) {
	var seen atomic.Int32
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		seen.Add(1)
		if req.Method == "ping" {
			return struct{}{}, nil
		}
		return nil, ErrMethodNotFound
	})
	_, p := newTestConn(t, h, ConnOptions{})
	p.send(&Request{Method: "unknown/notification"})
	p.send(&Request{Method: "ping"})
	p.send(&Request{ID: Int64ID(9), Method: "ping"})
	r := p.recvResponse()
	if r.ID != Int64ID(9) || r.Error != nil {
		t.Fatalf("first message back is %+v; notifications must not be answered", r)
	}
	if seen.Load() != 3 {
		t.Fatalf("handler saw %d messages, want 3", seen.Load())
	}
}

func TestConnDuplicateIDs(t *testing.T) {
	release := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "wait" {
			<-release
		}
		return struct{}{}, nil
	})
	_, p := newTestConn(t, h, ConnOptions{RememberIDs: 2})
	// In flight: the duplicate is refused at once, with its id.
	p.send(&Request{ID: Int64ID(1), Method: "wait"})
	p.send(&Request{ID: Int64ID(1), Method: "ping"})
	r := p.recvResponse()
	if r.ID != Int64ID(1) || r.Error == nil || r.Error.Code != CodeInvalidRequest {
		t.Fatalf("duplicate in flight: got %+v", r)
	}
	close(release)
	if r := p.recvResponse(); r.Error != nil {
		t.Fatalf("original: %+v", r)
	}
	// Completed: remembered within the bound.
	p.send(&Request{ID: Int64ID(1), Method: "ping"})
	if r := p.recvResponse(); r.Error == nil || r.Error.Code != CodeInvalidRequest {
		t.Fatalf("completed duplicate: got %+v", r)
	}
	// A string "1" is another id.
	p.send(&Request{ID: StringID("1"), Method: "ping"})
	if r := p.recvResponse(); r.Error != nil || r.ID != StringID("1") {
		t.Fatalf(`"1": got %+v`, r)
	}
	// Beyond the bound the oldest id is forgotten.
	p.send(&Request{ID: Int64ID(2), Method: "ping"})
	p.recvResponse()
	p.send(&Request{ID: Int64ID(3), Method: "ping"})
	p.recvResponse()
	p.send(&Request{ID: Int64ID(1), Method: "ping"})
	if r := p.recvResponse(); r.Error != nil {
		t.Fatalf("forgotten id: got %+v", r)
	}
}

func TestConnCancelInbound(t *testing.T) {
	started := make(chan struct{})
	ended := make(chan error, 1)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "block" {
			close(started)
			<-ctx.Done()
			ended <- ctx.Err()
			return struct{}{}, nil
		}
		return struct{}{}, nil
	})
	c, p := newTestConn(t, h, ConnOptions{})
	p.send(&Request{ID: Int64ID(1), Method: "block"})
	<-started
	if !c.CancelInbound(Int64ID(1)) {
		t.Fatal("CancelInbound did not find the request")
	}
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("handler ctx: %v", err)
	}
	// The cancelled request gets no response: the next one is the ping's.
	p.send(&Request{ID: Int64ID(2), Method: "ping"})
	if r := p.recvResponse(); r.ID != Int64ID(2) {
		t.Fatalf("got response %+v, want the ping's", r)
	}
	// The handler has returned; its bookkeeping ends just after, possibly
	// after the ping's answer went out.
	for i := 0; c.CancelInbound(Int64ID(1)); i++ {
		if i == 1000 {
			t.Fatal("a finished request was found")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestConnCallCancelAndLateResponse(t *testing.T) {
	cancelled := make(chan ID, 1)
	c, p := newTestConn(t, nil, ConnOptions{OnCancel: func(id ID, cause error) { cancelled <- id }})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "slow", nil, nil) }()
	req := p.recv().(*Request)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call: %v", err)
	}
	if id := <-cancelled; id != req.ID {
		t.Fatalf("OnCancel id %v, want %v", id, req.ID)
	}
	// The late response is dropped; the connection still works.
	p.send(&Response{ID: req.ID, Result: json.RawMessage(`{}`)})
	p.send(&Response{ID: Int64ID(12345), Result: json.RawMessage(`{}`)})
	go func() {
		r := p.recv().(*Request)
		p.send(&Response{ID: r.ID, Result: json.RawMessage(`{"ok":true}`)})
	}()
	var out struct {
		OK bool `json:"ok"`
	}
	if err := c.Call(context.Background(), "fast", map[string]int{"x": 1}, &out); err != nil || !out.OK {
		t.Fatalf("Call after late response: %v %+v", err, out)
	}
}

func TestConnCallTimeout(t *testing.T) {
	cancelled := make(chan ID, 1)
	c, p := newTestConn(t, nil, ConnOptions{Timeout: 20 * time.Millisecond, OnCancel: func(id ID, cause error) { cancelled <- id }})
	err := c.Call(context.Background(), "never", nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Call: %v", err)
	}
	req := p.recv().(*Request)
	if id := <-cancelled; id != req.ID {
		t.Fatalf("OnCancel id %v, want %v", id, req.ID)
	}
}

func TestConnIDsNeverReused(t *testing.T) {
	c, _ := newTestConn(t, nil, ConnOptions{})
	seen := map[ID]bool{}
	for range 1000 {
		id := c.NewID()
		if seen[id] || !id.IsValid() {
			t.Fatalf("id %v reused or invalid", id)
		}
		seen[id] = true
	}
}

func TestConnErrorResponse(t *testing.T) {
	c, p := newTestConn(t, nil, ConnOptions{})
	go func() {
		r := p.recv().(*Request)
		p.send(&Response{ID: r.ID, Error: &Error{Code: -32002, Message: "Resource not found"}})
	}()
	err := c.Call(context.Background(), "resources/read", nil, nil)
	var je *Error
	if !errors.As(err, &je) || je.Code != -32002 {
		t.Fatalf("Call: %v", err)
	}
	if !errors.Is(err, &Error{Code: -32002}) {
		t.Fatal("errors.Is by code failed")
	}
}

func TestConnBatch(t *testing.T) {
	c, p := newTestConn(t, echoHandler(), ConnOptions{})
	batch := Batch{&Request{ID: Int64ID(1), Method: "echo", Params: json.RawMessage(`{"n":1}`)}, &Request{Method: "note"}}
	p.send(batch)
	r := p.recv()
	if resp, ok := r.(*Response); !ok || resp.ID.IsValid() || resp.Error.Code != CodeInvalidRequest {
		t.Fatalf("batch while disabled: %#v", r)
	}
	c.SetBatchEnabled(true)
	p.s.(*pipeEnd).out <- []byte(`[{"jsonrpc":"2.0","id":2,"method":"echo","params":{"n":2}},{"jsonrpc":"2.0","method":"note"},5,{"jsonrpc":"2.0","id":3,"method":"missing"}]`)
	got, ok := p.recv().(Batch)
	if !ok || len(got) != 3 {
		t.Fatalf("batch reply: %#v", got)
	}
	ids := map[ID]bool{}
	for _, m := range got {
		ids[m.(*Response).ID] = true
	}
	if !ids[Int64ID(2)] || !ids[Int64ID(3)] || !ids[ID{}] {
		t.Fatalf("batch reply ids: %v", ids)
	}
	// A batch of notifications gets no reply at all.
	p.send(Batch{&Request{Method: "a"}, &Request{Method: "b"}})
	p.send(&Request{ID: Int64ID(4), Method: "echo", Params: json.RawMessage(`{}`)})
	if r, ok := p.recv().(*Response); !ok || r.ID != Int64ID(4) {
		t.Fatalf("after notification batch: %#v", r)
	}
}

func TestConnSurvivesMalformed(t *testing.T) {
	a, b := NewPipe()
	c := NewConn(a, ConnOptions{Handler: echoHandler()})
	defer c.Close()
	p := rawPeer{t, b}
	pe := b.(*pipeEnd)
	for _, bad := range []string{`{`, `[]`, `{"jsonrpc":"2.0","id":null,"method":"x"}`, `"x"`} {
		pe.out <- []byte(bad)
		r := p.recvResponse()
		if r.Error == nil || r.ID.IsValid() {
			t.Fatalf("%s: got %+v", bad, r)
		}
	}
	p.send(&Request{ID: Int64ID(1), Method: "echo", Params: json.RawMessage(`{}`)})
	if r := p.recvResponse(); r.ID != Int64ID(1) || r.Error != nil {
		t.Fatalf("after malformed input: %+v", r)
	}
}

func TestConnCloseFailsPending(t *testing.T) {
	c, _ := newTestConn(t, nil, ConnOptions{})
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), "x", nil, nil) }()
	time.Sleep(10 * time.Millisecond)
	c.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("pending call: %v", err)
	}
	if err := c.Call(context.Background(), "y", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after close: %v", err)
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
}

func TestConnBidirectional(t *testing.T) {
	a, b := NewPipe()
	var left *Conn
	right := NewConn(b, ConnOptions{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		return map[string]string{"from": "right"}, nil
	})})
	left = NewConn(a, ConnOptions{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		// A handler that calls back into the peer before answering.
		var out map[string]string
		if err := left.Call(ctx, "inner", nil, &out); err != nil {
			return nil, err
		}
		return map[string]string{"inner": out["from"]}, nil
	})})
	defer left.Close()
	defer right.Close()
	var out map[string]string
	if err := right.Call(context.Background(), "outer", nil, &out); err == nil {
		// right's handler answers everything, including "inner".
		if out["inner"] != "right" {
			t.Fatalf("got %v", out)
		}
	} else {
		t.Fatal(err)
	}
}

func TestConnInlineAnsweredWhileSlotsBusy(t *testing.T) {
	release := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "block" {
			<-release
		}
		return struct{}{}, nil
	})
	_, p := newTestConn(t, h, ConnOptions{MaxConcurrency: 1, Inline: func(m string) bool { return m == "ping" }})
	defer close(release)
	p.send(&Request{ID: Int64ID(1), Method: "block"})
	p.send(&Request{ID: Int64ID(2), Method: "block"}) // waits for the only slot
	p.send(&Request{ID: Int64ID(3), Method: "ping"})
	if r := p.recvResponse(); r.ID != Int64ID(3) {
		t.Fatalf("got %+v first; the inline ping must not wait for a slot", r)
	}
}

type valuesKey struct{}

// msgStream hands messages over as they are, without encoding them, as an
// in-process transport would.
type msgStream struct {
	in, out chan Message
	done    chan struct{}
	once    sync.Once
}

func (s *msgStream) Read(ctx context.Context) (Message, error) {
	select {
	case m := <-s.in:
		return m, nil
	case <-s.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *msgStream) Write(ctx context.Context, m Message) error {
	select {
	case s.out <- m:
		return nil
	case <-s.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *msgStream) Close() error { s.once.Do(func() { close(s.done) }); return nil }

func TestRequestValuesReachHandler(t *testing.T) {
	a := &msgStream{in: make(chan Message, 4), out: make(chan Message, 4), done: make(chan struct{})}
	b := &msgStream{in: a.out, out: a.in, done: make(chan struct{})}
	got := make(chan any, 2)
	srv := NewConn(a, ConnOptions{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		got <- ctx.Value(valuesKey{})
		return "ok", nil
	})})
	defer srv.Close()
	carrier, cancel := context.WithCancel(context.WithValue(context.Background(), valuesKey{}, "alice"))
	cancel() // the carrier's cancellation must not reach the handler
	ctx := context.Background()
	if err := b.Write(ctx, (&Request{ID: Int64ID(1), Method: "m"}).WithValues(carrier)); err != nil {
		t.Fatal(err)
	}
	if v := <-got; v != "alice" {
		t.Fatalf("handler saw %v, want alice", v)
	}
	m, err := b.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := m.(*Response); !ok || r.Error != nil {
		t.Fatalf("got %#v, want a result (the carrier's cancellation leaked)", m)
	}
	if err := b.Write(ctx, &Request{Method: "n"}); err != nil {
		t.Fatal(err)
	}
	if v := <-got; v != nil {
		t.Fatalf("plain notification saw %v, want nil", v)
	}
}

func TestConnCallRaw(t *testing.T) {
	tests := []struct {
		name   string
		answer *Response
		result string
		code   int64
	}{
		{"result", &Response{Result: json.RawMessage(`{"a":[1,2]}`)}, `{"a":[1,2]}`, 0},
		{"error", &Response{Error: &Error{Code: -32002, Message: "Resource not found"}}, "", -32002},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := newTestConn(t, nil, ConnOptions{})
			go func() {
				r := p.recv().(*Request)
				a := *tt.answer
				a.ID = r.ID
				p.send(&a)
			}()
			raw, err := c.CallRaw(context.Background(), "m", map[string]int{"x": 1})
			if tt.code != 0 {
				var je *Error
				if !errors.As(err, &je) || je.Code != tt.code || raw != nil {
					t.Fatalf("got %s, %v; want error %d", raw, err, tt.code)
				}
				return
			}
			if err != nil || string(raw) != tt.result {
				t.Fatalf("got %s, %v; want %s", raw, err, tt.result)
			}
		})
	}
}

// TestNewIDPrefix: with ConnOptions.IDPrefix, outbound ids are strings,
// the prefix and the count; without, integers.
func TestNewIDPrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", []string{"1", "2"}},
		{"r.A.", []string{"r.A.1", "r.A.2"}},
	} {
		c, _ := newTestConn(t, nil, ConnOptions{IDPrefix: tc.prefix})
		for _, want := range tc.want {
			id := c.NewID()
			if id.String() != want || id.IsString() != (tc.prefix != "") {
				t.Errorf("prefix %q: id %v (string %v), want %s", tc.prefix, id, id.IsString(), want)
			}
		}
	}
}
