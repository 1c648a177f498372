// Command protected-server is the smallest MCP server protected by OAuth:
// one tool, Streamable HTTP at /mcp, access tokens (JWTs) checked against
// an authorization server, protected resource metadata for discovery, and
// a larger scope for one tool.
//
// Run it with an authorization server, and log in with the mcpstack client:
//
//	go run ./cmd/mcpstack authserver --addr 127.0.0.1:9000 --dev-user me --scope 'notes:read notes:write'
//	go run ./examples/protected-server -issuer http://127.0.0.1:9000
//	go run ./cmd/mcpstack client http://127.0.0.1:8080/mcp call add_note '{"text":"hello"}'
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"strings"
	"sync"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/oauth"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	issuer := flag.String("issuer", "http://127.0.0.1:9000", "the authorization server")
	flag.Parse()
	resource := "http://" + *addr + "/mcp"

	var mu sync.Mutex
	var notes []string
	srv := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        "list_notes",
		Description: "Lists the notes.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(notes, "\n")}}}, nil
	})
	srv.AddTool(&mcp.Tool{
		Name:        "add_note",
		Description: "Adds a note; needs the notes:write scope.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		var in struct{ Text string }
		json.Unmarshal(p.Arguments, &in)
		who := "someone"
		if pr, ok := auth.PrincipalFromContext(ctx); ok {
			who = pr.Subject
		}
		mu.Lock()
		notes = append(notes, who+": "+in.Text)
		mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "noted"}}}, nil
	})

	verifier, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: *issuer, Audience: resource})
	if err != nil {
		log.Fatal(err)
	}
	mw, err := auth.New(auth.Options{
		Resource:   resource,
		Verifier:   auth.NewCache(verifier, auth.CacheOptions{}),
		Scopes:     []string{"notes:read"},
		ToolScopes: map[string][]string{"add_note": {"notes:write"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	if err := auth.RegisterMetadata(mux, oauth.ProtectedResourceMetadata{
		Resource:             resource,
		AuthorizationServers: []string{*issuer},
		ScopesSupported:      []string{"notes:read", "notes:write"},
	}); err != nil {
		log.Fatal(err)
	}
	mux.Handle("/mcp", mw.Wrap(mcphttp.NewHandler(
		func(*http.Request) *mcp.Server { return srv },
		&mcphttp.Options{Identity: auth.SessionIdentity},
	)))
	log.Printf("MCP at %s, tokens from %s", resource, *issuer)
	log.Fatal(http.ListenAndServe(*addr, mux))
}
