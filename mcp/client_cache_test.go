package mcp

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestResultCache checks that a modern session answers a repeated
// cacheable request from its cache while the result's ttlMs lasts, asks
// again once it has passed or a list_changed notification came, and never
// caches a result with ttlMs 0.
func TestResultCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var ttl atomic.Int64
	f := &eraFakeServer{answer: func(r eraFakeRequest) (int, any) {
		if r.Method == MethodServerDiscover {
			return 200, modernDiscover
		}
		return 200, map[string]any{"resultType": "complete", "ttlMs": ttl.Load(), "cacheScope": "private", "tools": []any{}}
	}}
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{EraPolicy: EraPolicyAuto}).Connect(ctx, f.transport(t))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	now := time.Unix(1000, 0)
	cs.cache.now = func() time.Time { return now }
	count := func() int {
		n := 0
		for _, m := range f.methods() {
			if m == MethodToolsList {
				n++
			}
		}
		return n
	}
	list := func() {
		t.Helper()
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name  string
		ttl   int64
		do    func()
		calls int // tools/list requests so far
	}{
		{"ttl 0 is not cached", 0, list, 1},
		{"ttl 0 again", 0, list, 2},
		{"ttl 60s: fetched", 60000, list, 3},
		{"within ttl: cached", 60000, list, 3},
		{"ttl passed: fetched", 60000, func() { now = now.Add(61 * time.Second); list() }, 4},
		{"list_changed drops it", 60000, func() { cs.toolsListChanged(ctx, nil); list() }, 5},
		{"cached again", 60000, list, 5},
	}
	for _, s := range steps {
		ttl.Store(s.ttl)
		s.do()
		if got := count(); got != s.calls {
			t.Fatalf("%s: %d tools/list requests, want %d", s.name, got, s.calls)
		}
	}
}

// TestResultCacheBounds checks the entry bound and that a negative bound
// turns the cache off.
func TestResultCacheBounds(t *testing.T) {
	if newResultCache(-1, 0) != nil {
		t.Fatal("a negative bound must turn the cache off")
	}
	c := newResultCache(2, 0)
	res := []byte(`{"ttlMs":1000,"cacheScope":"public","tools":[]}`)
	for _, p := range []string{`{"cursor":"a"}`, `{"cursor":"b"}`, `{"cursor":"c"}`} {
		c.put(MethodToolsList, []byte(p), res)
	}
	if len(c.entries) != 2 {
		t.Errorf("%d entries, want 2", len(c.entries))
	}
	c.put(MethodToolsCall, nil, res)
	c.put(MethodToolsList, []byte(`{}`), []byte(`{"ttlMs":1000,"cacheScope":"shared","tools":[]}`))
	if _, ok := c.get(MethodToolsList, []byte(`{}`)); ok {
		t.Error("a result with an unknown cacheScope was cached")
	}
	small := newResultCache(0, 4*len(res)-1)
	small.put(MethodToolsList, []byte(`{}`), res)
	if _, ok := small.get(MethodToolsList, []byte(`{}`)); ok {
		t.Error("a result over a quarter of the byte bound was cached")
	}
}
