package memory_test

import (
	"testing"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/store/memory"
	"github.com/mcpstack/mcpstack/store/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) authserver.Store { return memory.New() })
}
