package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestListenLegacy checks that Listen works against a legacy server:
// resources/subscribe for each URI, and the acknowledgement built from the
// server's capabilities.
func TestListenLegacy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	s.AddResource(&Resource{URI: "file:///a", Name: "a"}, func(context.Context, *ServerSession, *ReadResourceRequestParams) (*ReadResourceResult, error) {
		return &ReadResourceResult{}, nil
	})
	s.AddTool(&Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
		return &CallToolResult{}, nil
	})
	ct, st := InMemoryTransports()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	sub, err := cs.Listen(ctx, SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true, ResourceSubscriptions: []string{"file:///a"}})
	if err != nil {
		t.Fatal(err)
	}
	a := sub.Acknowledged()
	if !a.ToolsListChanged || a.PromptsListChanged || len(a.ResourceSubscriptions) != 1 || a.ResourcesListChanged {
		t.Errorf("acknowledged %+v", a)
	}
	if err := sub.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
