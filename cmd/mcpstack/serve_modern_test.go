package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServeModern checks that `mcpstack serve --addr` speaks protocol
// version 2026-07-28 beside 2025-11-25: a stateless tools/list carrying its
// own _meta is answered with a modern result, and a modern request
// missing a required header is refused with 400 and -32020.
func TestServeModern(t *testing.T) {
	url := startServe(t)
	const meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	post := func(hdr map[string]string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":`+meta+`}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%d %s: %v", resp.StatusCode, b, err)
		}
		return resp.StatusCode, m
	}
	status, m := post(map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
	res, _ := m["result"].(map[string]any)
	if status != 200 || res["resultType"] != "complete" || res["ttlMs"] == nil || res["cacheScope"] == nil {
		t.Fatalf("tools/list: %d %v", status, m)
	}
	var names []string
	for _, tool := range res["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	if got := strings.Join(names, ","); got != "ask,count,echo,fetch,sleep,time" {
		t.Errorf("tools %s, want them sorted by name", got)
	}
	status, m = post(map[string]string{"Mcp-Protocol-Version": "2026-07-28"})
	if e, _ := m["error"].(map[string]any); status != 400 || e["code"] != float64(-32020) {
		t.Fatalf("without Mcp-Method: %d %v", status, m)
	}
}
