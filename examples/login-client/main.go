// Command login-client connects to a protected MCP server, logging in
// with OAuth in the system browser when the server asks (discovery,
// dynamic registration, PKCE, a loopback redirect, step-up), and lists the
// server's tools. Tokens are kept in a 0600 file for the next run.
//
//	go run ./examples/login-client http://127.0.0.1:8080/mcp
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"

	"github.com/mcpstack/mcpstack/authclient"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/oauth"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: login-client URL")
	}
	ctx := context.Background()

	authorizer, err := authclient.NewLoopbackAuthorizer(authclient.LoopbackOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer authorizer.Close()
	transport := authclient.NewTransport(authclient.Config{
		Authorizer:     authorizer,
		ClientMetadata: oauth.ClientMetadata{ClientName: "login-client example"},
		Store:          &authclient.FileStore{Path: filepath.Join(os.TempDir(), "login-client-tokens.json")},
	})

	client := mcp.NewClient(&mcp.Implementation{Name: "login-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcphttp.ClientTransport{
		Endpoint:   os.Args[1],
		HTTPClient: &http.Client{Transport: transport},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s\n", tool.Name, tool.Description)
	}
}
