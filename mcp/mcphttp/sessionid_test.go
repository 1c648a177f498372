package mcphttp

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestReplicasForgedSessionIDs: with SessionIDKeys, a request for a
// session the replica does not hold whose id no key verifies (a random
// id, one signed with another key, a real one altered, an absurd one) gets
// 404 on POST, GET, GET with Last-Event-ID and DELETE without a single
// read of the shared directory, while a real session created on another
// replica, also one signed with a key since rotated out of first place, is
// rebuilt and served.
func TestReplicasForgedSessionIDs(t *testing.T) {
	old, cur := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	store := &sharedStore{}
	reps := startReplicasWith(t, 2, store, replicaServer, func(o *Options) { o.SessionIDKeys = [][]byte{cur, old} })
	sid := initShared(t, reps[0].url)
	if !signedSessionID([][]byte{cur}, sid) {
		t.Fatalf("minted id %q is not signed with the first key", sid)
	}
	// A session minted before the rotation.
	oldSid := mintSessionID([][]byte{old})

	real := []byte(sid)
	real[len(real)-1] ^= 1
	forged := map[string]string{
		"random":                rand.Text(),
		"random, signed length": rand.Text() + rand.Text(),
		"other key":             mintSessionID([][]byte{bytes.Repeat([]byte{3}, 32)}),
		"altered":               string(real),
		"nonce only":            sid[:26],
		"long":                  strings.Repeat("A", 4000),
		"lower case":            strings.ToLower(sid),
	}
	before := store.reads.Load()
	for name, id := range forged {
		for _, m := range []struct{ method, last, body string }{
			{http.MethodPost, "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
			{http.MethodGet, "", ""},
			{http.MethodGet, "0:3", ""},
			{http.MethodDelete, "", ""},
		} {
			h := sessionHeaders(id)
			if m.last != "" {
				h["Last-Event-ID"] = m.last
			}
			r := rawDo(t, m.method, reps[1].url, h, m.body)
			if r.status != http.StatusNotFound {
				t.Errorf("%s %s (Last-Event-ID %q): %d %s, want 404", name, m.method, m.last, r.status, r.body)
			}
		}
	}
	if n := store.reads.Load() - before; n != 0 {
		t.Errorf("forged ids cost %d directory reads, want 0", n)
	}
	if got := replicaCall(t, reps[1].url, sid, 3, "who"); got == "" {
		t.Error("the real session was not served by the other replica")
	}
	if store.reads.Load() == before {
		t.Error("the real session was rebuilt without reading the directory")
	}
	if !reps[1].h.sharedID(oldSid) {
		t.Error("an id signed with the second key is refused")
	}
}

// TestSessionIDUnsigned: without keys ids are rand.Text as before, and
// every id may be looked up.
func TestSessionIDUnsigned(t *testing.T) {
	id := mintSessionID(nil)
	if len(id) != 26 {
		t.Fatalf("unsigned id %q", id)
	}
	h := &Handler{}
	if !h.sharedID("anything") {
		t.Error("without keys an id was refused")
	}
}

// FuzzSignedSessionID: no input panics, none but a minted one verifies.
func FuzzSignedSessionID(f *testing.F) {
	keys := [][]byte{bytes.Repeat([]byte{7}, 32)}
	f.Add(mintSessionID(keys))
	f.Add(rand.Text())
	f.Add(strings.Repeat("=", signedIDLen))
	f.Fuzz(func(t *testing.T, id string) {
		if signedSessionID(keys, id) && len(id) != signedIDLen {
			t.Fatalf("%q verified", id)
		}
		if m := mintSessionID(keys); !signedSessionID(keys, m) {
			t.Fatalf("minted %q does not verify", m)
		}
	})
}

// TestReplicasLastEventIDBounded: a Last-Event-ID longer than any event id
// the handler mints gets 400, with a short message, and costs no store
// call, on the replica holding the session and on one rebuilding it; a
// forged but well-formed one (another replica's stream, an absurd sequence
// number) gets a clear 400 after one read.
func TestReplicasLastEventIDBounded(t *testing.T) {
	store := &sharedStore{}
	reps := startReplicas(t, 2, store)
	sid := initShared(t, reps[0].url)
	for _, tc := range []struct {
		name, last string
		reads      bool // the store may be asked
	}{
		{"just over the bound", strings.Repeat("a", maxEventIDLen-1) + "_1", false},
		{"100 KB", strings.Repeat("a", 100<<10) + "_1", false},
		{"another replica's stream", "ZZZ-3_5", true},
		{"absurd sequence", "0_9223372036854775807", true},
	} {
		for i, rep := range reps {
			before := store.afters.Load()
			h := sessionHeaders(sid)
			h["Last-Event-ID"] = tc.last
			r := rawDo(t, http.MethodGet, rep.url, h, "")
			if r.status != http.StatusBadRequest || len(r.body) > 2048 {
				t.Errorf("%s on replica %d: %d, %d bytes: %.200s", tc.name, i, r.status, len(r.body), r.body)
			}
			if n := store.afters.Load() - before; !tc.reads && n != 0 || n > 1 {
				t.Errorf("%s on replica %d: %d store reads", tc.name, i, n)
			}
		}
	}
}

// TestReplicasCancelBounded: what a notifications/cancelled makes every
// other replica receive is bounded whatever the client sent (a reason of
// 1 MiB is clipped), and nothing is sent for one that cancels nothing (no
// request id, an absurd one) or whose request runs on the replica that
// received it.
func TestReplicasCancelBounded(t *testing.T) {
	store := &sharedStore{}
	reps := startReplicas(t, 2, store)
	sid := initShared(t, reps[0].url)
	replicaCall(t, reps[1].url, sid, 2, "who") // replica 1 holds a copy
	net := reps[0].net
	cancel := func(params string) string {
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":` + params + `}`
	}
	for _, tc := range []struct {
		name, body string
		sends      int64
	}{
		{"huge reason", cancel(`{"requestId":5,"reason":"` + strings.Repeat("x", 1<<20) + `"}`), 1},
		{"huge _meta", cancel(`{"requestId":5,"_meta":{"x":"` + strings.Repeat("x", 1<<20) + `"}}`), 1},
		{"no request id", cancel(`{"reason":"` + strings.Repeat("x", 1<<10) + `"}`), 0},
		{"absurd request id", cancel(`{"requestId":"` + strings.Repeat("x", 10<<10) + `"}`), 0},
		{"not an object", cancel(`[1,2,3]`), 0},
	} {
		sent := net.sent.Load()
		net.longest.Store(0)
		r := rawDo(t, http.MethodPost, reps[1].url, sessionHeaders(sid), tc.body)
		if r.status != http.StatusAccepted && r.status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", tc.name, r.status, r.body)
		}
		if n := net.sent.Load() - sent; n != tc.sends {
			t.Errorf("%s: %d messages to the other replicas, want %d", tc.name, n, tc.sends)
		}
		if l := net.longest.Load(); l > maxForwardedCancel+maxRoutedHeader {
			t.Errorf("%s: a message of %d bytes to the other replicas", tc.name, l)
		}
	}
	// One in flight on replica 1 is cancelled there, and not broadcast.
	blocked := rawAsync(http.MethodPost, reps[1].url, sessionHeaders(sid), `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
	eventually(t, "the call is in flight on replica 1", func() bool { return reps[1].h.exchanges.Load() == 1 })
	sent := net.sent.Load()
	if r := rawDo(t, http.MethodPost, reps[1].url, sessionHeaders(sid), cancel(`{"requestId":7}`)); r.status != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	if got := <-blocked; got.err != nil || strings.Contains(got.body, `"id":7`) {
		t.Errorf("the cancelled call: %d %v %q", got.status, got.err, got.body)
	}
	if n := net.sent.Load() - sent; n != 0 {
		t.Errorf("a cancellation of a call running here sent %d messages", n)
	}
}

// TestReplicasTakeOverAfterPrimer: a client whose GET on one replica
// dropped after the priming event alone (id "0_0": no store keeps it)
// resumes through another replica, which takes the standalone stream over
// (200, an open stream), rather than 400 because the store knows no event
// of the stream.
func TestReplicasTakeOverAfterPrimer(t *testing.T) {
	store := &sharedStore{}
	var logs lockedLog
	reps := startReplicasWith(t, 2, store, replicaServer, func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	sid := initShared(t, reps[0].url)
	req := sessionRequest(t, http.MethodGet, reps[1].url, sid, "")
	req.Header.Set("Last-Event-ID", standaloneStreamID+"_0")
	openSSE(t, req) // fails the test unless 200
	eventually(t, "replica 0 knows replica 1 holds the GET", func() bool {
		return reps[0].h.session(sid).rep.standaloneOwner() == "R1"
	})
	// The take-over follows the old stream (catchUp): no loss to report.
	s := reps[1].h.session(sid)
	eventually(t, "replica 1 follows the old stream", func() bool {
		s.rep.takenMu.Lock()
		defer s.rep.takenMu.Unlock()
		return s.rep.taken != nil
	})
	if l := logs.String(); strings.Contains(l, "may be lost") {
		t.Errorf("a loss reported: %s", l)
	}
}

// lockedLog is a log sink safe for concurrent use.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestReplicasTakeOverFlood: many GETs of one session alternating between
// two replicas, each taking the standalone stream over from the other and
// dropped at once, leave no goroutine behind, and the session works after.
func TestReplicasTakeOverFlood(t *testing.T) {
	store := &sharedStore{}
	reps := startReplicas(t, 2, store)
	sid := initShared(t, reps[0].url)
	replicaCall(t, reps[1].url, sid, 2, "who")
	http.DefaultClient.CloseIdleConnections()
	base := runtime.NumGoroutine()
	for i := range 60 {
		req := sessionRequest(t, http.MethodGet, reps[i%2].url, sid, "")
		req.Header.Set("Last-Event-ID", standaloneStreamID+"_0")
		ctx, cancel := context.WithCancel(context.Background())
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusConflict {
			t.Fatalf("GET %d: %d", i, resp.StatusCode)
		}
		cancel()
		resp.Body.Close()
	}
	http.DefaultClient.CloseIdleConnections()
	// Generous: the test's own HTTP plumbing may keep a few.
	eventually(t, "the GETs' goroutines end", func() bool { return runtime.NumGoroutine() <= base+10 })
	if got := replicaCall(t, reps[0].url, sid, 3, "who"); got == "" {
		t.Error("the session no longer works")
	}
}

// TestReplicasDeleteDuringRebuild: a session deleted through one replica
// while another is rebuilding it (it read the record just before) is not
// brought back there: the request that asked for the rebuild gets 404,
// and so does the next one, with no copy left behind.
func TestReplicasDeleteDuringRebuild(t *testing.T) {
	store := &sharedStore{}
	reps := startReplicas(t, 2, store)
	sid := initShared(t, reps[0].url)
	read, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hook := func() { once.Do(func() { close(read); <-release }) }
	store.recordRead.Store(&hook)
	got := rawAsync(http.MethodPost, reps[1].url, sessionHeaders(sid), `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	<-read // replica 1 has the record in hand
	if r := rawDo(t, http.MethodDelete, reps[0].url, sessionHeaders(sid), ""); r.status != http.StatusOK && r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	close(release)
	if r := <-got; r.status != http.StatusNotFound {
		t.Errorf("the request rebuilding a deleted session: %d %s, want 404", r.status, r.body)
	}
	if r := rawDo(t, http.MethodPost, reps[1].url, sessionHeaders(sid), `{"jsonrpc":"2.0","id":3,"method":"ping"}`); r.status != http.StatusNotFound {
		t.Errorf("the next request: %d %s, want 404", r.status, r.body)
	}
	if reps[1].h.session(sid) != nil {
		t.Error("a copy of the deleted session is left on replica 1")
	}
}
