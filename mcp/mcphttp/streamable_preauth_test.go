package mcphttp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

// endlessBody is an endless request body that counts the bytes read.
type endlessBody struct{ n int64 }

func (b *endlessBody) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	b.n += int64(len(p))
	return len(p), nil
}
func (b *endlessBody) Close() error { return nil }

// TestPostBodyNotReadForRefusedSession: a POST naming a session that is
// unknown, another caller's, or at another protocol version is refused
// before any of its body is read (#16.2).
func TestPostBodyNotReadForRefusedSession(t *testing.T) {
	h := NewHandler(func(*http.Request) *mcp.Server { return toolServer(t, nil) },
		&Options{Identity: func(r *http.Request) string { return r.Header.Get("X-User") }})
	defer h.Close()
	// A real session, owned by "alice".
	init := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	init.Header.Set("Content-Type", "application/json")
	init.Header.Set("Accept", "application/json, text/event-stream")
	init.Header.Set("X-User", "alice")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, init)
	sid := w.Header().Get(headerSessionID)
	if sid == "" {
		t.Fatalf("no session: %d %s", w.Code, w.Body)
	}
	tests := []struct {
		name    string
		sid     string
		user    string
		version string
		want    int
	}{
		{"unknown session", "no-such-session", "alice", "2025-06-18", http.StatusNotFound},
		{"another caller's session", sid, "mallory", "2025-06-18", http.StatusForbidden},
		{"wrong protocol version", sid, "alice", "1999-01-01", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := &endlessBody{}
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.Body, r.ContentLength = body, -1
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			r.Header.Set(headerSessionID, tt.sid)
			r.Header.Set(headerProtocolVersion, tt.version)
			r.Header.Set("X-User", tt.user)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.want {
				t.Errorf("status %d, want %d", w.Code, tt.want)
			}
			if body.n != 0 {
				t.Errorf("read %d bytes of the body of a refused request", body.n)
			}
		})
	}
}
