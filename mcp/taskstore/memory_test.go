package taskstore_test

import (
	"testing"

	"github.com/mcpstack/mcpstack/mcp/taskstore"
	"github.com/mcpstack/mcpstack/mcp/taskstore/taskstoretest"
)

func TestMemoryContract(t *testing.T) {
	taskstoretest.Run(t, func(t *testing.T, opts taskstore.Options) (taskstore.Store, taskstore.Store) {
		s := taskstore.NewMemory(opts)
		return s, s
	})
}
