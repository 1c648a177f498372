package mcphttp

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// TestStandardHeadersMcpName checks that the client mirrors into Mcp-Name
// every member the server checks it against: params.name, params.uri,
// and the tasks extension's params.taskId (SEP-2663, "Streamable HTTP:
// Routing Headers"), which a strict server otherwise refuses with -32020.
func TestStandardHeadersMcpName(t *testing.T) {
	tests := []struct {
		method, params, want string
	}{
		{mcp.MethodToolsCall, `{"name":"echo"}`, "echo"},
		{mcp.MethodPromptsGet, `{"name":"haiku"}`, "haiku"},
		{mcp.MethodResourcesRead, `{"uri":"file:///a b"}`, mcp.EncodeHeaderValue("file:///a b")},
		{mcp.MethodTasksGet, `{"taskId":"t1"}`, "t1"},
		{mcp.MethodTasksUpdate, `{"taskId":"t2","inputResponses":{}}`, "t2"},
		{mcp.MethodTasksCancel, `{"taskId":"t3"}`, "t3"},
		{mcp.MethodToolsList, `{}`, ""},
		{mcp.MethodServerDiscover, `{}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			req := &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: tt.method, Params: json.RawMessage(tt.params)}
			h := http.Header{}
			addModernHeaders(withStandardHeaders(context.Background(), req), h)
			if got := h.Get(headerMcpMethod); got != tt.method {
				t.Errorf("Mcp-Method %q", got)
			}
			got, set := h[headerMcpName]
			switch {
			case tt.want == "" && set:
				t.Errorf("Mcp-Name %q, want none", got)
			case tt.want != "" && (len(got) != 1 || got[0] != tt.want):
				t.Errorf("Mcp-Name %q, want %q", got, tt.want)
			}
		})
	}
}
