package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestListenModern checks subscriptions/listen against a modern server:
// Listen returns the acknowledged filter, tagged notifications reach the
// handlers, and Close closes the stream (the server sees its request end).
func TestListenModern(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	streamEnded := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(b, &m)
		switch m.Method {
		case MethodServerDiscover:
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": modernDiscover})
		case MethodSubscriptionsListen:
			if r.Header.Get("Mcp-Method") != MethodSubscriptionsListen {
				t.Errorf("Mcp-Method %q", r.Header.Get("Mcp-Method"))
			}
			w.Header().Set("Content-Type", "text/event-stream")
			tag := fmt.Sprintf(`{"%s":%s}`, MetaKeySubscriptionID, m.ID)
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":%q,\"params\":{\"notifications\":{\"toolsListChanged\":true},\"_meta\":%s}}\n\n", NotificationSubscriptionsAcknowledged, tag)
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":%q,\"params\":{\"_meta\":%s}}\n\n", NotificationToolsListChanged, tag)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			close(streamEnded)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer ts.Close()
	changed := make(chan struct{}, 1)
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		ToolListChangedHandler: func(context.Context, *ClientSession) { changed <- struct{}{} },
	})
	cs, err := c.Connect(ctx, &StreamableClientTransport{Endpoint: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	sub, err := cs.Listen(ctx, SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	if a := sub.Acknowledged(); !a.ToolsListChanged || a.PromptsListChanged {
		t.Errorf("acknowledged %+v", a)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed")
	}
	if err := sub.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-streamEnded:
	case <-ctx.Done():
		t.Fatal("Close left the listen stream open")
	}
	if err := sub.Err(); err != nil {
		t.Errorf("Err after Close: %v", err)
	}
}

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
