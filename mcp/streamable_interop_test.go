//lint:file-ignore SA1019 go-sdk marks sampling deprecated for a later protocol revision; 2025-11-25, which this test speaks, has it

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Interop over Streamable HTTP with the official go-sdk (a test-only
// dependency), both ways, in both answer modes.

func TestStreamableInteropGoSDKClientOurServer(t *testing.T) {
	for _, jsonMode := range []bool{false, true} {
		t.Run(fmt.Sprint("json=", jsonMode), func(t *testing.T) {
			ctx := context.Background()
			h, ts := serve(t, toolServer(t, nil), &StreamableHTTPOptions{JSONResponse: jsonMode})
			var mu sync.Mutex
			var progress []float64
			client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-client", Version: "1.0.0"}, &sdk.ClientOptions{
				CreateMessageHandler: func(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
					return &sdk.CreateMessageResult{Role: "assistant", Model: "m", Content: &sdk.TextContent{Text: "from go-sdk"}}, nil
				},
				ProgressNotificationHandler: func(ctx context.Context, req *sdk.ProgressNotificationClientRequest) {
					mu.Lock()
					progress = append(progress, req.Params.Progress)
					mu.Unlock()
				},
			})
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatalf("go-sdk client could not initialize with our handler: %v", err)
			}
			if got := cs.InitializeResult().ServerInfo.Name; got != "test-server" {
				t.Errorf("server name %q", got)
			}
			if err := cs.Ping(ctx, nil); err != nil {
				t.Fatalf("ping: %v", err)
			}
			// Our server pings the go-sdk client on the standalone stream.
			if err := onlySession(t, h).ss.Ping(ctx); err != nil {
				t.Fatalf("server→client ping: %v", err)
			}
			text := func(res *sdk.CallToolResult, err error) string {
				t.Helper()
				if err != nil {
					t.Fatalf("tools/call: %v", err)
				}
				tc, ok := res.Content[0].(*sdk.TextContent)
				if !ok {
					t.Fatalf("content %T", res.Content[0])
				}
				return tc.Text
			}
			if got := text(cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"x": 1}})); got != `{"x":1}` {
				t.Fatalf("echo: %q", got)
			}
			if got := text(cs.CallTool(ctx, &sdk.CallToolParams{Name: "sample", Arguments: map[string]any{}})); got != "model said: from go-sdk" {
				t.Fatalf("sample: %q", got)
			}
			p := &sdk.CallToolParams{Name: "progress", Arguments: map[string]any{"n": 20}}
			p.SetProgressToken("sdk-token")
			if got := text(cs.CallTool(ctx, p)); got != "done" {
				t.Fatalf("progress: %q", got)
			}
			// The go-sdk client runs notification handlers asynchronously:
			// wait for all of them, and check each arrived exactly once.
			eventually(t, "20 progress notifications", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(progress) >= 20
			})
			mu.Lock()
			sorted := slices.Clone(progress)
			mu.Unlock()
			slices.Sort(sorted)
			checkSequence(t, "go-sdk progress", sorted, 20)
			sid := cs.ID()
			if err := cs.Close(); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the go-sdk client's DELETE ends the session", func() bool { return h.session(sid) == nil })
		})
	}
}

func TestStreamableInteropOurClientGoSDKServer(t *testing.T) {
	for _, jsonMode := range []bool{false, true} {
		t.Run(fmt.Sprint("json=", jsonMode), func(t *testing.T) {
			ctx := context.Background()
			srv := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-server", Version: "1.0.0"}, nil)
			sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "echoes"}, func(ctx context.Context, req *sdk.CallToolRequest, in sdkEchoIn) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
			})
			sdk.AddTool(srv, &sdk.Tool{Name: "ask", Description: "samples"}, func(ctx context.Context, req *sdk.CallToolRequest, in sdkEchoIn) (*sdk.CallToolResult, any, error) {
				res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 5, Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: in.Text}}}})
				if err != nil {
					return nil, nil, err
				}
				return &sdk.CallToolResult{Content: []sdk.Content{res.Content}}, nil, nil
			})
			var mu sync.Mutex
			var sessions []*sdk.ServerSession
			h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: jsonMode})
			ts := httptest.NewServer(h)
			defer ts.Close()

			cs, err := samplingClient(nil, &mu).Connect(ctx, &StreamableClientTransport{Endpoint: ts.URL})
			if err != nil {
				t.Fatalf("our client could not initialize with the go-sdk handler: %v", err)
			}
			if got := cs.InitializeResult().ServerInfo.Name; got != "go-sdk-server" {
				t.Errorf("server name %q", got)
			}
			if err := cs.Ping(ctx); err != nil {
				t.Fatalf("ping: %v", err)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) != 2 {
				t.Fatalf("tools/list: %v %+v", err, tools)
			}
			if got := callText(t, cs, ctx, &CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"over http"}`)}); got != "over http" {
				t.Fatalf("echo: %q", got)
			}
			if got := callText(t, cs, ctx, &CallToolRequestParams{Name: "ask", Arguments: json.RawMessage(`{"text":"q"}`)}); got != "forty-two" {
				t.Fatalf("ask: %q", got)
			}
			// The go-sdk server pings our client on the GET stream.
			for ss := range srv.Sessions() {
				sessions = append(sessions, ss)
			}
			if len(sessions) != 1 {
				t.Fatalf("%d go-sdk sessions", len(sessions))
			}
			if err := sessions[0].Ping(ctx, nil); err != nil {
				t.Fatalf("go-sdk server→our client ping: %v", err)
			}
			cs.Close()
			eventually(t, "our DELETE ends the go-sdk session", func() bool {
				n := 0
				for range srv.Sessions() {
					n++
				}
				return n == 0
			})
		})
	}
}
