package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/store/redis"
)

// listenReplica is one in-process replica of a server sharing its changes
// on a Redis bus: its own Redis client, bus and HTTP handler.
func listenReplica(t *testing.T, redisURL, prefix string) (*mcp.Server, *redis.Bus, string) {
	t.Helper()
	opt, err := goredis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := goredis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	s := mcp.NewServer(&mcp.Implementation{Name: "replica", Version: "1"}, nil)
	if err := s.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.ServerSession, *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResource(&mcp.Resource{URI: "test://a", Name: "a"}, func(context.Context, *mcp.ServerSession, *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	bus := redis.NewBus(rdb, prefix, redis.BusOptions{})
	stop, err := s.ShareChanges(t.Context(), bus)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	return s, bus, ts.URL
}

// listenStream is an open subscriptions/listen stream.
type listenStream struct {
	r    *bufio.Reader
	body interface{ Close() error }
}

// openListen opens a subscriptions/listen stream with request id id for
// tools/list_changed and the updates of test://a, and reads its
// acknowledgement (once read, the listener is registered).
func openListen(t *testing.T, url, id string) *listenStream {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":"` + id + `","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["test://a"]},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	// A notification that never comes fails the test when the read gives
	// up, rather than hanging it.
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header = http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"},
		"Mcp-Protocol-Version": {mcp.ProtocolVersion20260728}, "Mcp-Method": {mcp.MethodSubscriptionsListen}}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	l := &listenStream{r: bufio.NewReader(resp.Body), body: resp.Body}
	ack := l.next(t)
	if ack["method"] != mcp.NotificationSubscriptionsAcknowledged || !strings.Contains(jsonText(t, ack), `"resourceSubscriptions":["test://a"]`) ||
		!strings.Contains(jsonText(t, ack), `"toolsListChanged":true`) {
		t.Fatalf("listen %s: first message %v", id, ack)
	}
	return l
}

// next returns the stream's next JSON-RPC message.
func (l *listenStream) next(t *testing.T) map[string]any {
	t.Helper()
	for {
		line, err := l.r.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended: %v", err)
		}
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
}

// TestListenAcrossReplicas: two servers share a Redis bus; a
// subscriptions/listen stream on each. A resource update made on B, then
// a tools list change B publishes for the whole server, reach both
// streams exactly once each, tagged with the stream's subscription id. The
// tools change is the sentinel: one publisher's messages arrive in order
// (the Bus contract), so a second copy of the update would come before it.
func TestListenAcrossReplicas(t *testing.T) {
	redisURL, prefix := freshRedisPrefix(t)
	_, _, urlA := listenReplica(t, redisURL, prefix)
	b, busB, urlB := listenReplica(t, redisURL, prefix)
	streams := map[string]*listenStream{"on-A": openListen(t, urlA, "on-A"), "on-B": openListen(t, urlB, "on-B")}
	if err := b.ResourceUpdated(t.Context(), "test://a"); err != nil {
		t.Fatal(err)
	}
	msg, err := mcp.Change{Method: mcp.NotificationToolsListChanged}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := busB.Publish(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
	for id, l := range streams {
		counts := map[string]int{}
		for counts[mcp.NotificationToolsListChanged] == 0 {
			m := l.next(t)
			method, _ := m["method"].(string)
			params, _ := m["params"].(map[string]any)
			meta, _ := params["_meta"].(map[string]any)
			if meta[mcp.MetaKeySubscriptionID] != id {
				t.Fatalf("stream %s: %v is not tagged with its subscription id", id, m)
			}
			if method == mcp.NotificationResourcesUpdated && params["uri"] != "test://a" {
				t.Fatalf("stream %s: %v", id, m)
			}
			counts[method]++
		}
		if counts[mcp.NotificationResourcesUpdated] != 1 || len(counts) != 2 {
			t.Errorf("stream %s got %v, want one resources/updated, then tools/list_changed", id, counts)
		}
	}
}
