package mcphttp

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
)

// TestReplicasLostNews: the news that a session ended or changed travels
// between replicas at most once; when it is lost (here dropped by the
// carrier, as Redis Pub/Sub drops what is published while a subscriber
// reconnects), the copy that missed it catches up from the record within
// Options.ReplicaRecheck, without any request to it (before, it stayed
// stale, or alive after a DELETE, until it idled out: 30 minutes).
func TestReplicasLostNews(t *testing.T) {
	tests := []struct {
		name string
		lost string // the kind of message lost
		// signal: the carrier says it lost messages (deliver(nil)),
		// and replicas recheck then only, never periodically.
		signal bool
		// act acts on the session through one replica; settled reports
		// whether the replica that missed the news caught up.
		act     func(t *testing.T, reps []*testReplica, sid string)
		settled func(reps []*testReplica, sid string) bool
	}{
		{"end", routeEnd, false, func(t *testing.T, reps []*testReplica, sid string) {
			// The home deletes; the copy on replica 1 misses the end.
			if r := rawDo(t, http.MethodDelete, reps[0].url, sessionHeaders(sid), ""); r.status != http.StatusNoContent {
				t.Fatalf("DELETE: %d %s", r.status, r.body)
			}
		}, func(reps []*testReplica, sid string) bool {
			return reps[1].h.session(sid) == nil
		}},
		{"end at the home", routeEnd, false, func(t *testing.T, reps []*testReplica, sid string) {
			// A copy deletes; the home misses the end.
			if r := rawDo(t, http.MethodDelete, reps[1].url, sessionHeaders(sid), ""); r.status != http.StatusNoContent {
				t.Fatalf("DELETE: %d %s", r.status, r.body)
			}
		}, func(reps []*testReplica, sid string) bool {
			return reps[0].h.session(sid) == nil
		}},
		{"state", routeState, false, func(t *testing.T, reps []*testReplica, sid string) {
			// A copy changes the log level; the home misses the news.
			r := rawDo(t, http.MethodPost, reps[1].url, sessionHeaders(sid), `{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"debug"}}`)
			if r.status != http.StatusOK {
				t.Fatalf("logging/setLevel: %d %s", r.status, r.body)
			}
		}, func(reps []*testReplica, sid string) bool {
			s := reps[0].h.session(sid)
			return s != nil && s.ss.LoggingLevel() == mcp.LoggingLevelDebug
		}},
	}
	// The end lost, then the loss reported: the copy ends with no
	// periodic recheck.
	end := tests[0]
	end.name, end.signal = "end, the loss reported", true
	tests = append(tests, end)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := &sharedStore{}
			every := 50 * time.Millisecond
			if tc.signal {
				every = -1
			}
			reps := startReplicasWith(t, 2, store, replicaServer, func(o *Options) { o.ReplicaRecheck = every })
			sid := initShared(t, reps[0].url)
			replicaCall(t, reps[1].url, sid, 2, "who") // replica 1 holds a copy
			reps[0].net.mu.Lock()
			reps[0].net.drop = map[string]bool{tc.lost: true}
			reps[0].net.mu.Unlock()
			tc.act(t, reps, sid)
			if tc.signal {
				reps[1].net.lose("R1")
			}
			eventually(t, "the replica that missed the "+tc.lost+" message caught up", func() bool { return tc.settled(reps, sid) })
		})
	}
}

// TestReplicasLeadMoves: the replica whose copy writes a session's
// standalone stream while no GET is open (at first the home) goes away
// while the session lives on: its copy idles out (it lets the stream go),
// or it dies (it lets nothing go: the others find it dead at their next
// recheck). One of the replicas holding a copy takes the stream over, and
// a change then puts exactly one resources/updated in the store for the
// client's next GET (before, no replica wrote the stream: every copy left
// change notifications to the home, and they were lost).
func TestReplicasLeadMoves(t *testing.T) {
	tests := []struct {
		name string
		gone func(home *testReplica, sid string)
	}{
		{"home idles out", func(home *testReplica, sid string) {
			home.h.session(sid).terminate() // as expire does
		}},
		{"home dies", func(home *testReplica, sid string) {
			home.h.rep.close() // no longer alive to the others
			s := home.h.session(sid)
			s.rep.gone.Store(true) // and lets nothing go
			s.terminate()
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := &sharedStore{}
			reps := startReplicasWith(t, 3, store, replicaServer, func(o *Options) { o.ReplicaRecheck = 50 * time.Millisecond })
			sid := initShared(t, reps[0].url)
			r := rawDo(t, http.MethodPost, reps[1].url, sessionHeaders(sid), `{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"file:///a"}}`)
			if r.status != http.StatusOK {
				t.Fatalf("subscribe: %d %s", r.status, r.body)
			}
			replicaCall(t, reps[2].url, sid, 4, "who") // replica 2 holds a copy too
			eventually(t, "every copy is subscribed", func() bool {
				for _, rep := range reps {
					s := rep.h.session(sid)
					if s == nil || len(s.ss.ResourceSubscriptions()) != 1 {
						return false
					}
				}
				return true
			})
			tc.gone(reps[0], sid)
			var lead string
			eventually(t, "replicas 1 and 2 agree on a new writer of the stream", func() bool {
				s1, s2 := reps[1].h.session(sid), reps[2].h.session(sid)
				o1, o2 := s1.rep.standaloneOwner(), s2.rep.standaloneOwner()
				lead = o1
				return o1 == o2 && (o1 == "R1" || o1 == "R2")
			})
			if err := reps[1].srv.ResourceUpdated(context.Background(), "file:///a"); err != nil {
				t.Fatal(err)
			}
			marker, err := mcp.Change{Origin: "test", Method: mcp.NotificationToolsListChanged}.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if err := reps[1].bus.Publish(context.Background(), marker); err != nil {
				t.Fatal(err)
			}
			count := func(stream, method string) int {
				events, err := store.After(context.Background(), sid, stream, 0)
				if err != nil {
					return 0 // no such stream (yet)
				}
				n := 0
				for _, e := range events {
					if strings.Contains(string(e.Data), `"`+method+`"`) {
						n++
					}
				}
				return n
			}
			eventually(t, "the new writer stored the change", func() bool {
				return count(lead+"-0", mcp.NotificationToolsListChanged) == 1
			})
			if n := count("R1-0", mcp.NotificationResourcesUpdated) + count("R2-0", mcp.NotificationResourcesUpdated); n != 1 {
				t.Errorf("%d resources/updated stored for the client, want 1", n)
			}
		})
	}
}

// TestReplicasOnePinger: of the copies of a session, only the one that
// writes its standalone stream pings the client (PingsClient, which
// mcp.ServerOptions.KeepAlive consults at each tick), and the role follows
// the GET; a session without replicas always pings.
func TestReplicasOnePinger(t *testing.T) {
	store := &sharedStore{}
	reps := startReplicas(t, 3, store)
	sid := initShared(t, reps[0].url)
	replicaCall(t, reps[2].url, sid, 2, "who")
	pingers := func() string {
		var out []string
		for i, rep := range reps {
			if s := rep.h.session(sid); s != nil && s.PingsClient() {
				out = append(out, fmt.Sprintf("R%d", i))
			}
		}
		return strings.Join(out, ",")
	}
	if got := pingers(); got != "R0" {
		t.Fatalf("before any GET, pinging: %q; want the home only", got)
	}
	get := openSSE(t, sessionRequest(t, http.MethodGet, reps[1].url, sid, ""))
	defer get.resp.Body.Close()
	eventually(t, "only replica 1, holding the GET, pings", func() bool { return pingers() == "R1" })

	h, ts := serve(t, replicaServer(t, new(atomic.Int64)), nil)
	one := initShared(t, ts.URL)
	if !h.session(one).PingsClient() {
		t.Error("a session without replicas does not ping")
	}
}

// TestReplicasTakeOverEveryEvent: a GET that resumes, through another
// replica, the standalone stream the client last read receives every
// event of it that the client had not read, each once, also those
// written after its GET closed (before, the stream's writer fell back to
// the home, whose stream the take-over never read) and those that a
// replica which missed the news of the take-over wrote to the old stream
// after it (the new writer follows the old stream for two rechecks).
func TestReplicasTakeOverEveryEvent(t *testing.T) {
	tests := []struct {
		name string
		// stale: the state messages are lost from the GET's close on,
		// and only the replica taking over rechecks.
		stale bool
	}{
		{"written after the GET closed", false},
		{"written by a replica that missed the take-over", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := &sharedStore{}
			n := 0
			reps := startReplicasWith(t, 3, store, replicaServer, func(o *Options) {
				if tc.stale {
					o.ReplicaRecheck = -1
					if n == 2 {
						// Long enough for "three" to reach the old
						// stream within the two rounds followed, on a
						// loaded machine.
						o.ReplicaRecheck = 2 * time.Second
					}
				}
				n++
			})
			sid := initShared(t, reps[0].url)
			record := func() sessionRecord {
				raw, _, _ := store.SessionRecord(context.Background(), sid)
				rec, _ := decodeRecord(raw)
				return rec
			}
			get := openSSE(t, sessionRequest(t, http.MethodGet, reps[1].url, sid, ""))
			eventually(t, "replica 0 knows replica 1 holds the GET", func() bool {
				s := reps[0].h.session(sid)
				return s != nil && s.rep.standaloneOwner() == "R1"
			})
			notify := func(text string) { t.Helper(); notifyLog(t, reps[0].h, sid, text) }
			notify("one")
			var last string
			select {
			case ev := <-get.events:
				last = ev.id
			case <-time.After(20 * time.Second):
				t.Fatal("no event on the GET")
			}
			if tc.stale {
				reps[0].net.mu.Lock()
				reps[0].net.drop = map[string]bool{routeState: true}
				reps[0].net.mu.Unlock()
			}
			get.resp.Body.Close()
			eventually(t, "the GET's close is recorded", func() bool { return record().Get == "" })
			if !tc.stale {
				eventually(t, "replica 0 knows", func() bool { return reps[0].h.session(sid).rep.record().Get == "" })
			}
			notify("two")
			// "two" travels to replica 1 (the stream's writer) on the news
			// and is kept there; a take-over that read the stream before it
			// landed would meet it only at its next recheck (30 s by
			// default). The point here is that it is read at all.
			streamID, seq, _ := parseEventID(last)
			eventually(t, "two is kept on the stream the client read", func() bool {
				evs, err := store.Memory.After(context.Background(), sid, streamID, seq)
				return err == nil && len(evs) > 0
			})
			req := sessionRequest(t, http.MethodGet, reps[2].url, sid, "")
			req.Header.Set("Last-Event-ID", last)
			again := openSSE(t, req)
			defer again.resp.Body.Close()
			eventually(t, "replica 2's take-over is recorded", func() bool { return record().Get == "R2" })
			if !tc.stale {
				// Replica 0 hears of the take-over on the state news: an
				// event it wrote before that would go to the old stream and
				// be followed only at replica 2's next recheck (30 s by
				// default), which this case is not about.
				eventually(t, "replica 0 knows replica 2 took the stream over", func() bool {
					return reps[0].h.session(sid).rep.standaloneOwner() == "R2"
				})
			}
			notify("three")
			var got []string
			for len(got) < 2 {
				m := again.next(t)
				if m["method"] != mcp.NotificationMessage {
					continue
				}
				got = append(got, fmt.Sprint(m["params"].(map[string]any)["data"]))
			}
			if strings.Join(got, ",") != "two,three" {
				t.Fatalf("after the take-over: %q, want two then three", got)
			}
			if tc.stale {
				return // the others never recheck: after two rounds, what they write is lost
			}
			// Each once: a marker sent now is the next event.
			notify("four")
			if m := again.next(t); fmt.Sprint(m["params"]) != fmt.Sprint(map[string]any{"data": "four", "level": "error"}) {
				t.Fatalf("after three: %v, want four", m)
			}
		})
	}
}
