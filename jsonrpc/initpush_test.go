package jsonrpc

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestInitPushConn checks that a push connection built in memory of the
// caller's behaves as one from NewPushConn: it answers, refuses a reused
// id, fails its pending calls on Close, and closes Done whether it was
// asked for before or after Close.
func TestInitPushConn(t *testing.T) {
	echo := HandlerFunc(func(_ context.Context, r *Request) (any, error) { return r.Params, nil })
	for _, tt := range []struct {
		name       string
		make       func(Stream, ConnOptions) *Conn
		doneBefore bool // Done is asked for before Close
	}{
		{"NewPushConn", NewPushConn, true},
		{"NewPushConn/DoneAfterClose", NewPushConn, false},
		{"InitPushConn", func(s Stream, o ConnOptions) *Conn {
			owner := &struct {
				before int
				conn   Conn
				after  int
			}{}
			return InitPushConn(&owner.conn, s, o)
		}, true},
		{"InitPushConn/DoneAfterClose", func(s Stream, o ConnOptions) *Conn { return InitPushConn(new(Conn), s, o) }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newRecStream()
			c := tt.make(s, ConnOptions{Handler: echo})
			req := &Request{ID: Int64ID(7), Method: "echo", Params: []byte(`{"x":1}`)}
			c.Deliver(context.Background(), req)
			c.Deliver(context.Background(), req)
			msgs, _ := s.all()
			if len(msgs) != 2 {
				t.Fatalf("%d messages written, want 2", len(msgs))
			}
			if r, ok := msgs[0].(*Response); !ok || r.Error != nil || r.ID != Int64ID(7) || string(r.Result) != `{"x":1}` {
				t.Errorf("first answer %#v, want the echo of 7", msgs[0])
			}
			if r, ok := msgs[1].(*Response); !ok || r.Error == nil || r.Error.Code != CodeInvalidRequest {
				t.Errorf("answer to a reused id %#v, want -32600", msgs[1])
			}

			var done <-chan struct{}
			if tt.doneBefore {
				done = c.Done()
				select {
				case <-done:
					t.Fatal("Done is closed before Close")
				default:
				}
			}
			callErr := make(chan error, 1)
			go func() { callErr <- c.Call(context.Background(), "ask", nil, nil) }()
			s.waitWrite(t)
			c.Close()
			if !tt.doneBefore {
				done = c.Done()
			}
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Done not closed within 10s of Close")
			}
			select {
			case err := <-callErr:
				if !errors.Is(err, ErrClosed) {
					t.Errorf("pending call: %v, want ErrClosed", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("pending call not failed within 10s of Close")
			}
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if !closed {
				t.Error("Close did not close the stream")
			}
			if err := c.Wait(); err != nil {
				t.Errorf("Wait: %v", err)
			}
		})
	}
}

// TestPushStateInline checks that the first backing arrays of a push
// connection's bookkeeping keep no stale entry once the lists have grown
// out of them: an idle connection would hold it (a request's context).
func TestPushStateInline(t *testing.T) {
	for _, n := range []int{1, 2, 3, 40} {
		var p pushState
		for i := range n {
			p.start(Int64ID(int64(i)), &inbound{})
		}
		if n > 1 && p.active1 != ([1]activeRequest{}) {
			t.Errorf("%d requests: the inline array of active requests still holds %v", n, p.active1[0].id)
		}
		for i := range n {
			p.finish(Int64ID(int64(i)), 1024)
		}
		if len(p.active) != 0 {
			t.Errorf("%d requests: %d still active", n, len(p.active))
		}
		if n > 1 && p.ring1 != ([1]ID{}) {
			t.Errorf("%d requests: the inline array of remembered ids still holds %v", n, p.ring1[0])
		}
		for i := range n {
			if !p.used(Int64ID(int64(i))) {
				t.Errorf("%d requests: id %d not remembered", n, i)
			}
		}
	}
}

// TestPushConnDoneDuringClose asks for Done while Close runs: whoever makes
// the channel, it is closed exactly once, and every caller sees it closed.
func TestPushConnDoneDuringClose(t *testing.T) {
	for range 200 {
		c := NewPushConn(newRecStream(), ConnOptions{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { <-c.Done() })
		}
		c.Close()
		finished := make(chan struct{})
		go func() { wg.Wait(); close(finished) }()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Fatal("Done not closed within 10s of Close")
		}
	}
}
