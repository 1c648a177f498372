package mcphttp

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

// openListen opens a subscriptions/listen stream with params and returns
// its first line once the server answered (the acknowledgement's, or the
// refusal's), and the function that closes it.
func openListen(t *testing.T, url string, id int, params string) (string, func()) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(call(id, "subscriptions/listen", params)))
	req.Header = http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"},
		"Mcp-Protocol-Version": {mcp.ProtocolVersion20260728}, "Mcp-Method": {"subscriptions/listen"}}
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
