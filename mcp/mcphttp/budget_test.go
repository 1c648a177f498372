package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// stuckWriter is the ResponseWriter of a client that stops reading: it
// takes the first allow bytes (the socket buffers) and then blocks every
// Write until release is closed. Writes that go through are recorded.
type stuckWriter struct {
	hdr     http.Header
	allow   int
	release chan struct{}
	mu      sync.Mutex
	got     []byte
	stuck   bool
	status  int
}

func newStuckWriter(allow int, release chan struct{}) *stuckWriter {
	return &stuckWriter{hdr: http.Header{}, allow: allow, release: release}
}

func (w *stuckWriter) Header() http.Header { return w.hdr }
func (w *stuckWriter) WriteHeader(status int) {
	w.mu.Lock()
	if w.status == 0 {
		w.status = status
	}
	w.mu.Unlock()
}
func (w *stuckWriter) Flush() {}

func (w *stuckWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.mu.Lock()
	if len(w.got)+len(b) <= w.allow {
		w.got = append(w.got, b...)
		w.mu.Unlock()
		return len(b), nil
	}
	w.stuck = true
	w.mu.Unlock()
	<-w.release
	return 0, errors.New("connection closed")
}

func (w *stuckWriter) state() (stuck bool, got string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stuck, string(w.got)
}

// bigAnswerServer is a server whose tool "big" answers with a text of n bytes.
func bigAnswerServer(t testing.TB, n int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, nil)
	text := strings.Repeat("b", n)
	if err := s.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text + ""}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// heapNow returns the live heap after collecting garbage (twice, so that
// pooled buffers are let go too).
func heapNow() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestStreamableBufferBudgetUnreadAnswers reproduces in process the attack
// of the #16 leftover: many sessions each leave a large tool answer
// unread, their POSTs' goroutines blocked writing it, and their events
// kept for resumption. The bytes accounted to the handler's budget never
// pass it; the live heap grows by a small multiple of the budget, not by
// the sum of the answers (without the budget, MaxBufferedBytes: -1, it
// grows by about 64 × 768 KiB, 48 MiB, which the store keeps); the clients whose
// answers did not fit get an error answer; and once the clients go away
// and the sessions end, the budget is whole again.
func TestStreamableBufferBudgetUnreadAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("holds about 40 MiB")
	}
	const (
		version  = mcp.ProtocolVersion20251125
		sessions = 64
		answer   = 768 << 10 // kept by the default store (1 MiB per session)
		budget   = 8 << 20
	)
	h, ts := serve(t, bigAnswerServer(t, answer), &Options{MaxBufferedBytes: budget})
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = rawInit(t, ts.URL, version)
	}
	before := heapNow()
	release := make(chan struct{})
	writers := make([]*stuckWriter, sessions)
	var wg sync.WaitGroup
	for i, sid := range ids {
		w := newStuckWriter(4<<10, release)
		writers[i] = w
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{}}}`))
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Mcp-Session-Id", sid)
		r.Header.Set("Mcp-Protocol-Version", version)
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.ServeHTTP(w, r)
		}()
	}
	// Every POST either is stuck writing its answer or was answered in
	// full (with an error: the answer did not fit).
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	refused := 0
	eventually(t, "every POST is stuck or answered", func() bool {
		refused = 0
		for _, w := range writers {
			stuck, got := w.state()
			switch {
			case stuck:
			case strings.Contains(got, "buffer budget is exhausted"):
				refused++
			default:
				return false
			}
		}
		return true
	})
	if used := h.Budget().Used(); used > budget {
		t.Fatalf("%d bytes accounted, budget %d", used, budget)
	}
	grown := int64(heapNow()) - int64(before)
	t.Logf("%d sessions, answers of %d KiB: %d refused, %d bytes accounted, heap grown by %.1f MiB (budget %d MiB)",
		sessions, answer>>10, refused, h.Budget().Used(), float64(grown)/(1<<20), budget>>20)
	if grown > 5*budget {
		t.Fatalf("the heap grew by %d bytes with a buffer budget of %d", grown, budget)
	}
	if refused == 0 {
		t.Fatal("no answer was refused")
	}
	close(release)
	<-finished
	h.Close()
	eventually(t, "the budget is whole again", func() bool { return h.Budget().Used() == 0 })
}

// TestStreamableBufferBudgetPlaces checks, for each place where the
// handlers buffer bytes for a client, what happens when the budget has no
// room: a body gets 503, a response becomes an error response, a
// notification fails for its sender, a batch's entry is answered with an
// error, and the 2024-11-05 transport does the same; in every case the
// budget is whole again once the sessions end.
func TestStreamableBufferBudgetPlaces(t *testing.T) {
	big := strings.Repeat("a", 6<<10)
	notifyErr := make(chan error, 1)
	server := func(t *testing.T) *mcp.Server {
		s := toolServer(t, nil)
		if err := s.AddTool(&mcp.Tool{Name: "shout", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			data, _ := json.Marshal(big)
			err := ss.Notify(ctx, mcp.NotificationMessage, &mcp.LoggingMessageNotificationParams{Level: mcp.LoggingLevelInfo, Data: data})
			notifyErr <- err
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "shouted"}}}, nil
		}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	call := func(id int, tool, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
	}
	tests := []struct {
		name    string
		version string
		opts    Options
		body    string
		status  int
		check   func(t *testing.T, r rawResponse)
	}{
		{
			name: "POST body", version: mcp.ProtocolVersion20251125, opts: Options{MaxBufferedBytes: 4 << 10},
			body: call(2, "echo", `{"text":"`+big+`"}`), status: http.StatusServiceUnavailable,
			check: func(t *testing.T, r rawResponse) {
				if r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "buffer budget") {
					t.Fatalf("503 without Retry-After or reason: %v %s", r.header, r.body)
				}
			},
		},
		{
			name: "SSE answer", version: mcp.ProtocolVersion20251125, opts: Options{MaxBufferedBytes: 8 << 10},
			body: call(2, "echo", `{"text":"`+big[:4<<10]+`"}`), status: http.StatusOK,
			check: wantBudgetError(2),
		},
		{
			name: "JSON answer", version: mcp.ProtocolVersion20251125, opts: Options{MaxBufferedBytes: 8 << 10, JSONResponse: true},
			body: call(2, "echo", `{"text":"`+big[:4<<10]+`"}`), status: http.StatusOK,
			check: wantBudgetError(2),
		},
		{
			name: "notification", version: mcp.ProtocolVersion20251125, opts: Options{MaxBufferedBytes: 4 << 10},
			body: call(2, "shout", `{}`), status: http.StatusOK,
			check: func(t *testing.T, r rawResponse) {
				if err := <-notifyErr; !errors.Is(err, eventstore.ErrBudgetExhausted) {
					t.Fatalf("Notify: %v, want ErrBudgetExhausted", err)
				}
				if !strings.Contains(r.body, "shouted") {
					t.Fatalf("the tool's answer is missing: %s", r.body)
				}
			},
		},
		{
			name: "batch answer", version: mcp.ProtocolVersion20250326, opts: Options{MaxBufferedBytes: 8 << 10, JSONResponse: true},
			body: `[` + call(2, "echo", `{"text":"`+big[:4<<10]+`"}`) + `,{"jsonrpc":"2.0","id":3,"method":"ping"}]`, status: http.StatusOK,
			check: func(t *testing.T, r rawResponse) {
				rs := batchResponses(t, r)
				if len(rs) != 2 {
					t.Fatalf("%d responses: %.300s", len(rs), r.body)
				}
				for _, resp := range rs {
					id := string(resp.ID.AppendJSON(nil))
					if id == "2" && (resp.Error == nil || !strings.Contains(resp.Error.Message, "buffer budget")) {
						t.Fatalf("response 2: %.300s", r.body)
					}
					if id == "3" && resp.Error != nil {
						t.Fatalf("response 3: %.300s", r.body)
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, ts := serve(t, server(t), &tt.opts)
			sid := rawInit(t, ts.URL, tt.version)
			r := rawDo(t, http.MethodPost, ts.URL, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": tt.version}, tt.body)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %.300s", r.status, tt.status, r.body)
			}
			tt.check(t, r)
			h.Close()
			eventually(t, "the budget is whole again", func() bool { return h.Budget().Used() == 0 })
		})
	}
}

// wantBudgetError checks that the answer to request id is the error that
// replaces an answer the budget had no room for.
func wantBudgetError(id int) func(t *testing.T, r rawResponse) {
	return func(t *testing.T, r rawResponse) {
		t.Helper()
		for _, resp := range batchResponses(t, r) {
			if string(resp.ID.AppendJSON(nil)) == fmt.Sprint(id) {
				if resp.Error == nil || resp.Error.Code != jsonrpc.CodeInternalError || !strings.Contains(resp.Error.Message, "buffer budget is exhausted") {
					t.Fatalf("answer %d is not the budget's error: %.300s", id, r.body)
				}
				return
			}
		}
		t.Fatalf("no answer to %d: %.300s", id, r.body)
	}
}

// TestStreamableBufferBudgetEvictsForResumption checks the event store's
// share of the budget through the handler: when another session needs
// room, the session that keeps the most loses its oldest stream's events,
// and a client resuming that stream gets 400 (its missed events are no
// longer kept), while its newer stream still resumes.
func TestStreamableBufferBudgetEvictsForResumption(t *testing.T) {
	const (
		version = mcp.ProtocolVersion20251125
		answer  = 16 << 10
		budget  = 64 << 10
	)
	h, ts := serve(t, bigAnswerServer(t, answer), &Options{MaxBufferedBytes: budget})
	call := func(sid string, id int) string { // returns the stream's id
		t.Helper()
		r := rawDo(t, http.MethodPost, ts.URL, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version},
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"big","arguments":{}}}`, id))
		evs := sseEvents(t, r.body)
		if r.status != http.StatusOK || len(evs) != 2 || !strings.Contains(string(evs[1].data), `"result"`) {
			t.Fatalf("call %d: %d %.200s", id, r.status, r.body)
		}
		stream, _, _ := parseEventID(evs[0].id)
		return stream
	}
	a, b := rawInit(t, ts.URL, version), rawInit(t, ts.URL, version)
	oldest, newest := call(a, 2), call(a, 3) // a keeps 2 answers
	call(b, 2)
	call(b, 3) // no room: a, which keeps the most, loses its oldest
	if used := h.Budget().Used(); used > budget {
		t.Fatalf("%d bytes accounted, budget %d", used, budget)
	}
	resume := func(stream string) rawResponse {
		return rawDo(t, http.MethodGet, ts.URL, map[string]string{"Mcp-Session-Id": a, "Mcp-Protocol-Version": version, "Last-Event-ID": stream + "_0"}, "")
	}
	if r := resume(oldest); r.status != http.StatusBadRequest || !strings.Contains(r.body, "cannot resume") {
		t.Fatalf("resuming the evicted stream: %d %.200s", r.status, r.body)
	}
	if r := resume(newest); r.status != http.StatusOK || !strings.Contains(r.body, `"result"`) {
		t.Fatalf("resuming the kept stream: %d %.200s", r.status, r.body)
	}
}

// TestSSEHandlerBufferBudget checks the 2024-11-05 transport's places:
// a body without room gets 503, an answer without room arrives on the
// stream as the budget's error response, and once the stream ends the
// budget is whole again.
func TestSSEHandlerBufferBudget(t *testing.T) {
	const budget = 8 << 10
	h := NewSSEHandler(func(*http.Request) *mcp.Server { return bigAnswerServer(t, 16<<10) }, &SSEOptions{MaxBufferedBytes: budget})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close) // after openLegacy's cleanup closes the stream
	resp, r, endpoint := openLegacy(t, ts.URL, nil)
	post := ts.URL + endpoint
	if got := rawDo(t, http.MethodPost, post, nil, fmt.Sprintf(rawInitBody, mcp.ProtocolVersion20241105)); got.status != http.StatusAccepted {
		t.Fatalf("initialize: %d %s", got.status, got.body)
	}
	if ev, err := r.next(); err != nil || !strings.Contains(string(ev.data), `"id":1`) {
		t.Fatalf("initialize's answer: %q, %v", ev.data, err)
	}
	rawDo(t, http.MethodPost, post, nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	tooBig := `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("p", budget) + `"}}}`
	if got := rawDo(t, http.MethodPost, post, nil, tooBig); got.status != http.StatusServiceUnavailable || got.header.Get("Retry-After") == "" {
		t.Fatalf("a body over the budget: %d %v %s", got.status, got.header, got.body)
	}
	if got := rawDo(t, http.MethodPost, post, nil, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{}}}`); got.status != http.StatusAccepted {
		t.Fatalf("tools/call: %d %s", got.status, got.body)
	}
	ev, err := r.next()
	if err != nil {
		t.Fatal(err)
	}
	if m := decodeResponse(t, string(ev.data)); m.Error == nil || !strings.Contains(m.Error.Message, "buffer budget is exhausted") {
		t.Fatalf("the answer over the budget: %.300s", ev.data)
	}
	resp.Body.Close()
	eventually(t, "the budget is whole again", func() bool { return h.budget.Used() == 0 })
}
