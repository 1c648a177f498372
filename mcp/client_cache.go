package mcp

import (
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// DefaultResultCacheEntries is the default of
// ClientOptions.ResultCacheEntries.
const DefaultResultCacheEntries = 256

// DefaultResultCacheBytes is the default of ClientOptions.ResultCacheBytes.
const DefaultResultCacheBytes = 8 << 20

// cacheableMethods are the requests whose modern results carry ttlMs and
// cacheScope (server/utilities/caching).
var cacheableMethods = []string{
	MethodServerDiscover, MethodToolsList, MethodPromptsList, MethodResourcesList,
	MethodResourcesTemplatesList, MethodResourcesRead,
}

// noCacheKey marks a context whose request must reach the server (Ping's
// server/discover), whatever the cache holds.
type noCacheKey struct{}

// resultCache keeps a modern session's cacheable results for the time
// their ttlMs allows (server/utilities/caching). It lives in one session,
// which is one authorization context, so results of either cacheScope may
// be kept; nothing is shared between sessions. A list_changed or updated
// notification drops the entries it makes stale.
type resultCache struct {
	mu         sync.Mutex
	entries    map[cacheKey]cacheEntry
	bytes      int
	maxEntries int
	maxBytes   int
	now        func() time.Time
}

type cacheKey struct {
	method string
	params string // the caller's params, before the session's _meta
}

type cacheEntry struct {
	raw     json.RawMessage
	expires time.Time
}

// newResultCache returns a cache of at most entries results and bytes
// bytes (zero: the defaults), or nil when entries is negative (caching
// off).
func newResultCache(entries, bytes int) *resultCache {
	if entries < 0 {
		return nil
	}
	if entries == 0 {
		entries = DefaultResultCacheEntries
	}
	if bytes <= 0 {
		bytes = DefaultResultCacheBytes
	}
	return &resultCache{entries: make(map[cacheKey]cacheEntry), maxEntries: entries, maxBytes: bytes, now: time.Now}
}

// get returns a fresh cached result.
func (c *resultCache) get(method string, params json.RawMessage) (json.RawMessage, bool) {
	if c == nil || !slices.Contains(cacheableMethods, method) {
		return nil, false
	}
	k := cacheKey{method, string(params)}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return nil, false
	}
	if !c.now().Before(e.expires) {
		c.dropLocked(k)
		return nil, false
	}
	return e.raw, true
}

// put keeps res for the ttlMs it carries; a result without a positive
// ttlMs, with an unknown cacheScope, or too large with its key, is not
// kept.
func (c *resultCache) put(method string, params, res json.RawMessage) {
	if c == nil || !slices.Contains(cacheableMethods, method) {
		return
	}
	var h struct {
		TTLMs      *int64     `json:"ttlMs"`
		CacheScope CacheScope `json:"cacheScope"`
	}
	if strictjson.Unmarshal(res, &h) != nil || h.TTLMs == nil || *h.TTLMs <= 0 || h.CacheScope.Validate() != nil {
		return
	}
	k := cacheKey{method, string(params)}
	size := k.size() + len(res)
	if size > c.maxBytes/4 {
		return
	}
	ttl := time.Duration(min(*h.TTLMs, int64(24*time.Hour/time.Millisecond))) * time.Millisecond
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(k)
	for len(c.entries) >= c.maxEntries || c.bytes+size > c.maxBytes {
		c.evictLocked()
	}
	c.entries[k] = cacheEntry{raw: res, expires: c.now().Add(ttl)}
	c.bytes += size
}

// size is what the key holds: a resources/read of a long URI, or any
// request with long params, costs as much as its result.
func (k cacheKey) size() int { return len(k.method) + len(k.params) }

// dropLocked removes one entry.
func (c *resultCache) dropLocked(k cacheKey) {
	if e, ok := c.entries[k]; ok {
		c.bytes -= k.size() + len(e.raw)
		delete(c.entries, k)
	}
}

// evictLocked removes the entry that expires first.
func (c *resultCache) evictLocked() {
	var victim cacheKey
	var first time.Time
	found := false
	for k, e := range c.entries {
		if !found || e.expires.Before(first) {
			victim, first, found = k, e.expires, true
		}
	}
	if !found {
		c.bytes = 0
		return
	}
	c.dropLocked(victim)
}

// invalidate drops every entry of the methods.
func (c *resultCache) invalidate(methods ...string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if slices.Contains(methods, k.method) {
			c.dropLocked(k)
		}
	}
}
