package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

type userKey struct{}

// TestStreamableIdentity checks that a session is bound to the identity that
// created it, and that values an HTTP middleware put in the request's
// context reach tool handlers.
func TestStreamableIdentity(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "id", Version: "1"}, nil)
	err := s.AddTool(&mcp.Tool{Name: "who", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			user, _ := ctx.Value(userKey{}).(string)
			hdr := ""
			if r := RequestFromContext(ctx); r != nil {
				hdr = r.Header.Get("X-User")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: user + "/" + hdr}}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(func(*http.Request) *mcp.Server { return s }, &Options{
		JSONResponse: true,
		Identity:     func(r *http.Request) string { return r.Header.Get("X-User") },
	})
	// A stand-in for authorization middleware: it puts the caller in the
	// request's context.
	mw := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, r.Header.Get("X-User"))))
	})
	ts := httptest.NewServer(mw)
	t.Cleanup(func() { h.Close(); ts.Close() })

	const v = "2025-11-25"
	r := rawDo(t, http.MethodPost, ts.URL, map[string]string{"X-User": "alice"}, fmt.Sprintf(rawInitBody, v))
	if r.status != http.StatusOK {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	sid := r.header.Get("Mcp-Session-Id")
	hdr := func(user string) map[string]string {
		return map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": v, "X-User": user}
	}
	if r := rawDo(t, http.MethodPost, ts.URL, hdr("alice"), `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", r.status, r.body)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"who","arguments":{}}}`
	r = rawDo(t, http.MethodPost, ts.URL, hdr("alice"), call)
	if r.status != http.StatusOK || !strings.Contains(r.body, `"alice/alice"`) {
		t.Fatalf("alice's call: %d %s", r.status, r.body)
	}
	for _, tc := range []struct{ method, user, body string }{
		{http.MethodPost, "bob", call},
		{http.MethodPost, "", call},
		{http.MethodGet, "bob", ""},
		{http.MethodDelete, "bob", ""},
	} {
		r := rawDo(t, tc.method, ts.URL, hdr(tc.user), tc.body)
		if r.status != http.StatusForbidden {
			t.Errorf("%s as %q on alice's session: %d %s, want 403", tc.method, tc.user, r.status, r.body)
		}
	}
	// Bob's attempts changed nothing: alice's session still works.
	r = rawDo(t, http.MethodPost, ts.URL, hdr("alice"), strings.Replace(call, `"id":2`, `"id":3`, 1))
	if r.status != http.StatusOK || !strings.Contains(r.body, `"alice/alice"`) {
		t.Fatalf("alice after bob: %d %s", r.status, r.body)
	}
}
