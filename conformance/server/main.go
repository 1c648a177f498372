// Command server is the MCP server that the official conformance suite
// drives (its "everything server"). With -stdio it serves MCP over standard
// input and output.
//
// It exposes the tools the suite's scenarios call; the resources, prompts,
// completion and logging scenarios, and Streamable HTTP (-addr), join it as
// the library grows them.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
)

func main() {
	stdio := flag.Bool("stdio", false, "serve MCP over standard input and output")
	verbose := flag.Bool("v", false, "log debug messages to standard error")
	flag.Parse()
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if !*stdio {
		fmt.Fprintln(os.Stderr, "server: give -stdio (Streamable HTTP with -addr comes later)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := newServer(logger)
	if err != nil {
		logger.Error("server", "error", err)
		os.Exit(1)
	}
	if err := s.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		logger.Error("server", "error", err)
		os.Exit(1)
	}
}

// A 1x1 red PNG and a short silent WAV, for the content scenarios.
var (
	redPixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	silentWAV, _   = base64.StdEncoding.DecodeString("UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=")
)

var noArgs = json.RawMessage(`{"type":"object","properties":{}}`)

func text(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }

func newServer(logger *slog.Logger) (*mcp.Server, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpstack-conformance-server", Version: "0.1.0"}, &mcp.ServerOptions{Logger: logger})
	tools := []struct {
		tool *mcp.Tool
		h    mcp.ToolHandler
	}{
		{&mcp.Tool{Name: "test_simple_text", Description: "Returns simple text content.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{text("This is a simple text response for testing.")}}, nil
			}},
		{&mcp.Tool{Name: "test_image_content", Description: "Returns image content.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"}}}, nil
			}},
		{&mcp.Tool{Name: "test_audio_content", Description: "Returns audio content.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: silentWAV, MIMEType: "audio/wav"}}}, nil
			}},
		{&mcp.Tool{Name: "test_embedded_resource", Description: "Returns an embedded resource.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{
					URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content.",
				}}}}, nil
			}},
		{&mcp.Tool{Name: "test_multiple_content_types", Description: "Returns text, image and resource content.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{
					text("Multiple content types test:"),
					&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"},
					&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
				}}, nil
			}},
		{&mcp.Tool{Name: "test_error_handling", Description: "Always fails, as a tool error.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				isErr := true
				return &mcp.CallToolResult{IsError: &isErr, Content: []mcp.Content{text("This tool intentionally returns an error for testing")}}, nil
			}},
		{&mcp.Tool{Name: "test_tool_with_progress", Description: "Reports progress three times.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				tok, ok := p.Meta.ProgressToken()
				total := 100.0
				for _, step := range []float64{0, 50, 100} {
					if ok {
						if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: step, Total: &total}); err != nil {
							return nil, err
						}
					}
					select {
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-time.After(50 * time.Millisecond):
					}
				}
				return &mcp.CallToolResult{Content: []mcp.Content{text(fmt.Sprintf("Progress test completed (token %v)", tok))}}, nil
			}},
		{&mcp.Tool{Name: "test_sampling", Description: "Asks the client's model to answer a prompt.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`)},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				var in struct{ Prompt string }
				_ = json.Unmarshal(p.Arguments, &in)
				res, err := ss.CreateMessage(ctx, &mcp.CreateMessageRequestParams{MaxTokens: 100,
					Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{text(in.Prompt)}}}})
				if err != nil {
					return nil, err
				}
				answer := ""
				for _, c := range res.Content {
					if t, ok := c.(*mcp.TextContent); ok {
						answer += t.Text
					}
				}
				return &mcp.CallToolResult{Content: []mcp.Content{text("LLM response: " + answer)}}, nil
			}},
	}
	for _, t := range tools {
		if err := s.AddTool(t.tool, t.h); err != nil {
			return nil, err
		}
	}
	return s, nil
}
