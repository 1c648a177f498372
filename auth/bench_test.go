package auth_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

// BenchmarkToolsCallAuth measures tools/call over a real Streamable HTTP
// server on loopback, with our client: without authorization, with ES256
// JWT verification behind the verified-token cache, and with a signature
// check on every request.
func BenchmarkToolsCallAuth(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  mcpConfig
	}{
		{"none", mcpConfig{noAuth: true}},
		{"jwt-cache", mcpConfig{}},
		{"jwt-nocache", mcpConfig{noCache: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			as := newTestAS(b)
			ms := newMCPServer(b, as, bc.cfg)
			tok := as.sign(as.claims("bench", ms.endpoint, "mcp"))
			ctx := context.Background()
			tr := &http.Transport{MaxIdleConnsPerHost: 4}
			defer tr.CloseIdleConnections()
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ms.endpoint, HTTPClient: &http.Client{Transport: bearer{tok, tr}}, DisableStandaloneSSE: true})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			p := &mcp.CallToolRequestParams{Name: "whoami"}
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(ctx, p)
				if err != nil {
					b.Fatal(err)
				}
				if bc.name != "none" && res.Content[0].(*mcp.TextContent).Text != "bench mcp" {
					b.Fatal("principal lost")
				}
			}
		})
	}
}
