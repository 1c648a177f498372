package mcphttp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// The sharedStore of shared_test.go, as a SessionUpdater.

func (s *sharedStore) UpdateSession(ctx context.Context, sessionID string, record []byte) (bool, error) {
	if s.down.Load() {
		return false, errTestStoreDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.recs[sessionID]; !ok {
		return false, nil
	}
	s.recs[sessionID] = record
	return true, nil
}

func (s *sharedStore) TouchSession(ctx context.Context, sessionID string) error { return nil }

// memNet carries the messages of the replicas of a test, as Redis Pub/Sub
// does for real ones.
type memNet struct {
	mu    sync.Mutex
	peers map[string]func([]byte)
	sent  atomic.Int64
	// longest is the length of the longest message sent.
	longest atomic.Int64
	// drop, if set, loses the messages of the kinds it holds, as Pub/Sub
	// does while a subscriber reconnects.
	drop map[string]bool
}

// memReplica is one replica's view of a memNet.
type memReplica struct {
	net *memNet
	id  string
}

func (r *memReplica) ReplicaID() string { return r.id }

func (r *memReplica) SendTo(ctx context.Context, to string, msg []byte) error {
	r.net.sent.Add(1)
	for n := int64(len(msg)); ; {
		if l := r.net.longest.Load(); n <= l || r.net.longest.CompareAndSwap(l, n) {
			break
		}
	}
	r.net.mu.Lock()
	if len(r.net.drop) > 0 {
		if e, err := decodeRouted(msg); err == nil && r.net.drop[e.T] {
			r.net.mu.Unlock()
			return nil // taken, and lost
		}
	}
	var targets []func([]byte)
	for id, f := range r.net.peers {
		if to == "" || id == to {
			targets = append(targets, f)
		}
	}
	r.net.mu.Unlock()
	if to != "" && len(targets) == 0 {
		return fmt.Errorf("%w: %s", eventstore.ErrNoReplica, to)
	}
	for _, f := range targets {
		f(append([]byte(nil), msg...))
	}
	return nil
}

func (r *memReplica) Listen(ctx context.Context, deliver func([]byte)) (func(), error) {
	ch := make(chan []byte, 64)
	done := make(chan struct{})
	r.net.mu.Lock()
	if r.net.peers == nil {
		r.net.peers = map[string]func([]byte){}
	}
	r.net.peers[r.id] = func(m []byte) { ch <- m }
	r.net.mu.Unlock()
	quit := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case m := <-ch:
				deliver(m) // nil: the loss signal (see lose)
			case <-quit:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.net.mu.Lock()
			delete(r.net.peers, r.id)
			r.net.mu.Unlock()
			close(quit)
			<-done
		})
	}, nil
}

// lose tells replica id that messages may have been lost, as the Redis
// carrier does once it receives again after a reconnection.
func (n *memNet) lose(id string) {
	n.mu.Lock()
	f := n.peers[id]
	n.mu.Unlock()
	f(nil)
}

func (r *memReplica) ReplicaAlive(ctx context.Context, id string) (bool, error) {
	r.net.mu.Lock()
	defer r.net.mu.Unlock()
	_, ok := r.net.peers[id]
	return ok, nil
}

// replicaServer is toolServer with a resource to subscribe to, a tool
// that reports what the client declared at initialize, and a counter of
// the initializations it served.
func replicaServer(t *testing.T, inits *atomic.Int64) *mcp.Server {
	s := toolServer(t, nil, func(o *mcp.ServerOptions) {
		o.Capabilities.Resources = &mcp.ResourcesCapability{Subscribe: true}
		o.InitializedHandler = func(context.Context, *mcp.ServerSession) { inits.Add(1) }
	})
	if err := s.AddTool(&mcp.Tool{Name: "who", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		ip := ss.InitializeParams()
		text := fmt.Sprintf("%s sampling=%v level=%s", ip.ClientInfo.Name, ip.Capabilities.Sampling != nil, ss.LoggingLevel())
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResource(&mcp.Resource{URI: "file:///a", Name: "a"}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, Text: "a"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

type testReplica struct {
	net   *memNet // shared by all
	h     *Handler
	url   string
	srv   *mcp.Server
	bus   *mcp.MemoryBus // shared by all
	inits atomic.Int64
}

// startReplicas starts n handlers, each with its own server, sharing
// store, a memNet and a MemoryBus, as n processes share Redis.
func startReplicas(t *testing.T, n int, store *sharedStore) []*testReplica {
	t.Helper()
	return startReplicasWith(t, n, store, replicaServer)
}

// startReplicasWith is startReplicas with the servers newServer makes.
func startReplicasWith(t *testing.T, n int, store *sharedStore, newServer func(*testing.T, *atomic.Int64) *mcp.Server, tweaks ...func(*Options)) []*testReplica {
	t.Helper()
	net := &memNet{}
	bus := &mcp.MemoryBus{}
	var out []*testReplica
	for i := range n {
		r := &testReplica{bus: bus, net: net}
		r.srv = newServer(t, &r.inits)
		stop, err := r.srv.ShareChanges(context.Background(), bus)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		rep := &memReplica{net: net, id: fmt.Sprintf("R%d", i)}
		var ts *httptest.Server
		opts := &Options{EventStore: store, Replicas: rep}
		for _, f := range tweaks {
			f(opts)
		}
		r.h, ts = serve(t, r.srv, opts)
		r.url = ts.URL
		out = append(out, r)
	}
	// Every replica listens before the test begins.
	eventually(t, "every replica listens", func() bool {
		net.mu.Lock()
		defer net.mu.Unlock()
		return len(net.peers) == n
	})
	return out
}

const replicaInitBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"replica-client","version":"1"}}}`

func sessionHeaders(sid string) map[string]string {
	return map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
}

// callText posts a tools/call and returns the text of its result, failing
// on anything else.
func replicaCall(t *testing.T, url, sid string, id int, tool string) string {
	t.Helper()
	r := rawDo(t, http.MethodPost, url, sessionHeaders(sid), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool))
	if r.status != http.StatusOK {
		t.Fatalf("tools/call %s: %d %s", tool, r.status, r.body)
	}
	for _, ev := range sseEvents(t, r.body) {
		if len(ev.data) == 0 {
			continue
		}
		resp := decodeResponse(t, string(ev.data))
		if resp.Error != nil {
			t.Fatalf("tools/call %s: %v", tool, resp.Error)
		}
		var res mcp.CallToolResult
		if err := json.Unmarshal(resp.Result, &res); err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	t.Fatalf("tools/call %s: no response in %q", tool, r.body)
	return ""
}

func initShared(t *testing.T, url string) string {
	t.Helper()
	r := rawDo(t, http.MethodPost, url, nil, replicaInitBody)
	if r.status != http.StatusOK {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	sid := r.header.Get("Mcp-Session-Id")
	r = rawDo(t, http.MethodPost, url, sessionHeaders(sid), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", r.status, r.body)
	}
	return sid
}

// TestReplicasSessionEverywhere: a session created on replica 0 is served
// by replica 1, which rebuilds it from the record with the client's
// initialize params (its handlers see the same clientInfo and
// capabilities), once however many first requests arrive at once; the
// log level set through one replica is seen on the other; a store that
// does not answer gets 503 with Retry-After on a replica that must
// rebuild; another caller gets 403 and an unknown id 404.
func TestReplicasSessionEverywhere(t *testing.T) {
	store := &sharedStore{}
	reps := startReplicas(t, 3, store)
	sid := initShared(t, reps[0].url)

	if got := replicaCall(t, reps[0].url, sid, 2, "who"); got != "replica-client sampling=true level=" {
		t.Fatalf("on the home replica: %q", got)
	}
	// Concurrent first requests on replica 1: one copy.
	var wg sync.WaitGroup
	texts := make([]string, 8)
	for i := range texts {
		wg.Go(func() { texts[i] = replicaCall(t, reps[1].url, sid, 10+i, "who") })
	}
	wg.Wait()
	for _, got := range texts {
		if got != "replica-client sampling=true level=" {
			t.Fatalf("on replica 1: %q", got)
		}
	}
	if n := reps[1].inits.Load(); n != 1 {
		t.Fatalf("replica 1 initialized %d copies of the session, want 1", n)
	}
	// State written back: logging/setLevel through replica 1, seen by 0
	// and 2.
	r := rawDo(t, http.MethodPost, reps[1].url, sessionHeaders(sid), `{"jsonrpc":"2.0","id":30,"method":"logging/setLevel","params":{"level":"warning"}}`)
	if r.status != http.StatusOK {
		t.Fatalf("setLevel: %d %s", r.status, r.body)
	}
	id := 40
	for _, rep := range []*testReplica{reps[2], reps[0]} {
		want := "replica-client sampling=true level=warning"
		eventually(t, "the level reaches every replica", func() bool {
			id++ // an id is never reused in a session
			return replicaCall(t, rep.url, sid, id, "who") == want
		})
	}

	t.Run("others", func(t *testing.T) {
		r := rawDo(t, http.MethodPost, reps[2].url, sessionHeaders("no-such-session"), `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if r.status != http.StatusNotFound {
			t.Fatalf("unknown session: %d %s", r.status, r.body)
		}
	})
	t.Run("store down", func(t *testing.T) {
		sid2 := initShared(t, reps[0].url)
		store.down.Store(true)
		defer store.down.Store(false)
		r := rawDo(t, http.MethodPost, reps[2].url, sessionHeaders(sid2), `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
			t.Fatalf("store down: %d %v %s", r.status, r.header, r.body)
		}
		// A replica that holds the session needs no store to serve it.
		r = rawDo(t, http.MethodPost, reps[0].url, sessionHeaders(sid2), `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if r.status != http.StatusOK {
			t.Fatalf("held session, store down: %d %s", r.status, r.body)
		}
	})
}

// TestReplicasOwner: with Identity, a session is rebuilt only for the
// caller that created it.
func TestReplicasOwner(t *testing.T) {
	store := &sharedStore{}
	net := &memNet{}
	var hs []string
	for i := range 2 {
		var inits atomic.Int64
		srv := replicaServer(t, &inits)
		_, ts := serve(t, srv, &Options{EventStore: store, Replicas: &memReplica{net: net, id: fmt.Sprintf("R%d", i)}, Identity: func(r *http.Request) string { return r.Header.Get("X-Who") }})
		hs = append(hs, ts.URL)
	}
	r := rawDo(t, http.MethodPost, hs[0], map[string]string{"X-Who": "alice"}, replicaInitBody)
	sid := r.header.Get("Mcp-Session-Id")
	hdr := sessionHeaders(sid)
	hdr["X-Who"] = "mallory"
	if r := rawDo(t, http.MethodPost, hs[1], hdr, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.status != http.StatusForbidden {
		t.Fatalf("another caller: %d %s", r.status, r.body)
	}
	hdr["X-Who"] = "alice"
	if r := rawDo(t, http.MethodPost, hs[1], hdr, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); r.status != http.StatusOK {
		t.Fatalf("the owner: %d %s", r.status, r.body)
	}
}

// TestReplicasDelete: DELETE through one replica ends the session on
// every one, those holding a copy and those that do not.
func TestReplicasDelete(t *testing.T) {
	store := &sharedStore{}
	reps := startReplicas(t, 3, store)
	sid := initShared(t, reps[0].url)
	replicaCall(t, reps[1].url, sid, 2, "who") // replica 1 holds a copy; 2 none
	if r := rawDo(t, http.MethodDelete, reps[1].url, sessionHeaders(sid), ""); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	for i, rep := range reps {
		eventually(t, fmt.Sprintf("404 on replica %d", i), func() bool {
			r := rawDo(t, http.MethodPost, rep.url, sessionHeaders(sid), `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
			return r.status == http.StatusNotFound
		})
	}
	eventually(t, "the copies are gone", func() bool {
		return reps[0].h.session(sid) == nil && reps[1].h.session(sid) == nil
	})
}

// sseStream reads the events of an SSE response as they come.
type sseStream struct {
	resp   *http.Response
	events chan sseEvent
}

func openSSE(t *testing.T, req *http.Request) *sseStream {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("%s: %d %s", req.Method, resp.StatusCode, b)
	}
	s := &sseStream{resp: resp, events: make(chan sseEvent, 64)}
	go func() {
		defer close(s.events)
		r := newSSEReader(bufio.NewReader(resp.Body), 0)
		for {
			ev, err := r.next()
			if err != nil {
				return
			}
			if len(ev.data) > 0 {
				s.events <- ev
			}
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return s
}

func (s *sseStream) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(ev.data), &m); err != nil {
			t.Fatal(err)
		}
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no event")
	}
	return nil
}

func sessionRequest(t *testing.T, method, url, sid, body string) *http.Request {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range sessionHeaders(sid) {
		req.Header.Set(k, v)
	}
	return req
}

// TestReplicasServerRequest: a tool on replica 0 asks the client to
// sample; the client's response, POSTed to replica 1, completes the call
// (its id names replica 0, and replica 1 forwards it). A response to a
// replica that is gone is dropped with 202.
func TestReplicasServerRequest(t *testing.T) {
	store := &sharedStore{}
	reps := startReplicas(t, 2, store)
	sid := initShared(t, reps[0].url)
	call := openSSE(t, sessionRequest(t, http.MethodPost, reps[0].url, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sample","arguments":{}}}`))
	req := call.next(t)
	if req["method"] != "sampling/createMessage" {
		t.Fatalf("first message: %v", req)
	}
	id, _ := req["id"].(string)
	if issuer, ok := parseIssuer(id); !ok || issuer != "R0" {
		t.Fatalf("request id %q does not name replica R0", id)
	}
	idJSON, _ := json.Marshal(id)
	r := rawDo(t, http.MethodPost, reps[1].url, sessionHeaders(sid), `{"jsonrpc":"2.0","id":`+string(idJSON)+`,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("response POSTed to replica 1: %d %s", r.status, r.body)
	}
	res := call.next(t)
	if got := fmt.Sprint(res["result"]); !strings.Contains(got, "model said: hi") {
		t.Fatalf("tool result: %v", res)
	}
	// A response for a replica nobody knows: dropped, 202.
	r = rawDo(t, http.MethodPost, reps[1].url, sessionHeaders(sid), `{"jsonrpc":"2.0","id":"r.GONE.1","result":{}}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("response to a gone replica: %d %s", r.status, r.body)
	}
}

// TestReplicasStandalone: the GET stream held by replica 1 receives
// exactly one resources/updated for a subscription made through replica
// 2 and a change made on replica 0 (each replica holds a copy subscribed
// to it), and the log messages that replica 0 sends outside any request.
func TestReplicasStandalone(t *testing.T) {
	store := &sharedStore{}
	reps := startReplicas(t, 3, store)
	sid := initShared(t, reps[0].url)
	get := openSSE(t, sessionRequest(t, http.MethodGet, reps[1].url, sid, ""))
	eventually(t, "replica 0 knows replica 1 holds the GET", func() bool {
		s := reps[0].h.session(sid)
		return s != nil && s.rep.standaloneOwner() == "R1"
	})
	r := rawDo(t, http.MethodPost, reps[2].url, sessionHeaders(sid), `{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"file:///a"}}`)
	if r.status != http.StatusOK {
		t.Fatalf("subscribe: %d %s", r.status, r.body)
	}
	eventually(t, "every copy is subscribed", func() bool {
		for _, rep := range reps {
			s := rep.h.session(sid)
			if s == nil || len(s.ss.ResourceSubscriptions()) != 1 {
				return false
			}
		}
		return true
	})
	marker, err := mcp.Change{Origin: "test", Method: mcp.NotificationToolsListChanged}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		if err := reps[0].srv.ResourceUpdated(context.Background(), "file:///a"); err != nil {
			t.Fatal(err)
		}
		// A change of the tools, published after, marks the end of the
		// round: every replica hears the bus's messages in order.
		if err := reps[0].bus.Publish(context.Background(), marker); err != nil {
			t.Fatal(err)
		}
		updates := 0
		for {
			m := get.next(t)
			if m["method"] == mcp.NotificationResourcesUpdated {
				updates++
				continue
			}
			if m["method"] == mcp.NotificationToolsListChanged {
				break
			}
			t.Fatalf("unexpected: %v", m)
		}
		if updates != 1 {
			t.Fatalf("round %d: %d resources/updated on the GET stream, want 1", round, updates)
		}
	}
	// A message that replica 0 sends outside any request reaches the GET
	// on replica 1.
	ss := reps[0].h.session(sid).ss
	if err := ss.Notify(context.Background(), mcp.NotificationMessage, &mcp.LoggingMessageNotificationParams{Level: mcp.LoggingLevelError, Data: json.RawMessage(`"from replica 0"`)}); err != nil {
		t.Fatal(err)
	}
	if m := get.next(t); m["method"] != mcp.NotificationMessage || !strings.Contains(fmt.Sprint(m["params"]), "from replica 0") {
		t.Fatalf("log message: %v", m)
	}
}

func TestParseIssuer(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"r.ABC.1", "ABC", true},
		{"r.abc234.12345", "abc234", true},
		{"r.ABC.", "", false},
		{"r..1", "", false},
		{"r.A-B.1", "", false},
		{"r.ABC.1x", "", false},
		{"x.ABC.1", "", false},
		{"r.ABC", "", false},
		{"r.A.B.1", "", false},
		{"r.ABC.12345678901234567890", "", false},
		{"", "", false},
	} {
		got, ok := parseIssuer(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseIssuer(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := issuerOf(jsonrpc.Int64ID(1)); ok {
		t.Error("an integer id names a replica")
	}
}

func FuzzParseIssuer(f *testing.F) {
	for _, s := range []string{"r.ABC.1", "r..", "r.A.B.1", "r.ABCDEFGHIJKLMNOPQRSTUVWXYZ234567.99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rep, ok := parseIssuer(s)
		if !ok {
			return
		}
		// What parses is what the prefix makes.
		if !strings.HasPrefix(s, "r."+rep+".") || !replicaName(rep) {
			t.Fatalf("parseIssuer(%q) = %q", s, rep)
		}
	})
}

func FuzzDecodeRouted(f *testing.F) {
	f.Add([]byte(`{"t":"response","s":"S","f":"R0","m":{"jsonrpc":"2.0","id":"r.R0.1","result":{}}}`))
	f.Add([]byte(`{"t":"end","s":"S","f":"R0"}`))
	f.Add([]byte(`{"t":"standalone","s":"S","f":"R0","m":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeRouted(b)
		if err != nil {
			return
		}
		if e.S == "" || (e.T == routeResponse || e.T == routeStandalone) && len(e.M) == 0 {
			t.Fatalf("accepted %q as %+v", b, e)
		}
	})
}

func FuzzDecodeRecord(f *testing.F) {
	owner := strings.Repeat("a", 64)
	f.Add([]byte(`{"v":1,"owner":"` + owner + `","init":{"protocolVersion":"2025-11-25"},"ready":true,"level":"info","subs":["file:///a"],"home":"R0","get":"R1"}`))
	f.Add([]byte(`{"v":1,"owner":"` + owner + `"}`))
	f.Add([]byte(`{"v":1,"owner":"` + owner + `","home":"R0","lead":"-"}`))
	f.Add([]byte(`{"v":1,"owner":"` + owner + `","home":"R0","lead":"R2","get":"a.b"}`))
	f.Add([]byte(`{"v":1,"owner":"` + owner + `","init":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := decodeRecord(b)
		if err != nil {
			return
		}
		if rec.V != sessionRecordVersion || len(rec.Owner) != 64 || len(rec.Init) > 0 && rec.Init[0] != '{' {
			t.Fatalf("accepted %q", b)
		}
		for _, r := range []string{rec.Home, rec.Get} {
			if r != "" && !replicaName(r) {
				t.Fatalf("accepted replica %q in %q", r, b)
			}
		}
		if rec.Lead != "" && rec.Lead != leadVacant && !replicaName(rec.Lead) {
			t.Fatalf("accepted lead %q in %q", rec.Lead, b)
		}
		// What is accepted survives a round trip.
		again, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeRecord(again); err != nil {
			t.Fatalf("round trip of %q: %v", b, err)
		}
	})
}

// TestReplicasResumeCopyStream: a stream produced by a copy that replica 1
// rebuilt is resumed (GET with Last-Event-ID) through replica 2, which
// holds no copy, and through replica 0, which created the session: both
// replay the events after the one named and send the client back for
// more while replica 1 runs; once it is gone, a resumption with every
// event answers 405.
func TestReplicasResumeCopyStream(t *testing.T) {
	store := &sharedStore{}
	reps := startReplicas(t, 3, store)
	sid := initShared(t, reps[0].url)
	r := rawDo(t, http.MethodPost, reps[1].url, sessionHeaders(sid), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","arguments":{"n":3},"_meta":{"progressToken":"p"}}}`)
	if r.status != http.StatusOK {
		t.Fatalf("call on replica 1: %d %s", r.status, r.body)
	}
	var ids []string
	for _, ev := range sseEvents(t, r.body) {
		if len(ev.data) > 0 {
			ids = append(ids, ev.id)
		}
	}
	if len(ids) != 4 || streamProducer(strings.Split(ids[0], "_")[0]) != "R1" {
		t.Fatalf("event ids %q: want 4 on a stream named for R1", ids)
	}
	for _, i := range []int{2, 0} {
		hdr := sessionHeaders(sid)
		hdr["Last-Event-ID"] = ids[0]
		r := rawDo(t, http.MethodGet, reps[i].url, hdr, "")
		var got []string
		for _, ev := range sseEvents(t, r.body) {
			if len(ev.data) > 0 {
				got = append(got, ev.id)
			}
		}
		if r.status != http.StatusOK || strings.Join(got, ",") != strings.Join(ids[1:], ",") || !strings.Contains(r.body, "retry:") {
			t.Fatalf("resumed on replica %d: %d %q %q", i, r.status, got, r.body)
		}
	}
	reps[1].h.Close() // replica 1 stops: its stream will get nothing more
	for _, i := range []int{2, 0} {
		hdr := sessionHeaders(sid)
		hdr["Last-Event-ID"] = ids[3]
		eventually(t, "405 once the producer is gone", func() bool {
			return rawDo(t, http.MethodGet, reps[i].url, hdr, "").status == http.StatusMethodNotAllowed
		})
	}
}

// TestHTTPSessionFits: an httpSession fits the runtime's 256-byte size
// class (the next is 288): every idle session would pay for a field more,
// such as the replica state a shared session has (rep).
func TestHTTPSessionFits(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are checked on 64-bit systems")
	}
	if got := unsafe.Sizeof(httpSession{}); got > 256 {
		t.Errorf("an httpSession takes %d bytes, over 256", got)
	}
}

// TestReplicasCancel: a request in flight on replica 0 is cancelled by a
// notifications/cancelled that the client POSTed to replica 1: its
// handler ends and its stream ends without a response, as on one
// replica.
func TestReplicasCancel(t *testing.T) {
	store := &sharedStore{}
	reps := startReplicas(t, 2, store)
	sid := initShared(t, reps[0].url)
	replicaCall(t, reps[1].url, sid, 2, "who") // replica 1 holds a copy
	blocked := rawAsync(http.MethodPost, reps[0].url, sessionHeaders(sid), `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
	eventually(t, "the call is in flight on replica 0", func() bool { return reps[0].h.exchanges.Load() == 1 })
	r := rawDo(t, http.MethodPost, reps[1].url, sessionHeaders(sid), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"enough"}}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("cancel on replica 1: %d %s", r.status, r.body)
	}
	select {
	case got := <-blocked:
		if got.err != nil || got.status != http.StatusOK || strings.Contains(got.body, `"id":5`) {
			t.Fatalf("the cancelled call: %d %v %q", got.status, got.err, got.body)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call was not cancelled")
	}
}

// TestReplicasStandaloneTakeOver: the client's GET on replica 1 drops;
// it resumes with Last-Event-ID on replica 2, which sends the events of
// replica 1's stream the client missed and then holds the standalone
// stream itself: what replica 0 sends next arrives there.
func TestReplicasStandaloneTakeOver(t *testing.T) {
	store := &sharedStore{}
	reps := startReplicas(t, 3, store)
	sid := initShared(t, reps[0].url)
	get := openSSE(t, sessionRequest(t, http.MethodGet, reps[1].url, sid, ""))
	eventually(t, "replica 0 knows replica 1 holds the GET", func() bool {
		s := reps[0].h.session(sid)
		return s != nil && s.rep.standaloneOwner() == "R1"
	})
	notify := func(text string) { t.Helper(); notifyLog(t, reps[0].h, sid, text) }
	notify("one")
	notify("two")
	var ids []string
	for range 2 {
		select {
		case ev := <-get.events:
			ids = append(ids, ev.id)
		case <-time.After(20 * time.Second):
			t.Fatal("no event on the GET")
		}
	}
	get.resp.Body.Close()
	if streamProducer(strings.Split(ids[0], "_")[0]) != "R1" {
		t.Fatalf("event ids %q: not replica 1's stream", ids)
	}
	req := sessionRequest(t, http.MethodGet, reps[2].url, sid, "")
	req.Header.Set("Last-Event-ID", ids[0]) // "two" was lost with the connection
	again := openSSE(t, req)
	if m := again.next(t); !strings.Contains(fmt.Sprint(m["params"]), "two") {
		t.Fatalf("first event after the take-over: %v, want the missed one", m)
	}
	eventually(t, "replica 0 knows replica 2 holds the GET", func() bool {
		return reps[0].h.session(sid).rep.standaloneOwner() == "R2"
	})
	notify("three")
	if m := again.next(t); !strings.Contains(fmt.Sprint(m["params"]), "three") {
		t.Fatalf("next event: %v, want three", m)
	}
}

// FuzzStreamProducer: the replica named by a stream id (from a client's
// Last-Event-ID) is a prefix of it that replicaName accepts, and only
// "0" and "<replica>-0" are standalone streams.
func FuzzStreamProducer(f *testing.F) {
	for _, s := range []string{"0_1", "R1-0_3", "R1-12_2", "-0_1", "a-b-0_5", "1_0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, last string) {
		streamID, _, ok := parseEventID(last)
		if !ok {
			return
		}
		p := streamProducer(streamID)
		if p != "" && (!strings.HasPrefix(streamID, p+"-") || !replicaName(p)) {
			t.Fatalf("streamProducer(%q) = %q", streamID, p)
		}
		if isStandaloneID(streamID) && streamID != "0" && (p == "" || streamID != p+"-0") {
			t.Fatalf("isStandaloneID(%q) with producer %q", streamID, p)
		}
	})
}

// notifyLog sends, from h's copy of session sid, a log message whose data
// is text: a marker the tests look for on the client's streams.
func notifyLog(t *testing.T, h *Handler, sid, text string) {
	t.Helper()
	ss := h.session(sid).ss
	if err := ss.Notify(context.Background(), mcp.NotificationMessage, &mcp.LoggingMessageNotificationParams{Level: mcp.LoggingLevelError, Data: json.RawMessage(`"` + text + `"`)}); err != nil {
		t.Fatal(err)
	}
}
