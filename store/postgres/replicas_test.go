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
