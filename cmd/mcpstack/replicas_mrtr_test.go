package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// modernPost posts a 2026-07-28 request to endpoint and returns its
// decoded JSON-RPC response.
func modernPost(t *testing.T, endpoint, method, params string) map[string]any {
	t.Helper()
	var name string
	if n, ok := strings.CutPrefix(params, `{"name":"`); ok {
		name = n[:strings.IndexByte(n, '"')]
	}
	resp := postModern(t, endpoint, method, name, []byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %d %s: %v", method, resp.StatusCode, b, err)
	}
	return m
}

// postModern posts body, a 2026-07-28 request for method, to endpoint with
// the headers that revision asks for (Mcp-Name only when name is given).
func postModern(t *testing.T, endpoint, method, name string, body []byte) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestServeReplicasRequestState: two `mcpstack serve --redis` processes
// given nothing else in common share the requestState keys through
// Redis: the elicitation round of the ask tool is answered by one, and the
// retry carrying its requestState is completed by the other.
func TestServeReplicasRequestState(t *testing.T) {
	redisURL, prefix := freshRedisPrefix(t)
	a, _ := startServeReplica(t, "--redis", redisURL, "--redis-prefix", prefix)
	b, _ := startServeReplica(t, "--redis", redisURL, "--redis-prefix", prefix)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	m := modernPost(t, a+"/mcp", "tools/call", `{"name":"ask","arguments":{},`+meta+`}`)
	res, _ := m["result"].(map[string]any)
	state, _ := res["requestState"].(string)
	reqs, _ := res["inputRequests"].(map[string]any)
	if res["resultType"] != "input_required" || state == "" || len(reqs) != 1 {
		t.Fatalf("first round on replica A: %v", m)
	}
	var key string
	for k := range reqs {
		key = k
	}
	retry := `{"name":"ask","arguments":{},"requestState":"` + state + `","inputResponses":{"` + key + `":{"action":"accept","content":{"name":"Ada","colour":"red"}}},` + meta + `}`
	m = modernPost(t, b+"/mcp", "tools/call", retry)
	res, _ = m["result"].(map[string]any)
	if res["resultType"] != "complete" || !strings.Contains(jsonText(t, res), "Hello, Ada!") {
		t.Fatalf("retry on replica B: %v", m)
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
