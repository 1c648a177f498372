// Command bench compares mcpstack's Streamable HTTP server with the official
// go-sdk, mark3labs/mcp-go and a bare net/http handler, each serving one
// echo tool on 127.0.0.1, driven by the same raw JSON-RPC client. It prints
// a markdown table (or JSON with -json). See README.md for what is measured.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// config bounds the run.
type config struct {
	Repeats    int    `json:"repeats"`
	Requests   int    `json:"requests_per_level"`
	Levels     []int  `json:"concurrency_levels"`
	Handshakes int    `json:"handshakes"`
	BigCalls   int    `json:"mib_calls"`
	Idle       int    `json:"idle_sessions"`
	Client     string `json:"client"`
	// Only names the servers run, the bare handler always among them;
	// empty runs every one.
	Only []string `json:"only,omitempty"`
	// Mode is "split" (the servers in a child process, pinned to
	// ServerCPUs, the client in this one, pinned to ClientCPUs) or
	// "shared" (one process, both unpinned).
	Mode       string `json:"mode"`
	ServerCPUs []int  `json:"server_cpus,omitempty"`
	ClientCPUs []int  `json:"client_cpus,omitempty"`
	// ServerProcs and ClientProcs are the processes' GOMAXPROCS.
	ServerProcs int `json:"server_gomaxprocs"`
	ClientProcs int `json:"client_gomaxprocs"`
	// HTTP is false when the Streamable HTTP measurements are skipped.
	HTTP bool `json:"http"`
	// Stdio is the number of tools/call lines per stdio level and repeat
	// (0 skips the stdio rows), StdioLevels the numbers in flight.
	Stdio       int   `json:"stdio_messages_per_level"`
	StdioLevels []int `json:"stdio_in_flight"`
	// Redis is whether a Redis was given (-redis): without one the rows
	// on Redis are skipped. The URL itself is not reported.
	Redis bool `json:"redis"`
	// Notify is the number of resource changes timed across replicas
	// (0 skips it; needs Redis).
	Notify int `json:"notify_changes"`
}

// level is the outcome of one batch of tools/call at one concurrency.
type level struct {
	RPS   float64 `json:"rps"`
	P50us float64 `json:"p50_us"`
	P99us float64 `json:"p99_us"`
	// Whole-process figures per request (client and server share it).
	Allocs float64 `json:"allocs_per_req"`
	Bytes  float64 `json:"bytes_per_req"`
	CPUus  float64 `json:"cpu_us_per_req"`
}

// result holds one implementation's medians over the repeats.
type result struct {
	Name string `json:"name"`
	// Modern is true for a row driven in revision 2026-07-28's shape.
	Modern       bool          `json:"modern,omitempty"`
	Calls        map[int]level `json:"tools_call"`
	HandshakesPS float64       `json:"initialize_handshakes_per_s"`
	MiBEchoP50ms float64       `json:"mib_echo_p50_ms"`
	IdleBytes    float64       `json:"idle_session_heap_stack_bytes"`
	IdleRSS      float64       `json:"idle_session_rss_bytes"`
	// HandlerAllocs and HandlerBytes are per tools/call with ServeHTTP
	// called directly (no network, no client), less a no-op handler's.
	HandlerAllocs float64         `json:"handler_allocs_per_req"`
	HandlerBytes  float64         `json:"handler_bytes_per_req"`
	raw           map[int][]level // per repeat
	rawHS, rawMiB []float64
	rawHA, rawHB  []float64
}

func main() {
	if name, ok := os.LookupEnv(stdioEnv); ok {
		if err := serveStdio(name); err != nil {
			fmt.Fprintln(os.Stderr, "bench stdio child:", err)
			os.Exit(1)
		}
		return
	}
	if _, ok := os.LookupEnv(childEnv); ok {
		if err := serveChild(); err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			os.Exit(1)
		}
		return
	}
	var cfg config
	asJSON := flag.Bool("json", false, "print JSON instead of markdown")
	flag.IntVar(&cfg.Repeats, "repeats", 5, "repeats (medians are reported)")
	flag.IntVar(&cfg.Requests, "n", 2000, "tools/call requests per concurrency level and repeat")
	flag.IntVar(&cfg.Handshakes, "handshakes", 500, "initialize handshakes per repeat")
	flag.IntVar(&cfg.BigCalls, "mib", 10, "1 MiB echo calls per repeat")
	flag.IntVar(&cfg.Idle, "idle", 10000, "idle sessions opened per implementation (0 skips)")
	levels := flag.String("c", "1,16,64", "concurrency levels")
	flag.BoolVar(&cfg.HTTP, "http", true, "measure the Streamable HTTP servers")
	flag.IntVar(&cfg.Stdio, "stdio", 2000, "stdio tools/call lines per level and repeat (0 skips the stdio rows)")
	stdioLevels := flag.String("stdio-c", "1,32", "stdio messages in flight, per level")
	flag.StringVar(&cfg.Client, "client", "raw", "load client: raw (a lean HTTP/1.1 client) or nethttp (net/http's)")
	only := flag.String("only", "", "comma-separated servers to run, e.g. mcpstack,mcpstack+otel (the bare handler always runs); empty runs them all")
	redisFlag := flag.String("redis", "", "Redis `URL` for the rows mcpstack+redis and mcpstack×3+redis and the notification latency across replicas (empty: $MCPSTACK_REDIS_URL; neither skips them)")
	flag.IntVar(&cfg.Notify, "notify", 1000, "resource changes timed crossing replicas on Redis, on the bus alone and then end to end through HTTP (0 skips)")
	flag.StringVar(&cfg.Mode, "mode", "split", "split: servers in a child process on half the CPUs, the client in this one on the rest; shared: both in this process")
	flag.Parse()
	if cfg.Client != "raw" && cfg.Client != "nethttp" {
		fmt.Fprintf(os.Stderr, "bench: -client must be raw or nethttp, not %q\n", cfg.Client)
		os.Exit(2)
	}
	if cfg.Mode != "split" && cfg.Mode != "shared" {
		fmt.Fprintf(os.Stderr, "bench: -mode must be split or shared, not %q\n", cfg.Mode)
		os.Exit(2)
	}
	if *only != "" {
		cfg.Only = strings.Split(*only, ",")
		for _, name := range cfg.Only {
			if !slices.ContainsFunc(impls(), func(im impl) bool { return im.name == name }) {
				fmt.Fprintf(os.Stderr, "bench: no server named %q\n", name)
				os.Exit(2)
			}
		}
	}
	if *redisFlag == "" {
		*redisFlag = os.Getenv("MCPSTACK_REDIS_URL")
	}
	// The Redis rows' constructors, here and in the servers' child, read
	// the URL from the environment.
	if err := os.Setenv(redisEnv, *redisFlag); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	cfg.Redis = *redisFlag != ""
	if !cfg.Redis {
		fmt.Fprintln(os.Stderr, "bench: no -redis (nor MCPSTACK_REDIS_URL): the rows on Redis and the notification latency are skipped")
	}
	cfg.Levels = parseLevels(*levels)
	cfg.StdioLevels = parseLevels(*stdioLevels)
	var res []*result
	var err error
	if cfg.HTTP {
		var h host
		if h, err = newHost(&cfg); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		res, err = run(context.Background(), h, cfg, os.Stderr)
		if cerr := h.close(); err == nil && cerr != nil {
			err = cerr
		}
	} else if cfg.Mode == "split" {
		err = pinClient(&cfg)
	}
	var notify *notifyResults
	if err == nil && cfg.HTTP && cfg.Redis && cfg.Notify > 0 {
		fmt.Fprintf(os.Stderr, "notification latency across replicas: %d changes on the bus, %d end to end\n", cfg.Notify, cfg.Notify)
		notify = new(notifyResults)
		notify.Bus, err = crossLatency(context.Background(), *redisFlag, cfg.Notify)
		if err == nil {
			notify.EndToEnd, err = crossLatencyHTTP(context.Background(), cfg.Notify)
		}
	}
	var stdioRes []*stdioResult
	if err == nil && cfg.Stdio > 0 {
		stdioRes, err = runStdio(cfg, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			Config  config         `json:"config"`
			Go      string         `json:"go"`
			Results []*result      `json:"results,omitempty"`
			Notify  *notifyResults `json:"notify_across_replicas,omitempty"`
			Stdio   []*stdioResult `json:"stdio,omitempty"`
		}{cfg, runtime.Version(), res, notify, stdioRes})
		return
	}
	if cfg.HTTP {
		printMarkdown(os.Stdout, cfg, res)
		printRedis(os.Stdout, cfg, res, notify)
	}
	if cfg.Stdio > 0 {
		printStdio(os.Stdout, cfg, stdioRes)
	}
}

// parseLevels parses a comma-separated list of positive counts, exiting
// on a bad one.
func parseLevels(list string) []int {
	var out []int
	for _, f := range strings.Split(list, ",") {
		var c int
		if _, err := fmt.Sscan(f, &c); err != nil || c < 1 {
			fmt.Fprintf(os.Stderr, "bench: bad level %q\n", f)
			os.Exit(2)
		}
		out = append(out, c)
	}
	return out
}

// pinClient pins this process to the client's CPUs of the split layout
// and records the layout in cfg, as newHost does, without starting the
// HTTP servers' child.
func pinClient(cfg *config) error {
	server, client := splitCPUs()
	if len(client) > 0 {
		if err := pinProcess(client); err != nil {
			return err
		}
		runtime.GOMAXPROCS(len(client))
	}
	cfg.ServerCPUs, cfg.ClientCPUs = server, client
	cfg.ServerProcs = max(len(server), 1)
	cfg.ClientProcs = runtime.GOMAXPROCS(0)
	return nil
}

// newHost makes the host that cfg.Mode names and records its CPU layout in
// cfg. In split mode, this process (the client) is pinned to the CPUs
// that the child (the servers) is not given; with fewer than two CPUs,
// neither is pinned.
func newHost(cfg *config) (host, error) {
	if cfg.Mode == "shared" {
		cfg.ServerProcs = runtime.GOMAXPROCS(0)
		cfg.ClientProcs = cfg.ServerProcs
		return &sharedHost{}, nil
	}
	server, client := splitCPUs()
	if len(client) > 0 {
		if err := pinProcess(client); err != nil {
			return nil, err
		}
		runtime.GOMAXPROCS(len(client))
	}
	h, err := startChild(server)
	if err != nil {
		return nil, err
	}
	cfg.ServerCPUs, cfg.ClientCPUs = server, client
	cfg.ServerProcs = len(server)
	if cfg.ServerProcs == 0 {
		cfg.ServerProcs = runtime.GOMAXPROCS(0)
	}
	cfg.ClientProcs = runtime.GOMAXPROCS(0)
	return h, nil
}

// target is one server under test, started once for the run.
type target struct {
	impl
	host     host
	url      string
	instance int // the host's handle
	cl       *client
	sessions []string
	// nextID numbers requests: a session must not reuse a request id (and
	// mcpstack answers a reused one with an error).
	nextID atomic.Int64
}

// id returns a request id not used before on this target.
func (t *target) id() int { return int(t.nextID.Add(1)) + 1 }

// impls are the servers cfg.Only names, in impls' order, the bare
// handler last; the rows on Redis only when a Redis was given.
func (cfg config) impls() []impl {
	var out []impl
	for _, im := range impls() {
		if im.redis && !cfg.Redis {
			continue
		}
		if len(cfg.Only) == 0 || im.bare || slices.Contains(cfg.Only, im.name) {
			out = append(out, im)
		}
	}
	return out
}

func run(ctx context.Context, h host, cfg config, log io.Writer) ([]*result, error) {
	maxC := slices.Max(cfg.Levels)
	var ts []*target
	for _, im := range cfg.impls() {
		url, inst, err := h.start(ctx, im.name)
		if err != nil {
			return nil, err
		}
		t := &target{impl: im, host: h, url: url, instance: inst, cl: newClient(url, maxC, cfg.Client == "raw")}
		t.cl.modern = im.modern
		ts = append(ts, t)
		defer func() { t.cl.close(); h.stop(ctx, inst) }()
		if err := t.open(ctx, maxC, 8); err != nil {
			return nil, fmt.Errorf("%s: %w", im.name, err)
		}
		if err := t.check(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", im.name, err)
		}
		// Warm up connections and code paths.
		if _, err := t.calls(ctx, 200, maxC); err != nil {
			return nil, fmt.Errorf("%s: %w", im.name, err)
		}
	}
	res := make([]*result, len(ts))
	for i, t := range ts {
		res[i] = &result{Name: t.name, Modern: t.modern, Calls: map[int]level{}, raw: map[int][]level{}}
	}
	for rep := range cfg.Repeats {
		for _, c := range cfg.Levels {
			for k := range ts {
				i := (k + rep) % len(ts) // rotate who goes first
				fmt.Fprintf(log, "repeat %d: tools/call C=%d %s\n", rep+1, c, ts[i].name)
				lv, err := ts[i].calls(ctx, cfg.Requests, c)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", ts[i].name, err)
				}
				res[i].raw[c] = append(res[i].raw[c], lv)
			}
		}
		for k := range ts {
			i := (k + rep) % len(ts)
			fmt.Fprintf(log, "repeat %d: handshakes, 1 MiB echo, direct handler %s\n", rep+1, ts[i].name)
			hs, err := ts[i].handshakeRate(ctx, cfg.Handshakes, 16)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", ts[i].name, err)
			}
			res[i].rawHS = append(res[i].rawHS, hs)
			p50, err := ts[i].bigEcho(ctx, cfg.BigCalls)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", ts[i].name, err)
			}
			res[i].rawMiB = append(res[i].rawMiB, p50)
			ha, hb, err := handlerCost(ts[i].impl, cfg.Requests)
			if err != nil {
				return nil, fmt.Errorf("%s: direct: %w", ts[i].name, err)
			}
			res[i].rawHA = append(res[i].rawHA, ha)
			res[i].rawHB = append(res[i].rawHB, hb)
		}
	}
	for _, r := range res {
		for c, lvs := range r.raw {
			r.Calls[c] = level{
				RPS:    median(lvs, func(l level) float64 { return l.RPS }),
				P50us:  median(lvs, func(l level) float64 { return l.P50us }),
				P99us:  median(lvs, func(l level) float64 { return l.P99us }),
				Allocs: median(lvs, func(l level) float64 { return l.Allocs }),
				Bytes:  median(lvs, func(l level) float64 { return l.Bytes }),
				CPUus:  median(lvs, func(l level) float64 { return l.CPUus }),
			}
		}
		r.HandshakesPS = median(r.rawHS, func(f float64) float64 { return f })
		r.MiBEchoP50ms = median(r.rawMiB, func(f float64) float64 { return f })
		r.HandlerAllocs = median(r.rawHA, func(f float64) float64 { return f })
		r.HandlerBytes = median(r.rawHB, func(f float64) float64 { return f })
	}
	if cfg.Idle > 0 {
		for i, im := range cfg.impls() {
			if im.modern {
				continue // no sessions: nothing is held between requests
			}
			fmt.Fprintf(log, "idle sessions: %s\n", im.name)
			b, rss, err := idleBytes(ctx, h, im, cfg.Idle, cfg.Client == "raw")
			if err != nil {
				return nil, fmt.Errorf("%s: %w", im.name, err)
			}
			res[i].IdleBytes, res[i].IdleRSS = b, rss
		}
	}
	return res, nil
}

// check makes sure that the server echoes (the bare one answers 200).
func (t *target) check(ctx context.Context) error {
	out, err := t.cl.call(ctx, t.sessions[0], t.body("hello"))
	if err != nil {
		return err
	}
	if !strings.Contains(string(out), `"text":"hello"`) {
		return fmt.Errorf("tools/call did not echo: %.300s", out)
	}
	return nil
}

// calls runs n tools/call spread over conc workers, each on its own session,
// and measures throughput, latency and the process's allocations and CPU.
func (t *target) calls(ctx context.Context, n, conc int) (level, error) {
	per := n / conc
	if per < 1 {
		per = 1
	}
	lat := make([][]time.Duration, conc)
	bodies := make([][][]byte, conc)
	for w := range conc {
		lat[w] = make([]time.Duration, per)
		bodies[w] = make([][]byte, per)
		for j := range per {
			bodies[w][j] = t.body("hello")
		}
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	runtime.GC() // this process's, when the servers run in another
	s0, err := t.host.stats(ctx, collectGC)
	if err != nil {
		return level{}, err
	}
	start := time.Now()
	for w := range conc {
		wg.Go(func() {
			sid := t.sessions[w]
			for j := range per {
				t0 := time.Now()
				_, err := t.cl.call(ctx, sid, bodies[w][j])
				lat[w][j] = time.Since(t0)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	s1, err := t.host.stats(ctx, collectNone)
	if err != nil {
		return level{}, err
	}
	if first != nil {
		return level{}, first
	}
	total := float64(per * conc)
	all := slices.Concat(lat...)
	slices.Sort(all)
	return level{
		RPS:    total / elapsed.Seconds(),
		P50us:  us(all[len(all)/2]),
		P99us:  us(all[len(all)*99/100]),
		Allocs: float64(s1.Mallocs-s0.Mallocs) / total,
		Bytes:  float64(s1.TotalAlloc-s0.TotalAlloc) / total,
		CPUus:  us(time.Duration(s1.CPUNanos-s0.CPUNanos)) / total,
	}, nil
}

// handshakeRate opens n sessions with conc workers and returns sessions/s;
// 0 for a modern server, which has no handshake.
func (t *target) handshakeRate(ctx context.Context, n, conc int) (float64, error) {
	if t.modern || n == 0 {
		return 0, nil
	}
	start := time.Now()
	if _, err := t.cl.handshakes(ctx, n, conc); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// bigEcho sends n sequential tools/call echoing 1 MiB and returns the p50
// in milliseconds. Each call starts after a GC of this process's.
func (t *target) bigEcho(ctx context.Context, n int) (float64, error) {
	if n == 0 {
		return 0, nil // -mib 0
	}
	text := strings.Repeat("a", 1<<20)
	var lat []time.Duration
	for range n {
		body := t.body(text)
		// Collect the client's garbage (the last answer, this body's
		// making) now, so that a GC of the client's does not run inside
		// the timed call.
		runtime.GC()
		t0 := time.Now()
		out, err := t.cl.call(ctx, t.sessions[0], body)
		d := time.Since(t0)
		if err != nil {
			return 0, err
		}
		if len(out) < 1<<20 {
			return 0, fmt.Errorf("1 MiB echo: answer of %d bytes: %.200s", len(out), out)
		}
		lat = append(lat, d)
	}
	slices.Sort(lat)
	return float64(lat[len(lat)/2]) / float64(time.Millisecond), nil
}

// idleBytes starts a fresh instance of im on h, opens n sessions and
// leaves them idle, and returns the growth per session of the servers'
// process's heap and goroutine stacks, and of its resident set, both
// measured after a GC that returns free memory to the OS, with the
// client's connections closed. In shared mode the process is also the
// client's, so its copies of the session ids are included; the bare
// handler's figures are their baseline.
func idleBytes(ctx context.Context, h host, im impl, n int, raw bool) (heap, rss float64, err error) {
	url, inst, err := h.start(ctx, im.name)
	if err != nil {
		return 0, 0, err
	}
	cl := newClient(url, 16, raw)
	defer func() { cl.close(); h.stop(ctx, inst) }()
	if _, err := cl.handshakes(ctx, 16, 16); err != nil { // warm up
		return 0, 0, err
	}
	cl.close()
	before, err := h.stats(ctx, collectFree)
	if err != nil {
		return 0, 0, err
	}
	ids, err := cl.handshakes(ctx, n, 16)
	if err != nil {
		return 0, 0, err
	}
	cl.close() // the connections are not the sessions' cost
	after, err := h.stats(ctx, collectFree)
	if err != nil {
		return 0, 0, err
	}
	runtime.KeepAlive(ids)
	return (float64(after.HeapStack) - float64(before.HeapStack)) / float64(n), (float64(after.RSS) - float64(before.RSS)) / float64(n), nil
}

// residentBytes is the process's resident set size from /proc/self/statm,
// or 0 where that file does not exist.
func residentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func median[T any](xs []T, f func(T) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
