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
		// act acts on the session through one replica; settled reports
		// whether the replica that missed the news caught up.
		act     func(t *testing.T, reps []*testReplica, sid string)
		settled func(reps []*testReplica, sid string) bool
	}{
		{"end", routeEnd, func(t *testing.T, reps []*testReplica, sid string) {
			// The home deletes; the copy on replica 1 misses the end.
			if r := rawDo(t, http.MethodDelete, reps[0].url, sessionHeaders(sid), ""); r.status != http.StatusNoContent {
				t.Fatalf("DELETE: %d %s", r.status, r.body)
			}
		}, func(reps []*testReplica, sid string) bool {
			return reps[1].h.session(sid) == nil
		}},
		{"end at the home", routeEnd, func(t *testing.T, reps []*testReplica, sid string) {
			// A copy deletes; the home misses the end.
			if r := rawDo(t, http.MethodDelete, reps[1].url, sessionHeaders(sid), ""); r.status != http.StatusNoContent {
				t.Fatalf("DELETE: %d %s", r.status, r.body)
			}
		}, func(reps []*testReplica, sid string) bool {
			return reps[0].h.session(sid) == nil
		}},
		{"state", routeState, func(t *testing.T, reps []*testReplica, sid string) {
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
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := &sharedStore{}
			reps := startReplicasWith(t, 2, store, replicaServer, func(o *Options) { o.ReplicaRecheck = 50 * time.Millisecond })
			sid := initShared(t, reps[0].url)
			replicaCall(t, reps[1].url, sid, 2, "who") // replica 1 holds a copy
			reps[0].net.mu.Lock()
			reps[0].net.drop = map[string]bool{tc.lost: true}
			reps[0].net.mu.Unlock()
			tc.act(t, reps, sid)
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
