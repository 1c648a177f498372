package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"strings"

	"github.com/mcpstack/mcpstack/mcp"
)

// A tool declared from Go types: the input and output schemas are inferred
// from the structs, arguments arrive decoded, and the output is sent as
// structured content.
func ExampleAddTool() {
	type WeatherIn struct {
		City string `json:"city" jsonschema:"the city to look up"`
		Days int    `json:"days,omitempty" jsonschema:"how many days ahead"`
	}
	type WeatherOut struct {
		Summary string  `json:"summary"`
		TempC   float64 `json:"tempC"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "forecast", Description: "Forecast the weather."},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams, in WeatherIn) (*mcp.CallToolResult, WeatherOut, error) {
			return nil, WeatherOut{Summary: "sunny in " + in.City, TempC: 21.5}, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	ct, st := mcp.InMemoryTransports()
	ctx := context.Background()
	if _, err := s.Connect(ctx, st); err != nil {
		log.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, nil).Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("input:  %s\noutput: %s\n", tools.Tools[0].InputSchema, tools.Tools[0].OutputSchema)
	res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "forecast", Arguments: json.RawMessage(`{"city":"Paris"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("result: %s\n", res.StructuredContent)
	// Output:
	// input:  {"additionalProperties":false,"properties":{"city":{"description":"the city to look up","type":"string"},"days":{"description":"how many days ahead","type":"integer"}},"required":["city"],"type":"object"}
	// output: {"additionalProperties":false,"properties":{"summary":{"type":"string"},"tempC":{"type":"number"}},"required":["summary","tempC"],"type":"object"}
	// result: {"summary":"sunny in Paris","tempC":21.5}
}

// Resources, a resource template and a prompt, read and got by a client.
func ExampleServer_AddResourceTemplate() {
	s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1.0.0"}, nil)
	err := s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "docs://pages/{name}", Name: "page", MIMEType: "text/plain"},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
			vars, _ := mcp.MatchURITemplate("docs://pages/{name}", p.URI)
			if vars["name"] != "intro" {
				return nil, mcp.ResourceNotFoundError(p.URI)
			}
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
				&mcp.TextResourceContents{URI: p.URI, MIMEType: "text/plain", Text: "Welcome."},
			}}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	ct, st := mcp.InMemoryTransports()
	ctx := context.Background()
	if _, err := s.Connect(ctx, st); err != nil {
		log.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, nil).Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: "docs://pages/intro"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Contents[0].(*mcp.TextResourceContents).Text)
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: "docs://pages/other"})
	fmt.Println(err)
	// Output:
	// Welcome.
	// jsonrpc: Resource not found (code -32002)
}

// Server logs sent to the client through log/slog, at the level the client
// asked for.
func ExampleNewLoggingHandler() {
	s := mcp.NewServer(&mcp.Implementation{Name: "logger", Version: "1.0.0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapability{}},
	})
	err := mcp.AddTool(s, &mcp.Tool{Name: "work"}, func(ctx context.Context, ss *mcp.ServerSession, _ *mcp.CallToolRequestParams, _ struct{}) (*mcp.CallToolResult, any, error) {
		logger := slog.New(mcp.NewLoggingHandler(ss, &mcp.LoggingHandlerOptions{LoggerName: "worker"}))
		logger.DebugContext(ctx, "not sent: below the client's level")
		logger.WarnContext(ctx, "disk almost full", "free", "3%")
		return &mcp.CallToolResult{}, nil, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	ct, st := mcp.InMemoryTransports()
	ctx := context.Background()
	if _, err := s.Connect(ctx, st); err != nil {
		log.Fatal(err)
	}
	got := make(chan string, 4)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, _ *mcp.ClientSession, p *mcp.LoggingMessageNotificationParams) {
			var data map[string]any
			_ = json.Unmarshal(p.Data, &data)
			got <- fmt.Sprintf("%s %s: %v (free %v)", p.Level, p.Logger, data["msg"], data["free"])
		},
	}).Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(ctx, mcp.LoggingLevelInfo); err != nil {
		log.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "work"}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.TrimSpace(<-got))
	// Output:
	// warning worker: disk almost full (free 3%)
}
