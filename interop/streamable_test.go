//lint:file-ignore SA1019 go-sdk marks sampling deprecated for a later protocol revision; 2025-11-25, which these tests speak, has it

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// httpToolServer is an mcpstack server for the go-sdk client over
// Streamable HTTP: echo returns its arguments as text; sample asks the
// client to sample; progress sends n progress notifications. Each session,
// once initialized, is sent on sessions.
func httpToolServer(t *testing.T, sessions chan<- *mcp.ServerSession) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpstack-server", Version: "1"}, &mcp.ServerOptions{
		InitializedHandler: func(ctx context.Context, ss *mcp.ServerSession) { sessions <- ss },
	})
	obj := json.RawMessage(`{"type":"object"}`)
	add := func(name string, h mcp.ToolHandler) {
		if err := s.AddTool(&mcp.Tool{Name: name, InputSchema: obj}, h); err != nil {
			t.Fatal(err)
		}
	}
	add("echo", func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(p.Arguments)}}}, nil
	})
	add("progress", func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		var in struct{ N int }
		if err := json.Unmarshal(p.Arguments, &in); err != nil {
			return nil, err
		}
		tok, ok := p.Meta.ProgressToken()
		if !ok {
			return nil, fmt.Errorf("no progress token")
		}
		for i := 1; i <= in.N; i++ {
			if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i)}); err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	add("sample", func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		res, err := ss.CreateMessage(ctx, &mcp.CreateMessageRequestParams{
			Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: "hello?"}}}},
			MaxTokens: 10,
		})
		if err != nil {
			return nil, err
		}
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "model said: " + text}}}, nil
	})
	return s
}

// eventually polls cond until it holds, failing the test after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestStreamableGoSDKClientOurServer(t *testing.T) {
	for _, jsonMode := range []bool{false, true} {
		t.Run(fmt.Sprint("json=", jsonMode), func(t *testing.T) {
			ctx := context.Background()
			sessions := make(chan *mcp.ServerSession, 1)
			h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return httpToolServer(t, sessions) },
				&mcphttp.Options{JSONResponse: jsonMode})
			ts := httptest.NewServer(h)
			defer ts.Close()
			defer h.Close()

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
				t.Fatalf("the go-sdk client could not initialize with our handler: %v", err)
			}
			if got := cs.InitializeResult().ServerInfo.Name; got != "mcpstack-server" {
				t.Errorf("server name %q", got)
			}
			var ss *mcp.ServerSession
			select {
			case ss = <-sessions:
			case <-time.After(10 * time.Second):
				t.Fatal("the session was never initialized")
			}
			if err := cs.Ping(ctx, nil); err != nil {
				t.Fatalf("ping: %v", err)
			}
			// Our server pings the go-sdk client on the standalone stream.
			if err := ss.Ping(ctx); err != nil {
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
			got := slices.Clone(progress)
			mu.Unlock()
			slices.Sort(got)
			for i, v := range got {
				if v != float64(i+1) {
					t.Fatalf("progress values %v, want 1..20 each once", got)
				}
			}
			if err := cs.Close(); err != nil {
				t.Fatal(err)
			}
			// The go-sdk client's DELETE ends the session.
			ended := make(chan struct{})
			go func() { ss.Wait(); close(ended) }()
			select {
			case <-ended:
			case <-time.After(10 * time.Second):
				t.Fatal("the go-sdk client's DELETE did not end the session")
			}
		})
	}
}

func TestStreamableOurClientGoSDKServer(t *testing.T) {
	for _, jsonMode := range []bool{false, true} {
		t.Run(fmt.Sprint("json=", jsonMode), func(t *testing.T) {
			ctx := context.Background()
			srv := sdkServer()
			sdk.AddTool(srv, &sdk.Tool{Name: "ask", Description: "samples"}, func(ctx context.Context, req *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
				res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 5, Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: in.Text}}}})
				if err != nil {
					return nil, nil, err
				}
				return &sdk.CallToolResult{Content: []sdk.Content{res.Content}}, nil, nil
			})
			h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: jsonMode})
			ts := httptest.NewServer(h)
			defer ts.Close()

			client := mcp.NewClient(&mcp.Implementation{Name: "mcpstack-client", Version: "1"}, &mcp.ClientOptions{
				CreateMessageHandler: func(ctx context.Context, cs *mcp.ClientSession, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "forty-two"}}}, nil
				},
			})
			cs, err := client.Connect(ctx, &mcphttp.ClientTransport{Endpoint: ts.URL})
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
			call := func(name, args string) string {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: name, Arguments: json.RawMessage(args)})
				if err != nil {
					t.Fatalf("tools/call %s: %v", name, err)
				}
				tc, ok := res.Content[0].(*mcp.TextContent)
				if !ok {
					t.Fatalf("%s: content %T", name, res.Content[0])
				}
				return tc.Text
			}
			if got := call("echo", `{"text":"over http"}`); got != "over http" {
				t.Fatalf("echo: %q", got)
			}
			if got := call("ask", `{"text":"q"}`); got != "forty-two" {
				t.Fatalf("ask: %q", got)
			}
			// The go-sdk server pings our client on the GET stream.
			var sessions []*sdk.ServerSession
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
