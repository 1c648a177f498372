package jsonrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// These tests exercise requests served on the goroutine that read them
// (see Conn.serveHere): the reading role passes on while a handler runs,
// handlers that block do not stall reading, notifications stay in order
// and one at a time, MaxConcurrency holds, cancellation suppresses
// answers, and the peer may close the connection mid-flight. Run them
// with -race, -count=20 and -cpu=1,2.

// serveHandler answers the requests of servePeer:
//   - "quick" with its params;
//   - "block" once a "release" notification names its key, or its
//     context ends;
//   - "call" by calling "echo" back on the connection, with a context that
//     cannot end, or one that ends after a random short time;
//   - "note" notifications must come in order, one at a time;
//   - "cancel" notifications cancel the inbound request they name.
type serveHandler struct {
	t       *testing.T
	c       atomic.Pointer[Conn]
	order   orderChecker
	max     int // MaxConcurrency
	running atomic.Int64

	mu    sync.Mutex
	gates map[int64]chan struct{}
}

func (h *serveHandler) gate(k int64) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	g, ok := h.gates[k]
	if !ok {
		g = make(chan struct{})
		h.gates[k] = g
	}
	return g
}

type keyParams struct {
	K  int64  `json:"k"`
	ID string `json:"id"`
	T  int    `json:"t"` // timeout of a "call" in µs; 0: its context cannot end
}

func (h *serveHandler) Handle(ctx context.Context, req *Request) (any, error) {
	var p keyParams
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &p); err != nil {
			h.t.Errorf("params of %s: %v", req.Method, err)
		}
	}
	switch req.Method {
	case "note":
		return h.order.Handle(ctx, req)
	case "release":
		close(h.gate(p.K))
		return nil, nil
	case "cancel":
		h.c.Load().CancelInbound(StringID(p.ID))
		return nil, nil
	}
	if n := h.running.Add(1); n > int64(h.max) {
		h.t.Errorf("%d handlers at once, MaxConcurrency %d", n, h.max)
	}
	defer h.running.Add(-1)
	switch req.Method {
	case "block":
		select {
		case <-h.gate(p.K):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "call":
		cctx := ctx
		if p.T > 0 {
			var cancel context.CancelFunc
			cctx, cancel = context.WithTimeout(ctx, time.Duration(p.T)*time.Microsecond)
			defer cancel()
		} else {
			cctx = context.WithoutCancel(ctx)
		}
		var got json.RawMessage
		if err := h.c.Load().Call(cctx, "echo", req.Params, &got); err != nil {
			return nil, NewError(1, "call failed") // timed out, or the connection ended
		}
		if string(got) != string(req.Params) {
			h.t.Errorf("echo returned %s, want %s", got, req.Params)
		}
	}
	return req.Params, nil
}

// servePeer drives a Conn under test from the far end of its stream.
type servePeer struct {
	t   *testing.T
	s   Stream
	rng *rand.Rand

	mu        sync.Mutex
	waiting   map[string]string // id of a request sent → its params
	cancelled map[string]bool   // ids the peer cancelled
	answers   chan struct{}     // one per answer read
	echoes    chan *Request     // the Conn's "echo" calls, to answer
	readDone  chan struct{}
}

func (p *servePeer) readLoop() {
	defer close(p.readDone)
	defer close(p.echoes)
	for {
		m, err := p.s.Read(context.Background())
		if err != nil {
			return
		}
		switch m := m.(type) {
		case *Request:
			if m.Method != "echo" || m.IsNotification() {
				p.t.Errorf("peer: unexpected request %s", m.Method)
				continue
			}
			p.echoes <- m
		case *Response:
			p.mu.Lock()
			want, ok := p.waiting[m.ID.String()]
			delete(p.waiting, m.ID.String())
			cancelled := p.cancelled[m.ID.String()]
			p.mu.Unlock()
			switch {
			case !ok:
				p.t.Errorf("peer: answer to an unknown or answered id %s", m.ID)
			case m.Error == nil && string(m.Result) != want:
				p.t.Errorf("peer: answer %s to %s, want %s", m.Result, m.ID, want)
			case m.Error != nil && m.Error.Code != 1 && !cancelled:
				p.t.Errorf("peer: error %v to %s", m.Error, m.ID)
			}
			p.answers <- struct{}{}
		}
	}
}

// run sends n messages at random: requests of every kind, numbered
// notifications, releases and cancellations; it answers the Conn's calls
// in random order (see answerLoop). It keeps at most maxBlocked "block"
// requests unreleased, so that they never fill every handler slot.
// It stops early, closing its stream, after closeAfter messages if that
// is positive.
func (p *servePeer) run(n, maxBlocked, closeAfter int) {
	ctx := context.Background()
	var blocked []int64
	var note int64
	send := func(m Message) bool { return p.s.Write(ctx, m) == nil }
	request := func(i int, method string, params string) bool {
		id := "r" + strconv.Itoa(i)
		p.mu.Lock()
		p.waiting[id] = params
		p.mu.Unlock()
		return send(&Request{ID: StringID(id), Method: method, Params: json.RawMessage(params)})
	}
	for i := range n {
		if closeAfter > 0 && i == closeAfter {
			p.s.Close()
			return
		}
		ok := true
		switch k := p.rng.IntN(10); {
		case k < 3:
			ok = request(i, "quick", fmt.Sprintf(`{"k":%d}`, i))
		case k < 5:
			t := 0
			if p.rng.IntN(2) == 0 {
				t = p.rng.IntN(3000)
			}
			ok = request(i, "call", fmt.Sprintf(`{"k":%d,"t":%d}`, i, t))
		case k < 6 && len(blocked) < maxBlocked:
			blocked = append(blocked, int64(i))
			ok = request(i, "block", fmt.Sprintf(`{"k":%d}`, i))
		case k < 7 && len(blocked) > 0:
			j := p.rng.IntN(len(blocked))
			ok = send(&Request{Method: "release", Params: json.RawMessage(fmt.Sprintf(`{"k":%d}`, blocked[j]))})
			blocked = append(blocked[:j], blocked[j+1:]...)
		case k < 8 && i > 0:
			id := "r" + strconv.Itoa(p.rng.IntN(i))
			p.mu.Lock()
			p.cancelled[id] = true
			p.mu.Unlock()
			ok = send(&Request{Method: "cancel", Params: json.RawMessage(`{"id":"` + id + `"}`)})
		default:
			note++
			ok = send(&Request{Method: "note", Params: json.RawMessage(`{"seq":` + strconv.FormatInt(note, 10) + `}`)})
		}
		if !ok {
			return
		}
	}
	for _, k := range blocked {
		if !send(&Request{Method: "release", Params: json.RawMessage(fmt.Sprintf(`{"k":%d}`, k))}) {
			return
		}
	}
	// Answer the Conn's calls until every request not cancelled is
	// answered (a cancelled one may be answered or not).
	for {
		p.mu.Lock()
		left := 0
		for id := range p.waiting {
			if !p.cancelled[id] {
				left++
			}
		}
		p.mu.Unlock()
		if left == 0 {
			return
		}
		<-p.answers
	}
}

// answerLoop answers the Conn's "echo" calls in random order, in batches
// of what has arrived, on a goroutine of its own.
func (p *servePeer) answerLoop(rng *rand.Rand) {
	var batch []*Request
	for {
		r, ok := <-p.echoes
		if !ok {
			return
		}
		batch = append(batch[:0], r)
	drain:
		for {
			select {
			case r, ok := <-p.echoes:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
		for _, r := range batch {
			if p.s.Write(context.Background(), &Response{ID: r.ID, Result: r.Params}) != nil {
				return
			}
		}
	}
}

// TestConnServeStress sends a server Conn requests that answer at once,
// that block until a later notification releases them, and that call
// back (answered in random order, some with short timeouts), with
// numbered notifications and cancellations between them; in some runs
// the peer closes its end mid-flight. Every request not cancelled must be
// answered, with its own answer; notifications in order, one at a time;
// never more handlers than MaxConcurrency; and the connection must end
// with every handler returned.
func TestConnServeStress(t *testing.T) {
	for _, tr := range transports() {
		for _, closeMid := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/close=%v", tr.name, closeMid), func(t *testing.T) {
				seed := uint64(time.Now().UnixNano())
				rng := rand.New(rand.NewPCG(seed, 2))
				a, b := tr.pair(t)
				const maxConc, maxBlocked, n = 6, 4, 600
				h := &serveHandler{t: t, order: orderChecker{t: t}, max: maxConc, gates: make(map[int64]chan struct{})}
				// MaxQueued above n: no request is refused for a full
				// queue (see TestReadLoopQueueFullCallsBack for that).
				c := NewConn(a, ConnOptions{Handler: h, MaxConcurrency: maxConc, MaxQueued: 2 * n})
				h.c.Store(c)
				p := &servePeer{t: t, s: b, rng: rng, waiting: make(map[string]string), cancelled: make(map[string]bool),
					answers: make(chan struct{}, n), echoes: make(chan *Request, n), readDone: make(chan struct{})}
				go p.readLoop()
				go p.answerLoop(rand.New(rand.NewPCG(seed, 3)))
				closeAfter := 0
				if closeMid {
					closeAfter = 1 + rng.IntN(n-1)
				}
				finished := make(chan struct{})
				go func() { defer close(finished); p.run(n, maxBlocked, closeAfter) }()
				waitOrDump(t, finished, stallLimit, fmt.Sprintf("peer (seed %d)", seed))
				if closeMid {
					waitOrDump(t, c.Done(), stallLimit, "end after the peer closed")
				}
				c.Close()
				waited := make(chan struct{})
				go func() { c.Wait(); close(waited) }()
				waitOrDump(t, waited, stallLimit, "Wait")
				if n := h.running.Load(); n != 0 {
					t.Errorf("%d handlers still running after Wait", n)
				}
				b.Close()
				<-p.readDone
			})
		}
	}
}

// TestConnServeBlockedHandlers has every handler slot but one taken by a
// handler that blocks until a notification sent after it releases it:
// the reading role must pass on from each goroutine that runs one.
func TestConnServeBlockedHandlers(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			a, b := tr.pair(t)
			const maxConc = 8
			h := &serveHandler{t: t, order: orderChecker{t: t}, max: maxConc, gates: make(map[int64]chan struct{})}
			c := NewConn(a, ConnOptions{Handler: h, MaxConcurrency: maxConc})
			h.c.Store(c)
			defer c.Close()
			p := rawPeer{t, b}
			done := make(chan struct{})
			go func() {
				defer close(done)
				for round := range 20 {
					for k := range maxConc - 1 {
						p.send(&Request{ID: Int64ID(int64(round*maxConc + k)), Method: "block", Params: json.RawMessage(fmt.Sprintf(`{"k":%d}`, round*maxConc+k))})
					}
					for k := range maxConc - 1 {
						p.send(&Request{Method: "release", Params: json.RawMessage(fmt.Sprintf(`{"k":%d}`, round*maxConc+k))})
					}
					for range maxConc - 1 {
						if r, ok := p.recv().(*Response); !ok || r.Error != nil {
							t.Errorf("round %d: answer %+v", round, r)
						}
					}
				}
			}()
			waitOrDump(t, done, stallLimit, "blocked handlers")
		})
	}
}
