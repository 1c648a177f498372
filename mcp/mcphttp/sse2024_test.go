package mcphttp

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// The 2024-11-05 HTTP+SSE transport, served by SSEHandler, over raw HTTP.

// openLegacy GETs a stream and returns it with the endpoint it announced.
func openLegacy(t *testing.T, url string, hdr map[string]string) (*http.Response, *sseReader, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	r := newSSEReader(resp.Body, 0)
	ev, err := r.next()
	if err != nil || ev.name != "endpoint" {
		t.Fatalf("first event %q %q, %v; want endpoint", ev.name, ev.data, err)
	}
	return resp, r, string(ev.data)
}

func TestSSEHandler(t *testing.T) {
	h := NewSSEHandler(func(*http.Request) *mcp.Server { return toolServer(t, nil) }, &SSEOptions{MaxBodyBytes: 512})
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close() // before ts.Close, which waits for the streams to end
	_, r, endpoint := openLegacy(t, ts.URL+"/sse", nil)
	u, err := url.Parse(endpoint)
	if err != nil || u.Path != "/sse" || u.Query().Get("sessionId") == "" || u.Host != "" {
		t.Fatalf("endpoint %q: want /sse?sessionId=…", endpoint)
	}
	post := ts.URL + endpoint
	init := fmt.Sprintf(rawInitBody, mcp.ProtocolVersion20241105)
	tests := []struct {
		name   string
		url    string
		hdr    map[string]string
		body   string
		status int
		code   int64
	}{
		{"initialize", post, nil, init, 202, 0},
		{"initialized", post, nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, 0},
		{"missing sessionId", ts.URL + "/sse", nil, init, 400, -32600},
		{"unknown session", ts.URL + "/sse?sessionId=nope", nil, init, 404, -32600},
		{"not JSON", post, map[string]string{"Content-Type": "text/plain"}, init, 415, -32600},
		{"too large", post, nil, `{"jsonrpc":"2.0","method":"x","params":{"a":"` + strings.Repeat("a", 600) + `"}}`, 413, -32600},
		{"malformed", post, nil, `{`, 400, jsonrpc.CodeParseError},
		{"a request", post, nil, `{"jsonrpc":"2.0","id":"e","method":"tools/call","params":{"name":"echo","arguments":{"k":1}}}`, 202, 0},
		{"PUT", post, nil, "", 405, -32600},
	}
	for _, tt := range tests {
		method := "POST"
		if tt.name == "PUT" {
			method = "PUT"
		}
		got := rawDo(t, method, tt.url, tt.hdr, tt.body)
		if got.status != tt.status {
			t.Errorf("%s: %d, want %d: %s", tt.name, got.status, tt.status, got.body)
			continue
		}
		if tt.code != 0 {
			if resp := decodeResponse(t, got.body); resp.Error == nil || resp.Error.Code != tt.code {
				t.Errorf("%s: body %s, want code %d", tt.name, got.body, tt.code)
			}
		}
	}
	// The answers arrive on the stream, as message events, in order.
	for _, want := range []string{`"id":1`, `"id":"e"`} {
		ev, err := r.next()
		if err != nil || ev.name != "message" || !strings.Contains(string(ev.data), want) {
			t.Fatalf("event %q %q, %v; want a message with %s", ev.name, ev.data, err, want)
		}
	}
}

func TestSSEHandlerSessionEndsWithStream(t *testing.T) {
	h := NewSSEHandler(func(*http.Request) *mcp.Server { return toolServer(t, nil) }, &SSEOptions{Endpoint: "/messages"})
	ts := httptest.NewServer(h)
	defer ts.Close()
	resp, _, endpoint := openLegacy(t, ts.URL+"/sse", nil)
	if !strings.HasPrefix(endpoint, "/messages?sessionId=") {
		t.Fatalf("endpoint %q: want the configured path", endpoint)
	}
	resp.Body.Close()
	eventually(t, "the session ends with its stream", func() bool {
		return rawDo(t, "POST", ts.URL+endpoint, nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).status == 404
	})
	// Close ends the other streams cleanly.
	resp2, _, _ := openLegacy(t, ts.URL+"/sse", nil)
	h.Close()
	if _, err := io.ReadAll(resp2.Body); err != nil {
		t.Fatalf("stream after Close: %v", err)
	}
	if r := rawDo(t, "GET", ts.URL+"/sse", nil, ""); r.status != http.StatusServiceUnavailable {
		t.Fatalf("GET after Close: %d", r.status)
	}
}

func TestSSEHandlerGuards(t *testing.T) {
	h := NewSSEHandler(func(*http.Request) *mcp.Server { return toolServer(t, nil) }, nil)
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close() // before ts.Close, which waits for the streams to end
	for _, tc := range []struct {
		name   string
		hdr    map[string]string
		status int
	}{
		{"foreign Origin", map[string]string{"Origin": "http://evil.example"}, 403},
		{"rebound Host", map[string]string{"Host": "evil.example"}, 403},
		{"no SSE in Accept", map[string]string{"Accept": "application/json"}, 406},
	} {
		if r := rawDo(t, "GET", ts.URL, tc.hdr, ""); r.status != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, r.status, tc.status)
		}
	}
}
