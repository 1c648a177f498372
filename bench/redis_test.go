package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestStickyProxy: sessions of revision 2025-11-25 opened through the
// sticky proxy (the mcpstack×3 row's) work through it, spread over its
// backends. The backends are plain in-memory handlers, each holding its
// own sessions, so a request routed to another backend than the one that
// issued its session would get 404: the proxy must follow the session id.
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
	p := newFrontProxy(targets, true)
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

// servedBy records, per backend, the sessions whose requests it
// answered with 200.
type servedBy struct {
	mu   sync.Mutex
	seen map[string]map[int]bool // session id -> backends
	bad  []string                // requests answered otherwise
}

func (s *servedBy) wrap(i int, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		sid := r.Header.Get("Mcp-Session-Id")
		if sid == "" {
			return // an initialize
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if rec.code >= 300 {
			s.bad = append(s.bad, r.Method+" "+sid+": "+http.StatusText(rec.code))
			return
		}
		if s.seen[sid] == nil {
			s.seen[sid] = map[int]bool{}
		}
		s.seen[sid][i] = true
	})
}

// statusRecorder notes the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) { r.code = code; r.ResponseWriter.WriteHeader(code) }

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestRoundRobinRedis: the mcpstack×3+redis row's front (redisFront) is
// a plain round-robin proxy over replicas sharing their sessions, so a
// session's requests land on every replica, and every one of them
// succeeds (and echoes), one after another and concurrently, as the
// bench drives them (needs Redis). With a sticky proxy each session
// would stay on one replica; with replicas that do not share their
// sessions (no Options.Replicas), the calls would get 404.
func TestRoundRobinRedis(t *testing.T) {
	if redisURL() == "" {
		t.Skip("no Redis: set MCPSTACK_REDIS_URL")
	}
	ctx := context.Background()
	sb := &servedBy{seen: map[string]map[int]bool{}}
	p, release := redisFront(sb.wrap)
	t.Cleanup(release)
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	const sessions = 4
	tg := &target{impl: impl{name: "mcpstack×3+redis"}, host: &sharedHost{}, url: front.URL, cl: newClient(front.URL, sessions, true)}
	t.Cleanup(tg.cl.close)
	if err := tg.open(ctx, sessions, 2); err != nil {
		t.Fatal(err)
	}
	// One request at a time: consecutive requests of a session go to
	// consecutive replicas.
	for _, sid := range tg.sessions {
		for range replicas {
			out, err := tg.cl.call(ctx, sid, tg.body("hello"))
			if err != nil {
				t.Fatalf("session %s: %v", sid, err)
			}
			if !strings.Contains(string(out), `"text":"hello"`) {
				t.Fatalf("session %s: tools/call did not echo: %.300s", sid, out)
			}
		}
	}
	// As the bench drives it: every session at once.
	if _, err := tg.calls(ctx, 40*sessions, sessions); err != nil {
		t.Fatal(err)
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if len(sb.bad) > 0 {
		t.Errorf("requests not served: %q", sb.bad)
	}
	for _, sid := range tg.sessions {
		if n := len(sb.seen[sid]); n != replicas {
			t.Errorf("session %s served by %d replicas, want all %d", sid, n, replicas)
		}
	}
}

// TestCrossLatency: a change published on one replica reaches a
// subscriber on the other, every time, on the bus alone and end to end
// through HTTP (needs Redis).
func TestCrossLatency(t *testing.T) {
	u := redisURL()
	if u == "" {
		t.Skip("no Redis: set MCPSTACK_REDIS_URL")
	}
	for _, tc := range []struct {
		name    string
		measure func(context.Context, int) (notifyResult, error)
	}{
		{"bus", func(ctx context.Context, n int) (notifyResult, error) { return crossLatency(ctx, u, n) }},
		{"end to end", crossLatencyHTTP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.measure(context.Background(), 20)
			if err != nil {
				t.Fatal(err)
			}
			if r.Changes != 20 || r.P50us <= 0 || r.P99us < r.P50us {
				t.Errorf("result %+v", r)
			}
		})
	}
}
