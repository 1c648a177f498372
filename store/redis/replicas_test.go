package redis_test

import (
	"testing"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/store/redis"
	"github.com/mcpstack/mcpstack/store/storetest"
)

// TestReplicas runs two authorization servers on one Redis and prefix,
// each with its own client.
func TestReplicas(t *testing.T) {
	c := newClient(t)
	t.Parallel()
	prefix := freshPrefix(t, c)
	storetest.RunReplicas(t, [2]authserver.Store{redis.New(c, prefix), redis.New(newClient(t), prefix)})
}

// TestSharedRateLimit: the per-address limits hold across replicas on one
// Redis and prefix.
func TestSharedRateLimit(t *testing.T) {
	c := newClient(t)
	prefix := freshPrefix(t, c)
	a, b := redis.New(c, prefix), redis.New(newClient(t), prefix)
	t.Run("contract", func(t *testing.T) { storetest.RunRateLimit(t, []authserver.SharedRateLimiter{a, b}) })
	t.Run("login", func(t *testing.T) {
		p := freshPrefix(t, c)
		storetest.RunSharedLoginLimit(t, [2]authserver.Store{redis.New(c, p), redis.New(newClient(t), p)})
	})
}
