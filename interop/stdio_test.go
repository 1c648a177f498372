package interop

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpstack/mcpstack/mcp"
)

// TestMain doubles as the stdio servers: the test binary started again
// with INTEROP_CHILD set serves one session on its standard streams.
func TestMain(m *testing.M) {
	switch os.Getenv("INTEROP_CHILD") {
	case "mcpstack":
		if err := ourServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "mcpstack-era":
		if err := runEraChild(); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "go-sdk":
		if err := sdkServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child returns the command that starts this test binary as a stdio
// server of the given kind.
func child(kind string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "INTEROP_CHILD="+kind)
	cmd.Stderr = io.Discard
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	return cmd
}

type echoIn struct {
	Text string `json:"text"`
}

// ourServer is an mcpstack server with an echo tool.
func ourServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpstack-server", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes"},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	return s
}

// sdkServer is a go-sdk server with an echo tool.
func sdkServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-server", Version: "1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "echoes"},
		func(ctx context.Context, req *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
		})
	return s
}

func TestStdioGoSDKClientOurServer(t *testing.T) {
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-client", Version: "1.0.0"}, nil)
	// Pinned to 2025-11-25 (ping is gone from 2026-07-28); the go-sdk's
	// default over stdio is TestClientsAgainstOurServerEras.
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: child("mcpstack")},
		&sdk.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatalf("the go-sdk client could not initialize with our server: %v", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != "mcpstack-server" {
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

func TestStdioOurClientGoSDKServer(t *testing.T) {
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpstack-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: child("go-sdk")})
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
	res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"back"}`)})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "back" {
		t.Fatalf("echo result %+v", res.Content)
	}
}
