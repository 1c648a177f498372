package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// taskServer serves, over Streamable HTTP (2025-11-25), a tool that runs
// only as a task.
func taskServer(t *testing.T) string {
	t.Helper()
	tasks := mcp.NewTasks(&mcp.TaskOptions{Cancel: true})
	s := mcp.NewServer(&mcp.Implementation{Name: "reports", Version: "1"}, &mcp.ServerOptions{
		ReceivingMiddleware: []mcp.Middleware{tasks.Middleware()},
		SendingMiddleware:   []mcp.Middleware{tasks.SendingMiddleware()},
	})
	s.AddTool(&mcp.Tool{
		Name:        "report",
		Description: "a slow report",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Execution:   &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired},
	}, func(context.Context, *mcp.ServerSession, *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "42 pages"}}}, nil
	})
	ts := httptest.NewServer(mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestClientTaskRequired checks that tools shows a tool's task
// requirement and call --task runs it against a 2025-11-25 server; without
// --task the server refuses the call.
func TestClientTaskRequired(t *testing.T) {
	url := taskServer(t)
	r := runCmd(t, "", "client", url, "tools")
	if r.code != 0 || !strings.Contains(r.stdout, "runs as a task only (call it with --task)") {
		t.Errorf("tools: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCmd(t, "", "client", "--json", url, "tools")
	if r.code != 0 || !strings.Contains(r.stdout, `"taskSupport":"required"`) {
		t.Errorf("tools --json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCmd(t, "", "client", url, "call", "report")
	if r.code == 0 {
		t.Errorf("call without --task: exit 0\n%s", r.stdout)
	}
	r = runCmd(t, "", "client", "--task", url, "call", "report")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "42 pages" {
		t.Errorf("call --task: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestClientInfoEra checks that info names the era, against a legacy and
// a modern server, and that the --json document keeps its shape.
func TestClientInfoEra(t *testing.T) {
	modern := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &m)
		if m.Method != mcp.MethodServerDiscover {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
			"resultType": "complete", "ttlMs": 0, "cacheScope": "public", "supportedVersions": []string{mcp.ProtocolVersion20260728},
			"capabilities": map[string]any{"tools": map[string]any{}}, "instructions": "be kind",
			"_meta": map[string]any{mcp.MetaKeyServerInfo: map[string]any{"name": "new", "version": "2"}},
		}})
	}))
	defer modern.Close()
	for _, tt := range []struct {
		name, url, protocol string
	}{
		{"legacy", taskServer(t), "protocol:     2025-11-25 (legacy)"},
		{"modern", modern.URL, "protocol:     2026-07-28 (modern)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, "", "client", "--no-login", tt.url, "info")
			if r.code != 0 || !strings.Contains(r.stdout, tt.protocol) {
				t.Errorf("info: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			r = runCmd(t, "", "client", "--no-login", "--json", tt.url, "info")
			var doc map[string]json.RawMessage
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatalf("info --json: %v\n%s", err, r.stdout)
			}
			keys := make([]string, 0, len(doc))
			for k := range doc {
				if k != "instructions" && k != "_meta" {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			if got := strings.Join(keys, ","); got != "capabilities,protocolVersion,serverInfo" {
				t.Errorf("info --json members %s", got)
			}
		})
	}
	r := runCmd(t, "", "client", "--era", "sometimes", modern.URL, "info")
	if r.code != exitUsage {
		t.Errorf("--era sometimes: exit %d", r.code)
	}
}

// TestEraFlag checks the values --era takes.
func TestEraFlag(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    mcp.EraPolicy
		wantErr bool
	}{
		{"", mcp.EraPolicyDefault, false},
		{"auto", mcp.EraPolicyAuto, false},
		{"sibling", mcp.EraPolicyProbeSibling, false},
		{"modern", mcp.EraPolicyModern, false},
		{"legacy", mcp.EraPolicyLegacy, false},
		{"newest", 0, true},
	} {
		got, err := eraPolicy(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("eraPolicy(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
