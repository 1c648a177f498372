package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// modernMock is a 2026-07-28 server standing in for the suite's mocks of
// the modern client scenarios: it answers server/discover, lists tools,
// resources and prompts, runs the MRTR tools, and records every request.
type modernMock struct {
	mu       sync.Mutex
	reqs     []modernReq
	rejectAt int // reject the first request with -32022 when 1
	canary   int // GETs of the canary schema
	tools    []any
}

type modernReq struct {
	Method string
	ID     string
	Params map[string]json.RawMessage
	Header http.Header
}

func (m *modernMock) start(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/canary.json", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.canary++
		m.mu.Unlock()
		io.WriteString(w, `{"type":"object"}`)
	})
	mux.HandleFunc("/mcp", m.serve)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func (m *modernMock) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage            `json:"id"`
		Method string                     `json:"method"`
		Params map[string]json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(b, &msg)
	m.mu.Lock()
	m.reqs = append(m.reqs, modernReq{Method: msg.Method, ID: string(msg.ID), Params: msg.Params, Header: r.Header.Clone()})
	n := len(m.reqs)
	tools := m.tools
	m.mu.Unlock()
	reply := func(status int, body map[string]any) {
		body["jsonrpc"] = "2.0"
		body["id"] = msg.ID
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(body)
	}
	result := func(r map[string]any) {
		if _, ok := r["resultType"]; !ok {
			r["resultType"] = "complete"
		}
		reply(200, map[string]any{"result": r})
	}
	if m.rejectAt == 1 && n == 1 {
		reply(400, map[string]any{"error": map[string]any{"code": -32022, "message": "Unsupported protocol version",
			"data": map[string]any{"supported": []string{"2026-07-28"}, "requested": r.Header.Get("Mcp-Protocol-Version")}}})
		return
	}
	var name string
	_ = json.Unmarshal(msg.Params["name"], &name)
	_, retried := msg.Params["inputResponses"]
	switch msg.Method {
	case "server/discover":
		result(map[string]any{"ttlMs": 0, "cacheScope": "private", "supportedVersions": []string{"2026-07-28"},
			"capabilities": map[string]any{"tools": map[string]any{}, "resources": map[string]any{}, "prompts": map[string]any{}},
			"_meta":        map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "mock", "version": "1"}}})
	case "tools/list":
		result(map[string]any{"ttlMs": 0, "cacheScope": "private", "tools": tools})
	case "tools/call":
		ask := map[string]any{"confirm": map[string]any{"method": "elicitation/create", "params": map[string]any{
			"message": "confirm?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"confirmed": map[string]any{"type": "boolean"}}}}}}
		switch {
		case name == "test_mrtr_echo_state" && !retried:
			result(map[string]any{"resultType": "input_required", "inputRequests": ask, "requestState": "state-1"})
		case name == "test_mrtr_no_state" && !retried:
			result(map[string]any{"resultType": "input_required", "inputRequests": ask})
		case name == "test_mrtr_no_result_type":
			reply(200, map[string]any{"result": map[string]any{"content": []any{}}})
		default:
			result(map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}})
		}
	case "resources/list":
		result(map[string]any{"ttlMs": 0, "cacheScope": "private", "resources": []any{
			map[string]any{"uri": "https://example.com/resource?id=123", "name": "r"}}})
	case "resources/read":
		result(map[string]any{"ttlMs": 0, "cacheScope": "private", "contents": []any{}})
	case "prompts/list":
		result(map[string]any{"ttlMs": 0, "cacheScope": "private", "prompts": []any{map[string]any{"name": "test_prompt"}}})
	case "prompts/get":
		result(map[string]any{"messages": []any{}})
	default:
		reply(404, map[string]any{"error": map[string]any{"code": -32601, "message": "Method not found"}})
	}
}

func (m *modernMock) requests() []modernReq {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.reqs)
}

func (m *modernMock) calls(tool string) []modernReq {
	var out []modernReq
	for _, r := range m.requests() {
		var name string
		_ = json.Unmarshal(r.Params["name"], &name)
		if r.Method == "tools/call" && name == tool {
			out = append(out, r)
		}
	}
	return out
}

func emptyTool(name string) map[string]any {
	return map[string]any{"name": name, "inputSchema": map[string]any{"type": "object", "properties": map[string]any{}}}
}

func headerTool(name, typ, header string) map[string]any {
	return map[string]any{"name": name, "inputSchema": map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": typ, "x-mcp-header": header}}}}
}

// TestModernScenarios runs each 2026-07-28 scenario against modernMock
// and checks what the suite's mock checks.
func TestModernScenarios(t *testing.T) {
	tests := []struct {
		scenario string
		mock     *modernMock
		context  string
		check    func(t *testing.T, m *modernMock)
	}{
		{"request-metadata", &modernMock{rejectAt: 1}, "", func(t *testing.T, m *modernMock) {
			reqs := m.requests()
			if len(reqs) < 3 || reqs[0].Method != "server/discover" || reqs[1].Method != "server/discover" {
				t.Fatalf("requests %v: want discover, its retry, then tools/list", reqs)
			}
			for _, r := range reqs {
				var meta map[string]json.RawMessage
				_ = json.Unmarshal(r.Params["_meta"], &meta)
				if string(meta["io.modelcontextprotocol/protocolVersion"]) != `"2026-07-28"` || r.Header.Get("Mcp-Protocol-Version") != "2026-07-28" ||
					meta["io.modelcontextprotocol/clientCapabilities"] == nil || meta["io.modelcontextprotocol/clientInfo"] == nil {
					t.Errorf("%s: _meta %v, header %q", r.Method, meta, r.Header.Get("Mcp-Protocol-Version"))
				}
			}
		}},
		{"sep-2322-client-request-state", &modernMock{tools: []any{emptyTool("test_mrtr_echo_state"), emptyTool("test_mrtr_no_state"),
			emptyTool("test_mrtr_unrelated"), emptyTool("test_mrtr_no_result_type")}}, "", func(t *testing.T, m *modernMock) {
			echo := m.calls("test_mrtr_echo_state")
			if len(echo) != 2 || string(echo[1].Params["requestState"]) != `"state-1"` || echo[0].ID == echo[1].ID {
				t.Errorf("echo state: %+v", echo)
			}
			if ns := m.calls("test_mrtr_no_state"); len(ns) != 2 || ns[1].Params["requestState"] != nil || ns[1].Params["inputResponses"] == nil {
				t.Errorf("no state: %+v", ns)
			}
			if u := m.calls("test_mrtr_unrelated"); len(u) != 1 || u[0].Params["inputResponses"] != nil || u[0].Params["requestState"] != nil {
				t.Errorf("unrelated: %+v", u)
			}
			if n := m.calls("test_mrtr_no_result_type"); len(n) != 1 {
				t.Errorf("no resultType: %d calls, want 1", len(n))
			}
		}},
		{"http-standard-headers", &modernMock{tools: []any{emptyTool("test_headers"), emptyTool("my-hyphenated-tool")}}, "", func(t *testing.T, m *modernMock) {
			seen := map[string]bool{}
			for _, r := range m.requests() {
				seen[r.Method] = true
				if r.Header.Get("Mcp-Method") != r.Method {
					t.Errorf("%s: Mcp-Method %q", r.Method, r.Header.Get("Mcp-Method"))
				}
				field := "name"
				if r.Method == "resources/read" {
					field = "uri"
				}
				if r.Method == "tools/call" || r.Method == "resources/read" || r.Method == "prompts/get" {
					var v string
					_ = json.Unmarshal(r.Params[field], &v)
					if r.Header.Get("Mcp-Name") != v {
						t.Errorf("%s: Mcp-Name %q, want %q", r.Method, r.Header.Get("Mcp-Name"), v)
					}
				}
			}
			for _, m := range []string{"tools/call", "resources/read", "prompts/get"} {
				if !seen[m] {
					t.Errorf("no %s", m)
				}
			}
		}},
		{"http-custom-headers", &modernMock{tools: []any{headerTool("test_custom_headers", "string", "Region")}},
			`{"toolCalls":[{"name":"test_custom_headers","arguments":{"region":" us-west1","query":"q"}}]}`, func(t *testing.T, m *modernMock) {
				c := m.calls("test_custom_headers")
				if len(c) != 1 || c[0].Header.Get("Mcp-Param-Region") != "=?base64?IHVzLXdlc3Qx?=" || c[0].Header.Get("Mcp-Param-Query") != "" {
					t.Errorf("calls %+v", c)
				}
			}},
		{"http-invalid-tool-headers", &modernMock{tools: []any{headerTool("valid_tool", "string", "Region"), headerTool("invalid_number_header", "number", "Score"),
			headerTool("invalid_space_in_name", "string", "My Region")}}, "", func(t *testing.T, m *modernMock) {
			if len(m.calls("valid_tool")) != 1 || len(m.calls("invalid_number_header")) != 0 || len(m.calls("invalid_space_in_name")) != 0 {
				t.Errorf("requests %+v", m.requests())
			}
		}},
		{"json-schema-ref-no-deref", &modernMock{}, "", func(t *testing.T, m *modernMock) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.canary != 0 {
				t.Errorf("the canary schema was fetched %d times", m.canary)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			m := tt.mock
			url := m.start(t)
			if tt.scenario == "json-schema-ref-no-deref" {
				canary := strings.TrimSuffix(url, "/mcp") + "/canary.json"
				m.tools = []any{map[string]any{"name": "lookup_user", "inputSchema": map[string]any{"type": "object",
					"properties": map[string]any{"profile": map[string]any{"$ref": canary}}}}}
			}
			var sc json.RawMessage
			if tt.context != "" {
				sc = json.RawMessage(tt.context)
			}
			if err := run(context.Background(), quiet(), tt.scenario, url, sc); err != nil {
				t.Fatal(err)
			}
			tt.check(t, m)
		})
	}
}
