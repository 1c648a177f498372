package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

func serveCmd(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stdio := fs.Bool("stdio", true, "serve MCP over standard input and output")
	verbose := fs.Bool("v", false, "log debug messages to standard error")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: mcpstack serve [--stdio] [-v]

Runs the example MCP server. Over stdio, protocol messages go to standard
output and logs to standard error.

Example:
  mcpstack serve --stdio
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !*stdio {
		return fmt.Errorf("%w: only --stdio is available so far", errUsage)
	}
	s := exampleServer(newLogger(stderr, *verbose))
	if err := s.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// exampleServer returns the server that `serve` runs and `demo` talks to.
func exampleServer(logger interface {
	Warn(string, ...any)
}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{
		Name:    "mcpstack-example",
		Title:   "mcpstack example server",
		Version: version,
	}, &mcp.ServerOptions{
		Instructions: "Tools: echo repeats text; count counts slowly, reporting progress.",
	})
	s.AddTool(&mcp.Tool{
		Name:        "echo",
		Description: "Repeats the text it is given.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		var in struct {
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(p.Arguments, &in); err != nil || in.Text == nil {
			return &mcp.CallToolResult{IsError: ptr(true), Content: []mcp.Content{&mcp.TextContent{Text: `echo needs a string argument "text"`}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: *in.Text}}}, nil
	})
	s.AddTool(&mcp.Tool{
		Name:        "count",
		Description: "Counts to n, one step every interval_ms milliseconds, reporting progress; stops when cancelled.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":1000},"interval_ms":{"type":"integer","minimum":0,"maximum":10000}},"required":["n"]}`),
	}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		var in struct {
			N          int `json:"n"`
			IntervalMS int `json:"interval_ms"`
		}
		if err := json.Unmarshal(p.Arguments, &in); err != nil || in.N < 1 || in.N > 1000 {
			return &mcp.CallToolResult{IsError: ptr(true), Content: []mcp.Content{&mcp.TextContent{Text: "count needs an integer n between 1 and 1000"}}}, nil
		}
		token, hasToken := p.Meta.ProgressToken()
		total := float64(in.N)
		for i := 1; i <= in.N; i++ {
			select {
			case <-ctx.Done():
				logger.Warn("count cancelled", "at", i-1)
				return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "cancelled")
			case <-time.After(time.Duration(in.IntervalMS) * time.Millisecond):
			}
			if hasToken {
				_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token, Progress: float64(i), Total: &total,
					Message: fmt.Sprintf("counted %d of %d", i, in.N),
				})
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("counted to %d", in.N)}}}, nil
	})
	return s
}

func ptr[T any](v T) *T { return &v }
