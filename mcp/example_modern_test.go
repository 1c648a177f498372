package mcp_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// One server serves both protocol eras on one endpoint: a client that
// sends initialize gets a 2025-11-25 session; a request that carries its
// own _meta (revision 2026-07-28) is served statelessly. A handler is
// written once; it can ask which era its request is in, and what the
// client declared for this request.
func ExampleEraFromContext() {
	s := mcp.NewServer(&mcp.Implementation{Name: "both-eras", Version: "1.0.0"}, &mcp.ServerOptions{
		CacheScope: mcp.CacheScopePublic, // tools/list holds nothing user-specific
	})
	err := s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: []byte(`{"type":"object"}`)},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			caps := mcp.ClientCapabilitiesFromContext(ctx) // from _meta, or from initialize
			if caps == nil || caps.Sampling == nil {
				// -32021 (HTTP 400) on the modern leg, naming what is missing.
				return nil, &mcp.MissingClientCapabilityError{Required: mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}}
			}
			era := mcp.EraFromContext(ctx) // mcp.EraModern or mcp.EraLegacy
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "served in the " + era.String() + " era"}}}, nil
		})
	if err != nil {
		panic(err)
	}
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s }, nil)
	defer h.Close()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h) // both eras; over stdio, s.Run(ctx, &mcp.StdioTransport{}) does the same
	_ = mux               // http.ListenAndServe("127.0.0.1:8080", mux)
	fmt.Println(mcp.AllProtocolVersions()[0], "and", mcp.LatestProtocolVersion)
	// Output: 2026-07-28 and 2025-11-25
}
