package redis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Defaults of [BusOptions].
const (
	DefaultMaxMessageBytes = 64 << 10
	DefaultBusHealthCheck  = 15 * time.Second
	DefaultBusQueue        = 256
)

// ErrMessageTooLarge reports a message longer than BusOptions.MaxMessageBytes.
var ErrMessageTooLarge = errors.New("store/redis: bus message too large")

// BusOptions bounds a [Bus]. Zero values mean the defaults.
type BusOptions struct {
	// Timeout bounds Publish and the subscribing in Subscribe, whatever
	// the caller's context; past it they fail with ErrDown. Zero means
	// DefaultTimeout. (See EventStoreOptions.Timeout for what the client
	// must allow.)
	Timeout time.Duration
	// MaxMessageBytes bounds a message: Publish refuses a longer one, and
	// a subscription drops one it receives. Zero means
	// DefaultMaxMessageBytes.
	MaxMessageBytes int
	// HealthCheck is how long a subscription waits for a message before
	// it pings Redis, so that a connection that died silently is noticed
	// (and the loss reported) within about twice that. Zero means
	// DefaultBusHealthCheck.
	HealthCheck time.Duration
	// Queue bounds the messages received but not yet delivered per
	// subscription; past it they are dropped and the loss reported. Zero
	// means DefaultBusQueue.
	Queue int
	// RetryInterval is the pause between two attempts to reach Redis
	// again after a subscription lost its connection. Zero means one
	// second.
	RetryInterval time.Duration
}

// Bus is a change bus on Redis Pub/Sub: a message published by one replica
// is delivered to the subscriptions of every replica on the same Redis and
// prefix (the publisher's included). It has the methods of mcp.Bus and
// keeps its contract: at most once, in order per publisher; deliver(nil)
// after a subscription lost its connection (messages published meanwhile
// are gone: Pub/Sub keeps nothing) or fell behind, once it is receiving
// again. Redis Pub/Sub fits because a lost change is recovered by telling
// the clients that everything may have changed, so no durability is
// needed.
//
// Safe for concurrent use; each subscription holds one connection of its
// own.
type Bus struct {
	rdb     goredis.UniversalClient
	channel string
	opts    BusOptions
	breaker breaker
}

// NewBus returns a bus on the channel PREFIX+"changes". The caller keeps
// the client and closes it after the last subscription has stopped.
func NewBus(rdb goredis.UniversalClient, prefix string, opts BusOptions) *Bus {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.HealthCheck <= 0 {
		opts.HealthCheck = DefaultBusHealthCheck
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultBusQueue
	}
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = time.Second
	}
	return &Bus{rdb: rdb, channel: prefix + "changes", opts: opts}
}

// Publish sends msg to every subscription on the bus. It fails with
// ErrMessageTooLarge for a message over the bound and with ErrDown when
// Redis does not take it within the timeout.
func (b *Bus) Publish(ctx context.Context, msg []byte) error {
	if len(msg) > b.opts.MaxMessageBytes {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrMessageTooLarge, len(msg), b.opts.MaxMessageBytes)
	}
	_, err := call(ctx, &b.breaker, b.opts.Timeout, "publish", func(ctx context.Context) (int64, error) {
		return b.rdb.Publish(ctx, b.channel, msg).Result()
	})
	return err
}

// Subscribe subscribes, waits until Redis confirms it (within the timeout,
// or ErrDown), and delivers what follows on a goroutine of its own until
// stop is called. When the connection is lost it reconnects every
// RetryInterval and, once receiving again, calls deliver(nil).
func (b *Bus) Subscribe(ctx context.Context, deliver func(msg []byte)) (stop func(), err error) {
	ps := b.rdb.Subscribe(context.WithoutCancel(ctx))
	if _, err := call(ctx, &b.breaker, b.opts.Timeout, "subscribe", func(ctx context.Context) (any, error) {
		if err := ps.Subscribe(ctx, b.channel); err != nil {
			return nil, err
		}
		return ps.ReceiveTimeout(ctx, b.opts.Timeout)
	}); err != nil {
		ps.Close()
		return nil, err
	}
	run, cancel := context.WithCancel(context.Background())
	queue := make(chan []byte, b.opts.Queue)
	var wg sync.WaitGroup
	wg.Go(func() { b.receive(run, ps, queue) })
	wg.Go(func() {
		for m := range queue {
			if run.Err() == nil { // nothing is delivered once stop is called
				deliver(m)
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			ps.Close()
		})
		wg.Wait()
	}, nil
}

// receive reads the subscription until run ends, and closes queue. A
// nil in the queue is the loss signal.
func (b *Bus) receive(run context.Context, ps *goredis.PubSub, queue chan<- []byte) {
	defer close(queue)
	lost := false
	put := func(m []byte) {
		if lost && m != nil {
			// Report the loss before what follows it.
			select {
			case queue <- nil:
				lost = false
			default:
				return // still full: this one is lost too
			}
		}
		select {
		case queue <- m:
		default:
			lost = true
		}
	}
	for run.Err() == nil {
		v, err := ps.ReceiveTimeout(run, b.opts.HealthCheck)
		if err != nil {
			if run.Err() != nil {
				return
			}
			var ne interface{ Timeout() bool }
			if errors.As(err, &ne) && ne.Timeout() {
				// Quiet: make sure the connection is alive. A dead one
				// fails the next receive, and go-redis reconnects.
				ctx, cancel := context.WithTimeout(run, b.opts.Timeout)
				_ = ps.Ping(ctx)
				cancel()
				continue
			}
			// The connection broke: go-redis reconnects and resubscribes
			// on the next receive. Messages published meanwhile are gone.
			lost = true
			select {
			case <-run.Done():
				return
			case <-time.After(b.opts.RetryInterval):
			}
			continue
		}
		switch m := v.(type) {
		case *goredis.Message:
			if len(m.Payload) > b.opts.MaxMessageBytes {
				continue
			}
			p := []byte(m.Payload)
			if p == nil {
				p = []byte{}
			}
			put(p)
		case *goredis.Subscription:
			// A confirmation after a reconnection: receiving again.
			if lost {
				select {
				case queue <- nil:
					lost = false
				default:
				}
			}
		}
	}
}
