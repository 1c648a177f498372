package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// The tests of package mcp that run a feature over every transport reach
// Streamable HTTP through this hook: package mcp cannot import mcphttp,
// which imports it, but its external tests can.
func init() {
	mcp.HTTPConnectForTest = func(t *testing.T, s *mcp.Server, c *mcp.Client) *mcp.ClientSession {
		t.Helper()
		h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s }, nil)
		ts := httptest.NewServer(h)
		cs, err := c.Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: ts.URL})
		if err != nil {
			ts.Close()
			h.Close()
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close(); h.Close(); ts.Close() })
		return cs
	}
}
