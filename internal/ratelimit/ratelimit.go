// Package ratelimit keeps one token bucket per key (a client address, a
// host name) in a table of bounded size. The authorization server uses it
// for every per-address and per-host limit, so that all of them share one
// behaviour when the table is full: the least recently used bucket is
// dropped, and a newcomer is never refused because others came first.
package ratelimit

import (
	"container/list"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultKeys is the table size [New] uses when given zero.
const DefaultKeys = 10000

// Limiter allows Burst events at once per key and refills at Rate. It holds
// at most Keys buckets; when a new key arrives at a full table the least
// recently used bucket is dropped. Dropping a bucket forgets its debt, so a
// key that returns after being evicted starts with a full burst: memory is
// bounded at the price of letting an attacker with more than Keys addresses
// reset its own buckets, which such an attacker could do anyway by using
// fresh addresses. Refusing newcomers instead (what a fixed table without
// eviction does) would lock every honest new client out.
//
// A Limiter is safe for concurrent use; Allow holds a mutex for a map
// lookup and a list move, and never blocks on anything else.
type Limiter struct {
	inf      bool
	interval time.Duration // between two events at the steady rate
	slack    time.Duration // (burst-1) intervals: how far ahead a key may run
	keys     int

	mu  sync.Mutex
	m   map[string]*list.Element // of *bucket
	lru list.List                // front: most recently used
}

// bucket is a key's state as in the generic cell rate algorithm: the
// theoretical time at which the key will have spent nothing. Integer
// durations keep Retry-After exact where float tokens would round.
type bucket struct {
	key string
	tat time.Time
}

// New returns a limiter of r events per second with the given burst, for at
// most keys keys (0 means [DefaultKeys]). rate.Inf allows everything; a rate
// of 0 with a burst allows burst events per key and then nothing until the
// bucket is evicted.
func New(r rate.Limit, burst, keys int) *Limiter {
	if keys <= 0 {
		keys = DefaultKeys
	}
	burst = max(burst, 1)
	l := &Limiter{inf: r == rate.Inf, keys: keys, m: make(map[string]*list.Element)}
	if r > 0 {
		l.interval = time.Duration(math.Round(float64(time.Second) / float64(r)))
	}
	// A rate of 0 (or one too slow to count) refills in no lifetime; keep
	// the arithmetic below far from overflowing.
	if ceiling := time.Duration(math.MaxInt64 / 4 / int64(burst+1)); r <= 0 || l.interval > ceiling || l.interval <= 0 {
		l.interval = max(ceiling, 1)
	}
	l.slack = time.Duration(burst-1) * l.interval
	return l
}

// Allow takes one event for key at time now. If none is left it returns
// false and how long until one will be: a retry after that long succeeds if
// nothing else is spent in between, so it is what Retry-After should say.
func (l *Limiter) Allow(key string, now time.Time) (ok bool, retryAfter time.Duration) {
	if l.inf {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.get(key, now)
	tat := b.tat
	if tat.Before(now) {
		tat = now
	}
	if ahead := tat.Sub(now); ahead > l.slack {
		return false, ahead - l.slack
	}
	b.tat = tat.Add(l.interval)
	return true, 0
}

// get returns the bucket of key, creating it (full) and evicting the least
// recently used one if the table is full. l.mu is held.
func (l *Limiter) get(key string, now time.Time) *bucket {
	if e, ok := l.m[key]; ok {
		l.lru.MoveToFront(e)
		return e.Value.(*bucket)
	}
	if len(l.m) >= l.keys {
		old := l.lru.Back()
		l.lru.Remove(old)
		delete(l.m, old.Value.(*bucket).key)
	}
	b := &bucket{key: key, tat: now}
	l.m[key] = l.lru.PushFront(b)
	return b
}

// Len returns the number of keys held.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}

// RetryAfterSeconds renders a wait as the delay-seconds of a Retry-After
// header (RFC 9110 §10.2.3): rounded up, so that a client waiting that long
// is not refused again, and at least 1.
func RetryAfterSeconds(d time.Duration) int64 {
	s := int64(math.Ceil(d.Seconds()))
	return max(s, 1)
}
