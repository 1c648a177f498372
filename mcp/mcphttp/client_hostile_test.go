package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
)

// TestClientServerRetryBounded checks that a server's SSE retry field
// cannot make the client reconnect in a busy loop: a server that answers
// every resumption with "retry: N" and ends the stream at once, never
// answering the request, gets a reconnection at most every
// DefaultMinServerRetry, whatever N says (the field counts as progress, so the
// client keeps polling until the request's context ends).
func TestClientServerRetryBounded(t *testing.T) {
	for _, retry := range []string{"1", "0", "99"} {
		t.Run("retry="+retry, func(t *testing.T) {
			var gets atomic.Int64
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					gets.Add(1)
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprintf(w, "retry: %s\n\n", retry)
					return
				}
				var req struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				b, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(b, &req)
				switch req.Method {
				case "initialize":
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Mcp-Session-Id", "s1")
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"h","version":"1"}}}`, req.ID, mcp.ProtocolVersion20251125)
				case "tools/call":
					// An event id to resume from, then the stream ends.
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprintf(w, "id: e1\nretry: %s\ndata: \n\n", retry)
				default:
					w.WriteHeader(http.StatusAccepted)
				}
			}))
			defer ts.Close()
			c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{EraPolicy: mcp.EraPolicyLegacy})
			cs, err := c.Connect(context.Background(), &ClientTransport{Endpoint: ts.URL, DisableStandaloneSSE: true})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			const window = 500 * time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), window)
			defer cancel()
			if _, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "x", Arguments: json.RawMessage(`{}`)}); err == nil {
				t.Fatal("the call succeeded")
			}
			// At most window/DefaultMinServerRetry reconnections (5), where the
			// unbounded client made hundreds; a generous bound, since a
			// loaded machine only makes fewer.
			if n := gets.Load(); n > 2*int64(window/DefaultMinServerRetry)+2 {
				t.Fatalf("%d reconnections in %v", n, window)
			}
		})
	}
}
