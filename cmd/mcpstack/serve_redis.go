package main

import (
	"context"
	"flag"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/store/redis"
)

// serveRedisPrefix is the default key prefix of what the replicas of
// `mcpstack serve` share in Redis (--redis-prefix).
const serveRedisPrefix = "mcpstack:mcp:"

// serveRedisFlags are the flags that make `mcpstack serve` one replica of
// a server whose stream events live in Redis.
type serveRedisFlags struct {
	fs      *flag.FlagSet
	url     *string
	prefix  *string
	timeout *time.Duration
	ttl     *time.Duration
	// The event store's group commit (store/redis.EventStoreOptions).
	maxBatch      *int
	maxBatchBytes *int
	maxQueued     *int
	lease         *time.Duration
	routed        *int
	recheck       *time.Duration
}

func addServeRedisFlags(fs *flag.FlagSet) serveRedisFlags {
	return serveRedisFlags{
		fs:            fs,
		url:           fs.String("redis", "", "keep the events of the SSE streams in the Redis at `URL` (redis://HOST:PORT/DB), and share the sessions, resource changes and tasks there, with every replica started with it: any of them serves any request of a session, a stream resumes through any of them, also after the one that produced it died, a subscriber hears of a change whichever replica saw it, and tasks/get, tasks/update and tasks/cancel work on any (with --addr)"),
		prefix:        fs.String("redis-prefix", serveRedisPrefix, "with --redis, keep the keys under `PREFIX` (the replicas of one server share it)"),
		timeout:       fs.Duration("redis-timeout", redis.DefaultTimeout, "with --redis, give up a Redis command after `DURATION` (the request gets 503, or the event is not kept)"),
		ttl:           fs.Duration("redis-event-ttl", redis.DefaultEventTTL, "with --redis, forget a session's events `DURATION` after its last one (what a replica that died leaves behind)"),
		maxBatch:      fs.Int("redis-max-batch", redis.DefaultMaxBatch, "with --redis, write at most `N` SSE events to Redis in one round trip (the events of all streams that arrive while one is in flight go together in the next)"),
		maxBatchBytes: fs.Int("redis-max-batch-bytes", redis.DefaultMaxBatchBytes, "with --redis, stop filling a round trip of SSE events once it holds `BYTES` of event data"),
		maxQueued:     fs.Int("redis-max-queued", redis.DefaultMaxQueued, "with --redis, let at most `N` SSE events wait for the next round trip to Redis; past it a stream waits for room (within --redis-timeout)"),
		lease:         fs.Duration("redis-task-lease", redis.DefaultTaskLease, "with --redis, fail the unfinished tasks of a replica `DURATION` after it last renewed its lease (it died): tasks/get on the others then reports them failed"),
		routed:        fs.Int("redis-max-routed", redis.DefaultMaxRoutedBytes, "with --redis, drop a message between replicas (a client's response to another replica's request, a message for the GET stream another replica holds) over `BYTES`"),
		recheck:       fs.Duration("redis-recheck", mcphttp.DefaultReplicaRecheck, "with --redis, re-read every `DURATION` the record of each session this replica holds, so that a copy that missed another replica's news (a DELETE, a change of log level or subscriptions) catches up within it (0: never)"),
	}
}

// check refuses the Redis flags without --redis or --addr.
func (f serveRedisFlags) check(addr string) error {
	if *f.url == "" {
		for _, name := range []string{"redis-prefix", "redis-timeout", "redis-event-ttl", "redis-max-batch", "redis-max-batch-bytes", "redis-max-queued", "redis-task-lease", "redis-max-routed", "redis-recheck"} {
			if isSet(f.fs, name) {
				return usageErrorf("--%s needs --redis", name)
			}
		}
		if isSet(f.fs, "redis") {
			return usageErrorf("--redis needs a URL")
		}
		return nil
	}
	if addr == "" {
		return usageErrorf("--redis shares the HTTP server's streams: give --addr too")
	}
	if *f.timeout <= 0 || *f.ttl <= 0 || *f.lease <= 0 || *f.routed <= 0 {
		return usageErrorf("--redis-timeout, --redis-event-ttl, --redis-task-lease and --redis-max-routed must be positive")
	}
	if *f.recheck < 0 {
		return usageErrorf("--redis-recheck cannot be negative")
	}
	if *f.maxBatch <= 0 || *f.maxBatchBytes <= 0 || *f.maxQueued <= 0 {
		return usageErrorf("--redis-max-batch, --redis-max-batch-bytes and --redis-max-queued must be positive")
	}
	if _, err := goredis.ParseURL(*f.url); err != nil {
		return usageErrorf("--redis: %v", err)
	}
	return nil
}

// replicaRecheck is mcphttp.Options.ReplicaRecheck for --redis-recheck.
func (f serveRedisFlags) replicaRecheck() time.Duration {
	if *f.recheck == 0 {
		return -1 // never
	}
	return *f.recheck
}

// sharedState is what a replica keeps in Redis: the events of its
// streams (and its sessions' records), the change bus, the tasks, and the
// marks that let one replica announce each change of a file under --root.
type sharedState struct {
	rdb     *goredis.Client
	prefix  string
	timeout time.Duration
	events  *redis.EventStore
	bus     *redis.Bus
	tasks   *redis.TaskStore
}

// open connects to Redis, checking within the timeout that it answers, or
// returns nil without --redis. tf bounds the tasks kept there.
func (f serveRedisFlags) open(ctx context.Context, tf taskFlags) (*sharedState, error) {
	if *f.url == "" {
		return nil, nil
	}
	opt, err := goredis.ParseURL(*f.url)
	if err != nil {
		return nil, usageErrorf("--redis: %v", err)
	}
	// Deadlines from the context bound every command (the store's own
	// timeout), and no command is retried past them.
	opt.ContextTimeoutEnabled = true
	opt.DialTimeout = min(opt.DialTimeout, *f.timeout)
	rdb := goredis.NewClient(opt)
	pctx, cancel := context.WithTimeout(ctx, *f.timeout)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		rdb.Close()
		return nil, storeUnreachable("redis", "Redis", *f.url, err)
	}
	return &sharedState{
		rdb:     rdb,
		prefix:  *f.prefix,
		timeout: *f.timeout,
		events: redis.NewEventStore(rdb, *f.prefix, redis.EventStoreOptions{Timeout: *f.timeout, TTL: *f.ttl,
			MaxBatch: *f.maxBatch, MaxBatchBytes: *f.maxBatchBytes, MaxQueued: *f.maxQueued, MaxRoutedBytes: *f.routed}),
		bus:   redis.NewBus(rdb, *f.prefix, redis.BusOptions{Timeout: *f.timeout}),
		tasks: redis.NewTaskStore(rdb, *f.prefix, tf.redisOptions(*f.timeout, *f.lease)),
	}, nil
}

// announcedTTL is how long the mark of an announced file version stays:
// every replica polls within pollInterval, so one minute is ample.
const announcedTTL = time.Minute

// announce reports whether this replica is the first to see this version
// of the file at uri, and so the one to announce it on the bus (every
// replica polls the same --root). If Redis does not answer, it announces:
// its own subscribers are told, and the bus is down for the others
// anyway.
func (s *sharedState) announce(ctx context.Context, uri, version string) bool {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	first, err := s.rdb.SetNX(ctx, s.prefix+"announced:"+uri+"\x00"+version, 1, announcedTTL).Result()
	return first || err != nil
}

// close ends this replica's hold on its sessions (the others then end
// their resumed streams once delivered) and the connections.
func (s *sharedState) close() {
	if s == nil {
		return
	}
	s.events.Close()
	s.tasks.Close()
	s.rdb.Close()
}
