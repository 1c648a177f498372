package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mcpstack/mcpstack/mcp"
)

// A server with one tool and a client that calls it, joined in one process
// by the in-memory transport. Over stdio, the server would run with
// s.Run(ctx, &mcp.StdioTransport{}) and the client would connect with a
// mcp.CommandTransport.
func Example() {
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{
		Name:        "greet",
		Description: "Says hello.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		var in struct{ Name string }
		if err := json.Unmarshal(p.Arguments, &in); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil
	})

	clientTransport, serverTransport := mcp.InMemoryTransports()
	if _, err := s.Connect(ctx, serverTransport); err != nil {
		log.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "example-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, clientTransport)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	fmt.Println("protocol:", cs.ProtocolVersion())
	res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "greet", Arguments: json.RawMessage(`{"name":"Ada"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// protocol: 2025-11-25
	// Hello, Ada!
}

// Version negotiation: a client that asks for an old revision gets it when
// the server speaks it.
func ExampleClientOptions_protocolVersion() {
	ctx := context.Background()
	ct, st := mcp.InMemoryTransports()
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	if _, err := s.Connect(ctx, st); err != nil {
		log.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "old-client", Version: "1"}, &mcp.ClientOptions{ProtocolVersion: mcp.ProtocolVersion20241105})
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	fmt.Println(cs.ProtocolVersion())
	// Output: 2024-11-05
}
