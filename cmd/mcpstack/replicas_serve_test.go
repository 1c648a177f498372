package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// affinityProxy stands for a load balancer in front of replicas of
// `mcpstack serve`: a session's requests go to the replica that created it
// (sticky routing on Mcp-Session-Id, as the README asks of a deployment),
// other requests and every resumption (GET with Last-Event-ID) round-robin
// over the live replicas, and a replica marked dead (its health check
// failed) gets nothing. Each response says in X-Test-Replica which replica
// served it.
type affinityProxy struct {
	URL string
	mu  sync.Mutex
	rps []*httputil.ReverseProxy
	up  []bool
	n   int
	own map[string]int // session -> replica
}

func startAffinityProxy(t *testing.T, backends []string) *affinityProxy {
	t.Helper()
	p := &affinityProxy{own: map[string]int{}}
	for i, b := range backends {
		p.rps = append(p.rps, newReplicaProxy(b, i, func(r *http.Response) {
			if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
				p.mu.Lock()
				if _, ok := p.own[sid]; !ok {
					p.own[sid] = i
				}
				p.mu.Unlock()
			}
		}))
		p.up = append(p.up, true)
	}
	p.URL = serveProxy(t, p)
	return p
}

func (p *affinityProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	i, sticky := p.own[r.Header.Get("Mcp-Session-Id")]
	if !sticky || r.Header.Get("Last-Event-ID") != "" || !p.up[i] {
		for {
			i = p.n % len(p.rps)
			p.n++
			if p.up[i] {
				break
			}
		}
	}
	rp := p.rps[i]
	p.mu.Unlock()
	if bufferBody(w, r) {
		rp.ServeHTTP(w, r)
	}
}

func (p *affinityProxy) markDead(i int) {
	p.mu.Lock()
	p.up[i] = false
	p.mu.Unlock()
}

// startServeReplica runs `mcpstack serve` (this test binary) and returns
// its base URL (without /mcp) and its process.
func startServeReplica(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	return startServeReplicaLog(t, io.Discard, args...)
}

// startServeReplicas starts n replicas with args (startServeReplica) and
// returns their base URLs and processes.
func startServeReplicas(t *testing.T, n int, args ...string) ([]string, []*exec.Cmd) {
	t.Helper()
	var urls []string
	var cmds []*exec.Cmd
	for range n {
		u, cmd := startServeReplica(t, args...)
		urls, cmds = append(urls, u), append(cmds, cmd)
	}
	return urls, cmds
}

// fileRoot returns a new directory for --root holding one file, a.txt
// ("one"), and that file's path.
func fileRoot(t *testing.T) (root, file string) {
	t.Helper()
	root = t.TempDir()
	file = filepath.Join(root, "a.txt")
	if err := os.WriteFile(file, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, file
}

// startServeReplicaLog is startServeReplica, with what the process writes
// to its standard error after its first line copied to log.
func startServeReplicaLog(t *testing.T, log io.Writer, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(self(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	br := bufio.NewReader(stderr)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("serve said nothing: %v", err)
	}
	go io.Copy(log, br)
	const prefix = "mcpstack serve: MCP at "
	if !strings.HasPrefix(line, prefix) {
		t.Fatalf("serve said %q", line)
	}
	return strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(line, prefix)), "/mcp"), cmd
}

// sseEvent is one event of an SSE body.
type sseEvent struct{ id, data string }

// readSSE calls each with the events of r as they arrive, until r ends or
// each returns false.
func readSSE(r io.Reader, each func(sseEvent) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev != (sseEvent{}) && !each(ev) {
				return nil
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			ev.id = line[4:]
		case strings.HasPrefix(line, "data: "):
			ev.data += line[6:]
		}
	}
	return sc.Err()
}

const replicaVersion = "2025-11-25"

// mcpPost posts a JSON-RPC message for the session (none: initialize).
func mcpPost(t *testing.T, endpoint, sid, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", replicaVersion)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// initSession initializes a session through endpoint and returns its id.
func initSession(t *testing.T, endpoint string) string {
	t.Helper()
	resp := mcpPost(t, endpoint, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+replicaVersion+`","capabilities":{},"clientInfo":{"name":"replicas-test","version":"1"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	resp = mcpPost(t, endpoint, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", resp.StatusCode)
	}
	return sid
}

// resumeGet sends a GET with Last-Event-ID for the session.
func resumeGet(t *testing.T, endpoint, sid, last string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, endpoint, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", replicaVersion)
	req.Header.Set("Last-Event-ID", last)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// eventSeq returns the sequence number of an event id "STREAM_SEQ".
func eventSeq(t *testing.T, id string) (string, int64) {
	t.Helper()
	i := strings.LastIndexByte(id, '_')
	seq, err := strconv.ParseInt(id[i+1:], 10, 64)
	if i <= 0 || err != nil {
		t.Fatalf("event id %q", id)
	}
	return id[:i], seq
}

// TestServeReplicasKill runs three `mcpstack serve --redis` processes on
// one Redis behind a load balancer: a tool call streams progress from
// replica k, which is killed (SIGKILL) mid-stream; the client resumes with
// Last-Event-ID through the other replicas, round-robin, until one says
// the stream is over. Every event replica k produced reaches the client
// exactly once: the ids the client saw, before and after the kill, are
// 1..M without a gap or a repeat, and M is the last event Redis holds for
// the stream.
func TestServeReplicasKill(t *testing.T) {
	redisURL, prefix := freshRedisPrefix(t)
	// A generous Redis timeout: on a loaded CI machine a command can take
	// seconds, and a timed-out append ends the stream.
	backends, procs := startServeReplicas(t, 3, "--redis", redisURL, "--redis-prefix", prefix, "--redis-timeout", "10s")
	proxy := startAffinityProxy(t, backends)
	endpoint := proxy.URL + "/mcp"

	sid := initSession(t, endpoint)
	proxy.mu.Lock()
	k := proxy.own[sid]
	proxy.mu.Unlock()
	resp := mcpPost(t, endpoint, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{"n":1000,"interval_ms":20},"_meta":{"progressToken":"t"}}}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Test-Replica") != strconv.Itoa(k) {
		t.Fatalf("tools/call: %d at replica %s, want replica %d", resp.StatusCode, resp.Header.Get("X-Test-Replica"), k)
	}
	var stream string
	var seen []int64
	var head bytes.Buffer // what the stream began with, shown if it carried no event
	readErr := readSSE(io.TeeReader(resp.Body, &limitedWriter{&head, 2048}), func(ev sseEvent) bool {
		st, seq := eventSeq(t, ev.id)
		stream = st
		if ev.data != "" {
			seen = append(seen, seq)
		}
		return len(seen) < 15
	})
	// The client stops reading; replica k goes on producing (into the
	// connection's buffers and into Redis) for a while, then dies: those
	// events the client has not read.
	time.Sleep(500 * time.Millisecond)
	if len(seen) == 0 {
		t.Fatalf("the tool call's stream carried no event (%s, read error %v): %q", resp.Header.Get("Content-Type"), readErr, head.String())
	}
	if err := procs[k].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	procs[k].Wait()
	proxy.markDead(k)
	resp.Body.Close()
	killedAfter := len(seen)

	served := map[string]int{}
	deadline := time.Now().Add(90 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("the stream never ended; %d events", len(seen))
		}
		last := fmt.Sprintf("%s_%d", stream, seen[len(seen)-1])
		r := resumeGet(t, endpoint, sid, last)
		served[r.Header.Get("X-Test-Replica")]++
		if r.StatusCode == http.StatusMethodNotAllowed {
			r.Body.Close()
			break
		}
		if r.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(r.Body)
			t.Fatalf("resume after %s at replica %s: %d %s", last, r.Header.Get("X-Test-Replica"), r.StatusCode, b)
		}
		readSSE(r.Body, func(ev sseEvent) bool {
			if ev.data != "" {
				_, seq := eventSeq(t, ev.id)
				seen = append(seen, seq)
			}
			return true
		})
		r.Body.Close()
		time.Sleep(200 * time.Millisecond)
	}
	for i, seq := range seen {
		if seq != int64(i+1) {
			t.Fatalf("event %d of the client is %d: lost or repeated events around the kill (after %d): %v", i, seq, killedAfter, seen)
		}
	}
	opt, _ := goredis.ParseURL(redisURL)
	rdb := goredis.NewClient(opt)
	defer rdb.Close()
	lastKept, err := rdb.HGet(context.Background(), prefix+"ev:{"+sid+"}", "l:"+stream).Int64()
	if err != nil || lastKept != int64(len(seen)) {
		t.Fatalf("Redis holds events up to %d (%v); the client got %d", lastKept, err, len(seen))
	}
	if len(seen) <= killedAfter {
		t.Errorf("no event reached the client after the kill (%d before it): the test proves nothing", killedAfter)
	}
	if served[strconv.Itoa(k)] > 0 || len(served) < 2 {
		t.Errorf("resumptions served by replicas %v (killed: %d), want both others", served, k)
	}
	t.Logf("%d events before the kill, %d after, through replicas %v", killedAfter, len(seen)-killedAfter, served)
}

// TestServeRedisFlags: the Redis flags of serve need --redis and --addr,
// and a Redis that does not answer fails the start within --redis-timeout.
func TestServeRedisFlags(t *testing.T) {
	closed := closedPort(t)
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"redis without addr", []string{"--redis", "redis://127.0.0.1:1/0"}, exitUsage, "give --addr too"},
		{"prefix without redis", []string{"--addr", "127.0.0.1:0", "--redis-prefix", "x:"}, exitUsage, "--redis-prefix needs --redis"},
		{"timeout without redis", []string{"--addr", "127.0.0.1:0", "--redis-timeout", "1s"}, exitUsage, "--redis-timeout needs --redis"},
		{"empty redis", []string{"--addr", "127.0.0.1:0", "--redis", ""}, exitUsage, "--redis needs a URL"},
		{"not a redis URL", []string{"--addr", "127.0.0.1:0", "--redis", "http://x/"}, exitUsage, "--redis"},
		{"zero timeout", []string{"--addr", "127.0.0.1:0", "--redis", "redis://127.0.0.1:1/0", "--redis-timeout", "0s"}, exitUsage, "must be positive"},
		{"batch without redis", []string{"--addr", "127.0.0.1:0", "--redis-max-batch", "8"}, exitUsage, "--redis-max-batch needs --redis"},
		{"queue without redis", []string{"--addr", "127.0.0.1:0", "--redis-max-queued", "8"}, exitUsage, "--redis-max-queued needs --redis"},
		{"zero batch", []string{"--addr", "127.0.0.1:0", "--redis", "redis://127.0.0.1:1/0", "--redis-max-batch", "0"}, exitUsage, "must be positive"},
		{"zero queue", []string{"--addr", "127.0.0.1:0", "--redis", "redis://127.0.0.1:1/0", "--redis-max-queued", "0"}, exitUsage, "must be positive"},
		{"task lease without redis", []string{"--addr", "127.0.0.1:0", "--redis-task-lease", "1s"}, exitUsage, "--redis-task-lease needs --redis"},
		{"zero task lease", []string{"--addr", "127.0.0.1:0", "--redis", "redis://127.0.0.1:1/0", "--redis-task-lease", "0s"}, exitUsage, "must be positive"},
		{"zero max tasks", []string{"--addr", "127.0.0.1:0", "--max-tasks", "0"}, exitUsage, "must be positive"},
		{"zero max active tasks", []string{"--max-active-tasks", "0"}, exitUsage, "must be positive"},
		{"max routed without redis", []string{"--addr", "127.0.0.1:0", "--redis-max-routed", "10"}, exitUsage, "--redis-max-routed needs --redis"},
		{"zero max routed", []string{"--addr", "127.0.0.1:0", "--redis", "redis://127.0.0.1:1/0", "--redis-max-routed", "0"}, exitUsage, "must be positive"},
		{"recheck without redis", []string{"--addr", "127.0.0.1:0", "--redis-recheck", "1s"}, exitUsage, "--redis-recheck needs --redis"},
		{"redis does not answer", []string{"--addr", "127.0.0.1:0", "--redis", "redis://:secretpw@" + closed + "/0", "--redis-timeout", "2s"}, exitFailure, "the store does not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := runCmd(t, "", append([]string{"serve"}, tc.args...)...)
			if r.code != tc.wantCode || !strings.Contains(r.stderr, tc.wantErr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.wantCode, tc.wantErr)
			}
			if strings.Contains(r.stderr, "secretpw") {
				t.Errorf("the error repeats the password: %q", r.stderr)
			}
			if d := time.Since(start); d > 60*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestServeRedisFrozen: while the Redis of `mcpstack serve --redis` does
// not answer (SIGSTOP), a resumption gets 503 with Retry-After within a
// bound, and so does a request on another replica, which cannot read the
// session's record to rebuild it; a tool call on the session's own
// replica is still answered (its events are not kept). Once Redis answers
// again (SIGCONT), resumption works again, and the other replica serves
// the session.
func TestServeRedisFrozen(t *testing.T) {
	serviceURL(t, "MCPSTACK_REDIS_URL") // the services are there: redis-server is installed
	srv := startRedisServer(t)
	base, _ := startServeReplica(t, "--redis", "redis://"+srv.addr+"/0", "--redis-timeout", "1s")
	other, _ := startServeReplica(t, "--redis", "redis://"+srv.addr+"/0", "--redis-timeout", "1s")
	endpoint := base + "/mcp"
	sid := initSession(t, endpoint)
	ping := func(endpoint string) *http.Response {
		resp := mcpPost(t, endpoint, sid, `{"jsonrpc":"2.0","id":90,"method":"ping"}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	call := func(id int) (string, time.Duration) {
		start := time.Now()
		resp := mcpPost(t, endpoint, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, id))
		defer resp.Body.Close()
		var last string
		readSSE(resp.Body, func(ev sseEvent) bool {
			if strings.Contains(ev.data, `"result"`) {
				last = ev.id
			}
			return true
		})
		if resp.StatusCode != http.StatusOK || last == "" {
			t.Fatalf("tools/call %d: %d, no result", id, resp.StatusCode)
		}
		return last, time.Since(start)
	}
	first, _ := call(2)
	stream, _ := eventSeq(t, first)

	srv.signal("STOP")
	start := time.Now()
	r := resumeGet(t, endpoint, sid, stream+"_0")
	r.Body.Close()
	if r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("resume while Redis is frozen: %d, Retry-After %q; want 503 with it", r.StatusCode, r.Header.Get("Retry-After"))
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the 503 took %v with --redis-timeout 1s", d)
	}
	start = time.Now()
	if r := ping(other + "/mcp"); r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("a request on another replica while Redis is frozen: %d, Retry-After %q; want 503 with it", r.StatusCode, r.Header.Get("Retry-After"))
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the other replica's 503 took %v with --redis-timeout 1s", d)
	}
	if _, d := call(3); d > 20*time.Second {
		t.Errorf("a tool call while Redis is frozen took %v", d)
	}
	srv.signal("CONT")
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := resumeGet(t, endpoint, sid, stream+"_0")
		var got []string
		readSSE(r.Body, func(ev sseEvent) bool {
			if ev.data != "" {
				got = append(got, ev.id)
			}
			return true
		})
		r.Body.Close()
		if r.StatusCode == http.StatusOK && len(got) == 1 && got[0] == first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after Redis thawed: %d %q", r.StatusCode, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for ping(other+"/mcp").StatusCode != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("after Redis thawed, the other replica does not serve the session")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// redisServer is a redis-server of the test's own (the shared one is
// never stopped).
type redisServer struct {
	addr string
	cmd  *exec.Cmd
}

func startRedisServer(t *testing.T) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("no redis-server")
	}
	addr := closedPort(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	defer c.Close()
	for i := 0; c.Ping(context.Background()).Err() != nil; i++ {
		if i > 200 {
			t.Fatalf("redis-server on %s does not answer", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &redisServer{addr: addr, cmd: cmd}
}

func (r *redisServer) signal(name string) {
	sig := map[string]syscall.Signal{"STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT}[name]
	r.cmd.Process.Signal(sig)
}

// TestServeReplicasChanges: three `mcpstack serve --redis` replicas serve
// one --root; a session on each subscribes to a file and listens on its
// GET stream. One change of the file reaches each session exactly once:
// the replicas all see it, one announces it (the first to mark that
// version of the file in Redis), on its own sessions and on the bus, and
// the others pass it to theirs.
func TestServeReplicasChanges(t *testing.T) {
	redisURL, prefix := freshRedisPrefix(t)
	root, file := fileRoot(t)
	backends, _ := startServeReplicas(t, 3, "--redis", redisURL, "--redis-prefix", prefix, "--root", root)
	proxy := startAffinityProxy(t, backends)
	endpoint := proxy.URL + "/mcp"

	var uri string
	var mu sync.Mutex
	updates := map[string]int{}
	replicas := map[int]bool{}
	for i := range 3 {
		sid := initSession(t, endpoint)
		proxy.mu.Lock()
		replicas[proxy.own[sid]] = true
		proxy.mu.Unlock()
		if uri == "" {
			resp := mcpPost(t, endpoint, sid, `{"jsonrpc":"2.0","id":2,"method":"resources/list"}`)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, m := range regexp.MustCompile(`"uri":"([^"]+)"`).FindAllStringSubmatch(string(body), -1) {
				if strings.HasSuffix(m[1], "/a.txt") {
					uri = m[1]
				}
			}
			if uri == "" {
				t.Fatal("a.txt is not listed")
			}
		}
		resp := mcpPost(t, endpoint, sid, `{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"`+uri+`"}}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("subscribe: %d", resp.StatusCode)
		}
		req, _ := http.NewRequest(http.MethodGet, endpoint, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", replicaVersion)
		get, err := http.DefaultClient.Do(req)
		if err != nil || get.StatusCode != http.StatusOK {
			t.Fatalf("GET stream of session %d: %v", i, err)
		}
		t.Cleanup(func() { get.Body.Close() })
		go readSSE(get.Body, func(ev sseEvent) bool {
			if strings.Contains(ev.data, "notifications/resources/updated") {
				mu.Lock()
				updates[sid]++
				mu.Unlock()
			}
			return true
		})
	}
	if len(replicas) != 3 {
		t.Fatalf("the sessions are on replicas %v, want one on each", replicas)
	}
	time.Sleep(2 * pollInterval) // every watcher has its first look
	if err := os.WriteFile(file, []byte("two, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(updates) == 3
	}, func() string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprintf("updates per session: %v, want 3 sessions", updates)
	})
	time.Sleep(4 * pollInterval) // a second announcement would arrive now
	mu.Lock()
	defer mu.Unlock()
	for sid, n := range updates {
		if n != 1 {
			t.Errorf("session %s got %d updates for one change, want 1", sid, n)
		}
	}
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	buf *bytes.Buffer
	n   int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if room := w.n - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
