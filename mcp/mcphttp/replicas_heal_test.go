package mcphttp

import (
	"net/http"
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
