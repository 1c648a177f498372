package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// batchResponses reads the responses of a POST answered as SSE or JSON.
func batchResponses(t *testing.T, r rawResponse) []*jsonrpc.Response {
	t.Helper()
	var out []*jsonrpc.Response
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		for _, ev := range sseEvents(t, r.body) {
			if len(ev.data) > 0 {
				out = append(out, decodeResponse(t, string(ev.data)))
			}
		}
		return out
	}
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(r.body), &raw); err != nil {
		raw = []json.RawMessage{json.RawMessage(r.body)}
	}
	for _, m := range raw {
		out = append(out, decodeResponse(t, string(m)))
	}
	return out
}

func pings(from, n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, from+i)
	}
	b.WriteByte(']')
	return b.String()
}

// awaitPOST waits for an answer, failing if none comes within a generous
// bound: a POST that never ends is the defect these tests look for.
func awaitPOST(t *testing.T, ch <-chan rawResponse) rawResponse {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("the POST was never answered")
		return rawResponse{}
	}
}

// TestStreamableBatchRepeatedID checks that a batch entry whose id is
// already in flight (earlier in the batch, or in another POST) gets an
// error response of its own while the others are answered, whatever the
// number of requests the session had in flight before: past 32, its table
// of requests changes representation (issue 16 item 9).
func TestStreamableBatchRepeatedID(t *testing.T) {
	const version = mcp.ProtocolVersion20250326
	for _, fill := range []int{0, 40} {
		for _, json := range []bool{false, true} {
			t.Run(fmt.Sprintf("fill=%d/json=%v", fill, json), func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				h, ts := serve(t, toolServer(t, release), &Options{JSONResponse: json})
				sid := rawInit(t, ts.URL, version)
				hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version}
				if fill > 0 {
					r := rawDo(t, http.MethodPost, ts.URL, hdr, pings(1000, fill))
					if got := len(batchResponses(t, r)); got != fill {
						t.Fatalf("fill: %d responses, want %d", got, fill)
					}
				}
				// Repeated inside the batch.
				r := awaitPOST(t, rawAsync(http.MethodPost, ts.URL, hdr, `[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`))
				checkRefused(t, r, map[string]bool{"5": true, "6": true}, "5")

				// In flight in another POST.
				blocked := rawAsync(http.MethodPost, ts.URL, hdr, `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"block","arguments":{}}}`)
				eventually(t, "the blocking call is in flight", func() bool { return h.exchanges.Load() > 0 })
				r = awaitPOST(t, rawAsync(http.MethodPost, ts.URL, hdr, `[{"jsonrpc":"2.0","id":"b","method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]`))
				checkRefused(t, r, map[string]bool{"7": true}, `"b"`)
				release <- struct{}{}
				if r := awaitPOST(t, blocked); len(batchResponses(t, r)) != 1 || batchResponses(t, r)[0].Error != nil {
					t.Fatalf("the blocked call: %d %s", r.status, r.body)
				}
			})
		}
	}
}

// checkRefused checks a batch's answer: a result for each id in ok, and
// one invalid request error for refused.
func checkRefused(t *testing.T, r rawResponse, ok map[string]bool, refused string) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	results, errs := map[string]bool{}, 0
	for _, resp := range batchResponses(t, r) {
		id := string(resp.ID.AppendJSON(nil))
		switch {
		case resp.Error == nil:
			results[id] = true
		case id == refused && resp.Error.Code == jsonrpc.CodeInvalidRequest:
			errs++
		default:
			t.Errorf("unexpected error for %s: %v", id, resp.Error)
		}
	}
	if len(results) != len(ok) || errs != 1 {
		t.Fatalf("results for %v and %d errors, want results for %v and one error for %s; body %s", results, errs, ok, refused, r.body)
	}
}

// TestStreamableBatchBounds checks the bounds on a batch's length and on
// the requests of one batch handled at once (issue 16 item 9).
func TestStreamableBatchBounds(t *testing.T) {
	const version = mcp.ProtocolVersion20250326
	t.Run("length", func(t *testing.T) {
		tests := []struct {
			max, n int
			status int
		}{
			{0, DefaultMaxBatchLength, http.StatusOK},
			{0, DefaultMaxBatchLength + 1, http.StatusBadRequest},
			{0, 85000, http.StatusBadRequest},
			{5, 5, http.StatusOK},
			{5, 6, http.StatusBadRequest},
		}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("max=%d/n=%d", tt.max, tt.n), func(t *testing.T) {
				_, ts := serve(t, toolServer(t, nil), &Options{MaxBatchLength: tt.max})
				sid := rawInit(t, ts.URL, version)
				r := rawDo(t, http.MethodPost, ts.URL, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version}, pings(1, tt.n))
				if r.status != tt.status {
					t.Fatalf("status %d, want %d: %.200s", r.status, tt.status, r.body)
				}
				if tt.status == http.StatusOK && len(batchResponses(t, r)) != tt.n {
					t.Fatalf("%d responses, want %d", len(batchResponses(t, r)), tt.n)
				}
				if tt.status != http.StatusOK && !strings.Contains(r.body, "batch of more than") {
					t.Fatalf("body %s does not name the bound", r.body)
				}
			})
		}
	})
	t.Run("concurrency", func(t *testing.T) {
		const limit, n = 3, 20
		var mu sync.Mutex
		active, most := 0, 0
		release := make(chan struct{})
		s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		if err := s.AddTool(&mcp.Tool{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			mu.Lock()
			active++
			most = max(most, active)
			mu.Unlock()
			<-release
			mu.Lock()
			active--
			mu.Unlock()
			return &mcp.CallToolResult{}, nil
		}); err != nil {
			t.Fatal(err)
		}
		_, ts := serve(t, s, &Options{MaxBatchConcurrency: limit})
		sid := rawInit(t, ts.URL, version)
		var b strings.Builder
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hold","arguments":{}}}`, i+1)
		}
		b.WriteByte(']')
		ch := rawAsync(http.MethodPost, ts.URL, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version}, b.String())
		eventually(t, "the batch's first requests run", func() bool { mu.Lock(); defer mu.Unlock(); return active == limit })
		time.Sleep(50 * time.Millisecond) // room for a request past the bound to start, if it could
		mu.Lock()
		got := active
		mu.Unlock()
		if got != limit {
			t.Fatalf("%d requests of the batch run at once, want %d", got, limit)
		}
		close(release)
		r := awaitPOST(t, ch)
		if len(batchResponses(t, r)) != n {
			t.Fatalf("%d responses, want %d", len(batchResponses(t, r)), n)
		}
		if most > limit {
			t.Fatalf("up to %d requests of the batch ran at once, want at most %d", most, limit)
		}
	})
}
