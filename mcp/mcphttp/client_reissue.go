package mcphttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// Revision 2026-07-28 removed resumable SSE streams: "A broken response
// stream loses the in-flight request; clients MUST re-issue it as a new
// request with a new request ID" (changelog item 9, SEP-2575;
// basic/transports/streamable-http: "Resumable SSE streams via
// Last-Event-ID are not supported"). The revision sets no other
// condition on the request, so every modern request is re-issued except
// subscriptions/listen, whose stream is the subscription itself: its end
// is reported by mcp.Subscription (Done, Err), and the caller listens
// again (basic/patterns, "Subscribe and Notify"), since the server tags
// notifications with the listen request's id. The server treats the
// broken stream as the cancellation of the first attempt
// (basic/patterns/cancellation).
//
// The re-issued request is the same body under a fresh id that the
// transport owns (a string, where the client's jsonrpc.Conn numbers its
// requests with integers, so the two never collide); its response is
// handed to the client under the id the client sent, so the client sees
// one request. The number of re-issues per request is bounded
// (ClientTransport.MaxReissues): a server that cuts every stream does not
// keep the client busy.

// DefaultMaxReissues is the default of ClientTransport.MaxReissues.
const DefaultMaxReissues = 2

// errStreamBroken says, in the error response the caller gets (code
// -32603, as for every request the transport gives up on), that the
// response stream broke more often than ClientTransport.MaxReissues
// allowed, or once for subscriptions/listen.
var errStreamBroken = errors.New("the response stream broke before the response")

// reissueIDPrefix starts the ids of re-issued requests.
const reissueIDPrefix = "mcphttp-reissue-"

// maxReissuesFor resolves ClientTransport.MaxReissues: zero means the
// default, negative none.
func maxReissuesFor(n int) int {
	switch {
	case n == 0:
		return DefaultMaxReissues
	case n < 0:
		return 0
	}
	return n
}

// followModern reads the answer of modern request id, which started with
// body (of media type mt), and re-issues the request (data, as the client
// encoded it) while its response stream breaks, within c.maxReissues.
// ctx is the caller's: once it ends, the closed stream was the
// cancellation, and nothing is re-issued.
func (c *streamableClientConn) followModern(ctx context.Context, body io.ReadCloser, mt string, data []byte, id jsonrpc.ID) {
	wire := id
	for n := 0; ; n++ {
		var broken error
		if mt == "text/event-stream" {
			broken = c.readModernStream(body, wire, id)
		} else {
			broken = c.readModernJSON(body, wire, id)
		}
		if broken == nil || ctx.Err() != nil || c.done() {
			return
		}
		if n >= c.maxReissues || !reissuable(data) {
			c.abandon(id, fmt.Sprintf("%v, after %d re-issues (%v)", errStreamBroken, n, broken))
			return
		}
		c.log.Debug("mcphttp: response stream broke; re-issuing the request", "id", id.String(), "attempt", n+1, "cause", broken)
		if n > 0 && !c.sleep(min(c.retryDelay<<min(n-1, 6), maxReissueDelay)) {
			return
		}
		wire = jsonrpc.StringID(reissueIDPrefix + strconv.FormatInt(c.reissueSeq.Add(1), 10))
		var ok bool
		if body, mt, ok = c.repost(ctx, data, wire, id); !ok {
			return
		}
	}
}

// maxReissueDelay caps the wait before a re-issue after the first.
const maxReissueDelay = 5 * time.Second

// reissuable reports whether the request data may be re-issued: any but
// subscriptions/listen (see above).
func reissuable(data []byte) bool {
	m, err := jsonrpc.Decode(data)
	if err != nil {
		return false
	}
	req, ok := m.(*jsonrpc.Request)
	return ok && req.Method != mcp.MethodSubscriptionsListen
}

// repost POSTs request data again under id wire, for the client's request
// id. It returns the answer's body and media type, or false when the
// answer was already dealt with (an error delivered to the caller, or the
// caller gone).
func (c *streamableClientConn) repost(ctx context.Context, data []byte, wire, id jsonrpc.ID) (io.ReadCloser, string, bool) {
	m, err := jsonrpc.Decode(data)
	req, ok := m.(*jsonrpc.Request)
	if err != nil || !ok {
		c.abandon(id, "re-issuing the request: not a request")
		return nil, "", false
	}
	re := *req
	re.ID = wire
	body, err := jsonrpc.Encode(&re)
	if err != nil {
		c.abandon(id, "re-issuing the request: "+err.Error())
		return nil, "", false
	}
	// The exchange carries the caller's values and ends with the caller
	// or the session, as the first attempt's did once it was answered.
	rctx, cancel := context.WithCancel(&callerValues{Context: c.ctx, values: ctx})
	stop := context.AfterFunc(ctx, cancel)
	hreq, err := c.newRequest(withStandardHeaders(rctx, &re), http.MethodPost, body, "")
	if err != nil {
		stop()
		cancel()
		c.abandon(id, "re-issuing the request: "+err.Error())
		return nil, "", false
	}
	resp, err := c.client.Do(hreq)
	if err != nil {
		stop()
		cancel()
		if ctx.Err() == nil {
			c.abandon(id, "re-issuing the request: "+c.requestError(err).Error())
		}
		return nil, "", false
	}
	if resp.StatusCode/100 != 2 {
		stop()
		cancel()
		if !c.modernErrorAnswerAs(resp, wire, id) {
			c.abandon(id, "re-issuing the request: "+c.statusFailure(resp).Error())
		}
		return nil, "", false
	}
	mt := mediaType(resp.Header.Get("Content-Type"))
	if mt != "text/event-stream" && mt != "application/json" {
		stop()
		cancel()
		drain(resp)
		c.abandon(id, fmt.Sprintf("re-issuing the request: unexpected Content-Type %q", resp.Header.Get("Content-Type")))
		return nil, "", false
	}
	return &cancelBody{ReadCloser: resp.Body, stop: stop, cancel: cancel}, mt, true
}

// cancelBody releases the context of a re-issued exchange once its body
// is closed.
type cancelBody struct {
	io.ReadCloser
	stop   func() bool
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.stop()
	b.cancel()
	return err
}

// readModernStream delivers the messages of a modern response stream
// until the response to wire, which it hands over as the response to
// caller. It returns nil once the response came, or why the stream ended
// without it; a stream that breaks is not resumed (no Last-Event-ID in
// revision 2026-07-28). An event over the size limit is no break: the
// caller is told at once.
func (c *streamableClientConn) readModernStream(body io.ReadCloser, wire, caller jsonrpc.ID) error {
	defer body.Close()
	r := newSSEReader(body, c.maxMsg)
	for {
		ev, err := r.next()
		if errors.Is(err, errSSETooLarge) {
			c.abandon(caller, err.Error())
			return nil
		}
		if errors.Is(err, io.EOF) {
			return errors.New("the stream ended")
		}
		if err != nil {
			return err
		}
		if len(ev.data) == 0 || (ev.name != "" && ev.name != "message") {
			continue
		}
		m, err := jsonrpc.Decode(ev.data)
		if err != nil {
			c.log.Warn("mcphttp: malformed message on an SSE stream", "error", err)
			continue
		}
		if resp, ok := m.(*jsonrpc.Response); ok && resp.ID == wire {
			resp.ID = caller
			c.queueForRead(resp)
			return nil
		}
		c.queueForRead(m)
	}
}

// readModernJSON delivers a modern JSON answer, the response to wire
// handed over as the response to caller. It returns why the body could
// not be read in full (a break); a complete body that is too large or
// malformed fails the request at once.
func (c *streamableClientConn) readModernJSON(body io.ReadCloser, wire, caller jsonrpc.ID) error {
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, int64(c.maxMsg)+1))
	if err != nil {
		return err
	}
	if len(data) > c.maxMsg {
		c.abandon(caller, fmt.Sprintf("reading the answer: the answer exceeds %d bytes", c.maxMsg))
		return nil
	}
	m, err := jsonrpc.Decode(data)
	if err != nil {
		c.abandon(caller, "malformed answer: "+err.Error())
		return nil
	}
	if resp, ok := m.(*jsonrpc.Response); ok && resp.ID == wire {
		resp.ID = caller
	}
	c.queueForRead(m)
	return nil
}
