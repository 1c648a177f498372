package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// mockServer is an MCP server over Streamable HTTP with the tools the
// client scenarios call; it records what they received.
type mockServer struct {
	mu       sync.Mutex
	added    []float64      // a and b of add_numbers
	elicited map[string]any // accepted content of the defaults elicitation
	echoed   json.RawMessage
}

const schema2020 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"}}}},` +
	`"properties":{"address":{"$ref":"#/$defs/address"},"phone":{"type":"string"}},` +
	`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["address"]}]}],"additionalProperties":false}`

func (m *mockServer) start(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "mock", Version: "1"}, nil)
	add := func(tool *mcp.Tool, h mcp.ToolHandler) {
		t.Helper()
		if err := s.AddTool(tool, h); err != nil {
			t.Fatal(err)
		}
	}
	add(&mcp.Tool{Name: "add_numbers", Description: "adds", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			var in struct{ A, B float64 }
			if err := json.Unmarshal(p.Arguments, &in); err != nil {
				return nil, err
			}
			m.mu.Lock()
			m.added = []float64{in.A, in.B}
			m.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, nil
		})
	add(&mcp.Tool{Name: "test_client_elicitation_defaults", Description: "elicits", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			var form mcp.ElicitRequestFormParams
			if err := json.Unmarshal([]byte(`{"message":"defaults","requestedSchema":{"type":"object","properties":{`+
				`"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},`+
				`"score":{"type":"number","default":95.5},`+
				`"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},`+
				`"verified":{"type":"boolean","default":true}},"required":[]}}`), &form); err != nil {
				return nil, err
			}
			res, err := ss.Elicit(ctx, &form)
			if err != nil {
				return nil, err
			}
			if res.Action != mcp.ElicitActionAccept {
				return nil, fmt.Errorf("action %s", res.Action)
			}
			m.mu.Lock()
			m.elicited = res.Content
			m.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	add(&mcp.Tool{Name: "json_schema_2020_12_tool", Description: "schema", InputSchema: json.RawMessage(schema2020)},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	add(&mcp.Tool{Name: "json_schema_echo", Description: "echo", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"schema":{"type":"object"}},"required":["schema"]}`)},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			var in struct{ Schema json.RawMessage }
			if err := json.Unmarshal(p.Arguments, &in); err != nil {
				return nil, err
			}
			m.mu.Lock()
			m.echoed = in.Schema
			m.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		h.Close()
	})
	return ts.URL
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestScenarios(t *testing.T) {
	tests := []struct {
		scenario string
		check    func(t *testing.T, m *mockServer)
	}{
		{"initialize", func(t *testing.T, m *mockServer) {}},
		{"tools_call", func(t *testing.T, m *mockServer) {
			if len(m.added) != 2 {
				t.Errorf("add_numbers got %v", m.added)
			}
		}},
		{"elicitation-sep1034-client-defaults", func(t *testing.T, m *mockServer) {
			want := map[string]any{"name": "John Doe", "age": 30.0, "score": 95.5, "status": "active", "verified": true}
			got, _ := json.Marshal(m.elicited)
			wantJSON, _ := json.Marshal(want)
			if !bytes.Equal(got, wantJSON) {
				t.Errorf("elicited content %s, want %s", got, wantJSON)
			}
		}},
		{"json-schema-2020-12-preservation", func(t *testing.T, m *mockServer) {
			var got, want any
			if err := json.Unmarshal(m.echoed, &got); err != nil {
				t.Fatalf("echoed %q: %v", m.echoed, err)
			}
			_ = json.Unmarshal([]byte(schema2020), &want)
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if !bytes.Equal(g, w) {
				t.Errorf("echoed schema\n%s\nwant\n%s", g, w)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			m := &mockServer{}
			url := m.start(t)
			if err := run(context.Background(), quiet(), tt.scenario, url, nil); err != nil {
				t.Fatal(err)
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			tt.check(t, m)
		})
	}
}

func TestEveryScenarioHasATest(t *testing.T) {
	// sse-retry needs a server that cuts its stream mid-call; the suite
	// and the mcp package's resumption tests cover it.
	tested := map[string]bool{"initialize": true, "tools_call": true, "elicitation-sep1034-client-defaults": true,
		"json-schema-2020-12-preservation": true, "sse-retry": true}
	for name := range scenarios {
		if !tested[name] {
			t.Errorf("scenario %s has no test", name)
		}
	}
}

func TestRunErrors(t *testing.T) {
	m := &mockServer{}
	url := m.start(t)
	ctx := context.Background()
	if err := run(ctx, quiet(), "no-such-scenario", url, nil); !errors.Is(err, errUnknownScenario) {
		t.Errorf("unknown scenario: got %v", err)
	}
	if err := run(ctx, quiet(), "", url, nil); err == nil {
		t.Error("no scenario: no error")
	}
	// A tool the server lacks fails the scenario.
	if err := run(ctx, quiet(), "sse-retry", url, nil); err == nil {
		t.Error("sse-retry against a server without test_reconnection: no error")
	}
	// A server that is not there fails it too.
	if err := run(ctx, quiet(), "initialize", "http://127.0.0.1:1/mcp", nil); err == nil {
		t.Error("initialize against no server: no error")
	}
}
