package postgres_test

import (
	"testing"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/store/storetest"
)

// TestReplicas runs two authorization servers on one database, each with
// its own pool.
func TestReplicas(t *testing.T) {
	dsn := freshSchema(t)
	t.Parallel()
	storetest.RunReplicas(t, [2]authserver.Store{open(t, dsn), open(t, dsn)})
}

// TestSharedRateLimit: the per-address limits hold across replicas on one
// database, each with its own pool.
func TestSharedRateLimit(t *testing.T) {
	t.Run("contract", func(t *testing.T) {
		dsn := freshSchema(t)
		storetest.RunRateLimit(t, []authserver.SharedRateLimiter{open(t, dsn), open(t, dsn)})
	})
	t.Run("login", func(t *testing.T) {
		dsn := freshSchema(t)
		storetest.RunSharedLoginLimit(t, [2]authserver.Store{open(t, dsn), open(t, dsn)})
	})
}
