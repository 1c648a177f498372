package jsonrpc

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDeliverContext checks the context of a request handled by Deliver,
// which makes its cancelable part only when asked: however the handler
// watches it, CancelInbound ends it as context.WithCancel would, and it
// carries the request's id and Deliver's values.
func TestDeliverContext(t *testing.T) {
	type outer struct{}
	// Each watch waits, in the handler, until the request is cancelled
	// (cancelled is closed once CancelInbound has returned), then returns
	// what it saw wrong.
	for _, tc := range []struct {
		name  string
		watch func(ctx context.Context, cancelled <-chan struct{}) error
	}{
		{"Done", func(ctx context.Context, _ <-chan struct{}) error {
			<-ctx.Done()
			return nil
		}},
		{"Err polled", func(ctx context.Context, _ <-chan struct{}) error {
			for ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			return nil
		}},
		{"Done asked after the cancel", func(ctx context.Context, cancelled <-chan struct{}) error {
			<-cancelled
			select {
			case <-ctx.Done():
				return nil
			default:
				return errors.New("Done not closed after the cancel")
			}
		}},
		{"child context", func(ctx context.Context, _ <-chan struct{}) error {
			child, cancel := context.WithCancel(context.WithValue(ctx, outer{}, 1))
			defer cancel()
			<-child.Done()
			if err := child.Err(); err != context.Canceled {
				return errors.New("child Err = " + err.Error())
			}
			return nil
		}},
		{"AfterFunc", func(ctx context.Context, _ <-chan struct{}) error {
			ran := make(chan struct{})
			context.AfterFunc(ctx, func() { close(ran) })
			<-ran
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan struct{})
			cancelled := make(chan struct{})
			result := make(chan error, 1)
			var handlerCtx context.Context
			h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				handlerCtx = ctx
				if id, ok := RequestIDFromContext(ctx); !ok || id != Int64ID(7) {
					result <- errors.New("wrong request id in the context")
					close(started)
					return nil, nil
				}
				if err := ctx.Err(); err != nil {
					result <- errors.New("Err before the cancel: " + err.Error())
					close(started)
					return nil, nil
				}
				close(started)
				err := tc.watch(ctx, cancelled)
				if err == nil && ctx.Err() != context.Canceled {
					err = errors.New("Err after the cancel is not context.Canceled")
				}
				// Asked last: other values make the cancelable part.
				if err == nil && ctx.Value(valueKey{}) != "outer" {
					err = errors.New("Deliver's values missing from the context")
				}
				if err == nil && context.Cause(ctx) != context.Canceled {
					err = errors.New("Cause after the cancel is not context.Canceled")
				}
				result <- err
				return nil, nil
			})
			c, _ := newPushTest(t, h, ConnOptions{})
			returned := make(chan struct{})
			go func() {
				c.Deliver(context.WithValue(context.Background(), valueKey{}, "outer"), &Request{ID: Int64ID(7), Method: "m"})
				close(returned)
			}()
			<-started
			select {
			case err := <-result:
				t.Fatal(err)
			default:
			}
			if !c.CancelInbound(Int64ID(7)) {
				t.Fatal("CancelInbound did not find the request")
			}
			close(cancelled)
			select {
			case err := <-result:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the handler did not see the cancel within 10s")
			}
			<-returned
			if handlerCtx.Err() != context.Canceled {
				t.Error("the context is not cancelled after Deliver returned")
			}
		})
	}
}

// TestDeliverContextEndsWithRequest checks that a request's context ends
// when its handler returns, whether or not the handler looked at it.
func TestDeliverContextEndsWithRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		look bool // the handler asks for Done
	}{{"untouched", false}, {"Done asked", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var handlerCtx context.Context
			var done <-chan struct{}
			c, _ := newPushTest(t, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				handlerCtx = ctx
				if tc.look {
					done = ctx.Done()
				}
				return "ok", nil
			}), ConnOptions{})
			c.Deliver(context.Background(), &Request{ID: Int64ID(1), Method: "m"})
			if err := handlerCtx.Err(); err != context.Canceled {
				t.Fatalf("Err after the handler returned = %v, want context.Canceled", err)
			}
			if done == nil {
				done = handlerCtx.Done()
			}
			select {
			case <-done:
			default:
				t.Fatal("Done not closed after the handler returned")
			}
		})
	}
}

// TestHandlerContextValueAllocs checks that asking a handler's context for
// a value (a middleware's span, session or logger) makes no cancelable
// context: only package context's own key, an *int, needs one.
func TestHandlerContextValueAllocs(t *testing.T) {
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "v")
	h := &handlerContext{requestContext: requestContext{Context: parent, id: Int64ID(1)}}
	allocs := testing.AllocsPerRun(100, func() {
		if h.Value(key{}) != "v" {
			t.Fatal("value lost")
		}
		if h.Value(struct{ x int }{}) != nil {
			t.Fatal("unknown key answered")
		}
	})
	if allocs != 0 {
		t.Errorf("Value allocates %v times; want 0", allocs)
	}
	if h.made.Load() {
		t.Error("Value made the cancelable context")
	}
	h.cancel()
	if context.Cause(h) != context.Canceled {
		t.Errorf("Cause = %v after cancel; want context.Canceled", context.Cause(h))
	}
}
