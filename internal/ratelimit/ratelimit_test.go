package ratelimit

import (
	"strconv"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

var t0 = time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)

// A full table must evict, never refuse a key it has not seen.
func TestFullTableAdmitsNewcomers(t *testing.T) {
	l := New(rate.Every(time.Hour), 1, 100)
	for i := range 1000 {
		if ok, _ := l.Allow("a"+strconv.Itoa(i), t0); !ok {
			t.Fatalf("newcomer %d refused", i)
		}
	}
	if n := l.Len(); n != 100 {
		t.Fatalf("Len = %d, want 100", n)
	}
	// The most recently used keys are kept: the last one is still limited.
	if ok, _ := l.Allow("a999", t0); ok {
		t.Fatal("a recent key's bucket was dropped")
	}
}

func TestLeastRecentlyUsedIsEvicted(t *testing.T) {
	l := New(rate.Every(time.Hour), 1, 2)
	l.Allow("old", t0)
	l.Allow("busy", t0)
	l.Allow("old", t0) // old is now the most recent
	l.Allow("new", t0) // evicts busy
	if ok, _ := l.Allow("old", t0); ok {
		t.Fatal("old was evicted instead of busy")
	}
	if ok, _ := l.Allow("busy", t0); !ok {
		t.Fatal("busy kept its bucket")
	}
}

// Retry-After must tell the truth: a retry after it succeeds, one a second
// earlier does not.
func TestRetryAfterIsTruthful(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rate  rate.Limit
		burst int
	}{
		{"10 per hour burst 5", rate.Every(6 * time.Minute), 5},
		{"10 per minute burst 10", rate.Every(6 * time.Second), 10},
		{"3 per second burst 1", 3, 1},
		{"1 per 62 s", rate.Every(62 * time.Second), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New(tc.rate, tc.burst, 0)
			now := t0
			for i := range tc.burst {
				if ok, _ := l.Allow("k", now); !ok {
					t.Fatalf("burst event %d refused", i)
				}
			}
			ok, wait := l.Allow("k", now)
			if ok || wait <= 0 {
				t.Fatalf("Allow = %v, %v after the burst", ok, wait)
			}
			secs := time.Duration(RetryAfterSeconds(wait)) * time.Second
			if secs > time.Second {
				if ok, _ := l.Allow("k", now.Add(secs-time.Second)); ok {
					t.Fatalf("allowed a second before Retry-After %v", secs)
				}
			}
			if ok, w := l.Allow("k", now.Add(secs)); !ok {
				t.Fatalf("refused at Retry-After %v (wait %v more)", secs, w)
			}
		})
	}
}

func TestInfiniteAndZeroRates(t *testing.T) {
	inf := New(rate.Inf, 0, 1)
	for range 100 {
		if ok, _ := inf.Allow("k", t0); !ok {
			t.Fatal("rate.Inf refused")
		}
	}
	zero := New(0, 2, 0)
	zero.Allow("k", t0)
	zero.Allow("k", t0)
	if ok, wait := zero.Allow("k", t0.Add(24*time.Hour)); ok || wait <= 0 {
		t.Fatalf("rate 0 after the burst: %v %v", ok, wait)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{{0, 1}, {time.Millisecond, 1}, {time.Second, 1}, {time.Second + 1, 2}, {359 * time.Second, 359}} {
		if got := RetryAfterSeconds(tc.d); got != tc.want {
			t.Errorf("RetryAfterSeconds(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

// FuzzLimiter drives a small table with arbitrary keys and clock steps: a
// key never seen (or forgotten) is always allowed, the table never grows
// past its size, and a refusal always names a positive wait.
func FuzzLimiter(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, ops []byte) {
		l := New(rate.Every(time.Minute), 2, 4)
		now := t0
		seen := map[string]bool{}
		for _, op := range ops {
			key := strconv.Itoa(int(op % 16))
			now = now.Add(time.Duration(op/16) * 7 * time.Second)
			fresh := !seen[key]
			ok, wait := l.Allow(key, now)
			if fresh && !ok {
				t.Fatalf("new key %s refused", key)
			}
			if !ok && wait <= 0 {
				t.Fatalf("refused with wait %v", wait)
			}
			seen[key] = true
			if l.Len() > 4 {
				t.Fatalf("Len %d", l.Len())
			}
			if l.Len() == 4 || len(seen) > 4 {
				// Evictions may have happened: forget what we know.
				clear(seen)
				l.mu.Lock()
				for k := range l.m {
					seen[k] = true
				}
				l.mu.Unlock()
			}
		}
	})
}
