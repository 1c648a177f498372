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
