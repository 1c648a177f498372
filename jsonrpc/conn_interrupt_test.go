package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// These tests exercise calls whose context can end: over a stream whose
// reads can be interrupted (see interruptibleStream) such a call reads its
// own response, and gives the read up when its context ends; over any
// other stream it waits for another goroutine to read. Run them with
// -race, -count=20 and -cpu=1,2.

// multiCloser closes several things.
type multiCloser []io.Closer

func (m multiCloser) Close() error {
	var errs []error
	for _, c := range m {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// peerEnd is the far end of a connection under test. raw, when not nil,
// is the writer under its stream, for writing lines in pieces.
type peerEnd struct {
	s   Stream
	raw io.Writer
	mu  sync.Mutex // one message at a time on raw
}

// send writes m, in a few pieces with pauses between them when it can,
// so that the reader sees the line in part.
func (p *peerEnd) send(m Message, rng func(n int) int) error {
	if p.raw == nil {
		return p.s.Write(context.Background(), m)
	}
	b, err := AppendMessage(nil, m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	p.mu.Lock()
	defer p.mu.Unlock()
	pieces := 1 + rng(3)
	for i := range pieces {
		end := len(b)
		if i < pieces-1 {
			end = rng(len(b) + 1)
		}
		if _, err := p.raw.Write(b[:end]); err != nil {
			return err
		}
		b = b[end:]
		if len(b) == 0 {
			break
		}
		time.Sleep(time.Duration(rng(300)) * time.Microsecond)
	}
	return nil
}

// writeRaw writes bytes as they are.
func (p *peerEnd) writeRaw(t *testing.T, s string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := io.WriteString(p.raw, s); err != nil {
		t.Fatal(err)
	}
}

// interruptTransports returns, by name, functions that make a stream for
// the connection under test and the peer's end, and whether the stream's
// reads can be interrupted.
func interruptTransports() []struct {
	name          string
	interruptible bool
	pair          func(t *testing.T) (Stream, *peerEnd)
} {
	return []struct {
		name          string
		interruptible bool
		pair          func(t *testing.T) (Stream, *peerEnd)
	}{
		{"os.Pipe", true, func(t *testing.T) (Stream, *peerEnd) {
			ar, bw, err := os.Pipe() // the peer writes, a reads
			if err != nil {
				t.Fatal(err)
			}
			br, aw, err := os.Pipe() // a writes, the peer reads
			if err != nil {
				t.Fatal(err)
			}
			a := NewLineStream(ar, aw, pipeCloser{ar, aw}, 0)
			b := NewLineStream(br, bw, pipeCloser{br, bw}, 0)
			t.Cleanup(func() { a.Close(); b.Close() })
			return a, &peerEnd{s: b, raw: bw}
		}},
		{"net.Pipe", true, func(t *testing.T) (Stream, *peerEnd) {
			x, y := net.Pipe()
			a := NewLineStream(x, x, x, 0)
			b := NewLineStream(y, y, y, 0)
			t.Cleanup(func() { a.Close(); b.Close() })
			return a, &peerEnd{s: b, raw: y}
		}},
		{"io.Pipe", false, func(t *testing.T) (Stream, *peerEnd) {
			ar, bw := io.Pipe()
			br, aw := io.Pipe()
			a := NewLineStream(ar, aw, multiCloser{ar, aw}, 0)
			b := NewLineStream(br, bw, multiCloser{br, bw}, 0)
			t.Cleanup(func() { a.Close(); b.Close() })
			return a, &peerEnd{s: b, raw: bw}
		}},
		{"memory", false, func(t *testing.T) (Stream, *peerEnd) {
			a, b := NewPipe()
			return a, &peerEnd{s: b}
		}},
	}
}

// goroutinesSettle waits for the number of goroutines to come down to at
// most n, and fails the test with a dump if it does not.
func goroutinesSettle(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			var b bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
			t.Fatalf("%d goroutines, want at most %d: leaked?\n%s", runtime.NumGoroutine(), n, b.String())
		}
		time.Sleep(time.Millisecond)
	}
}

// waitUntil polls cond until it holds, and fails the test if it does not
// within 10 seconds.
func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not so after 10s: %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// readingIn reports whether a goroutine is blocked in an interruptible
// read called by a call (not by the background reader).
func readingIn(fn string) bool {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
	for g := range strings.SplitSeq(b.String(), "\n\n") {
		if strings.Contains(g, "readInterruptible") && strings.Contains(g, fn) {
			return true
		}
	}
	return false
}

// TestConnCancelWhileReading cancels a call while it reads the stream
// itself and the peer has sent half a line: the call must return at once,
// and the line, completed later, must be delivered whole, once.
func TestConnCancelWhileReading(t *testing.T) {
	for _, tr := range interruptTransports() {
		t.Run(tr.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			a, peer := tr.pair(t)
			var told sync.Map
			h := &orderChecker{t: t, seen: make(chan int64, 1)}
			c := NewConn(a, ConnOptions{Handler: h, OnCancel: func(id ID, cause error) {
				if _, dup := told.LoadOrStore(id, cause); dup {
					t.Errorf("OnCancel told twice of %v", id)
				}
			}})
			if got := c.rd.intr != nil; got != tr.interruptible {
				t.Fatalf("the Conn interrupts reads: %v, want %v", got, tr.interruptible)
			}
			rng := rand.New(rand.NewPCG(1, 2)).IntN
			answer := func(req *Request) {
				if err := peer.send(&Response{ID: req.ID, Result: json.RawMessage(`{}`)}, rng); err != nil {
					t.Error(err)
				}
			}
			seq := int64(0)
			note := func(n int64) string {
				return `{"jsonrpc":"2.0","method":"note","params":{"seq":` + strconv.FormatInt(n, 10) + "}}\n"
			}
			for i := range 10 {
				ctx, cancel := context.WithCancel(context.Background())
				errc := make(chan error, 1)
				go func() { errc <- c.Call(ctx, "slow", nil, nil) }()
				req := (rawPeer{t, peer.s}).recv().(*Request)
				// A whole notification: whoever reads it hands the token
				// to the call, once it waits for it.
				if tr.interruptible {
					waitUntil(t, func() bool {
						c.mu.Lock()
						cl := c.pending[req.ID]
						waiting := cl != nil && cl.waiting
						c.mu.Unlock()
						return waiting || readingIn("roundTrip")
					}, "the call waits for the read token")
				} else {
					time.Sleep(time.Millisecond)
				}
				seq++
				if err := peer.send(&Request{Method: "note", Params: json.RawMessage(`{"seq":` + strconv.FormatInt(seq, 10) + `}`)}, rng); err != nil {
					t.Fatal(err)
				}
				if n := <-h.seen; n != seq {
					t.Fatalf("notification %d, want %d", n, seq)
				}
				seq++
				half := note(seq)[:20]
				if peer.raw != nil {
					peer.writeRaw(t, half)
				}
				if tr.interruptible {
					waitUntil(t, func() bool { return readingIn("roundTrip") }, "the cancellable call reads the stream itself")
				} else {
					time.Sleep(time.Millisecond)
				}
				cancel()
				select {
				case err := <-errc:
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("iteration %d: cancelled call: %v", i, err)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("iteration %d: the cancelled call did not return while the stream was silent", i)
				}
				if _, ok := told.Load(req.ID); !ok {
					t.Errorf("iteration %d: OnCancel not told", i)
				}
				// The rest of the line, and a late answer, dropped.
				if peer.raw != nil {
					peer.writeRaw(t, note(seq)[20:])
				} else if err := peer.send(&Request{Method: "note", Params: json.RawMessage(`{"seq":` + strconv.FormatInt(seq, 10) + `}`)}, rng); err != nil {
					t.Fatal(err)
				}
				answer(req)
				select {
				case n := <-h.seen:
					if n != seq {
						t.Fatalf("notification %d, want %d", n, seq)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("iteration %d: the line completed after the interruption was not delivered", i)
				}
				// The connection still works, for both kinds of call.
				for _, ctx := range []context.Context{context.Background(), t.Context()} {
					errc := make(chan error, 1)
					go func() { errc <- c.Call(ctx, "x", nil, nil) }()
					answer((rawPeer{t, peer.s}).recv().(*Request))
					if err := <-errc; err != nil {
						t.Fatalf("iteration %d: call after the cancellation: %v", i, err)
					}
				}
			}
			c.Close()
			waitOrDump(t, c.Done(), stallLimit, "close")
			if err := c.Wait(); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			peer.s.Close()
			goroutinesSettle(t, base)
		})
	}
}

// TestConnStressCancellableCalls makes many concurrent calls, a third with
// contexts that cannot end, a third with contexts that can but do not,
// and a third with timeouts short enough to end before their answer
// (often while they read), while the peer answers after random delays, in
// random order, writing each line in pieces with pauses, and sends
// notifications and requests of its own. Every call not cancelled must
// get its own answer; every cancelled one must return soon after its
// deadline, with OnCancel told once (when it was still pending).
func TestConnStressCancellableCalls(t *testing.T) {
	for _, tr := range interruptTransports() {
		t.Run(tr.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			a, peer := tr.pair(t)
			h := &orderChecker{t: t}
			var told sync.Map
			var toldN atomic.Int64
			c := NewConn(a, ConnOptions{Handler: h, OnCancel: func(id ID, cause error) {
				toldN.Add(1)
				if _, dup := told.LoadOrStore(id, cause); dup {
					t.Errorf("OnCancel told twice of %v", id)
				}
				if !errors.Is(cause, context.DeadlineExceeded) {
					t.Errorf("OnCancel cause %v", cause)
				}
			}})

			// The peer.
			var (
				rngMu              sync.Mutex
				rng                = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
				notes, asked, answ atomic.Int64
				sendMu             sync.Mutex
				closing            bool // guarded by sendMu: no more sending.Go
				sending            sync.WaitGroup
			)
			intn := func(n int) int {
				rngMu.Lock()
				defer rngMu.Unlock()
				return rng.IntN(n)
			}
			var noteMu sync.Mutex // notifications are numbered in the order sent
			peerDone := make(chan struct{})
			go func() {
				defer close(peerDone)
				for {
					m, err := peer.s.Read(context.Background())
					if err != nil {
						return
					}
					switch m := m.(type) {
					case *Request:
						if m.IsNotification() {
							continue
						}
						sendMu.Lock()
						if closing {
							// Late: the call was cancelled before its
							// request was read.
							sendMu.Unlock()
							continue
						}
						sending.Go(func() {
							time.Sleep(time.Duration(intn(2000)) * time.Microsecond)
							switch intn(6) {
							case 0:
								noteMu.Lock()
								n := notes.Add(1)
								err := peer.send(&Request{Method: "note", Params: json.RawMessage(`{"seq":` + strconv.FormatInt(n, 10) + `}`)}, intn)
								noteMu.Unlock()
								if err != nil {
									return
								}
							case 1:
								n := asked.Add(1)
								if peer.send(&Request{ID: StringID("peer-" + strconv.FormatInt(n, 10)), Method: "echo", Params: json.RawMessage(`{"n":1}`)}, intn) != nil {
									return
								}
							}
							_ = peer.send(&Response{ID: m.ID, Result: m.Params}, intn)
						})
						sendMu.Unlock()
					case *Response:
						if m.Error != nil || !bytes.HasPrefix(m.Result, []byte(`{"echo":`)) {
							t.Errorf("peer: bad answer to its request: %+v", m)
						}
						answ.Add(1)
					}
				}
			}()

			const goroutines, calls = 40, 15
			var (
				wg           sync.WaitGroup
				cancelled    atomic.Int64
				maxLate      atomic.Int64
				cancelledIDs sync.Map
			)
			finished := make(chan struct{})
			for g := range goroutines {
				wg.Go(func() {
					for i := range calls {
						kind := (g + i) % 3
						ctx := context.Background()
						var cancel context.CancelFunc = func() {}
						switch kind {
						case 1:
							ctx, cancel = context.WithTimeout(ctx, time.Hour)
						case 2:
							ctx, cancel = context.WithTimeout(ctx, time.Duration(intn(3000))*time.Microsecond)
						}
						want := fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)
						var got json.RawMessage
						id := c.NewID()
						err := c.CallID(ctx, id, "echo", json.RawMessage(want), &got)
						returned := time.Now()
						cancel()
						switch {
						case err == nil:
							if string(got) != want {
								t.Errorf("call %d/%d: got %s, want %s", g, i, got, want)
							}
						case kind == 2 && errors.Is(err, context.DeadlineExceeded):
							cancelled.Add(1)
							cancelledIDs.Store(id, true)
							d, _ := ctx.Deadline()
							late := int64(returned.Sub(d))
							for {
								m := maxLate.Load()
								if late <= m || maxLate.CompareAndSwap(m, late) {
									break
								}
							}
						default:
							t.Errorf("call %d/%d (kind %d): %v", g, i, kind, err)
						}
					}
				})
			}
			go func() { wg.Wait(); close(finished) }()
			waitOrDump(t, finished, stallLimit, "calls")
			// Generous: a cancelled call returns within a millisecond or
			// so, but the machine may be busy.
			if late := time.Duration(maxLate.Load()); late > 2*time.Second {
				t.Errorf("a cancelled call returned %v after its deadline", late)
			}
			t.Logf("%d calls cancelled, the latest returned %v after its deadline", cancelled.Load(), time.Duration(maxLate.Load()))
			told.Range(func(k, _ any) bool {
				if _, ok := cancelledIDs.Load(k); !ok {
					t.Errorf("OnCancel told of %v, which was not cancelled", k)
				}
				return true
			})
			// A call that waits for another goroutine to read may return
			// its context's error when its answer was read at the same
			// moment: it is not pending, and OnCancel is not told.
			if n, m := toldN.Load(), cancelled.Load(); n > m || tr.interruptible && n != m {
				t.Errorf("OnCancel told %d times for %d cancelled calls", n, m)
			}
			sendMu.Lock()
			closing = true
			sendMu.Unlock()
			deadline := time.Now().Add(stallLimit)
			sendingDone := make(chan struct{})
			go func() { sending.Wait(); close(sendingDone) }()
			waitOrDump(t, sendingDone, stallLimit, "the peer's answers")
			for answ.Load() != asked.Load() || h.last.Load() != notes.Load() {
				if time.Now().After(deadline) {
					t.Fatalf("peer asked %d, got %d answers; sent %d notifications, %d handled", asked.Load(), answ.Load(), notes.Load(), h.last.Load())
				}
				time.Sleep(time.Millisecond)
			}
			c.Close()
			waitOrDump(t, c.Done(), stallLimit, "close")
			if err := c.Wait(); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			peer.s.Close()
			waitOrDump(t, peerDone, stallLimit, "the peer's end")
			goroutinesSettle(t, base)
		})
	}
}

// TestConnCloseStopsCancellableRead closes a connection while a call whose
// context can end reads the stream itself, over a stream whose Close does
// not close its reader (as IOTransport's without a Closer): the call must
// return ErrClosed, and the connection end, without waiting for input.
func TestConnCloseStopsCancellableRead(t *testing.T) {
	for _, p := range deadlinePipes() {
		t.Run(p.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			r, w := p.pipe(t)
			c := NewConn(NewLineStream(r, io.Discard, nil, 0), ConnOptions{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			go func() { errc <- c.Call(ctx, "x", nil, nil) }()
			// The background reader hands the token to the call once it
			// has read a message.
			waitUntil(t, func() bool {
				c.mu.Lock()
				defer c.mu.Unlock()
				return c.rd.token.head != nil
			}, "the call waits for the read token")
			go io.WriteString(w, `{"jsonrpc":"2.0","method":"note"}`+"\n")
			waitUntil(t, func() bool { return readingIn("roundTrip") }, "the cancellable call reads the stream itself")
			c.Close()
			select {
			case err := <-errc:
				if !errors.Is(err, ErrClosed) {
					t.Fatalf("call: %v, want ErrClosed", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the call did not return when the connection was closed")
			}
			waitOrDump(t, c.Done(), 10*time.Second, "close")
			if err := c.Wait(); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			goroutinesSettle(t, base)
		})
	}
}
