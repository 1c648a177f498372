package jsonrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestReadLoopQueueFullCallsBack: every handler slot of a connection that
// reads its stream is taken by a handler waiting for the answer to its own
// call back to the peer, and MaxQueued requests wait for a slot. A further
// request must not stop the reading (it is refused with CodeOverloaded, as
// on a push connection), or nothing would read the answers the handlers
// wait for, and the connection would deadlock. Over every transport, with
// calls that may read and calls that may not.
func TestReadLoopQueueFullCallsBack(t *testing.T) {
	for _, tr := range transports() {
		for _, cancellable := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/cancellable=%v", tr.name, cancellable), func(t *testing.T) {
				a, b := tr.pair(t)
				h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
					cctx := context.Background()
					if cancellable {
						var cancel context.CancelFunc
						cctx, cancel = context.WithTimeout(cctx, time.Hour)
						defer cancel()
					}
					var out json.RawMessage
					c := ctx.Value(connKey{}).(*Conn)
					if err := c.Call(cctx, "back", req.Params, &out); err != nil {
						return nil, err
					}
					return out, nil
				})
				var c *Conn
				c = NewConn(a, ConnOptions{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
					return h(context.WithValue(ctx, connKey{}, c), req)
				}), MaxConcurrency: 1, MaxQueued: 1})
				defer c.Close()
				ctx := context.Background()
				// 1 runs and calls back, 2 waits for the slot, 3 finds
				// the queue full.
				for i := 1; i <= 3; i++ {
					if err := b.Write(ctx, &Request{ID: Int64ID(int64(i)), Method: "m", Params: []byte(fmt.Sprintf(`{"r":%d}`, i))}); err != nil {
						t.Fatal(err)
					}
				}
				answered := map[int64]string{}
				done := make(chan struct{})
				go func() {
					defer close(done)
					for len(answered) < 3 {
						m, err := b.Read(ctx)
						if err != nil {
							t.Errorf("peer read: %v", err)
							return
						}
						switch m := m.(type) {
						case *Request: // a handler's call back: answered
							if err := b.Write(ctx, &Response{ID: m.ID, Result: m.Params}); err != nil {
								t.Errorf("peer write: %v", err)
								return
							}
						case *Response:
							if m.Error != nil {
								answered[m.ID.num] = fmt.Sprintf("error %d", m.Error.Code)
							} else {
								answered[m.ID.num] = string(m.Result)
							}
						}
					}
				}()
				waitOrDump(t, done, 20*time.Second, "answers with the queue full")
				want := map[int64]string{1: `{"r":1}`, 2: `{"r":2}`, 3: fmt.Sprintf("error %d", CodeOverloaded)}
				for id, w := range want {
					if answered[id] != w {
						t.Errorf("request %d answered %q, want %q", id, answered[id], w)
					}
				}
			})
		}
	}
}

type connKey struct{}
