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

// redisReplica is one replica as `mcpstack serve --redis` wires it: the
// echo server sharing its resource changes on the Redis bus, its handler
// keeping SSE events and session records in the Redis event store, each
// replica with a client of its own. It panics when Redis cannot be
// reached, as the other constructors do on a setup failure.
func redisReplica(prefix string, sse bool) (*mcphttp.Handler, func()) {
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
	s := oursServer(nil)
	stop, err := s.ShareChanges(context.Background(), bus)
	if err != nil {
		panic(err)
	}
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s },
		&mcphttp.Options{JSONResponse: !sse, SessionTimeout: -1, EventStore: events})
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
	h, release := redisReplica(prefix, sse)
	return h, func() {
		release()
		if rdb, err := newRedisClient(redisURL()); err == nil {
			dropPrefix(rdb, prefix)
			rdb.Close()
		}
	}
}

// newOursRedis3 is three replicas on one Redis and prefix, each served on
// a loopback listener of its own, behind a round-robin reverse proxy
// (stickyProxy) that is the handler returned.
func newOursRedis3() (http.Handler, func()) {
	prefix := freshPrefix()
	var releases []func()
	var targets []*url.URL
	for range replicas {
		h, release := redisReplica(prefix, false)
		srv := httptest.NewServer(h)
		u, _ := url.Parse(srv.URL)
		targets = append(targets, u)
		releases = append(releases, func() { srv.Close(); release() })
	}
	p := newStickyProxy(targets)
	return p, func() {
		p.transport.CloseIdleConnections()
		for _, f := range releases {
			f()
		}
		if rdb, err := newRedisClient(redisURL()); err == nil {
			dropPrefix(rdb, prefix)
			rdb.Close()
		}
	}
}

// newOurs3 is three in-memory handlers (newOurs) behind the same proxy as
// newOursRedis3: the cost of the proxy's hop without Redis.
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
	p := newStickyProxy(targets)
	return p, func() {
		p.transport.CloseIdleConnections()
		for _, f := range releases {
			f()
		}
	}
}

// stickyProxy is a small reverse proxy: a request without Mcp-Session-Id
// (an initialize, or any request of revision 2026-07-28, which has no
// session) goes to the next backend in turn; a request with one goes to
// the backend that issued it. Revision 2025-11-25's sessions are held by
// the replica that created them (only their streams' events are shared),
// so their requests must stay there; this is what a load balancer's
// session affinity on the header does. ServeHTTP may run concurrently.
type stickyProxy struct {
	backends  []*httputil.ReverseProxy
	transport *http.Transport
	buffers   bufferPool
	next      atomic.Uint64
	owners    sync.Map // session id -> backend index
}

func newStickyProxy(targets []*url.URL) *stickyProxy {
	p := &stickyProxy{transport: &http.Transport{
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     time.Minute,
	}}
	for i, t := range targets {
		p.backends = append(p.backends, &httputil.ReverseProxy{
			Rewrite:    func(pr *httputil.ProxyRequest) { pr.SetURL(t) },
			Transport:  p.transport,
			BufferPool: &p.buffers,
			ModifyResponse: func(resp *http.Response) error {
				if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && resp.Request.Header.Get("Mcp-Session-Id") == "" {
					p.owners.Store(sid, i)
				}
				return nil
			},
		})
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

func (p *stickyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		if i, ok := p.owners.Load(sid); ok {
			p.backends[i.(int)].ServeHTTP(w, r)
			return
		}
	}
	i := (p.next.Add(1) - 1) % uint64(len(p.backends))
	p.backends[i].ServeHTTP(w, r)
}

// notifyResult is the latency of a resource change crossing replicas.
type notifyResult struct {
	Changes int     `json:"changes"`
	P50us   float64 `json:"p50_us"`
	P99us   float64 `json:"p99_us"`
	MaxUs   float64 `json:"max_us"`
}

// notifyURI is the resource whose changes crossLatency publishes.
const notifyURI = "bench://changing"

// crossLatency measures how long a resource change takes to cross
// replicas: two servers share their changes on one Redis bus (as two
// `mcpstack serve --redis` replicas do); a client session on the second
// subscribes to a resource; n times, the first server publishes a change
// of it (Server.ResourceUpdated) and the time until the client's
// ResourceUpdatedHandler runs is recorded, one change at a time. The
// client talks to its server over an in-memory transport, so the figure
// is the bus's (Redis Pub/Sub, a round trip to Redis and the delivery on
// the other replica), not HTTP's.
func crossLatency(ctx context.Context, rawURL string, n int) (notifyResult, error) {
	prefix := freshPrefix()
	var servers [2]*mcp.Server
	for i := range servers {
		rdb, err := newRedisClient(rawURL)
		if err != nil {
			return notifyResult{}, err
		}
		defer rdb.Close()
		s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
		err = s.AddResource(&mcp.Resource{URI: notifyURI, Name: "changing"},
			func(context.Context, *mcp.ServerSession, *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{}, nil
			})
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
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, &mcp.ClientOptions{
		EraPolicy: mcp.EraPolicyLegacy, // resources/subscribe is a 2025-11-25 method
		ResourceUpdatedHandler: func(context.Context, *mcp.ClientSession, *mcp.ResourceUpdatedNotificationParams) {
			select {
			case got <- struct{}{}:
			default:
			}
		},
	})
	ct, st := mcp.InMemoryTransports()
	if _, err := servers[1].Connect(ctx, st); err != nil {
		return notifyResult{}, err
	}
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		return notifyResult{}, err
	}
	defer cs.Close()
	if err := cs.Subscribe(ctx, &mcp.SubscribeRequestParams{URI: notifyURI}); err != nil {
		return notifyResult{}, fmt.Errorf("subscribe: %w", err)
	}
	// Warm up: the bus's subscription on the second replica may still be
	// starting; wait for a first change to arrive.
	if err := waitChange(ctx, servers[0], got, 30*time.Second); err != nil {
		return notifyResult{}, fmt.Errorf("warm-up: %w", err)
	}
	lat := make([]time.Duration, 0, n)
	for range n {
		select { // a late answer to a retried publication
		case <-got:
		default:
		}
		t0 := time.Now()
		if err := waitChange(ctx, servers[0], got, 10*time.Second); err != nil {
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
