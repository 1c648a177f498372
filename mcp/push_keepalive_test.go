package mcp

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// pingGate is a push stream that says whether this process pings the
// client (PingsClient): no for its first calls, then yes. It records
// how often it was asked when the first ping came.
type pingGate struct {
	skip    int64 // answers no this many times
	asked   atomic.Int64
	atPing  atomic.Int64 // asked, when the first ping was written
	once    sync.Once
	pingsCh chan struct{}
}

func (g *pingGate) Read(context.Context) (jsonrpc.Message, error) {
	return nil, errors.New("a push stream is not read")
}

func (g *pingGate) Write(_ context.Context, m jsonrpc.Message) error {
	if req, ok := m.(*jsonrpc.Request); ok && req.Method == MethodPing {
		g.once.Do(func() {
			g.atPing.Store(g.asked.Load())
			close(g.pingsCh)
		})
	}
	return nil
}

func (g *pingGate) Close() error { return nil }

func (g *pingGate) PingsClient() bool { return g.asked.Add(1) > g.skip }

// TestKeepAlivePingsClient: a push session pings its client
// (ServerOptions.KeepAlive) only at the ticks when its stream's
// PingsClient says so: with replicas, one process of those holding a copy
// of the session pings, not each (before, every copy pinged, and the
// client got one ping per replica each interval).
func TestKeepAlivePingsClient(t *testing.T) {
	for _, skip := range []int64{0, 3} {
		g := &pingGate{skip: skip, pingsCh: make(chan struct{})}
		s := NewServer(&Implementation{Name: "x", Version: "1"}, &ServerOptions{KeepAlive: 5 * time.Millisecond})
		ss := s.ConnectPush(g)
		select {
		case <-g.pingsCh:
		case <-time.After(20 * time.Second):
			t.Fatalf("skip %d: no ping", skip)
		}
		if got := g.atPing.Load(); got != skip+1 {
			t.Errorf("skip %d: first ping after %d questions, want %d", skip, got, skip+1)
		}
		ss.Close()
	}
}
