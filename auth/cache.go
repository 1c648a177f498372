package auth

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// Default bounds of a [Cache].
const (
	DefaultCacheTTL  = 5 * time.Minute
	DefaultCacheSize = 10000
)

// CacheOptions configure a [Cache].
type CacheOptions struct {
	// TTL bounds how long a verified token is remembered; an entry also
	// ends when the token expires. Zero means DefaultCacheTTL.
	TTL time.Duration
	// Size bounds the number of entries. Zero means DefaultCacheSize.
	Size int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Cache is a [Verifier] that remembers the principals another verifier
// returned, keyed by the SHA-256 hash of the token (the token itself is not
// stored), so that a busy server does not pay a signature check or an
// introspection call per request. Only successes are remembered, each
// until the token expires or the TTL passes, whichever comes first. A token
// without a known expiry is remembered for the TTL.
type Cache struct {
	next Verifier
	ttl  time.Duration
	size int
	now  func() time.Time

	mu      sync.Mutex
	entries map[[sha256.Size]byte]cacheEntry
}

type cacheEntry struct {
	p     *Principal
	until time.Time
}

// NewCache returns a cache in front of v.
func NewCache(v Verifier, opts CacheOptions) *Cache {
	c := &Cache{next: v, ttl: opts.TTL, size: opts.Size, now: opts.Now,
		entries: make(map[[sha256.Size]byte]cacheEntry)}
	if c.ttl <= 0 {
		c.ttl = DefaultCacheTTL
	}
	if c.size <= 0 {
		c.size = DefaultCacheSize
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// Verify returns the remembered principal of token, or asks the wrapped
// verifier and remembers a success.
func (c *Cache) Verify(ctx context.Context, token string) (*Principal, error) {
	key := sha256.Sum256([]byte(token))
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[key]
	if ok && now.Before(e.until) {
		c.mu.Unlock()
		p := e.p.clone()
		p.token = token
		return p, nil
	}
	if ok {
		delete(c.entries, key)
	}
	c.mu.Unlock()

	p, err := c.next.Verify(ctx, token)
	if err != nil {
		return nil, err
	}
	until := now.Add(c.ttl)
	if !p.Expiry.IsZero() && p.Expiry.Before(until) {
		until = p.Expiry
	}
	if !now.Before(until) {
		return p, nil
	}
	stored := p.clone()
	stored.token = "" // the cache holds no token
	c.mu.Lock()
	if len(c.entries) >= c.size {
		c.evictLocked(now)
	}
	c.entries[key] = cacheEntry{p: stored, until: until}
	c.mu.Unlock()
	if p.token == "" {
		p.token = token
	}
	return p, nil
}

// Len reports the number of remembered tokens, expired ones included until
// they are evicted.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// evictLocked drops expired entries and, if the cache is still full, enough
// arbitrary ones to make room for a tenth of its size.
func (c *Cache) evictLocked(now time.Time) {
	for k, e := range c.entries {
		if !now.Before(e.until) {
			delete(c.entries, k)
		}
	}
	excess := len(c.entries) - c.size + max(1, c.size/10)
	for k := range c.entries {
		if excess <= 0 {
			break
		}
		delete(c.entries, k)
		excess--
	}
}
