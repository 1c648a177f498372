package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/store/redis"
)

// lockedBuffer is a buffer safe for one writer and concurrent readers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// servedBy records, for each HTTP request a client sends through the
// round-robin proxy, its Mcp-Method and the replica that answered it
// (X-Test-Replica).
type servedBy struct {
	mu   sync.Mutex
	hits []hit
}

type hit struct {
	method  string
	replica int
}

func (s *servedBy) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		i, perr := strconv.Atoi(resp.Header.Get("X-Test-Replica"))
		if perr != nil {
			i = -1
		}
		s.mu.Lock()
		s.hits = append(s.hits, hit{r.Header.Get("Mcp-Method"), i})
		s.mu.Unlock()
	}
	return resp, err
}

// since returns the hits after the first n.
func (s *servedBy) since(n int) []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hit(nil), s.hits[n:]...)
}

func (s *servedBy) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.hits)
}

// taskPost posts a 2026-07-28 request that declares the tasks extension
// to endpoint and returns its result (failing on an error) and the
// replica that served it.
func taskPost(t *testing.T, endpoint, method, params string) (map[string]any, int) {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		t.Fatal(err)
	}
	p["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{mcp.TasksExtensionID: map[string]any{}}}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": p})
	var name string
	for _, k := range []string{"name", "taskId"} {
		if v, ok := p[k].(string); ok {
			name = v
		}
	}
	resp := postModern(t, endpoint, method, name, body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m struct {
		Result map[string]any  `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Result == nil {
		t.Fatalf("%s on %s: %d %s", method, endpoint, resp.StatusCode, b)
	}
	replica, _ := strconv.Atoi(resp.Header.Get("X-Test-Replica"))
	return m.Result, replica
}

// waitLog waits until log holds want.
func waitLog(t *testing.T, log *lockedBuffer, want string) {
	t.Helper()
	waitFor(t, func() bool { return strings.Contains(log.String(), want) },
		func() string { return fmt.Sprintf("the log never said %q; it holds:\n%s", want, log.String()) })
}

// waitFor polls cond until it holds, and fails the test with why() if it
// still does not after a minute (generous: the replicas' processes share
// a loaded machine).
func waitFor(t *testing.T, cond func() bool, why func() string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(why())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeReplicasModern: the 2026-07-28 points of the replicas contract
// (#21), on three real `mcpstack serve --redis` processes behind a plain
// round-robin proxy, with our client, modern by default:
//   - consecutive requests go to different replicas, and all succeed;
//   - an MRTR round answered on one replica is retried on another;
//   - a subscriptions/listen stream on one replica receives one
//     notification per change;
//   - a task started on one replica is polled with tasks/get on the
//     others until completed;
//   - a task cancelled through a replica other than its runner stops its
//     handler there, and every replica reports it cancelled;
//   - the kill -9 of a task's runner leaves the task failed (its lease
//     lapsed), not working forever.
func TestServeReplicasModern(t *testing.T) {
	redisURL, prefix := freshRedisPrefix(t)
	root, file := fileRoot(t)
	const lease = 2 * time.Second
	var backends []string
	logs := make([]*lockedBuffer, 3)
	procs := make([]interface{ Kill() error }, 3)
	for i := range 3 {
		logs[i] = &lockedBuffer{}
		u, cmd := startServeReplicaLog(t, logs[i], "-v", "--redis", redisURL, "--redis-prefix", prefix, "--root", root, "--redis-task-lease", lease.String())
		backends = append(backends, u)
		procs[i] = cmd.Process
	}
	proxy := startRRProxy(t)
	proxy.set(backends...)
	endpoint := proxy.URL + "/mcp"

	rec := &servedBy{}
	updates := make(chan string, 16)
	toolsChanged := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "replicas-test", Version: "1"}, &mcp.ClientOptions{
		TasksExtension: true,
		ElicitationHandler: func(context.Context, *mcp.ClientSession, mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada", "colour": "red"}}, nil
		},
		ResourceUpdatedHandler: func(_ context.Context, _ *mcp.ClientSession, p *mcp.ResourceUpdatedNotificationParams) {
			updates <- p.URI
		},
		ToolListChangedHandler: func(context.Context, *mcp.ClientSession) { toolsChanged <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcphttp.ClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.Era() != mcp.EraModern {
		t.Fatalf("era %v, want 2026-07-28", cs.Era())
	}

	t.Run("every request on any replica", func(t *testing.T) {
		n := rec.len()
		for i := range 6 {
			res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi ` + strconv.Itoa(i) + `"}`)})
			if err != nil || (res.IsError != nil && *res.IsError) || !strings.Contains(jsonText(t, res), "hi "+strconv.Itoa(i)) {
				t.Fatalf("call %d: %v, %v", i, res, err)
			}
		}
		seen := map[int]bool{}
		prev := -1
		for _, h := range rec.since(n) {
			if h.replica == prev {
				t.Errorf("two consecutive requests on replica %d: %v", prev, rec.since(n))
			}
			prev = h.replica
			seen[h.replica] = true
		}
		if len(seen) != 3 {
			t.Errorf("the calls reached replicas %v, want all three", seen)
		}
	})

	t.Run("MRTR round on one replica, retry on another", func(t *testing.T) {
		n := rec.len()
		res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "ask", Arguments: json.RawMessage(`{}`)})
		if err != nil || !strings.Contains(jsonText(t, res), "Hello, Ada!") {
			t.Fatalf("ask: %v, %v", res, err)
		}
		var calls []int
		for _, h := range rec.since(n) {
			if h.method == mcp.MethodToolsCall {
				calls = append(calls, h.replica)
			}
		}
		if len(calls) != 2 || calls[0] == calls[1] {
			t.Fatalf("the round and its retry were served by %v, want two different replicas", calls)
		}
	})

	t.Run("listen", func(t *testing.T) {
		var uri string
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(r.URI, "/a.txt") {
				uri = r.URI
			}
		}
		if uri == "" {
			t.Fatal("a.txt is not listed")
		}
		n := rec.len()
		sub, err := cs.Listen(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{uri}, ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close(context.Background())
		listener := -1
		for _, h := range rec.since(n) {
			if h.method == mcp.MethodSubscriptionsListen {
				listener = h.replica
			}
		}
		time.Sleep(2 * pollInterval) // every watcher has its first look
		if err := os.WriteFile(file, []byte("two, longer"), 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-updates:
			if got != uri {
				t.Fatalf("update for %s", got)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("no notifications/resources/updated on the listen stream")
		}
		// A change another process publishes on the bus, after the
		// update arrived: one publisher's messages arrive in order, and
		// every replica's announcement of the file change was made
		// before its update could reach the stream; wait past the next
		// polls too, for a late second announcement.
		publishToolsChanged(t, redisURL, prefix)
		select {
		case <-toolsChanged:
		case <-time.After(60 * time.Second):
			t.Fatal("no notifications/tools/list_changed for the change published on the bus")
		}
		time.Sleep(4 * pollInterval)
		if len(updates) != 0 || len(toolsChanged) != 0 {
			t.Fatalf("listener on replica %d: %d more updates and %d more list changes, want one notification per change", listener, len(updates), len(toolsChanged))
		}
	})

	t.Run("task polled on the other replicas", func(t *testing.T) {
		n := rec.len()
		res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "sleep", Arguments: json.RawMessage(`{"ms":3500}`)})
		if err != nil || !strings.Contains(jsonText(t, res), "slept 3500 ms") {
			t.Fatalf("sleep as a task: %v, %v", res, err)
		}
		runner, polls := -1, map[int]int{}
		for _, h := range rec.since(n) {
			switch h.method {
			case mcp.MethodToolsCall:
				runner = h.replica
			case mcp.MethodTasksGet:
				polls[h.replica]++
			}
		}
		if !strings.Contains(logs[runner].String(), "mcp: task created") {
			t.Fatalf("replica %d answered the call but did not create the task", runner)
		}
		for i := range 3 {
			if i != runner && polls[i] == 0 {
				t.Errorf("no tasks/get on replica %d (runner %d, polls %v)", i, runner, polls)
			}
		}
	})

	t.Run("cancel through another replica", func(t *testing.T) {
		created, runner := taskPost(t, endpoint, mcp.MethodToolsCall, `{"name":"sleep","arguments":{"ms":600000}}`)
		id, _ := created["taskId"].(string)
		if created["resultType"] != "task" || id == "" {
			t.Fatalf("tools/call: %v", created)
		}
		waitLog(t, logs[runner], "task="+id)
		var err error
		for range 3 {
			n := rec.len()
			err = cs.Call(ctx, mcp.MethodTasksCancel, map[string]string{"taskId": id}, nil)
			if h := rec.since(n); len(h) == 1 && h[0].replica != runner {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		waitLog(t, logs[runner], `"mcp: task handler returned after its task ended; outcome dropped" task=`+id)
		for i, b := range backends {
			got, _ := taskPost(t, b+"/mcp", mcp.MethodTasksGet, `{"taskId":"`+id+`"}`)
			if got["status"] != "cancelled" {
				t.Errorf("tasks/get on replica %d: %v", i, got)
			}
		}
	})

	t.Run("runner killed", func(t *testing.T) {
		created, runner := taskPost(t, endpoint, mcp.MethodToolsCall, `{"name":"sleep","arguments":{"ms":600000}}`)
		id, _ := created["taskId"].(string)
		if id == "" {
			t.Fatalf("tools/call: %v", created)
		}
		other := backends[(runner+1)%3] + "/mcp"
		if got, _ := taskPost(t, other, mcp.MethodTasksGet, `{"taskId":"`+id+`"}`); got["status"] != "working" {
			t.Fatalf("tasks/get on another replica before the kill: %v", got)
		}
		if err := procs[runner].Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		var got map[string]any
		for {
			got, _ = taskPost(t, other, mcp.MethodTasksGet, `{"taskId":"`+id+`"}`)
			if got["status"] != "working" || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		msg, _ := got["statusMessage"].(string)
		if got["status"] != "failed" || !strings.Contains(msg, "lease lapsed") {
			t.Fatalf("tasks/get after the runner's kill: %v, want failed, its lease lapsed", got)
		}
		errObj, _ := got["error"].(map[string]any)
		if errObj == nil || !strings.Contains(fmt.Sprint(errObj["message"]), "lease lapsed") {
			t.Errorf("the failed task's error: %v", got["error"])
		}
		third := backends[(runner+2)%3] + "/mcp"
		if again, _ := taskPost(t, third, mcp.MethodTasksGet, `{"taskId":"`+id+`"}`); again["status"] != "failed" {
			t.Errorf("tasks/get on the third replica: %v", again)
		}
	})
}

// publishToolsChanged publishes a tools/list_changed on the replicas'
// bus, as another replica would.
func publishToolsChanged(t *testing.T, redisURL, prefix string) {
	t.Helper()
	opt, err := goredis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := goredis.NewClient(opt)
	defer rdb.Close()
	msg, err := mcp.Change{Origin: "test", Method: mcp.NotificationToolsListChanged}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := redis.NewBus(rdb, prefix, redis.BusOptions{}).Publish(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
}
