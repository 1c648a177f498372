package mcp

import (
	"context"
	"os"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official go-sdk (a test-only dependency) and mcpstack must complete
// initialize and ping with each other over stdio, in both directions.

type sdkEchoIn struct {
	Text string `json:"text"`
}

func runGoSDKServer() {
	s := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-server", Version: "1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "echoes"}, func(ctx context.Context, req *sdk.CallToolRequest, in sdkEchoIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
	})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		os.Exit(1)
	}
}

func TestInteropGoSDKClientOurServer(t *testing.T) {
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: childCommand(t, "server")}, nil)
	if err != nil {
		t.Fatalf("go-sdk client could not initialize with our server: %v", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != "test-server" {
		t.Errorf("server name %q", got)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "interop"}})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if tc, ok := res.Content[0].(*sdk.TextContent); !ok || tc.Text != "interop" {
		t.Fatalf("echo result %+v", res.Content)
	}
}

func TestInteropOurClientGoSDKServer(t *testing.T) {
	ctx := context.Background()
	client := NewClient(&Implementation{Name: "mcpstack-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &CommandTransport{Command: childCommand(t, "gosdk-server")})
	if err != nil {
		t.Fatalf("our client could not initialize with the go-sdk server: %v", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != "go-sdk-server" {
		t.Errorf("server name %q", got)
	}
	if err := cs.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "echo" {
		t.Fatalf("tools/list: %v %+v", err, tools)
	}
	res, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "echo", Arguments: []byte(`{"text":"back"}`)})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if tc, ok := res.Content[0].(*TextContent); !ok || tc.Text != "back" {
		t.Fatalf("echo result %+v", res.Content)
	}
}
