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

// taskServer serves, over Streamable HTTP (both eras), a tool that runs
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
// requirement and that call runs it, in both eras of our own server. On
// the 2025-11-25 leg the task is the client's choice: call --task runs it
// and a call without --task is refused. Revision 2026-07-28 has no
// per-request task flag (changelog, major change 6; the tasks extension:
// the server decides, the client only declares the extension, which
// mcpstack client always does), so there the call runs with or without
// --task.
func TestClientTaskRequired(t *testing.T) {
	url := taskServer(t)
	for _, tt := range []struct {
		era          string
		plainRefused bool
		hint         string
	}{
		{"legacy", true, "runs as a task only (call it with --task)"},
		{"modern", false, "runs as a task only (call waits for its result)"},
	} {
		t.Run(tt.era, func(t *testing.T) {
			r := runCmd(t, "", "client", "--era", tt.era, url, "tools")
			if r.code != 0 || !strings.Contains(r.stdout, tt.hint) {
				t.Errorf("tools: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			r = runCmd(t, "", "client", "--era", tt.era, "--json", url, "tools")
			if r.code != 0 || !strings.Contains(r.stdout, `"taskSupport":"required"`) {
				t.Errorf("tools --json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			r = runCmd(t, "", "client", "--era", tt.era, url, "call", "report")
			if refused := r.code != 0; refused != tt.plainRefused {
				t.Errorf("call without --task: exit %d, want refused %v\n%s%s", r.code, tt.plainRefused, r.stdout, r.stderr)
			} else if !refused && strings.TrimSpace(r.stdout) != "42 pages" {
				t.Errorf("call without --task: %q", r.stdout)
			}
			r = runCmd(t, "", "client", "--era", tt.era, "--task", url, "call", "report")
			if r.code != 0 || strings.TrimSpace(r.stdout) != "42 pages" {
				t.Errorf("call --task: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestClientInfoEra checks that info names the era, against our own
// server (which speaks both: legacy when told, modern when the client
// probes) and a modern-only one, and that the --json document keeps its
// shape.
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
	ours := taskServer(t) // speaks both eras
	for _, tt := range []struct {
		name, url, era, protocol string
	}{
		{"legacy", ours, "legacy", "protocol:     2025-11-25 (legacy)"},
		{"ours-auto", ours, "auto", "protocol:     2026-07-28 (modern)"},
		{"modern", modern.URL, "auto", "protocol:     2026-07-28 (modern)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, "", "client", "--no-login", "--era", tt.era, tt.url, "info")
			if r.code != 0 || !strings.Contains(r.stdout, tt.protocol) {
				t.Errorf("info: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			r = runCmd(t, "", "client", "--no-login", "--era", tt.era, "--json", tt.url, "info")
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
