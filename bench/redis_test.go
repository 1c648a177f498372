package main

import (
	"context"
	"net/http/httptest"
	"net/url"
	"testing"
)

// TestStickyProxy: sessions of revision 2025-11-25 opened through the
// proxy work through it, spread over its backends. The backends are
// plain in-memory handlers, each holding its own sessions, so a request
// routed to another backend than the one that issued its session would
// get 404: the proxy must follow the session id.
func TestStickyProxy(t *testing.T) {
	ctx := context.Background()
	var targets []*url.URL
	for range replicas {
		h, release := newOurs()
		srv := httptest.NewServer(h)
		t.Cleanup(func() { srv.Close(); release() })
		u, err := url.Parse(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, u)
	}
	p := newStickyProxy(targets)
	front := httptest.NewServer(p)
	t.Cleanup(func() { front.Close(); p.transport.CloseIdleConnections() })
	tg := &target{impl: impl{name: "proxy"}, host: &sharedHost{}, url: front.URL, cl: newClient(front.URL, 2*replicas, true)}
	t.Cleanup(tg.cl.close)
	if err := tg.open(ctx, 2*replicas, 2); err != nil {
		t.Fatal(err)
	}
	for _, sid := range tg.sessions {
		if _, err := tg.cl.call(ctx, sid, tg.body("hello")); err != nil {
			t.Fatalf("session %s: %v", sid, err)
		}
	}
	seen := map[int]bool{}
	p.owners.Range(func(_, v any) bool { seen[v.(int)] = true; return true })
	if len(seen) != replicas {
		t.Errorf("sessions on %d backends, want all %d", len(seen), replicas)
	}
}

// TestCrossLatency: a change published on one replica reaches a
// subscriber on the other, every time (needs Redis).
func TestCrossLatency(t *testing.T) {
	u := redisURL()
	if u == "" {
		t.Skip("no Redis: set MCPSTACK_REDIS_URL")
	}
	r, err := crossLatency(context.Background(), u, 20)
	if err != nil {
		t.Fatal(err)
	}
	if r.Changes != 20 || r.P50us <= 0 || r.P99us < r.P50us {
		t.Errorf("result %+v", r)
	}
}
