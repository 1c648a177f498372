package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A host runs the servers under test and reports the cost of the process
// they run in. The shared host runs them in this process, beside the load
// client; the split host runs them in a child process of their own (see
// serveChild), so that the figures are the servers' alone.
type host interface {
	// start serves a fresh instance of the named implementation on
	// 127.0.0.1 and returns its URL and a handle for stop.
	start(ctx context.Context, name string) (url string, id int, err error)
	// stop closes an instance made by start.
	stop(ctx context.Context, id int) error
	// stats reports the servers' process, after collecting garbage as
	// collect says.
	stats(ctx context.Context, c collect) (procStats, error)
	// close ends the host and every instance still served.
	close() error
}

// procStats are cumulative and current figures of one process.
type procStats struct {
	Mallocs    uint64 `json:"mallocs"`     // heap objects allocated so far
	TotalAlloc uint64 `json:"total_alloc"` // heap bytes allocated so far
	CPUNanos   int64  `json:"cpu_ns"`      // user+system CPU time so far
	HeapStack  uint64 `json:"heap_stack"`  // live heap plus goroutine stacks
	RSS        uint64 `json:"rss"`         // resident set size (0 where unknown)
}

// collect says what stats does first.
type collect int

const (
	collectNone collect = iota // nothing: cumulative figures only
	collectGC                  // a garbage collection
	collectFree                // a garbage collection that also returns free memory to the OS, so that heap and resident figures are live memory
)

// readStats reads this process's figures, after collecting as c says.
func readStats(c collect) procStats {
	switch c {
	case collectGC:
		runtime.GC()
	case collectFree:
		runtime.GC()
		debug.FreeOSMemory()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return procStats{
		Mallocs:    m.Mallocs,
		TotalAlloc: m.TotalAlloc,
		CPUNanos:   int64(cpuTime()),
		HeapStack:  m.HeapAlloc + m.StackInuse,
		RSS:        residentBytes(),
	}
}

// instances serves implementations by name on loopback listeners; both
// hosts keep theirs in one.
type instances struct {
	mu   sync.Mutex
	next int
	live map[int]func()
}

func (in *instances) start(name string) (string, int, error) {
	for _, im := range impls() {
		if im.name != name {
			continue
		}
		h, release := im.new()
		srv := httptest.NewServer(h)
		in.mu.Lock()
		defer in.mu.Unlock()
		if in.live == nil {
			in.live = map[int]func(){}
		}
		in.next++
		in.live[in.next] = func() { srv.Close(); release() }
		return srv.URL, in.next, nil
	}
	return "", 0, fmt.Errorf("no implementation named %q", name)
}

func (in *instances) stop(id int) error {
	in.mu.Lock()
	f, ok := in.live[id]
	delete(in.live, id)
	in.mu.Unlock()
	if !ok {
		return fmt.Errorf("no instance %d", id)
	}
	f()
	return nil
}

func (in *instances) closeAll() {
	in.mu.Lock()
	fs := in.live
	in.live = nil
	in.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// sharedHost serves the implementations in this process.
type sharedHost struct{ in instances }

func (h *sharedHost) start(_ context.Context, name string) (string, int, error) {
	return h.in.start(name)
}
func (h *sharedHost) stop(_ context.Context, id int) error { return h.in.stop(id) }
func (h *sharedHost) stats(_ context.Context, c collect) (procStats, error) {
	return readStats(c), nil
}
func (h *sharedHost) close() error { h.in.closeAll(); return nil }

// childEnv, set to a list of CPUs ("" for none), makes this program the
// split host's child: see serveChild.
const childEnv = "MCPSTACK_BENCH_CHILD"

// splitHost serves the implementations in a child process (this same
// program, started with childEnv set), driven over a control endpoint.
type splitHost struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	control string
	hc      *http.Client
}

// startChild starts the child process, pinned to cpus when cpus is not
// empty, and waits for its control endpoint.
func startChild(cpus []int) (*splitHost, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-test.run=^$") // the flag keeps a test binary quiet
	if !strings.HasSuffix(exe, ".test") {
		cmd = exec.Command(exe)
	}
	cmd.Env = append(os.Environ(), childEnv+"="+formatCPUs(cpus))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stdin.Close()
		cmd.Wait()
		return nil, fmt.Errorf("bench child: no control address: %w", err)
	}
	return &splitHost{
		cmd:     cmd,
		stdin:   stdin,
		control: strings.TrimSpace(line),
		hc:      &http.Client{Timeout: 2 * time.Minute},
	}, nil
}

// serveChild is the child's whole life: pin to the CPUs listed in the
// childEnv variable, serve the control endpoint on 127.0.0.1, print its
// URL on stdout, and exit when stdin closes (the parent is gone).
func serveChild() error {
	cpus, err := parseCPUs(os.Getenv(childEnv))
	if err != nil {
		return err
	}
	if len(cpus) > 0 {
		if err := pinProcess(cpus); err != nil {
			return err
		}
		runtime.GOMAXPROCS(len(cpus))
	}
	var in instances
	mux := http.NewServeMux()
	mux.HandleFunc("POST /start", func(w http.ResponseWriter, r *http.Request) {
		url, id, err := in.start(r.FormValue("impl"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"url": url, "id": id})
	})
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.Atoi(r.FormValue("id"))
		if err := in.stop(id); err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
		}
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		c, _ := strconv.Atoi(r.FormValue("collect"))
		json.NewEncoder(w).Encode(readStats(collect(c)))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go http.Serve(ln, mux)
	fmt.Printf("http://%s\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin)
	in.closeAll()
	return nil
}

func (h *splitHost) do(ctx context.Context, method, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, h.control+path, nil)
	if err != nil {
		return err
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return fmt.Errorf("bench child: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("bench child: %s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func (h *splitHost) start(ctx context.Context, name string) (string, int, error) {
	var v struct {
		URL string `json:"url"`
		ID  int    `json:"id"`
	}
	err := h.do(ctx, http.MethodPost, "/start?impl="+url.QueryEscape(name), &v)
	return v.URL, v.ID, err
}

func (h *splitHost) stop(ctx context.Context, id int) error {
	return h.do(ctx, http.MethodPost, "/stop?id="+strconv.Itoa(id), nil)
}

func (h *splitHost) stats(ctx context.Context, c collect) (procStats, error) {
	var s procStats
	err := h.do(ctx, http.MethodGet, "/stats?collect="+strconv.Itoa(int(c)), &s)
	return s, err
}

func (h *splitHost) close() error {
	h.hc.CloseIdleConnections()
	h.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		h.cmd.Process.Kill()
		return errors.Join(errors.New("bench child did not exit; killed"), <-done)
	}
}

// formatCPUs writes a CPU list as "0,1,2".
func formatCPUs(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// parseCPUs reads a CPU list written by formatCPUs ("" is none).
func parseCPUs(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var cpus []int
	for _, f := range strings.Split(s, ",") {
		c, err := strconv.Atoi(f)
		if err != nil || c < 0 {
			return nil, fmt.Errorf("bad CPU %q in %q", f, s)
		}
		cpus = append(cpus, c)
	}
	return cpus, nil
}

// splitCPUs divides the CPUs this process may run on between the servers'
// process (the first half, at least one) and the client's (the rest). It
// returns two empty lists when there are fewer than two CPUs or they
// cannot be read.
func splitCPUs() (server, client []int) {
	all, err := allowedCPUs()
	if err != nil || len(all) < 2 {
		return nil, nil
	}
	half := len(all) / 2
	return all[:half], all[half:]
}
