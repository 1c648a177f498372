package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// startTSv2Server runs interop/node/ts-server.mjs (a server written with
// the TypeScript SDK v2, @modelcontextprotocol/server 2.4.0) in mode
// ("dual" or "modern") and returns its endpoint.
func startTSv2Server(t *testing.T, mode string) string {
	t.Helper()
	bin := node(t, "@modelcontextprotocol/server")
	script, err := filepath.Abs(filepath.Join(nodeDir, "ts-server.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, script, mode)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("ts-server.mjs %s stderr:\n%s", mode, stderr.String())
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		var v struct{ URL string }
		if !ok || json.Unmarshal([]byte(l), &v) != nil || v.URL == "" {
			t.Fatalf("ts-server.mjs printed %q; stderr:\n%s", l, stderr.String())
		}
		return v.URL
	case <-time.After(60 * time.Second):
		t.Fatalf("ts-server.mjs did not start; stderr:\n%s", stderr.String())
	}
	return ""
}

// eraClient connects our client to url with the given era policy.
func eraClient(t *testing.T, ctx context.Context, url string, policy mcp.EraPolicy) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpstack-interop", Version: "1"}, &mcp.ClientOptions{
		EraPolicy: policy,
		ElicitationHandler: func(context.Context, *mcp.ClientSession, mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{}}, nil
		},
	})
	return c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: url, MaxRetries: -1})
}

// callText calls a tool and returns the text of its result.
func callText(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name, args string) string {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError != nil && *res.IsError {
		t.Fatalf("tools/call %s: tool error %q", name, b.String())
	}
	return b.String()
}

// TestTypeScriptV2Server runs our client against a server of the
// TypeScript SDK v2 (@modelcontextprotocol/server 2.4.0): its dual-era
// handler (2026-07-28 per request, 2025-era traffic stateless), reached
// modern by negotiation and legacy when pinned, and its modern-only one,
// where the negotiation stays modern and a pinned legacy client is
// refused. In the modern era a tool that asks for confirmation runs the
// multi round-trip flow through our elicitation handler, and an
// x-mcp-header parameter reaches the server as Mcp-Param-Region.
func TestTypeScriptV2Server(t *testing.T) {
	dual := startTSv2Server(t, "dual")
	modernOnly := startTSv2Server(t, "modern")
	for _, tt := range []struct {
		name    string
		url     string
		policy  mcp.EraPolicy
		era     mcp.Era
		refused bool
	}{
		{name: "dual/negotiated", url: dual, policy: mcp.EraPolicyDefault, era: mcp.EraModern},
		{name: "dual/legacy", url: dual, policy: mcp.EraPolicyLegacy, era: mcp.EraLegacy},
		{name: "modern-only/negotiated", url: modernOnly, policy: mcp.EraPolicyAuto, era: mcp.EraModern},
		{name: "modern-only/legacy", url: modernOnly, policy: mcp.EraPolicyLegacy, refused: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := eraClient(t, ctx, tt.url, tt.policy)
			if tt.refused {
				if err == nil {
					cs.Close()
					t.Fatal("a legacy client connected to a modern-only server")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.Era(); got != tt.era {
				t.Fatalf("era %v, want %v", got, tt.era)
			}
			if got := cs.InitializeResult().ServerInfo.Name; got != "ts-v2-interop" {
				t.Errorf("server name %q", got)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools.Tools) != 3 {
				t.Errorf("%d tools", len(tools.Tools))
			}
			if got := callText(t, ctx, cs, "add", `{"a":2,"b":3}`); got != "5" {
				t.Errorf("add: %q", got)
			}
			if tt.era != mcp.EraModern {
				return
			}
			if got := callText(t, ctx, cs, "confirm", `{"what":"deploy"}`); !strings.HasPrefix(got, "confirmed deploy") {
				t.Errorf("confirm: %q", got)
			}
			if got := callText(t, ctx, cs, "headed", `{"region":"us-west1"}`); got != "us-west1" {
				t.Errorf("headed: the server saw Mcp-Param-Region %q", got)
			}
		})
	}
}

// TestGoSDKStatelessServer runs our client against the go-sdk v1.8.0
// server in stateless mode, which speaks 2026-07-28: the negotiation finds
// it modern, and a pinned legacy client still gets through initialize.
func TestGoSDKStatelessServer(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-stateless", Version: "1.8.0"}, nil)
	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "add", Description: "adds"}, func(ctx context.Context, req *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: jsonInt(in.A + in.B)}}}, nil, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true}))
	defer ts.Close()
	for _, tt := range []struct {
		name   string
		policy mcp.EraPolicy
		era    mcp.Era
	}{
		{"negotiated", mcp.EraPolicyDefault, mcp.EraModern},
		{"legacy", mcp.EraPolicyLegacy, mcp.EraLegacy},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := eraClient(t, ctx, ts.URL, tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.Era(); got != tt.era {
				t.Fatalf("era %v, want %v", got, tt.era)
			}
			if got := callText(t, ctx, cs, "add", `{"a":2,"b":3}`); got != "5" {
				t.Errorf("add: %q", got)
			}
		})
	}
}

func jsonInt(n int) string {
	b, err := json.Marshal(n)
	if err != nil {
		panic(errors.New("unreachable"))
	}
	return string(b)
}
