package mcphttp

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

// TestStreamableInlineServerRequest: a tool handler, running in the
// goroutine of the POST that called it, asks the client to sample; the
// request goes out on that POST's answer (upgraded to SSE in JSON mode),
// and the client's response, POSTed separately, reaches the waiting
// handler, whose result then ends the first answer.
func TestStreamableInlineServerRequest(t *testing.T) {
	const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"raw","version":"1"}}}`
	for _, mode := range []struct {
		name string
		json bool
	}{{"JSON", true}, {"SSE", false}} {
		t.Run(mode.name, func(t *testing.T) {
			_, ts := serve(t, toolServer(t, nil), &Options{JSONResponse: mode.json})
			r := rawDo(t, http.MethodPost, ts.URL, nil, initBody)
			sid := r.header.Get("Mcp-Session-Id")
			if r.status != http.StatusOK || sid == "" {
				t.Fatalf("initialize: %d %s", r.status, r.body)
			}
			hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": mcp.ProtocolVersion20251125}
			if r := rawDo(t, http.MethodPost, ts.URL, hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.status != http.StatusAccepted {
				t.Fatalf("initialized: %d %s", r.status, r.body)
			}

			req, err := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sample","arguments":{}}}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Content-Type", "application/json")
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
				t.Fatalf("tools/call answered %d %s, want an SSE stream", resp.StatusCode, ct)
			}
			events := newSSEReader(resp.Body, 0)
			next := func() map[string]json.RawMessage {
				t.Helper()
				for {
					ev, err := events.next()
					if err != nil {
						t.Fatalf("reading the stream: %v", err)
					}
					if len(ev.data) == 0 { // priming event
						continue
					}
					var m map[string]json.RawMessage
					if err := json.Unmarshal(ev.data, &m); err != nil {
						t.Fatalf("event %q: %v", ev.data, err)
					}
					return m
				}
			}
			ask := next()
			if string(ask["method"]) != `"sampling/createMessage"` {
				t.Fatalf("first message %v, want the sampling request", ask)
			}
			answer := `{"jsonrpc":"2.0","id":` + string(ask["id"]) + `,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`
			if r := rawDo(t, http.MethodPost, ts.URL, hdr, answer); r.status != http.StatusAccepted {
				t.Fatalf("the client's response: %d %s", r.status, r.body)
			}
			res := next()
			if string(res["id"]) != "2" || !strings.Contains(string(res["result"]), "model said: hi") {
				t.Fatalf("final message %v, want the tool's result", res)
			}
		})
	}
}
