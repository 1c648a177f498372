package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// These tests exercise the read token (see Conn.background): callers that
// read their own responses, the background reader, and the hand-offs
// between them, under concurrency, cancellation and shutdown. Run them
// with -race, -count=20 and -cpu=1,2.

// stallLimit bounds how long a stress test may take before it is reported
// as a deadlock, with every goroutine's stack.
const stallLimit = 60 * time.Second

// waitOrDump waits for done, failing the test with a goroutine dump if it
// takes longer than limit.
func waitOrDump(t *testing.T, done <-chan struct{}, limit time.Duration, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(limit):
		var b bytes.Buffer
		_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
		t.Fatalf("%s: stalled for %v (deadlock?); goroutines:\n%s", what, limit, b.String())
	}
}

// pipeCloser closes both ends a stream uses.
type pipeCloser struct{ r, w *os.File }

func (p pipeCloser) Close() error {
	return errors.Join(p.r.Close(), p.w.Close())
}

// transports returns, by name, functions that make a connected pair of
// streams: an in-memory pipe, and line streams over two OS pipes, as a
// stdio child process has.
func transports() []struct {
	name string
	pair func(t *testing.T) (Stream, Stream)
} {
	return []struct {
		name string
		pair func(t *testing.T) (Stream, Stream)
	}{
		{"memory", func(t *testing.T) (Stream, Stream) { return NewPipe() }},
		{"os.Pipe", func(t *testing.T) (Stream, Stream) {
			ar, bw, err := os.Pipe() // b writes, a reads
			if err != nil {
				t.Fatal(err)
			}
			br, aw, err := os.Pipe() // a writes, b reads
			if err != nil {
				t.Fatal(err)
			}
			a := NewLineStream(ar, aw, pipeCloser{ar, aw}, 0)
			b := NewLineStream(br, bw, pipeCloser{br, bw}, 0)
			t.Cleanup(func() { a.Close(); b.Close() })
			return a, b
		}},
	}
}

// shufflePeer is the far end of a connection under test. It answers every
// request with its params as the result, in random order, and between the
// answers sends requests and numbered notifications of its own. It checks
// that its own requests are answered.
type shufflePeer struct {
	t      *testing.T
	s      Stream
	rng    *rand.Rand
	reqs   chan *Request
	notes  atomic.Int64 // notifications sent
	asked  atomic.Int64 // requests sent
	answrd atomic.Int64 // answers to them received
	stop   chan struct{}
	done   chan struct{}
}

func startShufflePeer(t *testing.T, s Stream, seed uint64) *shufflePeer {
	p := &shufflePeer{t: t, s: s, rng: rand.New(rand.NewPCG(seed, 1)), reqs: make(chan *Request, 1024), stop: make(chan struct{}), done: make(chan struct{})}
	go p.readLoop()
	go p.writeLoop()
	return p
}

func (p *shufflePeer) readLoop() {
	defer close(p.reqs)
	for {
		m, err := p.s.Read(context.Background())
		if err != nil {
			return
		}
		switch m := m.(type) {
		case *Request:
			if m.IsNotification() {
				continue // notifications/cancelled
			}
			p.reqs <- m
		case *Response:
			if m.Error != nil || !bytes.HasPrefix(m.Result, []byte(`{"echo":`)) {
				p.t.Errorf("peer: bad answer to its request: %+v", m)
			}
			p.answrd.Add(1)
		}
	}
}

func (p *shufflePeer) writeLoop() {
	defer close(p.done)
	ctx := context.Background()
	var batch []*Request
	for {
		batch = batch[:0]
		r, ok := <-p.reqs
		if !ok {
			return
		}
		batch = append(batch, r)
	drain:
		for len(batch) < 64 {
			select {
			case r, ok := <-p.reqs:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		p.rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
		for _, r := range batch {
			switch p.rng.IntN(4) {
			case 0:
				n := p.notes.Add(1)
				if p.s.Write(ctx, &Request{Method: "note", Params: json.RawMessage(`{"seq":` + strconv.FormatInt(n, 10) + `}`)}) != nil {
					return
				}
			case 1:
				n := p.asked.Add(1)
				if p.s.Write(ctx, &Request{ID: StringID("peer-" + strconv.FormatInt(n, 10)), Method: "echo", Params: json.RawMessage(`{"n":1}`)}) != nil {
					return
				}
			}
			if p.s.Write(ctx, &Response{ID: r.ID, Result: r.Params}) != nil {
				return
			}
		}
	}
}

// orderChecker is a Handler that answers "echo" requests and checks that
// "note" notifications arrive in order, one at a time.
type orderChecker struct {
	t    *testing.T
	busy atomic.Bool
	last atomic.Int64
	seen chan int64 // if not nil, gets each notification's number
}

func (h *orderChecker) Handle(ctx context.Context, req *Request) (any, error) {
	if req.IsNotification() {
		if !h.busy.CompareAndSwap(false, true) {
			h.t.Error("two notifications handled at once")
		}
		defer h.busy.Store(false)
		var p struct{ Seq int64 }
		if err := json.Unmarshal(req.Params, &p); err != nil {
			h.t.Errorf("notification params: %v", err)
		}
		if prev := h.last.Swap(p.Seq); p.Seq != prev+1 {
			h.t.Errorf("notification %d after %d", p.Seq, prev)
		}
		if h.seen != nil {
			h.seen <- p.Seq
		}
		return nil, nil
	}
	return map[string]json.RawMessage{"echo": req.Params}, nil
}

// TestConnStressConcurrentCalls makes 480 concurrent calls from many
// goroutines, some whose contexts cannot end (they may read) and some whose
// contexts can (they never read), while the peer answers in random order
// and sends its own requests and notifications.
func TestConnStressConcurrentCalls(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			a, b := tr.pair(t)
			h := &orderChecker{t: t}
			c := NewConn(a, ConnOptions{Handler: h, Inline: func(m string) bool { return m == "inline" }})
			peer := startShufflePeer(t, b, uint64(time.Now().UnixNano()))
			const goroutines, calls = 120, 4
			var wg sync.WaitGroup
			finished := make(chan struct{})
			for g := range goroutines {
				wg.Go(func() {
					for i := range calls {
						ctx := context.Background()
						if (g+i)%3 == 0 {
							var cancel context.CancelFunc
							ctx, cancel = context.WithTimeout(ctx, time.Hour)
							defer cancel()
						}
						want := fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)
						var got json.RawMessage
						if err := c.Call(ctx, "echo", json.RawMessage(want), &got); err != nil {
							t.Errorf("call %d/%d: %v", g, i, err)
							return
						}
						if string(got) != want {
							t.Errorf("call %d/%d: got %s, want %s", g, i, got, want)
						}
					}
				})
			}
			go func() { wg.Wait(); close(finished) }()
			waitOrDump(t, finished, stallLimit, "concurrent calls")
			// Our answers to the peer's requests are written by handler
			// goroutines; wait for them to be read.
			deadline := time.Now().Add(stallLimit)
			for peer.answrd.Load() != peer.asked.Load() {
				if time.Now().After(deadline) {
					t.Fatalf("peer asked %d, got %d answers", peer.asked.Load(), peer.answrd.Load())
				}
				time.Sleep(time.Millisecond)
			}
			// Every notification sent before the last answer was handled.
			for h.last.Load() != peer.notes.Load() {
				if time.Now().After(deadline) {
					t.Fatalf("peer sent %d notifications, %d handled", peer.notes.Load(), h.last.Load())
				}
				time.Sleep(time.Millisecond)
			}
			c.Close()
			waitOrDump(t, c.Done(), stallLimit, "close")
			if err := c.Wait(); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			<-peer.done
		})
	}
}

// TestConnUnsolicitedBetweenCalls makes calls one after the other; between
// them, with no call in flight, the peer sends notifications and requests,
// which must be handled all the same.
func TestConnUnsolicitedBetweenCalls(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			a, b := tr.pair(t)
			h := &orderChecker{t: t, seen: make(chan int64, 1)}
			c := NewConn(a, ConnOptions{Handler: h})
			defer c.Close()
			p := rawPeer{t, b}
			ctx := context.Background()
			answered := make(chan struct{})
			next := make(chan struct{}, 1)
			next <- struct{}{}
			go func() {
				defer close(answered)
				for i := range 50 {
					<-next
					if err := c.Call(ctx, "x", map[string]int{"i": i}, nil); err != nil {
						t.Errorf("call %d: %v", i, err)
						return
					}
				}
			}()
			for i := range int64(50) {
				req, ok := p.recv().(*Request)
				if !ok {
					t.Fatalf("want a request")
				}
				p.send(&Response{ID: req.ID, Result: json.RawMessage(`{}`)})
				// The call returns; then, with none in flight, a
				// notification and a request arrive.
				p.send(&Request{Method: "note", Params: json.RawMessage(`{"seq":` + strconv.FormatInt(i+1, 10) + `}`)})
				select {
				case n := <-h.seen:
					if n != i+1 {
						t.Fatalf("notification %d, want %d", n, i+1)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("notification %d not handled", i+1)
				}
				p.send(&Request{ID: Int64ID(1000 + i), Method: "echo", Params: json.RawMessage(`{}`)})
				if r := p.recvResponse(); r.ID != Int64ID(1000+i) || r.Error != nil {
					t.Fatalf("answer to the peer's request: %+v", r)
				}
				next <- struct{}{}
			}
			waitOrDump(t, answered, stallLimit, "sequential calls")
		})
	}
}

// TestConnCancelWhileOtherReads cancels calls while another call holds the
// read token and no message arrives: they must return at once, with
// OnCancel told; the reading call is answered afterwards.
func TestConnCancelWhileOtherReads(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			a, b := tr.pair(t)
			var cancelled sync.Map
			c := NewConn(a, ConnOptions{OnCancel: func(id ID, cause error) { cancelled.Store(id, cause) }})
			defer c.Close()
			p := rawPeer{t, b}
			// A call that may read; it stays unanswered for now.
			reader := make(chan error, 1)
			go func() { reader <- c.Call(context.Background(), "slow", nil, nil) }()
			first := p.recv().(*Request)
			const n = 20
			errs := make(chan error, n)
			ctx, cancel := context.WithCancel(context.Background())
			for range n {
				go func() { errs <- c.Call(ctx, "cancelme", nil, nil) }()
			}
			ids := make([]ID, 0, n)
			for range n {
				ids = append(ids, p.recv().(*Request).ID)
			}
			cancel()
			for range n {
				select {
				case err := <-errs:
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("cancelled call: %v", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("a cancelled call did not return while another call was reading")
				}
			}
			for _, id := range ids {
				if _, ok := cancelled.Load(id); !ok {
					t.Errorf("OnCancel not told of %v", id)
				}
				// Late answers are dropped.
				p.send(&Response{ID: id, Result: json.RawMessage(`{}`)})
			}
			p.send(&Response{ID: first.ID, Result: json.RawMessage(`{}`)})
			select {
			case err := <-reader:
				if err != nil {
					t.Fatalf("reading call: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the reading call was not answered")
			}
		})
	}
}

// TestConnStressCancel mixes calls that may read with calls cancelled at
// random moments, the peer answering in random order, late answers
// included.
func TestConnStressCancel(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			a, b := tr.pair(t)
			c := NewConn(a, ConnOptions{Handler: &orderChecker{t: t}})
			startShufflePeer(t, b, uint64(time.Now().UnixNano()))
			var wg sync.WaitGroup
			finished := make(chan struct{})
			for g := range 100 {
				wg.Go(func() {
					for i := range 4 {
						ctx := context.Background()
						if (g+i)%2 == 0 {
							var cancel context.CancelFunc
							ctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(200))*time.Microsecond)
							defer cancel()
						}
						err := c.Call(ctx, "echo", nil, nil)
						if err != nil && (ctx.Done() == nil || !errors.Is(err, context.DeadlineExceeded)) {
							t.Errorf("call %d/%d: %v", g, i, err)
						}
					}
				})
			}
			go func() { wg.Wait(); close(finished) }()
			waitOrDump(t, finished, stallLimit, "calls with cancellation")
			c.Close()
			waitOrDump(t, c.Done(), stallLimit, "close")
		})
	}
}

// TestConnPeerClosesMidFlight ends the stream while many calls wait, some
// reading: every one returns ErrClosed, and the connection ends.
func TestConnPeerClosesMidFlight(t *testing.T) {
	for _, tr := range transports() {
		for _, byUs := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/closedByUs=%v", tr.name, byUs), func(t *testing.T) {
				a, b := tr.pair(t)
				c := NewConn(a, ConnOptions{Handler: &orderChecker{t: t}})
				const n = 200
				errs := make(chan error, n)
				for i := range n {
					go func() {
						ctx := context.Background()
						if i%2 == 0 {
							var cancel context.CancelFunc
							ctx, cancel = context.WithCancel(ctx)
							defer cancel()
						}
						errs <- c.Call(ctx, "x", nil, nil)
					}()
				}
				// Answer a few, then end.
				for i := range n {
					req, ok := (rawPeer{t, b}).recv().(*Request)
					if !ok {
						t.Fatal("want a request")
					}
					if i < 20 {
						if err := b.Write(context.Background(), &Response{ID: req.ID, Result: json.RawMessage(`{}`)}); err != nil {
							t.Fatal(err)
						}
					}
				}
				if byUs {
					c.Close()
				} else {
					b.Close()
				}
				closed := 0
				for range n {
					select {
					case err := <-errs:
						if errors.Is(err, ErrClosed) {
							closed++
						} else if err != nil {
							t.Fatalf("call: %v", err)
						}
					case <-time.After(stallLimit):
						t.Fatal("a call did not return after the stream ended")
					}
				}
				// Closed by us, answers not read yet are lost too.
				if closed != n-20 && (!byUs || closed < n-20) {
					t.Errorf("%d calls got ErrClosed, want %d", closed, n-20)
				}
				waitOrDump(t, c.Done(), stallLimit, "end of stream")
				if err := c.Wait(); err != nil {
					t.Fatalf("Wait: %v", err)
				}
				if err := c.Call(context.Background(), "y", nil, nil); !errors.Is(err, ErrClosed) {
					t.Fatalf("call after the end: %v", err)
				}
			})
		}
	}
}

// TestConnEOFWithoutCalls checks that the end of the stream is noticed with
// no call ever made, and after calls, when the token is free.
func TestConnEOFWithoutCalls(t *testing.T) {
	for _, tr := range transports() {
		for _, calls := range []int{0, 3} {
			t.Run(fmt.Sprintf("%s/calls=%d", tr.name, calls), func(t *testing.T) {
				a, b := tr.pair(t)
				c := NewConn(a, ConnOptions{})
				p := rawPeer{t, b}
				go func() {
					for range calls {
						req := p.recv().(*Request)
						p.send(&Response{ID: req.ID, Result: json.RawMessage(`{}`)})
					}
				}()
				for range calls {
					if err := c.Call(context.Background(), "x", nil, nil); err != nil {
						t.Fatal(err)
					}
				}
				b.Close()
				waitOrDump(t, c.Done(), 10*time.Second, "end of stream")
				if err := c.Wait(); err != nil {
					t.Fatalf("Wait: %v", err)
				}
			})
		}
	}
}

// TestConnReadErrorReported checks that a stream error other than its end
// is what Wait returns, whoever was reading.
func TestConnReadErrorReported(t *testing.T) {
	boom := errors.New("boom")
	for _, calling := range []bool{false, true} {
		t.Run(fmt.Sprintf("calling=%v", calling), func(t *testing.T) {
			pr, pw := io.Pipe()
			s := NewLineStream(pr, io.Discard, nil, 0)
			c := NewConn(s, ConnOptions{})
			errc := make(chan error, 1)
			if calling {
				go func() { errc <- c.Call(context.Background(), "x", nil, nil) }()
				time.Sleep(5 * time.Millisecond)
			}
			pw.CloseWithError(boom)
			waitOrDump(t, c.Done(), 10*time.Second, "stream error")
			if err := c.Wait(); !errors.Is(err, boom) {
				t.Fatalf("Wait: %v, want %v", err, boom)
			}
			if calling {
				if err := <-errc; !errors.Is(err, ErrClosed) {
					t.Fatalf("call: %v", err)
				}
			}
		})
	}
}

// TestConnBatchOfResponses answers two calls, one of them reading, in one
// batch (a 2025-03-26 session).
func TestConnBatchOfResponses(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			a, b := tr.pair(t)
			c := NewConn(a, ConnOptions{})
			defer c.Close()
			c.SetBatchEnabled(true)
			p := rawPeer{t, b}
			// A first call leaves the token free: the next one reads.
			go func() {
				r := p.recv().(*Request)
				p.send(&Response{ID: r.ID, Result: json.RawMessage(`{}`)})
			}()
			if err := c.Call(context.Background(), "first", nil, nil); err != nil {
				t.Fatal(err)
			}
			errs := make(chan error, 2)
			go func() { errs <- c.Call(context.Background(), "x", nil, nil) }()
			go func() { errs <- c.Call(context.Background(), "y", nil, nil) }()
			r1, r2 := p.recv().(*Request), p.recv().(*Request)
			p.send(Batch{&Response{ID: r1.ID, Result: json.RawMessage(`{}`)}, &Response{ID: r2.ID, Result: json.RawMessage(`{}`)}})
			for range 2 {
				select {
				case err := <-errs:
					if err != nil {
						t.Fatal(err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("a call answered in a batch did not return")
				}
			}
		})
	}
}

// answerGatedStream is a stream whose Write of a request returns only once
// Read has returned the answer to it, as Streamable HTTP's client does.
type answerGatedStream struct {
	Stream
	mu    sync.Mutex
	gates map[ID]chan struct{}
}

func (s *answerGatedStream) gate(id ID) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.gates[id]
	if !ok {
		g = make(chan struct{})
		s.gates[id] = g
	}
	return g
}

func (s *answerGatedStream) Write(ctx context.Context, m Message) error {
	if err := s.Stream.Write(ctx, m); err != nil {
		return err
	}
	if r, ok := m.(*Request); ok && !r.IsNotification() {
		<-s.gate(r.ID)
	}
	return nil
}

func (s *answerGatedStream) Read(ctx context.Context) (Message, error) {
	m, err := s.Stream.Read(ctx)
	if r, ok := m.(*Response); ok {
		close(s.gate(r.ID))
	}
	return m, err
}

// TestConnWriteWaitsForRead makes calls over a stream whose Write waits for
// the answer to be read: someone must read while a call is writing.
func TestConnWriteWaitsForRead(t *testing.T) {
	a, b := NewPipe()
	c := NewConn(&answerGatedStream{Stream: a, gates: map[ID]chan struct{}{}}, ConnOptions{})
	defer c.Close()
	p := rawPeer{t, b}
	go func() {
		for {
			m, err := b.Read(context.Background())
			if err != nil {
				return
			}
			if r, ok := m.(*Request); ok {
				p.send(&Response{ID: r.ID, Result: json.RawMessage(`{}`)})
			}
		}
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20 {
			if err := c.Call(context.Background(), "x", nil, nil); err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
		}
	}()
	waitOrDump(t, done, 10*time.Second, "calls over a stream whose Write waits for Read")
}

// TestConnStressBothWays joins two Conns and makes 400 concurrent calls
// each way at once, with contexts that cannot end (every caller may read),
// large enough params to fill the pipes, and handlers that send
// notifications back before they answer.
func TestConnStressBothWays(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			a, b := tr.pair(t)
			var left, right *Conn
			var notes [2]atomic.Int64
			handler := func(self **Conn, n *atomic.Int64) Handler {
				return HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
					if req.IsNotification() {
						n.Add(1)
						return nil, nil
					}
					if err := (*self).Notify(ctx, "note", nil); err != nil {
						return nil, err
					}
					return req.Params, nil
				})
			}
			left = NewConn(a, ConnOptions{Handler: handler(&left, &notes[0]), MaxConcurrency: 8})
			right = NewConn(b, ConnOptions{Handler: handler(&right, &notes[1]), MaxConcurrency: 8})
			payload := json.RawMessage(`{"pad":"` + string(bytes.Repeat([]byte("x"), 2000)) + `"}`)
			var wg sync.WaitGroup
			finished := make(chan struct{})
			for i := range 400 {
				for _, c := range []*Conn{left, right} {
					wg.Go(func() {
						var got json.RawMessage
						if err := c.Call(context.Background(), "echo", payload, &got); err != nil {
							t.Errorf("call %d: %v", i, err)
						} else if !bytes.Equal(got, payload) {
							t.Errorf("call %d: wrong result", i)
						}
					})
				}
			}
			go func() { wg.Wait(); close(finished) }()
			waitOrDump(t, finished, stallLimit, "calls both ways")
			deadline := time.Now().Add(stallLimit)
			for notes[0].Load() != 400 || notes[1].Load() != 400 {
				if time.Now().After(deadline) {
					t.Fatalf("notifications handled: %d and %d, want 400 each", notes[0].Load(), notes[1].Load())
				}
				time.Sleep(time.Millisecond)
			}
			left.Close()
			right.Close()
			waitOrDump(t, left.Done(), stallLimit, "close left")
			waitOrDump(t, right.Done(), stallLimit, "close right")
		})
	}
}
