package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// recordWriter is an http.ResponseWriter and http.Flusher that records
// what is written, and fails every write once fail is set.
type recordWriter struct {
	mu   sync.Mutex
	hdr  http.Header
	code int
	body bytes.Buffer
	fail bool
}

func (w *recordWriter) Header() http.Header { return w.hdr }

func (w *recordWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.code == 0 {
		w.code = code
	}
}

func (w *recordWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if w.fail {
		return 0, errors.New("connection reset")
	}
	return w.body.Write(b)
}

func (w *recordWriter) Flush() {}

// machine is one outStream with its session and an HTTP response that a
// pump writes, for the table tests of the stream state machine.
type machine struct {
	h      *Handler
	s      *httpSession
	st     *outStream
	sw     *streamWriter
	c      *answerWriter
	rec    *recordWriter
	r      *http.Request
	cancel context.CancelFunc
	store  *eventstore.Memory
	pumped chan struct{} // closed when pump returns
}

func notification(text string) jsonrpc.Message {
	return &jsonrpc.Request{Method: mcp.NotificationMessage, Params: json.RawMessage(`{"level":"info","data":"` + text + `"}`)}
}

func response(id int64) *jsonrpc.Response {
	return &jsonrpc.Response{ID: jsonrpc.Int64ID(id), Result: json.RawMessage(`{"n":` + string(jsonrpc.Int64ID(id).AppendJSON(nil)) + `}`)}
}

func errorResponse(id int64) *jsonrpc.Response {
	return &jsonrpc.Response{ID: jsonrpc.Int64ID(id), Error: jsonrpc.NewError(jsonrpc.CodeInvalidParams, "bad initialize")}
}

// newMachine makes a stream of a session with one request pending,
// answered as JSON (sse false) or SSE, attached to a pumped response.
func newMachine(t *testing.T, sse bool, opts Options) *machine {
	t.Helper()
	m := &machine{store: &eventstore.Memory{}, pumped: make(chan struct{})}
	opts.EventStore = m.store
	m.h = NewHandler(func(*http.Request) *mcp.Server { return nil }, &opts)
	m.s = &httpSession{h: m.h, id: "sid"}
	m.st = &outStream{sess: m.s, pending: 1}
	m.st.queue = m.st.inline[:0]
	if sse {
		m.st.sse, m.st.id, m.st.resumable = true, m.s.newStreamID(), true
		m.s.addStream(m.st)
	}
	m.rec = &recordWriter{hdr: http.Header{}}
	m.c = &answerWriter{w: m.rec, prime: true, poll: opts.MaxEventsPerConnection > 0}
	m.sw = newStreamWriter(m.rec)
	m.st.w = m.sw
	ctx, cancel := context.WithCancel(context.Background())
	m.r, m.cancel = httptest.NewRequestWithContext(ctx, "POST", "http://localhost/mcp", nil), cancel
	t.Cleanup(cancel)
	return m
}

// run starts the pump.
func (m *machine) run() {
	go func() {
		defer close(m.pumped)
		m.h.pump(m.r, m.st, m.sw, m.c)
	}()
}

// wait waits for the pump to return.
func (m *machine) wait(t *testing.T) {
	t.Helper()
	select {
	case <-m.pumped:
	case <-time.After(20 * time.Second):
		t.Fatal("the pump did not return")
	}
}

func (m *machine) send(t *testing.T, msg jsonrpc.Message) {
	t.Helper()
	_, isResp := msg.(*jsonrpc.Response)
	if err := m.st.send(msg, isResp); err != nil {
		t.Fatal(err)
	}
}

// queue puts msg on the stream's queue without waking the pump, as if it
// had been sent just before the session ended.
func (m *machine) queue(msg jsonrpc.Message, resp bool) {
	data, err := jsonrpc.Encode(msg)
	if err != nil {
		panic(err)
	}
	m.st.mu.Lock()
	defer m.st.mu.Unlock()
	om := outMsg{data: data, resp: resp}
	if resp {
		m.st.pending--
		m.st.done = m.st.pending <= 0
	}
	if m.st.sse {
		m.st.number(&om)
	}
	m.st.enqueue(om)
}

func (m *machine) retired() bool {
	m.st.mu.Lock()
	defer m.st.mu.Unlock()
	return m.st.retired
}

func (m *machine) attached() bool {
	m.st.mu.Lock()
	defer m.st.mu.Unlock()
	return m.st.w != nil
}

// TestStreamStateMachine drives the stream of one POST through each way a
// pumped answer can go (pump, upgradeToSSE, drainOnClose, finish): what
// is written to the response, whether the stream is finished, and whether
// a failed initialize ends its session whichever way its exchange ends.
func TestStreamStateMachine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sse   bool
		opts  Options
		setup func(m *machine) // before the pump starts
		act   func(t *testing.T, m *machine)

		wantCode        int
		wantType        string   // Content-Type; "" for any
		wantBody        []string // in this order
		wantNot         []string
		wantRetired     bool
		wantAttached    bool
		wantSessionOver bool
		wantStored      int // events kept for the stream; -1 for any
	}{
		{name: "JSON answer", act: func(t *testing.T, m *machine) { m.send(t, response(1)) },
			wantCode: 200, wantType: "application/json", wantBody: []string{`"result":{"n":1}`}, wantRetired: true, wantStored: -1},
		{name: "a notification first upgrades the JSON answer to SSE", act: func(t *testing.T, m *machine) {
			m.send(t, notification("first"))
			m.send(t, response(1))
		}, wantCode: 200, wantType: "text/event-stream", wantBody: []string{"id: 1_0\ndata: \n\n", "id: 1_1\ndata: ", `"first"`, "id: 1_2\ndata: ", `"result"`}, wantRetired: true, wantStored: 2},
		{name: "SSE answer", sse: true, setup: func(m *machine) { m.c.start(m.st.id, 0, true) }, act: func(t *testing.T, m *machine) {
			m.send(t, notification("progress"))
			m.send(t, response(1))
		}, wantCode: 200, wantType: "text/event-stream", wantBody: []string{`"progress"`, `"result"`}, wantRetired: true, wantStored: 2},
		{name: "failed initialize, JSON: the session ends", setup: func(m *machine) { m.s.opening.Store(m.st) },
			act:      func(t *testing.T, m *machine) { m.send(t, errorResponse(1)) },
			wantCode: 200, wantType: "application/json", wantBody: []string{`"error"`}, wantRetired: true, wantSessionOver: true, wantStored: -1},
		{name: "failed initialize, upgraded to SSE: the session ends", setup: func(m *machine) { m.s.opening.Store(m.st) },
			act: func(t *testing.T, m *machine) {
				m.send(t, notification("before"))
				m.send(t, errorResponse(1))
			}, wantCode: 200, wantType: "text/event-stream", wantBody: []string{`"before"`, `"error"`}, wantRetired: true, wantSessionOver: true, wantStored: -1},
		{name: "failed initialize whose client went away: the session ends", setup: func(m *machine) { m.s.opening.Store(m.st) },
			act: func(t *testing.T, m *machine) {
				m.cancel()
				m.wait(t)
				m.send(t, errorResponse(1)) // no response attached: send finishes the stream
			}, wantRetired: true, wantSessionOver: true, wantStored: -1},
		{name: "successful initialize: the session stays", setup: func(m *machine) { m.s.opening.Store(m.st) },
			act:      func(t *testing.T, m *machine) { m.send(t, response(1)) },
			wantCode: 200, wantBody: []string{`"result"`}, wantRetired: true, wantStored: -1},
		{name: "an error answer to another request: the session stays",
			act:      func(t *testing.T, m *machine) { m.send(t, errorResponse(1)) },
			wantCode: 200, wantBody: []string{`"error"`}, wantRetired: true, wantStored: -1},
		{name: "polling cuts the connection after MaxEventsPerConnection", sse: true, opts: Options{MaxEventsPerConnection: 1, RetryInterval: 3 * time.Second},
			setup: func(m *machine) { m.c.start(m.st.id, 0, true) },
			act: func(t *testing.T, m *machine) {
				m.queue(notification("one"), false)
				m.queue(notification("two"), false)
				m.sw.signal()
			}, wantCode: 200, wantBody: []string{`"one"`, "retry: 3000\n\n"}, wantNot: []string{`"two"`}, wantStored: 2},
		{name: "the client goes away", sse: true, act: func(t *testing.T, m *machine) { m.cancel() }, wantStored: -1},
		{name: "a GET takes the stream over", sse: true, act: func(t *testing.T, m *machine) {
			other := newStreamWriter(nil)
			m.st.mu.Lock()
			m.st.w = other
			m.st.mu.Unlock()
			m.sw.signal()
			m.wait(t)
			m.send(t, response(1)) // for the other connection
		}, wantAttached: true, wantNot: []string{`"result"`}, wantStored: 1},
		{name: "the connection fails", sse: true, setup: func(m *machine) { m.rec.fail = true },
			act: func(t *testing.T, m *machine) { m.send(t, notification("lost")) }, wantStored: 1},
		{name: "the session ends before the JSON answer", act: func(t *testing.T, m *machine) { m.s.Close() },
			wantCode: 404, wantBody: []string{"the session ended"}, wantRetired: true, wantSessionOver: true, wantStored: -1},
		{name: "the session ends with the JSON answer queued", setup: func(m *machine) {
			m.queue(response(1), true)
			m.s.Close()
		}, wantCode: 200, wantType: "application/json", wantBody: []string{`"result"`}, wantRetired: true, wantSessionOver: true, wantStored: -1},
		{name: "the session ends with SSE events queued", sse: true, setup: func(m *machine) {
			m.c.start(m.st.id, 0, true)
			m.queue(notification("last"), false)
			m.s.Close()
		}, wantCode: 200, wantBody: []string{`"last"`}, wantNot: []string{"retry:"}, wantRetired: true, wantSessionOver: true, wantStored: -1},
		{name: "Shutdown ends the stream with a retry", sse: true, opts: Options{RetryInterval: 2 * time.Second}, setup: func(m *machine) {
			m.h.closing.Store(true)
			m.c.start(m.st.id, 0, true)
			m.queue(notification("last"), false)
			m.s.Close()
		}, wantCode: 200, wantBody: []string{`"last"`, "retry: 2000\n\n"}, wantRetired: true, wantSessionOver: true, wantStored: -1},
		{name: "the session ends after a GET took the stream over", sse: true, setup: func(m *machine) {
			m.st.w = newStreamWriter(nil)
			m.s.Close()
		}, wantAttached: true, wantNot: []string{"data:"}, wantRetired: true, wantSessionOver: true, wantStored: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMachine(t, tc.sse, tc.opts)
			if tc.setup != nil {
				tc.setup(m)
			}
			m.run()
			if tc.act != nil {
				tc.act(t, m)
			}
			m.wait(t)
			if tc.wantRetired {
				eventually(t, "the stream is finished", m.retired)
			} else if m.retired() {
				t.Error("the stream is finished")
			}
			if got := m.attached(); got != tc.wantAttached {
				t.Errorf("attached to a response: %v, want %v", got, tc.wantAttached)
			}
			if got := m.s.isClosed(); got != tc.wantSessionOver {
				t.Errorf("session ended: %v, want %v", got, tc.wantSessionOver)
			}
			m.rec.mu.Lock()
			code, body, ct := m.rec.code, m.rec.body.String(), m.rec.hdr.Get("Content-Type")
			m.rec.mu.Unlock()
			if tc.wantCode != 0 && code != tc.wantCode {
				t.Errorf("status %d, want %d: %s", code, tc.wantCode, body)
			}
			if tc.wantType != "" && ct != tc.wantType {
				t.Errorf("Content-Type %q, want %q", ct, tc.wantType)
			}
			rest := body
			for _, w := range tc.wantBody {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("body lacks %q (in this order):\n%s", w, body)
					break
				}
				rest = rest[i+len(w):]
			}
			for _, w := range tc.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("body has %q:\n%s", w, body)
				}
			}
			if tc.wantStored >= 0 {
				events, err := m.store.After(context.Background(), "sid", m.st.id, 0)
				if err != nil && tc.wantStored > 0 {
					t.Fatalf("store: %v", err)
				}
				if len(events) != tc.wantStored {
					t.Errorf("%d events stored, want %d", len(events), tc.wantStored)
				}
			}
		})
	}
}

// TestExchangeSize: a POST's stream and its answer writer, allocated
// together (see exchange), fit the runtime's 256-byte size class; a field
// more would cost every request 32 bytes (the next class is 288). Both
// types are this package's.
func TestExchangeSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are checked on 64-bit systems")
	}
	if got := unsafe.Sizeof(struct {
		st outStream
		c  answerWriter
	}{}); got > 256 {
		t.Errorf("a POST's stream and answer writer take %d bytes, over 256", got)
	}
}
