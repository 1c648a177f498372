package mcphttp

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

// openListen opens a subscriptions/listen stream with params and returns
// its first line once the server answered (the acknowledgement's, or the
// refusal's), and the function that closes it.
func openListen(t *testing.T, url string, id int, params string) (string, func()) {
	t.Helper()
	return openListenAs(t, url, "", id, params)
}

// openListenAs is openListen for the caller user (the X-User header,
// which the handler of TestModernListenersPerCaller takes for the
// caller's identity).
func openListenAs(t *testing.T, url, user string, id int, params string) (string, func()) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(call(id, "subscriptions/listen", params)))
	req.Header = http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"},
		"Mcp-Protocol-Version": {mcp.ProtocolVersion20260728}, "Mcp-Method": {"subscriptions/listen"}}
	if user != "" {
		req.Header.Set("X-User", user)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil && line == "" {
			resp.Body.Close()
			return "", func() {}
		}
		if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "event:") && !strings.HasPrefix(line, "id:") {
			return line, func() { resp.Body.Close() }
		}
	}
}

// TestModernListenBytesBound checks mcp.ServerOptions.MaxListenBytes: the
// open listen streams hold their requests and filters, which a flood of
// long filters would make a GiB under the stream count bound alone; past
// the bound a listen gets -32010, and what a closed stream held is free
// again.
func TestModernListenBytesBound(t *testing.T) {
	uris := func(n, size int) string {
		list := make([]string, n)
		for i := range list {
			list[i] = `"test://` + strings.Repeat("u", size) + string(rune('a'+i%26)) + `"`
		}
		return withMeta(`"notifications":{"resourceSubscriptions":[` + strings.Join(list, ",") + `]}`)
	}
	tests := []struct {
		name   string
		max    int64
		params []string // opened in turn, all kept open
		want   []bool   // accepted
		reopen bool     // the last one, refused, fits once the others closed
	}{
		{"small filters fit", 8 << 10, []string{uris(1, 10), uris(2, 10), uris(3, 10)}, []bool{true, true, true}, false},
		{"a long filter is refused", 8 << 10, []string{uris(1, 10), uris(4, 3000)}, []bool{true, false}, false},
		{"long filters add up", 24 << 10, []string{uris(1, 3000), uris(1, 3000), uris(1, 3000)}, []bool{true, true, false}, true},
		{"no bound", -1, []string{uris(4, 3000), uris(4, 3000)}, []bool{true, true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := modernServer(t, func(o *mcp.ServerOptions) { o.MaxListenBytes = tt.max })
			_, ts := serve(t, s, nil)
			var closers []func()
			defer func() {
				for _, c := range closers {
					c()
				}
			}()
			for i, p := range tt.params {
				line, closeIt := openListen(t, ts.URL, i+1, p)
				closers = append(closers, closeIt)
				accepted := strings.Contains(line, mcp.NotificationSubscriptionsAcknowledged)
				if accepted != tt.want[i] {
					t.Fatalf("listen %d: %q, want accepted %v", i+1, line, tt.want[i])
				}
				if !accepted && !strings.Contains(line, "-32010") {
					t.Fatalf("listen %d refused with %q, want -32010", i+1, line)
				}
			}
			// Closing the streams frees what they held: a listen refused
			// only for what the others held is accepted again.
			for _, c := range closers {
				c()
			}
			closers = nil
			if !tt.reopen {
				return
			}
			last := tt.params[len(tt.params)-1]
			eventually(t, "the closed streams' bytes are free again", func() bool {
				line, closeIt := openListen(t, ts.URL, 99, last)
				closeIt()
				return strings.Contains(line, mcp.NotificationSubscriptionsAcknowledged)
			})
		})
	}
}

// TestErrorsClipWhatThePeerSent checks, in both eras, that an error
// answering a value the client sent (a header's, or a name in the body)
// shows a bounded prefix of it: a header may carry a megabyte, which the
// answer once echoed whole, quoted (four bytes for each byte that is not
// UTF-8), and the body's names are as long as the body allows.
func TestErrorsClipWhatThePeerSent(t *testing.T) {
	huge := strings.Repeat("\xff", 256<<10) // quotes to four times as much
	long := strings.Repeat("n", 256<<10)
	modern := func(method string) map[string]string {
		return map[string]string{"Mcp-Protocol-Version": mcp.ProtocolVersion20260728, "Mcp-Method": method}
	}
	with := func(h map[string]string, k, v string) map[string]string {
		h[k] = v
		return h
	}
	tests := []struct {
		name   string
		method string
		hdr    map[string]string
		body   string
	}{
		{"modern: MCP-Protocol-Version", http.MethodPost, with(modern("tools/list"), "Mcp-Protocol-Version", "2026-07-28"+huge), call(1, "tools/list", withMeta(""))},
		{"modern: Mcp-Method", http.MethodPost, modern("tools/list" + huge), call(1, "tools/list", withMeta(""))},
		{"modern: Mcp-Name", http.MethodPost, with(modern("tools/call"), "Mcp-Name", "echo"+long), call(1, "tools/call", withMeta(`"name":"echo","arguments":{}`))},
		{"modern: unknown tool", http.MethodPost, with(modern("tools/call"), "Mcp-Name", long), call(1, "tools/call", withMeta(`"name":"`+long+`","arguments":{}`))},
		{"modern: unknown method", http.MethodPost, modern(long), call(1, long, withMeta(""))},
		{"modern: invalid cursor", http.MethodPost, modern("tools/list"), call(1, "tools/list", withMeta(`"cursor":"`+long+`"`))},
		{"legacy: MCP-Protocol-Version", http.MethodPost, map[string]string{"Mcp-Session-Id": "SID", "Mcp-Protocol-Version": "2025-11-25" + huge}, call(2, "tools/list", "")},
		{"legacy: Last-Event-ID", http.MethodGet, map[string]string{"Mcp-Session-Id": "SID", "Mcp-Protocol-Version": "2025-11-25", "Last-Event-ID": huge}, ""},
		{"Host", http.MethodPost, map[string]string{"Host": "evil" + long}, call(1, "tools/list", "")},
		{"modern: requestState too long", http.MethodPost, with(modern("tools/call"), "Mcp-Name", "echo"), call(1, "tools/call", withMeta(`"name":"echo","arguments":{},"requestState":"`+long+`"`))},
	}
	s := modernServer(t)
	_, ts := serve(t, s, nil)
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.hdr["Mcp-Session-Id"] == "SID" {
				tt.hdr["Mcp-Session-Id"] = sid
			}
			r := rawDo(t, tt.method, ts.URL, tt.hdr, tt.body)
			if r.status == http.StatusOK && !strings.Contains(r.body, `"error"`) {
				t.Fatalf("%d %.300s: want an error", r.status, r.body)
			}
			if len(r.body) > 1024 || strings.Count(strings.TrimSpace(r.body), "\n") > 0 {
				t.Fatalf("%d: the error is %d bytes: %.300s...", r.status, len(r.body), r.body)
			}
			if !strings.Contains(r.body, " bytes") {
				t.Errorf("%d %s: the error does not say how long the value was", r.status, r.body)
			}
		})
	}
}

// TestModernLegacyVersionRefusalSaysWhy checks that a request of a legacy
// version sent the modern way (its version in _meta, no session) is
// refused with -32022 saying why, since the supported list it carries
// names that very version.
func TestModernLegacyVersionRefusalSaysWhy(t *testing.T) {
	_, ts := serve(t, modernServer(t, func(o *mcp.ServerOptions) {
		o.ProtocolVersions = []string{mcp.ProtocolVersion20260728, mcp.ProtocolVersion20251125}
	}), nil)
	tests := []struct {
		version string
		want    string
	}{
		{mcp.ProtocolVersion20251125, "2025-11-25 is served only in a session opened with initialize"},
		{"2099-01-01", "Unsupported protocol version"},
	}
	for _, tt := range tests {
		meta := strings.Replace(modernMeta, mcp.ProtocolVersion20260728, tt.version, 1)
		body := call(1, "tools/list", `{"_meta":`+meta+`}`)
		r := rawDo(t, http.MethodPost, ts.URL, map[string]string{"Mcp-Protocol-Version": tt.version, "Mcp-Method": "tools/list"}, body)
		if r.status != http.StatusBadRequest || !strings.Contains(r.body, "-32022") || !strings.Contains(r.body, tt.want) {
			t.Errorf("%s: %d %s, want -32022 saying %q", tt.version, r.status, r.body, tt.want)
		}
	}
}

// TestModernListenersPerCaller checks mcp.ServerOptions.MaxListenersPerPrincipal:
// one caller cannot take every listen stream from the others; requests
// that name no caller are bounded by MaxListeners alone; a closed stream
// gives its caller room again.
func TestModernListenersPerCaller(t *testing.T) {
	s := modernServer(t, func(o *mcp.ServerOptions) { o.MaxListenersPerPrincipal = 2 })
	_, ts := serve(t, s, &Options{Identity: func(r *http.Request) string { return r.Header.Get("X-User") }})
	filter := withMeta(`"notifications":{"toolsListChanged":true}`)
	steps := []struct {
		user   string
		accept bool
	}{
		{"alice", true}, {"alice", true}, {"alice", false},
		{"bob", true}, {"bob", true}, {"bob", false},
		{"", true}, {"", true}, {"", true},
	}
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	for i, st := range steps {
		line, closeIt := openListenAs(t, ts.URL, st.user, i+1, filter)
		closers = append(closers, closeIt)
		if got := strings.Contains(line, mcp.NotificationSubscriptionsAcknowledged); got != st.accept {
			t.Fatalf("step %d (%q): %q, want accepted %v", i, st.user, line, st.accept)
		}
		if !st.accept && !strings.Contains(line, "-32010") {
			t.Fatalf("step %d (%q): refused with %q, want -32010", i, st.user, line)
		}
	}
	closers[0]() // one of alice's
	eventually(t, "alice may listen again", func() bool {
		line, closeIt := openListenAs(t, ts.URL, "alice", 99, filter)
		closeIt()
		return strings.Contains(line, mcp.NotificationSubscriptionsAcknowledged)
	})
}

// TestModernRequestsPerCaller checks
// mcp.ServerOptions.MaxModernRequestsPerPrincipal: a caller with that many
// requests in progress gets -32010 for one more, while another caller,
// and requests naming none, are served; once its requests end, the
// caller is served again.
func TestModernRequestsPerCaller(t *testing.T) {
	s := modernServer(t, func(o *mcp.ServerOptions) { o.MaxModernRequestsPerPrincipal = 2 })
	started, release := make(chan struct{}, 8), make(chan struct{})
	if err := s.AddTool(&mcp.Tool{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	_, ts := serve(t, s, &Options{Identity: func(r *http.Request) string { return r.Header.Get("X-User") }})
	callAs := func(user, tool string) modernResp {
		return modernPost(t, ts.URL, "tools/call", tool, call(1, "tools/call", withMeta(`"name":"`+tool+`","arguments":{}`)), map[string][]string{"X-User": {user}})
	}
	held := make(chan modernResp, 2)
	for range 2 {
		go func() { held <- callAs("alice", "hold") }()
		<-started
	}
	tests := []struct {
		user string
		want int // error code; 0: served
	}{
		{"alice", -32010},
		{"bob", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if r := callAs(tt.user, "echo"); r.errCode() != tt.want {
			t.Errorf("%q while alice holds 2: %d %v, want code %d", tt.user, r.status, r.last(), tt.want)
		}
	}
	close(release)
	for range 2 {
		if r := <-held; r.errCode() != 0 {
			t.Errorf("a held call: %v", r.last())
		}
	}
	if r := callAs("alice", "echo"); r.errCode() != 0 {
		t.Errorf("alice after her calls ended: %v", r.last())
	}
}

// FuzzModernHeaders sends the modern leg a request with any
// MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-Region header
// values and any body: the handler must answer (never panic) with one
// JSON-RPC message whose error, if any, stays short whatever the peer
// sent.
func FuzzModernHeaders(f *testing.F) {
	f.Add("2026-07-28", "tools/call", "hdr", "eu", call(1, "tools/call", withMeta(`"name":"hdr","arguments":{"region":"eu"}`)))
	f.Add("2026-07-28", "tools/call", "=?base64?aGRy?=", "=?base64?!!?=", call(1, "tools/call", withMeta(`"name":"hdr","arguments":{"region":"x"}`)))
	f.Add("2025-11-25", "tools/list", "", "", call(1, "tools/list", withMeta("")))
	f.Add("2026-07-28", "resources/read", "test://a", "", call(1, "resources/read", withMeta(`"uri":"test://a"`)))
	s := modernServer(f)
	h := NewHandler(func(*http.Request) *mcp.Server { return s }, nil)
	f.Cleanup(func() { h.Close() })
	f.Fuzz(func(t *testing.T, version, method, name, region, body string) {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		r.Header = http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"}}
		for k, v := range map[string]string{"Mcp-Protocol-Version": version, "Mcp-Method": method, "Mcp-Name": name, "Mcp-Param-Region": region} {
			if v != "" {
				r.Header[k] = []string{v}
			}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		out := w.Body.String()
		if w.Code == http.StatusAccepted || strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			return
		}
		if i := strings.Index(out, `"message":`); i >= 0 {
			msg := out[i:]
			if j := strings.Index(msg, `,"data"`); j >= 0 {
				msg = msg[:j]
			}
			if len(msg) > 2048 {
				t.Fatalf("%d: an error message of %d bytes: %.200s", w.Code, len(msg), msg)
			}
		}
	})
}
