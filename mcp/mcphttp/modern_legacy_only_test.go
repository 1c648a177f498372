package mcphttp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

// TestLegacyOnlyServerModernProbe checks that a server serving no modern
// revision (ServerOptions.DisableModern) answers a modern request the way
// a legacy server does, whichever way the request is recognized as
// modern: a 4xx whose body holds no modern error (-32020, -32021,
// -32022), so that a dual-era client falls back to initialize
// (basic/versioning, "Backward Compatibility"; its compatibility matrix,
// Dual-era client against a Legacy server). initialize is then served.
func TestLegacyOnlyServerModernProbe(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "legacy-only", Version: "1"}, &mcp.ServerOptions{DisableModern: true})
	h := NewHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close()
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	post := func(t *testing.T, headers map[string]string, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	for _, tc := range []struct {
		name    string
		headers map[string]string
		body    string
	}{
		{"discover with headers", map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"},
			`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`},
		{"tools/list with headers", map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"},
			`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`},
		{"discover by its _meta alone", nil,
			`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, b := post(t, tc.headers, tc.body)
			var m struct {
				Error *struct{ Code int64 } `json:"error"`
			}
			if err := json.Unmarshal(b, &m); err != nil || m.Error == nil {
				t.Fatalf("status %d, body %s: want a JSON-RPC error", st, b)
			}
			if st < 400 || st > 499 {
				t.Errorf("status %d, want a 4xx", st)
			}
			switch m.Error.Code {
			case mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability, mcp.CodeUnsupportedProtocolVersion:
				t.Errorf("status %d, body %s: a modern error, which tells a client not to fall back", st, b)
			}
		})
	}
	st, b := post(t, nil, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if st != http.StatusOK || !strings.Contains(string(b), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: status %d: %s", st, b)
	}
}
