package mcphttp

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// sharedStore is an event store with a session directory, shared by the
// handlers of a test as the replicas of a server share one on Redis.
type sharedStore struct {
	eventstore.Memory
	mu   sync.Mutex
	recs map[string][]byte
	gone atomic.Bool // the replica that recorded the sessions died
	down atomic.Bool // every call fails as a store that does not answer
	// reads counts the SessionRecord calls.
	reads atomic.Int64
	// afters counts the After calls.
	afters atomic.Int64
	// recordRead, if set, runs after each SessionRecord has read the
	// record, before it returns.
	recordRead atomic.Pointer[func()]
}

var errTestStoreDown = fmt.Errorf("test store down: %w", eventstore.ErrStoreUnavailable)

func (s *sharedStore) After(ctx context.Context, sessionID, streamID string, after int64) ([]eventstore.Event, error) {
	s.afters.Add(1)
	if s.down.Load() {
		return nil, errTestStoreDown
	}
	return s.Memory.After(ctx, sessionID, streamID, after)
}

func (s *sharedStore) DeleteSession(ctx context.Context, sessionID string) error {
	s.mu.Lock()
	delete(s.recs, sessionID)
	s.mu.Unlock()
	return s.Memory.DeleteSession(ctx, sessionID)
}

func (s *sharedStore) PutSession(ctx context.Context, sessionID string, record []byte) error {
	if s.down.Load() {
		return errTestStoreDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recs == nil {
		s.recs = map[string][]byte{}
	}
	s.recs[sessionID] = record
	return nil
}

func (s *sharedStore) SessionRecord(ctx context.Context, sessionID string) ([]byte, bool, error) {
	s.reads.Add(1)
	if s.down.Load() {
		return nil, false, errTestStoreDown
	}
	s.mu.Lock()
	r, ok := s.recs[sessionID]
	s.mu.Unlock()
	if f := s.recordRead.Load(); f != nil {
		(*f)()
	}
	return r, ok, nil
}

func (s *sharedStore) SessionHeld(ctx context.Context, sessionID string) (bool, error) {
	if s.down.Load() {
		return false, errTestStoreDown
	}
	return !s.gone.Load(), nil
}

// TestStreamableResumeElsewhere: a stream of a session held by replica a
// is resumed (GET with Last-Event-ID) through replica b, which does not
// hold the session but shares the event store and its directory: b sends
// exactly the events after the one named, then a retry field; with
// nothing left it sends the client back while a still runs, and says the
// stream is over (405) once a is gone. The caller must be the session's
// creator; a session the directory does not know is 404, as before; a
// store that does not answer is 503, on b and on a.
func TestStreamableResumeElsewhere(t *testing.T) {
	store := &sharedStore{}
	who := func(r *http.Request) string { return r.Header.Get("X-Who") }
	opts := func() *Options {
		return &Options{EventStore: store, Identity: who, RetryInterval: 1}
	}
	_, tsA := serve(t, toolServer(t, nil), opts())
	_, tsB := serve(t, toolServer(t, nil), opts())

	const version = mcp.ProtocolVersion20251125
	r := rawDo(t, http.MethodPost, tsA.URL, map[string]string{"X-Who": "alice"}, fmt.Sprintf(rawInitBody, version))
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	hdr := func(who, last string) map[string]string {
		h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version, "X-Who": who}
		if last != "" {
			h["Last-Event-ID"] = last
		}
		return h
	}
	if r := rawDo(t, http.MethodPost, tsA.URL, hdr("alice", ""), `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.status != http.StatusAccepted {
		t.Fatalf("initialized: %d", r.status)
	}
	r = rawDo(t, http.MethodPost, tsA.URL, hdr("alice", ""),
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"progress","arguments":{"N":5},"_meta":{"progressToken":"p"}}}`)
	var ids []string
	for _, ev := range sseEvents(t, r.body) {
		if len(ev.data) > 0 {
			ids = append(ids, ev.id)
		}
	}
	if r.status != http.StatusOK || len(ids) != 6 {
		t.Fatalf("tools/call at a: %d, events %q", r.status, ids)
	}
	stream, _, _ := parseEventID(ids[0])

	for _, tc := range []struct {
		name       string
		who, last  string
		gone, down bool
		url        string
		wantStatus int
		wantIDs    []string
	}{
		{"the rest of the stream", "alice", ids[1], false, false, tsB.URL, http.StatusOK, ids[2:]},
		{"all of it", "alice", stream + "_0", false, false, tsB.URL, http.StatusOK, ids},
		{"nothing left, a still runs", "alice", ids[5], false, false, tsB.URL, http.StatusOK, nil},
		{"another caller", "bob", ids[1], false, false, tsB.URL, http.StatusForbidden, nil},
		{"no caller", "", ids[1], false, false, tsB.URL, http.StatusForbidden, nil},
		{"an event never sent", "alice", stream + "_99", false, false, tsB.URL, http.StatusBadRequest, nil},
		{"a malformed id", "alice", "nonsense", false, false, tsB.URL, http.StatusBadRequest, nil},
		{"store down at b", "alice", ids[1], false, true, tsB.URL, http.StatusServiceUnavailable, nil},
		{"store down at a", "alice", ids[1], false, true, tsA.URL, http.StatusServiceUnavailable, nil},
		{"a is gone: the rest is still there", "alice", ids[3], true, false, tsB.URL, http.StatusOK, ids[4:]},
		{"a is gone, nothing left: over", "alice", ids[5], true, false, tsB.URL, http.StatusMethodNotAllowed, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store.gone.Store(tc.gone)
			store.down.Store(tc.down)
			defer store.down.Store(false)
			r := rawDo(t, http.MethodGet, tc.url, hdr(tc.who, tc.last), "")
			if r.status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", r.status, tc.wantStatus, r.body)
			}
			if tc.wantStatus == http.StatusServiceUnavailable && r.header.Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
			if tc.wantStatus != http.StatusOK {
				return
			}
			var got []string
			for _, ev := range sseEvents(t, r.body) {
				if len(ev.data) > 0 {
					got = append(got, ev.id)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.wantIDs, ",") {
				t.Fatalf("events %q, want %q", got, tc.wantIDs)
			}
			if !strings.Contains(r.body, "retry: ") {
				t.Errorf("no retry field: the client would not come back: %q", r.body)
			}
		})
	}
	// A session the directory does not know is 404 at b, as before.
	r = rawDo(t, http.MethodGet, tsB.URL, map[string]string{"Mcp-Session-Id": "nope", "Last-Event-ID": ids[1], "X-Who": "alice"}, "")
	if r.status != http.StatusNotFound {
		t.Fatalf("unknown session at b: %d %s", r.status, r.body)
	}
	// Ended at a (DELETE): forgotten by the directory too.
	if r := rawDo(t, http.MethodDelete, tsA.URL, hdr("alice", ""), ""); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", r.status)
	}
	if r := rawDo(t, http.MethodGet, tsB.URL, hdr("alice", ids[1]), ""); r.status != http.StatusNotFound {
		t.Fatalf("resume at b after DELETE at a: %d %s", r.status, r.body)
	}
}

// TestStreamableSessionRecordedDown: a session is created even when the
// directory does not answer; it works where it was created.
func TestStreamableSessionRecordedDown(t *testing.T) {
	store := &sharedStore{}
	store.down.Store(true)
	_, ts := serve(t, toolServer(t, nil), &Options{EventStore: store})
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	r := rawDo(t, http.MethodPost, ts.URL, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": mcp.ProtocolVersion20251125},
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if r.status != http.StatusOK || !strings.Contains(r.body, `"result"`) {
		t.Fatalf("tools/call: %d %s", r.status, r.body)
	}
}
