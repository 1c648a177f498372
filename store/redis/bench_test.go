package redis_test

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp/eventstore"
	"github.com/mcpstack/mcpstack/store/redis"
)

// BenchmarkEventStoreAppend measures keeping one 200-byte event, as the
// handler does for every SSE event of a session: on Redis, and in memory
// for comparison.
func BenchmarkEventStoreAppend(b *testing.B) {
	data := make([]byte, 200)
	run := func(b *testing.B, s eventstore.Store) {
		ctx := context.Background()
		b.ReportAllocs()
		seq := int64(0)
		for b.Loop() {
			seq++
			if err := s.Append(ctx, "bench", "1", seq, data); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("redis", func(b *testing.B) {
		c := newClient(b)
		run(b, redis.NewEventStore(c, freshPrefix(b, c), redis.EventStoreOptions{}))
	})
	b.Run("memory", func(b *testing.B) { run(b, &eventstore.Memory{}) })
	// The floor: one plain command of the same size on the same Redis.
	b.Run("redis-SET-floor", func(b *testing.B) {
		c := newClient(b)
		key := freshPrefix(b, c) + "floor"
		ctx := context.Background()
		for b.Loop() {
			if err := c.Set(ctx, key, data, 0).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkBusLatency measures the time from Publish on one client to
// delivery on a subscription of another (two replicas), and reports its
// median and 99th percentile.
func BenchmarkBusLatency(b *testing.B) {
	ctx := context.Background()
	c1, c2 := newClient(b), newClient(b)
	prefix := freshPrefix(b, c1)
	pub, sub := redis.NewBus(c1, prefix, redis.BusOptions{}), redis.NewBus(c2, prefix, redis.BusOptions{})
	got := make(chan time.Time, 1)
	stop, err := sub.Subscribe(ctx, func([]byte) { got <- time.Now() })
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := pub.Publish(ctx, []byte(`{"method":"notifications/resources/updated","uri":"file:///a"}`)); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-got).Sub(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkEventStoreAppendParallel measures keeping 200-byte events
// appended by 16 goroutines at once, each on a stream of its own session
// (the handler at 16 concurrent calls with SSE answers): the group commit
// writes them in shared round trips.
func BenchmarkEventStoreAppendParallel(b *testing.B) {
	data := make([]byte, 200)
	run := func(b *testing.B, s eventstore.Store) {
		ctx := context.Background()
		b.ReportAllocs()
		b.SetParallelism(8) // 16 goroutines on 2 cores
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			session := strconv.FormatInt(n.Add(1), 10)
			seq := int64(0)
			for pb.Next() {
				seq++
				if err := s.Append(ctx, session, "1", seq, data); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.Run("redis", func(b *testing.B) {
		c := newClient(b)
		s := redis.NewEventStore(c, freshPrefix(b, c), redis.EventStoreOptions{})
		defer s.Close()
		run(b, s)
	})
	b.Run("memory", func(b *testing.B) { run(b, &eventstore.Memory{}) })
}
