package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// The status code and header rules of the Streamable HTTP server, one by
// one, over raw HTTP.

const callEcho = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"x":%d}}}`

func TestStreamableStatusCodes(t *testing.T) {
	_, ts := serve(t, toolServer(t, nil), &Options{MaxBodyBytes: 1024})
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	withSession := func(extra map[string]string) map[string]string {
		m := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": mcp.ProtocolVersion20251125}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	ping := `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	tests := []struct {
		name       string
		method     string
		hdr        map[string]string
		body       string
		wantStatus int
		wantCode   int64  // JSON-RPC error code in the body, 0 for none
		wantID     string // JSON of the error's id, "" for none
		wantHeader map[string]string
	}{
		{"POST without Accept", "POST", withSession(map[string]string{"Accept": ""}), ping, 406, -32600, "", nil},
		{"POST accepting only JSON", "POST", withSession(map[string]string{"Accept": "application/json"}), ping, 406, -32600, "", nil},
		{"POST accepting only SSE", "POST", withSession(map[string]string{"Accept": "text/event-stream"}), ping, 406, -32600, "", nil},
		{"POST accepting */*", "POST", withSession(map[string]string{"Accept": "*/*"}), ping, 200, 0, "", nil},
		{"POST Accept with parameters", "POST", withSession(map[string]string{"Accept": "application/json;q=0.9, text/event-stream;q=1"}), ping, 200, 0, "", nil},
		{"POST text/plain", "POST", withSession(map[string]string{"Content-Type": "text/plain"}), ping, 415, -32600, "", nil},
		{"POST without Content-Type", "POST", withSession(map[string]string{"Content-Type": ""}), ping, 415, -32600, "", nil},
		{"POST JSON with charset", "POST", withSession(map[string]string{"Content-Type": "application/json; charset=utf-8"}), ping, 200, 0, "", nil},
		{"POST body over the limit", "POST", withSession(nil), `{"jsonrpc":"2.0","method":"x","params":{"p":"` + strings.Repeat("a", 2000) + `"}}`, 413, -32600, "", nil},
		{"POST not JSON", "POST", withSession(nil), `{"jsonrpc":`, 400, jsonrpc.CodeParseError, "", nil},
		{"POST empty body", "POST", withSession(nil), ``, 400, jsonrpc.CodeParseError, "", nil},
		{"POST invalid request keeps its id", "POST", withSession(nil), `{"jsonrpc":"1.0","id":9,"method":"ping"}`, 400, jsonrpc.CodeInvalidRequest, "9", nil},
		{"POST a JSON string", "POST", withSession(nil), `"hello"`, 400, jsonrpc.CodeInvalidRequest, "", nil},
		{"POST notification", "POST", withSession(nil), `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, 202, 0, "", nil},
		{"POST response", "POST", withSession(nil), `{"jsonrpc":"2.0","id":99,"result":{}}`, 202, 0, "", nil},
		{"POST request without session", "POST", map[string]string{"Mcp-Protocol-Version": mcp.ProtocolVersion20251125}, ping, 400, -32600, "", nil},
		{"POST notification without session", "POST", nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 400, -32600, "", nil},
		{"POST initialize as a notification opens no session", "POST", nil, `{"jsonrpc":"2.0","method":"initialize","params":{}}`, 400, -32600, "", nil},
		{"POST initialize with an unknown session", "POST", map[string]string{"Mcp-Session-Id": "nope"}, fmt.Sprintf(rawInitBody, "2025-11-25"), 404, -32600, "", nil},
		{"POST unknown session", "POST", map[string]string{"Mcp-Session-Id": "nope"}, ping, 404, -32600, "", nil},
		{"POST unsupported protocol version", "POST", withSession(map[string]string{"Mcp-Protocol-Version": "1999-01-01"}), ping, 400, -32600, "", nil},
		{"POST another supported version than negotiated", "POST", withSession(map[string]string{"Mcp-Protocol-Version": mcp.ProtocolVersion20250618}), ping, 400, -32600, "", nil},
		{"POST without protocol version: the negotiated one", "POST", withSession(map[string]string{"Mcp-Protocol-Version": ""}), ping, 200, 0, "", nil},
		{"POST batch at 2025-11-25", "POST", withSession(nil), `[` + ping + `]`, 400, -32600, "", nil},
		{"POST initialize in a batch", "POST", withSession(nil), `[` + fmt.Sprintf(rawInitBody, "2025-03-26") + `]`, 400, -32600, "", nil},
		{"GET without Accept", "GET", withSession(map[string]string{"Accept": "application/json"}), "", 406, -32600, "", nil},
		{"GET without session", "GET", nil, "", 400, -32600, "", nil},
		{"GET unknown session", "GET", map[string]string{"Mcp-Session-Id": "nope"}, "", 404, -32600, "", nil},
		{"GET wrong protocol version", "GET", withSession(map[string]string{"Mcp-Protocol-Version": mcp.ProtocolVersion20250326}), "", 400, -32600, "", nil},
		{"GET malformed Last-Event-ID", "GET", withSession(map[string]string{"Last-Event-ID": "garbage"}), "", 400, -32600, "", nil},
		{"GET Last-Event-ID of an unknown stream", "GET", withSession(map[string]string{"Last-Event-ID": "77_3"}), "", 400, -32600, "", nil},
		{"GET Last-Event-ID ahead of the stream", "GET", withSession(map[string]string{"Last-Event-ID": "0_999"}), "", 400, -32600, "", nil},
		{"DELETE without session", "DELETE", nil, "", 400, -32600, "", nil},
		{"DELETE unknown session", "DELETE", map[string]string{"Mcp-Session-Id": "nope"}, "", 404, -32600, "", nil},
		{"DELETE wrong protocol version", "DELETE", withSession(map[string]string{"Mcp-Protocol-Version": "2024-11-05"}), "", 400, -32600, "", nil},
		{"PUT", "PUT", withSession(nil), "", 405, -32600, "", map[string]string{"Allow": "GET, POST, DELETE"}},
		{"OPTIONS", "OPTIONS", nil, "", 405, -32600, "", map[string]string{"Allow": "GET, POST, DELETE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rawDo(t, tt.method, ts.URL, tt.hdr, tt.body)
			if r.status != tt.wantStatus {
				t.Fatalf("status %d, want %d; body %s", r.status, tt.wantStatus, r.body)
			}
			for k, v := range tt.wantHeader {
				if got := r.header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if tt.wantStatus == 202 && r.body != "" {
				t.Errorf("202 with a body: %q", r.body)
			}
			if tt.wantCode == 0 {
				return
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("error Content-Type %q", ct)
			}
			resp := decodeResponse(t, r.body)
			if resp.Error == nil || resp.Error.Code != tt.wantCode {
				t.Fatalf("error body %s, want code %d", r.body, tt.wantCode)
			}
			gotID := ""
			if resp.ID.IsValid() {
				gotID = string(resp.ID.AppendJSON(nil))
			}
			if gotID != tt.wantID {
				t.Errorf("error id %q, want %q", gotID, tt.wantID)
			}
		})
	}
}

func TestStreamableSessionIDs(t *testing.T) {
	_, ts := serve(t, toolServer(t, nil), &Options{JSONResponse: true})
	seen := map[string]bool{}
	for range 5 {
		r := rawDo(t, "POST", ts.URL, nil, fmt.Sprintf(rawInitBody, mcp.ProtocolVersion20251125))
		if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("initialize: %d %q", r.status, r.header.Get("Content-Type"))
		}
		sid := r.header.Get("Mcp-Session-Id")
		if len(sid) < 16 {
			t.Fatalf("session id %q is too short to be unguessable", sid)
		}
		for _, c := range []byte(sid) {
			if c < 0x21 || c > 0x7E {
				t.Fatalf("session id %q holds a byte outside visible ASCII", sid)
			}
		}
		if seen[sid] {
			t.Fatalf("session id %q issued twice", sid)
		}
		seen[sid] = true
		resp := decodeResponse(t, r.body)
		var res mcp.InitializeResult
		if err := json.Unmarshal(resp.Result, &res); err != nil || res.ProtocolVersion != mcp.ProtocolVersion20251125 {
			t.Fatalf("initialize result %s", r.body)
		}
		// A later request on the session needs no initialize again.
		r = rawDo(t, "POST", ts.URL, map[string]string{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if r.status != 200 || r.header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("ping: %d, session header %q (only initialize carries it)", r.status, r.header.Get("Mcp-Session-Id"))
		}
	}
}

func TestStreamableFailedInitializeEndsSession(t *testing.T) {
	_, ts := serve(t, toolServer(t, nil), &Options{JSONResponse: true})
	r := rawDo(t, "POST", ts.URL, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	if resp := decodeResponse(t, r.body); resp.Error == nil || resp.Error.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("initialize without params answered %s", r.body)
	}
	sid := r.header.Get("Mcp-Session-Id")
	eventually(t, "the failed session is gone", func() bool {
		return rawDo(t, "POST", ts.URL, map[string]string{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`).status == 404
	})
}

func TestStreamableDelete(t *testing.T) {
	t.Run("enabled", func(t *testing.T) {
		_, ts := serve(t, toolServer(t, nil), nil)
		sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
		hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": mcp.ProtocolVersion20251125}
		if r := rawDo(t, "DELETE", ts.URL, hdr, ""); r.status != http.StatusNoContent {
			t.Fatalf("DELETE: %d %s", r.status, r.body)
		}
		for _, m := range []string{"POST", "GET", "DELETE"} {
			body := ""
			if m == "POST" {
				body = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
			}
			if r := rawDo(t, m, ts.URL, hdr, body); r.status != http.StatusNotFound {
				t.Errorf("%s after DELETE: %d, want 404", m, r.status)
			}
		}
	})
	t.Run("disabled", func(t *testing.T) {
		_, ts := serve(t, toolServer(t, nil), &Options{DisableDelete: true})
		sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
		hdr := map[string]string{"Mcp-Session-Id": sid}
		r := rawDo(t, "DELETE", ts.URL, hdr, "")
		if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, POST" {
			t.Fatalf("DELETE: %d, Allow %q", r.status, r.header.Get("Allow"))
		}
		if r := rawDo(t, "POST", ts.URL, hdr, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.status != 200 {
			t.Fatalf("session gone after a refused DELETE: %d", r.status)
		}
	})
}

func TestStreamableIdleExpiry(t *testing.T) {
	h, ts := serve(t, toolServer(t, nil), &Options{SessionTimeout: 50 * time.Millisecond})
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	// Polling with requests would keep the session alive: watch the table.
	eventually(t, "the idle session expires", func() bool { return h.session(sid) == nil })
	if r := rawDo(t, "POST", ts.URL, map[string]string{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.status != 404 {
		t.Fatalf("expired session: %d, want 404", r.status)
	}
}

func TestStreamableSessionNotExpiredWhileStreaming(t *testing.T) {
	// An open GET stream is activity: the session outlives the timeout.
	h, ts := serve(t, toolServer(t, nil), &Options{SessionTimeout: 20 * time.Millisecond})
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	req, _ := http.NewRequest("GET", ts.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := newSSEReader(resp.Body, 0)
	if _, err := r.next(); err != nil { // the priming event
		t.Fatal(err)
	}
	// Several timeouts pass while the stream is open; the session must
	// still deliver a server notification on it.
	time.Sleep(100 * time.Millisecond)
	s := h.session(sid)
	if s == nil {
		t.Fatal("session expired while its GET stream was open")
	}
	if err := s.ss.Notify(context.Background(), "notifications/tools/list_changed", nil); err != nil {
		t.Fatal(err)
	}
	ev, err := r.next()
	if err != nil || !strings.Contains(string(ev.data), "list_changed") {
		t.Fatalf("event %q, %v", ev.data, err)
	}
}

func TestStreamableDNSRebinding(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	tests := []struct {
		name   string
		opts   *Options
		hdr    map[string]string
		status int
	}{
		{"no Origin (not a browser)", nil, nil, 200},
		{"same-origin", nil, map[string]string{"Origin": "http://HOST"}, 200},
		{"loopback page on another port", nil, map[string]string{"Origin": "http://localhost:5173"}, 200},
		{"foreign Origin", nil, map[string]string{"Origin": "http://evil.example"}, 403},
		{"null Origin", nil, map[string]string{"Origin": "null"}, 403},
		{"rebound Host on loopback", nil, map[string]string{"Host": "evil.example:8080"}, 403},
		{"rebound Host and matching Origin", nil, map[string]string{"Host": "evil.example", "Origin": "http://evil.example"}, 403},
		{"localhost Host", nil, map[string]string{"Host": "localhost:1234"}, 200},
		{"[::1] Host", nil, map[string]string{"Host": "[::1]:1234"}, 200},
		{"allowed origin listed", &Options{AllowedOrigins: []string{"https://app.example"}}, map[string]string{"Origin": "https://app.example"}, 200},
		{"origin not listed", &Options{AllowedOrigins: []string{"https://app.example"}}, map[string]string{"Origin": "http://HOST"}, 403},
		{"allowed host listed", &Options{AllowedHosts: []string{"mcp.example"}}, map[string]string{"Host": "mcp.example:443"}, 200},
		{"allowed host with port", &Options{AllowedHosts: []string{"mcp.example:8443"}}, map[string]string{"Host": "mcp.example:443"}, 403},
		{"host not listed", &Options{AllowedHosts: []string{"mcp.example"}}, map[string]string{"Host": "localhost"}, 403},
		{"protection disabled", &Options{DisableDNSRebindingProtection: true}, map[string]string{"Host": "evil.example", "Origin": "http://evil.example"}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ts := serve(t, toolServer(t, nil), tt.opts)
			host := strings.TrimPrefix(ts.URL, "http://")
			hdr := map[string]string{}
			for k, v := range tt.hdr {
				hdr[k] = strings.ReplaceAll(v, "HOST", host)
			}
			r := rawDo(t, "POST", ts.URL, hdr, ping)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.status == 403 {
				resp := decodeResponse(t, r.body)
				if resp.Error == nil || resp.ID.IsValid() {
					t.Fatalf("403 body %s: want a JSON-RPC error without id", r.body)
				}
			}
		})
	}
}

func TestStreamableHostGuardOffLoopback(t *testing.T) {
	// Without a loopback local address (no listener tells), Host is not
	// checked unless AllowedHosts says so; Origin still is.
	h := NewHandler(func(*http.Request) *mcp.Server { return toolServer(t, nil) }, nil)
	defer h.Close()
	for _, tc := range []struct {
		origin string
		want   int
	}{{"", 200}, {"http://evil.example", 403}, {"http://mcp.example", 200}} {
		req := httptest.NewRequest("POST", "http://mcp.example/mcp", strings.NewReader(fmt.Sprintf(rawInitBody, mcp.ProtocolVersion20251125)))
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("Origin %q: %d, want %d", tc.origin, rec.Code, tc.want)
		}
	}
}

func TestStreamableJSONAndSSEAnswers(t *testing.T) {
	tests := []struct {
		name        string
		jsonMode    bool
		version     string
		tool        string
		wantCT      string
		wantPriming bool
		wantEvents  int // message events, SSE only
	}{
		{"JSON mode", true, mcp.ProtocolVersion20251125, "echo", "application/json", false, 0},
		{"JSON mode upgraded by a notification", true, mcp.ProtocolVersion20251125, "notify-first", "text/event-stream", true, 2},
		{"SSE mode", false, mcp.ProtocolVersion20251125, "echo", "text/event-stream", true, 1},
		{"SSE mode with a notification", false, mcp.ProtocolVersion20251125, "notify-first", "text/event-stream", true, 2},
		{"SSE mode, 2025-06-18 client: no priming event", false, mcp.ProtocolVersion20250618, "echo", "text/event-stream", false, 1},
		{"SSE mode, 2025-03-26 client: no priming event", false, mcp.ProtocolVersion20250326, "notify-first", "text/event-stream", false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ts := serve(t, toolServer(t, nil), &Options{JSONResponse: tt.jsonMode})
			sid := rawInit(t, ts.URL, tt.version)
			hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": tt.version}
			r := rawDo(t, "POST", ts.URL, hdr, `{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"`+tt.tool+`","arguments":{}}}`)
			if r.status != 200 || r.header.Get("Content-Type") != tt.wantCT {
				t.Fatalf("status %d, Content-Type %q, want 200 %q", r.status, r.header.Get("Content-Type"), tt.wantCT)
			}
			if tt.wantCT == "application/json" {
				resp := decodeResponse(t, r.body)
				if resp.ID != jsonrpc.StringID("call-1") || resp.Error != nil {
					t.Fatalf("response %s", r.body)
				}
				return
			}
			evs := sseEvents(t, r.body)
			if tt.wantPriming {
				if len(evs) == 0 || len(evs[0].data) != 0 || evs[0].id == "" {
					t.Fatalf("first event %+v, want a priming event (id, empty data)", evs)
				}
				evs = evs[1:]
			} else if len(evs) > 0 && len(evs[0].data) == 0 {
				t.Fatalf("priming event sent to a %s client", tt.version)
			}
			if len(evs) != tt.wantEvents {
				t.Fatalf("%d message events, want %d: %q", len(evs), tt.wantEvents, r.body)
			}
			ids := map[string]bool{}
			for _, ev := range evs {
				stream, _, ok := parseEventID(ev.id)
				if !ok || stream == standaloneStreamID {
					t.Errorf("event id %q: want <stream>_<seq> of a POST stream", ev.id)
				}
				if ids[ev.id] {
					t.Errorf("event id %q repeated", ev.id)
				}
				ids[ev.id] = true
			}
			last := decodeResponse(t, string(evs[len(evs)-1].data))
			if last.ID != jsonrpc.StringID("call-1") {
				t.Fatalf("last event %s is not the response", evs[len(evs)-1].data)
			}
		})
	}
}

func TestStreamableGETStream(t *testing.T) {
	h, ts := serve(t, toolServer(t, nil), nil)
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	// A message sent before any GET stream is open waits for it.
	s := h.session(sid)
	if err := s.ss.Notify(context.Background(), "notifications/tools/list_changed", nil); err != nil {
		t.Fatal(err)
	}
	open := func(last string) (*http.Response, *sseReader) {
		req, _ := http.NewRequest("GET", ts.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp, newSSEReader(resp.Body, 0)
	}
	resp, r := open("")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	prime, err := r.next()
	if err != nil || len(prime.data) != 0 || prime.id != "0_0" {
		t.Fatalf("priming event %+v, %v", prime, err)
	}
	ev, err := r.next()
	if err != nil || ev.id != "0_1" || !strings.Contains(string(ev.data), "tools/list_changed") {
		t.Fatalf("queued event %+v %q, %v", ev, ev.data, err)
	}
	// One GET stream at a time.
	if r2 := rawDo(t, "GET", ts.URL, map[string]string{"Mcp-Session-Id": sid}, ""); r2.status != http.StatusConflict {
		t.Fatalf("second GET: %d, want 409", r2.status)
	}
	// The client drops the stream; a message sent meanwhile is replayed
	// to the client that resumes with Last-Event-ID, and only it.
	resp.Body.Close()
	eventually(t, "the server notices the closed stream", func() bool {
		s.standalone.mu.Lock()
		defer s.standalone.mu.Unlock()
		return s.standalone.w == nil
	})
	if err := s.ss.Notify(context.Background(), "notifications/resources/list_changed", nil); err != nil {
		t.Fatal(err)
	}
	resp, r = open("0_1")
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("resume: %d", resp.StatusCode)
	}
	if prime, err := r.next(); err != nil || prime.id != "0_1" || len(prime.data) != 0 {
		t.Fatalf("resumed priming event %+v, %v", prime, err)
	}
	ev, err = r.next()
	if err != nil || ev.id != "0_2" || !strings.Contains(string(ev.data), "resources/list_changed") {
		t.Fatalf("replayed event %+v %q, %v", ev, ev.data, err)
	}
}

func TestStreamableGETNotOffered(t *testing.T) {
	t.Run("standalone disabled", func(t *testing.T) {
		_, ts := serve(t, toolServer(t, nil), &Options{DisableStandaloneSSE: true})
		sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
		r := rawDo(t, "GET", ts.URL, map[string]string{"Mcp-Session-Id": sid}, "")
		if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") == "" {
			t.Fatalf("GET: %d, Allow %q", r.status, r.header.Get("Allow"))
		}
		// Resuming a POST stream still works.
		r = rawDo(t, "POST", ts.URL, map[string]string{"Mcp-Session-Id": sid}, fmt.Sprintf(callEcho, 5, 5))
		evs := sseEvents(t, r.body)
		if len(evs) != 2 {
			t.Fatalf("events %q", r.body)
		}
		r = rawDo(t, "GET", ts.URL, map[string]string{"Mcp-Session-Id": sid, "Last-Event-ID": evs[0].id}, "")
		if r.status != 200 || len(sseEvents(t, r.body)) != 2 {
			t.Fatalf("resume with GET disabled: %d %q", r.status, r.body)
		}
	})
	t.Run("stateless", func(t *testing.T) {
		_, ts := serve(t, toolServer(t, nil), &Options{Stateless: true})
		for _, m := range []string{"GET", "DELETE"} {
			r := rawDo(t, m, ts.URL, nil, "")
			if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
				t.Errorf("%s: %d, Allow %q", m, r.status, r.header.Get("Allow"))
			}
		}
	})
}

func TestStreamableStateless(t *testing.T) {
	_, ts := serve(t, toolServer(t, nil), &Options{Stateless: true, JSONResponse: true})
	// initialize: answered, with no session id.
	r := rawDo(t, "POST", ts.URL, nil, fmt.Sprintf(rawInitBody, mcp.ProtocolVersion20251125))
	if r.status != 200 || r.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize: %d, session %q", r.status, r.header.Get("Mcp-Session-Id"))
	}
	// A request with no initialize first is served by an implicitly
	// initialized session.
	r = rawDo(t, "POST", ts.URL, map[string]string{"Mcp-Protocol-Version": mcp.ProtocolVersion20251125}, fmt.Sprintf(callEcho, 3, 3))
	if r.status != 200 {
		t.Fatalf("tools/call: %d %s", r.status, r.body)
	}
	resp := decodeResponse(t, r.body)
	if resp.Error != nil || !strings.Contains(string(resp.Result), `{\"x\":3}`) {
		t.Fatalf("tools/call: %s", r.body)
	}
	// A session id from elsewhere is ignored.
	r = rawDo(t, "POST", ts.URL, map[string]string{"Mcp-Session-Id": "whatever"}, `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if r.status != 200 {
		t.Fatalf("ping: %d %s", r.status, r.body)
	}
	// Notifications are accepted and dropped.
	r = rawDo(t, "POST", ts.URL, nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if r.status != 202 || r.body != "" {
		t.Fatalf("notification: %d %q", r.status, r.body)
	}
	// The header version must be one the server speaks.
	r = rawDo(t, "POST", ts.URL, map[string]string{"Mcp-Protocol-Version": "2000-01-01"}, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if r.status != 400 {
		t.Fatalf("unsupported version: %d", r.status)
	}
	// Without the header, 2025-03-26 is assumed: batches are allowed.
	r = rawDo(t, "POST", ts.URL, nil, `[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]`)
	if r.status != 200 || !strings.HasPrefix(r.body, "[") {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
}

func TestStreamableBatch2025_03_26(t *testing.T) {
	for _, jsonMode := range []bool{true, false} {
		t.Run(fmt.Sprint("json=", jsonMode), func(t *testing.T) {
			_, ts := serve(t, toolServer(t, nil), &Options{JSONResponse: jsonMode})
			sid := rawInit(t, ts.URL, mcp.ProtocolVersion20250326)
			hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": mcp.ProtocolVersion20250326}
			body := `[` + fmt.Sprintf(callEcho, 1, 1) + `,{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},` + fmt.Sprintf(callEcho, 2, 2) + `]`
			r := rawDo(t, "POST", ts.URL, hdr, body)
			if r.status != 200 {
				t.Fatalf("batch: %d %s", r.status, r.body)
			}
			var got []string
			if jsonMode {
				var arr []json.RawMessage
				if err := json.Unmarshal([]byte(r.body), &arr); err != nil {
					t.Fatalf("batch answer %s: %v", r.body, err)
				}
				for _, e := range arr {
					got = append(got, decodeResponse(t, string(e)).ID.String())
				}
			} else {
				for _, ev := range sseEvents(t, r.body) {
					got = append(got, decodeResponse(t, string(ev.data)).ID.String())
				}
			}
			if len(got) != 2 || !(got[0] == "1" && got[1] == "2" || got[0] == "2" && got[1] == "1") {
				t.Fatalf("responses for ids %v, want 1 and 2", got)
			}
			// A batch of notifications only: 202.
			r = rawDo(t, "POST", ts.URL, hdr, `[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`)
			if r.status != 202 {
				t.Fatalf("batch of notifications: %d", r.status)
			}
			// A batch of one request is answered with an array in JSON mode.
			if jsonMode {
				r = rawDo(t, "POST", ts.URL, hdr, `[`+fmt.Sprintf(callEcho, 3, 3)+`]`)
				if !strings.HasPrefix(r.body, "[") {
					t.Fatalf("batch of one: %s", r.body)
				}
			}
		})
	}
}

func TestStreamableDuplicateInFlightID(t *testing.T) {
	release := make(chan struct{})
	h, ts := serve(t, toolServer(t, release), &Options{JSONResponse: true})
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	hdr := map[string]string{"Mcp-Session-Id": sid}
	block := `{"jsonrpc":"2.0","id":"same","method":"tools/call","params":{"name":"block","arguments":{}}}`
	first := rawAsync("POST", ts.URL, hdr, block)
	eventually(t, "the request is in flight", func() bool { return h.exchanges.Load() == 1 })
	r := rawDo(t, "POST", ts.URL, hdr, `{"jsonrpc":"2.0","id":"same","method":"ping"}`)
	if r.status != 400 {
		t.Fatalf("duplicate id: %d, want 400", r.status)
	}
	if resp := decodeResponse(t, r.body); resp.ID != jsonrpc.StringID("same") || resp.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("duplicate answered %s", r.body)
	}
	close(release)
	if got := <-first; got.status != 200 || !strings.Contains(got.body, "released") {
		t.Fatalf("first request: %d %s", got.status, got.body)
	}
}

func TestStreamableCancelledRequestAnswer(t *testing.T) {
	// A request the client cancels is not answered; its POST ends: with
	// 202 in JSON mode, with the end of the stream in SSE mode.
	for _, jsonMode := range []bool{true, false} {
		t.Run(fmt.Sprint("json=", jsonMode), func(t *testing.T) {
			h, ts := serve(t, toolServer(t, make(chan struct{})), &Options{JSONResponse: jsonMode})
			sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
			hdr := map[string]string{"Mcp-Session-Id": sid}
			done := rawAsync("POST", ts.URL, hdr, `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
			eventually(t, "the request is in flight", func() bool { return h.exchanges.Load() == 1 })
			r := rawDo(t, "POST", ts.URL, hdr, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":41,"reason":"user"}}`)
			if r.status != 202 {
				t.Fatalf("cancel: %d", r.status)
			}
			got := <-done
			if jsonMode {
				if got.status != 202 || got.body != "" {
					t.Fatalf("cancelled request: %d %q", got.status, got.body)
				}
				return
			}
			for _, ev := range sseEvents(t, got.body) {
				if len(ev.data) > 0 {
					t.Fatalf("cancelled request answered: %q", ev.data)
				}
			}
		})
	}
}

func TestStreamableCancellationOvertakesRequest(t *testing.T) {
	// The client's cancellation may arrive before the request it cancels,
	// in another POST: the request is then not run, and gets no answer.
	ran := make(chan struct{}, 1)
	s := toolServer(t, nil)
	if err := s.AddTool(&mcp.Tool{Name: "mark", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		ran <- struct{}{}
		return &mcp.CallToolResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, jsonMode := range []bool{true, false} {
		_, ts := serve(t, s, &Options{JSONResponse: jsonMode})
		sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
		hdr := map[string]string{"Mcp-Session-Id": sid}
		if r := rawDo(t, "POST", ts.URL, hdr, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"early"}}`); r.status != 202 {
			t.Fatalf("cancel: %d", r.status)
		}
		r := rawDo(t, "POST", ts.URL, hdr, `{"jsonrpc":"2.0","id":"early","method":"tools/call","params":{"name":"mark","arguments":{}}}`)
		if r.status != 202 || r.body != "" {
			t.Fatalf("cancelled request: %d %q", r.status, r.body)
		}
		// Another request runs; the cancelled one never did.
		r = rawDo(t, "POST", ts.URL, hdr, `{"jsonrpc":"2.0","id":"later","method":"tools/call","params":{"name":"mark","arguments":{}}}`)
		if r.status != 200 {
			t.Fatalf("later request: %d", r.status)
		}
		<-ran
		select {
		case <-ran:
			t.Fatal("the cancelled request ran")
		default:
		}
	}
}

func TestStreamableDisconnectDoesNotCancel(t *testing.T) {
	release := make(chan struct{})
	h, ts := serve(t, toolServer(t, release), nil)
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"block","arguments":{}}}`))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	prime, err := newSSEReader(resp.Body, 0).next()
	if err != nil || prime.id == "" {
		t.Fatalf("priming event %+v, %v", prime, err)
	}
	resp.Body.Close() // the client goes away
	s := h.session(sid)
	eventually(t, "the server notices the disconnect", func() bool {
		s.mu.Lock()
		st := s.requests.get(jsonrpc.Int64ID(8))
		s.mu.Unlock()
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.w == nil
	})
	close(release) // the tool completes although nobody listens
	r := rawDo(t, "GET", ts.URL, map[string]string{"Mcp-Session-Id": sid, "Last-Event-ID": prime.id}, "")
	evs := sseEvents(t, r.body)
	if r.status != 200 || len(evs) != 2 || !strings.Contains(string(evs[1].data), "released") {
		t.Fatalf("resumed: %d %q", r.status, r.body)
	}
}

func TestStreamableShutdown(t *testing.T) {
	release := make(chan struct{})
	h, ts := serve(t, toolServer(t, release), &Options{JSONResponse: true})
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	hdr := map[string]string{"Mcp-Session-Id": sid}
	inflight := rawAsync("POST", ts.URL, hdr, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
	eventually(t, "the request is in flight", func() bool { return h.exchanges.Load() == 1 })
	shut := make(chan error, 1)
	go func() { shut <- h.Shutdown(context.Background()) }()
	eventually(t, "new sessions are refused", func() bool {
		return rawDo(t, "POST", ts.URL, nil, fmt.Sprintf(rawInitBody, mcp.ProtocolVersion20251125)).status == http.StatusServiceUnavailable
	})
	if r := rawDo(t, "POST", ts.URL, hdr, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); r.status != http.StatusServiceUnavailable {
		t.Fatalf("new request during shutdown: %d", r.status)
	}
	close(release)
	if r := <-inflight; r.status != 200 || !strings.Contains(r.body, "released") {
		t.Fatalf("in-flight request: %d %s", r.status, r.body)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	if r := rawDo(t, "POST", ts.URL, hdr, `{"jsonrpc":"2.0","id":5,"method":"ping"}`); r.status != 404 {
		t.Fatalf("after shutdown: %d", r.status)
	}
}

func TestStreamableShutdownDeadline(t *testing.T) {
	h, ts := serve(t, toolServer(t, make(chan struct{})), nil)
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	blocked := rawAsync("POST", ts.URL, map[string]string{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
	eventually(t, "the request is in flight", func() bool { return h.exchanges.Load() == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Shutdown(ctx); err != context.Canceled {
		t.Fatalf("Shutdown: %v, want context.Canceled", err)
	}
	// The sessions were closed anyway: the blocked request's stream ended,
	// without its response.
	if r := <-blocked; r.err != nil || strings.Contains(r.body, `"id":3`) {
		t.Fatalf("blocked request: %v %q", r.err, r.body)
	}
	if h.session(sid) != nil {
		t.Fatal("session still open after Shutdown")
	}
}

func TestStreamableCloseEndsStreams(t *testing.T) {
	h, ts := serve(t, toolServer(t, nil), nil)
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	req, _ := http.NewRequest("GET", ts.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	h.Close()
	// The stream ends cleanly (EOF, not an error).
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatalf("stream after Close: %v", err)
	}
}

func TestStreamablePollingRetry(t *testing.T) {
	// With MaxEventsPerConnection, the server sends a retry field and
	// closes the connection; the stream goes on at GET with Last-Event-ID.
	_, ts := serve(t, toolServer(t, nil), &Options{MaxEventsPerConnection: 3, RetryInterval: 250 * time.Millisecond})
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	hdr := map[string]string{"Mcp-Session-Id": sid}
	r := rawDo(t, "POST", ts.URL, hdr, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","arguments":{"n":10},"_meta":{"progressToken":"t"}}}`)
	var messages []string
	var lastSeq int64
	for round := 0; ; round++ {
		evs := sseEvents(t, r.body)
		if len(evs) == 0 || len(evs[0].data) != 0 {
			t.Fatalf("round %d: no priming event: %q", round, r.body)
		}
		last := ""
		for _, ev := range evs[1:] {
			messages = append(messages, string(ev.data))
			_, seq, ok := parseEventID(ev.id)
			if !ok || seq != lastSeq+1 {
				t.Fatalf("event id %q after seq %d", ev.id, lastSeq)
			}
			lastSeq, last = seq, ev.id
		}
		if strings.Contains(messages[len(messages)-1], `"result"`) {
			if strings.Contains(r.body, "retry:") {
				t.Errorf("the last connection asked for a retry")
			}
			break
		}
		if len(evs) != 4 || !strings.HasSuffix(r.body, "retry: 250\n\n") {
			t.Fatalf("round %d: %d events, body %q: want 3 messages then retry: 250", round, len(evs)-1, r.body)
		}
		if round > 10 {
			t.Fatal("the stream never ends")
		}
		r = rawDo(t, "GET", ts.URL, map[string]string{"Mcp-Session-Id": sid, "Last-Event-ID": last}, "")
	}
	if len(messages) != 11 {
		t.Fatalf("%d messages, want 10 notifications and the result", len(messages))
	}

	// A 2025-06-18 client knows nothing of polling: one connection.
	sid = rawInit(t, ts.URL, mcp.ProtocolVersion20250618)
	r = rawDo(t, "POST", ts.URL, map[string]string{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","arguments":{"n":10},"_meta":{"progressToken":"t"}}}`)
	if evs := sseEvents(t, r.body); len(evs) != 11 || strings.Contains(r.body, "retry:") {
		t.Fatalf("2025-06-18: %d events: %q", len(evs), r.body)
	}
}

func TestStreamableNoBroadcast(t *testing.T) {
	// A message that belongs to a request goes on that request's stream
	// only; one that belongs to none goes on the GET stream only.
	h, ts := serve(t, toolServer(t, nil), nil)
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	req, _ := http.NewRequest("GET", ts.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	get := newSSEReader(resp.Body, 0)
	if _, err := get.next(); err != nil { // priming
		t.Fatal(err)
	}
	r := rawDo(t, "POST", ts.URL, map[string]string{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notify-first","arguments":{}}}`)
	evs := sseEvents(t, r.body)
	if len(evs) != 3 || !strings.Contains(string(evs[1].data), "notifications/message") {
		t.Fatalf("POST stream %q: want priming, the log message, the result", r.body)
	}
	if err := h.session(sid).ss.Notify(context.Background(), "notifications/tools/list_changed", nil); err != nil {
		t.Fatal(err)
	}
	ev, err := get.next()
	if err != nil || !strings.Contains(string(ev.data), "tools/list_changed") {
		t.Fatalf("GET stream carried %q (%v): want only the unrelated notification", ev.data, err)
	}
	if stream, _, _ := parseEventID(ev.id); stream != standaloneStreamID {
		t.Fatalf("GET event id %q", ev.id)
	}
	if stream, _, _ := parseEventID(evs[1].id); stream == standaloneStreamID {
		t.Fatalf("POST event id %q names the GET stream", evs[1].id)
	}
}

// TestServerSessionID checks that a Streamable HTTP session reports its
// Mcp-Session-Id, and a stateless one none.
func TestServerSessionID(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprint("stateless=", stateless), func(t *testing.T) {
			got := make(chan string, 1)
			s := mcp.NewServer(&mcp.Implementation{Name: "id", Version: "1"}, nil)
			s.AddTool(&mcp.Tool{Name: "id", InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
					got <- ss.ID()
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
				})
			_, ts := serve(t, s, &Options{Stateless: stateless})
			var header sessionHeaderRecorder
			hc := &http.Client{Transport: &header}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), &ClientTransport{Endpoint: ts.URL, HTTPClient: hc})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolRequestParams{Name: "id", Arguments: json.RawMessage(`{}`)}); err != nil {
				t.Fatal(err)
			}
			id := <-got
			if stateless && id != "" {
				t.Fatalf("stateless session ID %q, want none", id)
			}
			if want := header.id.Load(); !stateless && (id == "" || want == nil || id != *want) {
				t.Fatalf("session ID %q, want the Mcp-Session-Id %v", id, want)
			}
		})
	}
}

// sessionHeaderRecorder keeps the last Mcp-Session-Id a server answered.
type sessionHeaderRecorder struct{ id atomic.Pointer[string] }

func (r *sessionHeaderRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		if v := resp.Header.Get("Mcp-Session-Id"); v != "" {
			r.id.Store(&v)
		}
	}
	return resp, err
}
