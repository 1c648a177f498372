package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/store/redis"
)

// redisEnv carries the -redis URL from the flag to the constructors of
// the Redis rows, in this process and in the split host's child (which
// inherits the environment). Empty or unset: the Redis rows are skipped.
const redisEnv = "MCPSTACK_BENCH_REDIS"

// replicas is the number of handlers behind the proxy of the
// mcpstack×3+redis row.
const replicas = 3

// redisURL is the Redis the rows on Redis use, "" for none.
func redisURL() string { return os.Getenv(redisEnv) }

// newRedisClient connects to the Redis at rawURL as `mcpstack serve
// --redis` does: the context's deadline bounds every command.
func newRedisClient(rawURL string) (*goredis.Client, error) {
	opt, err := goredis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("-redis: %w", err)
	}
	opt.ContextTimeoutEnabled = true
	return goredis.NewClient(opt), nil
}

// freshPrefix is a key prefix no other instance uses, so that each
// instance's sessions, events and change bus are its own.
func freshPrefix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "mcpstack:bench:" + hex.EncodeToString(b) + ":"
}

// dropPrefix deletes the keys under prefix, the instance's leftovers
// (session records, events), when it stops.
func dropPrefix(rdb *goredis.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	for chunk := range slices.Chunk(keys, 500) {
		rdb.Del(ctx, chunk...)
	}
}

// redisReplica is s served as one replica the way `mcpstack serve
// --redis` wires it (cmd/mcpstack serve.go and serve_redis.go, which
// bench cannot import; these few option lines are copied from there):
// the handler keeps its SSE events and its sessions' records in the
// Redis event store, which is also its directory of sessions and its
// carrier between replicas (mcphttp.Options.Replicas), so that a
// 2025-11-25 session works on every replica; the server shares its
// resource changes on the Redis bus. Each replica has a client of its
// own, and the store's and the bus's bounds are their defaults (serve's
// flags' defaults). serve also keeps its tasks in Redis, for the tasks
// middleware of its example server; the echo server here has no tasks
// middleware (nor has the in-memory row it is held against), and that
// middleware lets a tools/call without a task through without touching
// its store, so there is no task store to wire. It panics when Redis
// cannot be reached, as the other constructors do on a setup failure.
func redisReplica(prefix string, sse bool, s *mcp.Server) (*mcphttp.Handler, func()) {
	rdb, err := newRedisClient(redisURL())
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		panic(fmt.Errorf("-redis: Redis does not answer: %w", err))
	}
	events := redis.NewEventStore(rdb, prefix, redis.EventStoreOptions{})
	bus := redis.NewBus(rdb, prefix, redis.BusOptions{})
	stop, err := s.ShareChanges(context.Background(), bus)
	if err != nil {
		panic(err)
	}
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s },
		&mcphttp.Options{JSONResponse: !sse, SessionTimeout: -1,
			// As serve.go: "the store is also the directory and the
			// carrier between replicas".
			EventStore: events, Replicas: events})
	return h, func() {
		h.Close()
		stop()
		events.Close()
		rdb.Close()
	}
}

// newOursRedis is the mcpstack row's handler as one replica on Redis.
func newOursRedis() (http.Handler, func()) { return newOursRedisWith(false) }

// newOursSSERedis is newOursSSE as one replica on Redis: every answer's
// event is appended to a Redis stream.
func newOursSSERedis() (http.Handler, func()) { return newOursRedisWith(true) }

// newOursSSE is the mcpstack row's handler answering every request with
// an SSE stream (no JSONResponse), whose events the in-memory event store
// keeps: the baseline of newOursSSERedis.
func newOursSSE() (http.Handler, func()) {
	s := oursServer(nil)
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s },
		&mcphttp.Options{SessionTimeout: -1})
	return h, func() { h.Close() }
}

func newOursRedisWith(sse bool) (http.Handler, func()) {
	prefix := freshPrefix()
	h, release := redisReplica(prefix, sse, oursServer(nil))
	return h, func() {
		release()
		dropRedisPrefix(prefix)
	}
}

// dropRedisPrefix deletes what the instances under prefix left in Redis.
func dropRedisPrefix(prefix string) {
	if rdb, err := newRedisClient(redisURL()); err == nil {
		dropPrefix(rdb, prefix)
		rdb.Close()
	}
}

// newOursRedis3 is three replicas on one Redis and prefix behind a plain
// round-robin reverse proxy: each request, of whatever session, goes to
// the next replica in turn. That is what sessions shared through Redis
// allow (no stickiness), and what a load balancer without session
// affinity does.
func newOursRedis3() (http.Handler, func()) {
	p, release := redisFront(nil)
	return p, release
}

// redisFront starts three replicas (redisReplica) on a fresh prefix,
// each on a loopback listener of its own, behind a round-robin proxy,
// and returns the proxy. wrap, if not nil, wraps replica i's handler
// (the test uses it to see which replica serves what).
func redisFront(wrap func(i int, h http.Handler) http.Handler) (*frontProxy, func()) {
	prefix := freshPrefix()
	var releases []func()
	var targets []*url.URL
	for i := range replicas {
		h, release := redisReplica(prefix, false, oursServer(nil))
		var hh http.Handler = h
		if wrap != nil {
			hh = wrap(i, h)
		}
		srv := httptest.NewServer(hh)
		u, _ := url.Parse(srv.URL)
		targets = append(targets, u)
		releases = append(releases, func() { srv.Close(); release() })
	}
	p := newFrontProxy(targets, false)
	return p, func() {
		p.transport.CloseIdleConnections()
		for _, f := range releases {
			f()
		}
		dropRedisPrefix(prefix)
	}
}

// newOurs3 is three in-memory handlers (newOurs) behind the same proxy as
// newOursRedis3, but sticky: in-memory replicas share nothing, so a
// session's requests must all go to the replica that created it. It is
// the cost of the proxy's hop without Redis.
func newOurs3() (http.Handler, func()) {
	var releases []func()
	var targets []*url.URL
	for range replicas {
		h, release := newOurs()
		srv := httptest.NewServer(h)
		u, _ := url.Parse(srv.URL)
		targets = append(targets, u)
		releases = append(releases, func() { srv.Close(); release() })
	}
	p := newFrontProxy(targets, true)
	return p, func() {
		p.transport.CloseIdleConnections()
		for _, f := range releases {
			f()
		}
	}
}

// frontProxy is a small reverse proxy in front of replicas. A request
// goes to the next backend in turn; if sticky, a request with an
// Mcp-Session-Id goes instead to the backend that issued that session
// (what a load balancer's affinity on the header does), as replicas that
// keep their sessions in memory need. Without sticky it is a plain
// round-robin balancer, which replicas sharing their sessions through
// Redis (mcphttp.Options.Replicas) serve. ServeHTTP may run
// concurrently.
type frontProxy struct {
	sticky    bool
	backends  []*httputil.ReverseProxy
	transport *http.Transport
	buffers   bufferPool
	next      atomic.Uint64
	owners    sync.Map // session id -> backend index (sticky only)
}

func newFrontProxy(targets []*url.URL, sticky bool) *frontProxy {
	p := &frontProxy{sticky: sticky, transport: &http.Transport{
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     time.Minute,
	}}
	for i, t := range targets {
		rp := &httputil.ReverseProxy{
			Rewrite:    func(pr *httputil.ProxyRequest) { pr.SetURL(t) },
			Transport:  p.transport,
			BufferPool: &p.buffers,
		}
		if sticky {
			rp.ModifyResponse = func(resp *http.Response) error {
				if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && resp.Request.Header.Get("Mcp-Session-Id") == "" {
					p.owners.Store(sid, i)
				}
				return nil
			}
		}
		p.backends = append(p.backends, rp)
	}
	return p
}

// bufferPool reuses the proxy's copy buffers (httputil.BufferPool), so
// that a request does not allocate 32 KiB to copy its answer.
type bufferPool struct{ pool sync.Pool }

func (b *bufferPool) Get() []byte {
	if v, ok := b.pool.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.pool.Put(&buf) }

func (p *frontProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.sticky {
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
			if i, ok := p.owners.Load(sid); ok {
				p.backends[i.(int)].ServeHTTP(w, r)
				return
			}
		}
	}
	i := (p.next.Add(1) - 1) % uint64(len(p.backends))
	p.backends[i].ServeHTTP(w, r)
}

// notifyResult is the latency of resource changes crossing replicas.
type notifyResult struct {
	Changes int     `json:"changes"`
	P50us   float64 `json:"p50_us"`
	P99us   float64 `json:"p99_us"`
	MaxUs   float64 `json:"max_us"`
}

// notifyResults are the two figures of -notify: the bus alone
// (crossLatency) and end to end through HTTP (crossLatencyHTTP).
type notifyResults struct {
	Bus      notifyResult `json:"bus"`
	EndToEnd notifyResult `json:"end_to_end"`
}

// notifyURI is the resource whose changes are timed.
const notifyURI = "bench://changing"

// changingServer is the echo server with the resource notifyURI, which a
// client may subscribe to.
func changingServer() (*mcp.Server, error) {
	s := oursServer(nil)
	err := s.AddResource(&mcp.Resource{URI: notifyURI, Name: "changing"},
		func(context.Context, *mcp.ServerSession, *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	return s, err
}

// crossLatency measures how long a resource change takes to cross
// replicas on the bus alone: two servers share their changes on one
// Redis bus (as two `mcpstack serve --redis` replicas do); a client
// session on the second subscribes to a resource; n times, the first
// server publishes a change of it (Server.ResourceUpdated) and the time
// until the client's ResourceUpdatedHandler runs is recorded, one change
// at a time. The client talks to its server over an in-memory transport,
// so the figure is the bus's (Redis Pub/Sub, a round trip to Redis and
// the delivery on the other replica), not HTTP's: crossLatencyHTTP is
// the figure a client sees.
func crossLatency(ctx context.Context, rawURL string, n int) (notifyResult, error) {
	prefix := freshPrefix()
	var servers [2]*mcp.Server
	for i := range servers {
		rdb, err := newRedisClient(rawURL)
		if err != nil {
			return notifyResult{}, err
		}
		defer rdb.Close()
		s, err := changingServer()
		if err != nil {
			return notifyResult{}, err
		}
		stop, err := s.ShareChanges(ctx, redis.NewBus(rdb, prefix, redis.BusOptions{}))
		if err != nil {
			return notifyResult{}, fmt.Errorf("sharing changes: %w", err)
		}
		defer stop()
		servers[i] = s
	}
	got := make(chan struct{}, 1)
	c := subscriber(got)
	ct, st := mcp.InMemoryTransports()
	if _, err := servers[1].Connect(ctx, st); err != nil {
		return notifyResult{}, err
	}
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		return notifyResult{}, err
	}
	defer cs.Close()
	return timeChanges(ctx, cs, servers[0], got, n)
}

// crossLatencyHTTP measures a resource change crossing replicas end to
// end, as a client sees it. Two replicas, A and B, are wired as `mcpstack
// serve --redis` wires them (redisReplica: the event store as directory
// and carrier between replicas, the bus), each on a loopback listener of
// its own. A client of revision 2025-11-25 (mcp.Client over
// mcphttp.ClientTransport) sends its initialize to A, which creates the
// session there, and every later request to B (routeBySession): its
// resources/subscribe and its standalone GET stream, so B rebuilds a
// copy of the session and holds its GET. n times, one after the other,
// A's server publishes a change (Server.ResourceUpdated, as application
// code on A would) and the time until the client's
// ResourceUpdatedHandler runs is recorded: A publishes on the bus, B
// hears it, B's copy writes notifications/resources/updated on the GET
// stream, and the client reads and dispatches it. Runs in the process
// that calls it.
func crossLatencyHTTP(ctx context.Context, n int) (notifyResult, error) {
	prefix := freshPrefix()
	defer dropRedisPrefix(prefix)
	var (
		servers [2]*mcp.Server
		urls    [2]*url.URL
	)
	for i := range servers {
		s, err := changingServer()
		if err != nil {
			return notifyResult{}, err
		}
		h, release := redisReplica(prefix, false, s)
		srv := httptest.NewServer(h)
		defer func() { srv.Close(); release() }()
		servers[i] = s
		if urls[i], err = url.Parse(srv.URL); err != nil {
			return notifyResult{}, err
		}
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	rt := &routeBySession{first: urls[0], rest: urls[1], rt: tr}
	got := make(chan struct{}, 1)
	cs, err := subscriber(got).Connect(ctx, &mcphttp.ClientTransport{
		Endpoint:   urls[0].String(),
		HTTPClient: &http.Client{Transport: rt},
	})
	if err != nil {
		return notifyResult{}, err
	}
	defer cs.Close()
	return timeChanges(ctx, cs, servers[0], got, n)
}

// routeBySession sends a request without Mcp-Session-Id (the initialize)
// to first and every other to rest: the session is created on one
// replica and used through another. RoundTrip may run concurrently.
type routeBySession struct {
	first, rest *url.URL
	rt          http.RoundTripper
}

func (r *routeBySession) RoundTrip(req *http.Request) (*http.Response, error) {
	to := r.first
	if req.Header.Get("Mcp-Session-Id") != "" {
		to = r.rest
	}
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = to.Scheme, to.Host
	req.Host = to.Host
	return r.rt.RoundTrip(req)
}

// subscriber is a client of revision 2025-11-25 (resources/subscribe is
// one of its methods) that signals got, without blocking, on each
// notifications/resources/updated.
func subscriber(got chan<- struct{}) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, &mcp.ClientOptions{
		EraPolicy: mcp.EraPolicyLegacy,
		ResourceUpdatedHandler: func(context.Context, *mcp.ClientSession, *mcp.ResourceUpdatedNotificationParams) {
			select {
			case got <- struct{}{}:
			default:
			}
		},
	})
}

// timeChanges subscribes cs to notifyURI, then n times publishes a change
// on from and times its arrival at cs (got), one change at a time.
func timeChanges(ctx context.Context, cs *mcp.ClientSession, from *mcp.Server, got chan struct{}, n int) (notifyResult, error) {
	if err := cs.Subscribe(ctx, &mcp.SubscribeRequestParams{URI: notifyURI}); err != nil {
		return notifyResult{}, fmt.Errorf("subscribe: %w", err)
	}
	// Warm up: the other replica's bus subscription, its copy of the
	// session, or the client's GET stream may still be starting; wait
	// for a first change to arrive, then for the retries' answers.
	if err := waitChange(ctx, from, got, 30*time.Second); err != nil {
		return notifyResult{}, fmt.Errorf("warm-up: %w", err)
	}
	time.Sleep(100 * time.Millisecond)
	lat := make([]time.Duration, 0, n)
	for range n {
		select { // a late answer to a retried publication
		case <-got:
		default:
		}
		t0 := time.Now()
		if err := waitChange(ctx, from, got, 10*time.Second); err != nil {
			return notifyResult{}, err
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	return notifyResult{Changes: n, P50us: us(lat[len(lat)/2]), P99us: us(lat[len(lat)*99/100]), MaxUs: us(lat[len(lat)-1])}, nil
}

// waitChange publishes one change on from and waits for the subscriber to
// hear of it, retrying the publication every second until limit (the
// warm-up's change may be published before the other replica listens).
func waitChange(ctx context.Context, from *mcp.Server, got <-chan struct{}, limit time.Duration) error {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		if err := from.ResourceUpdated(ctx, notifyURI); err != nil {
			return fmt.Errorf("publishing a change: %w", err)
		}
		select {
		case <-got:
			return nil
		case <-time.After(time.Second):
		case <-deadline.C:
			return fmt.Errorf("no notification within %v", limit)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
