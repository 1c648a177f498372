package eventstore_test

import (
	"testing"

	"github.com/mcpstack/mcpstack/mcp/eventstore"
	"github.com/mcpstack/mcpstack/mcp/eventstore/eventstoretest"
)

// TestMemoryContract runs the event stores' contract against Memory (the
// Redis store runs the same, in store/redis).
func TestMemoryContract(t *testing.T) {
	eventstoretest.Run(t, func(t *testing.T, l eventstoretest.Limits) eventstore.Store {
		return &eventstore.Memory{MaxEventsPerStream: l.MaxEventsPerStream, MaxBytesPerSession: l.MaxBytesPerSession, MaxStreamsPerSession: l.MaxStreamsPerSession}
	})
}
