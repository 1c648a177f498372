package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// reporter prints the demo's steps for a person, or as JSON lines.
type reporter struct {
	w    io.Writer
	json bool
	mu   sync.Mutex
}

func (r *reporter) step(name, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if r.json {
		b, _ := json.Marshal(map[string]string{"event": "step", "step": name, "detail": msg})
		fmt.Fprintf(r.w, "%s\n", b)
		return
	}
	fmt.Fprintf(r.w, "%-12s %s\n", name, msg)
}

// stepError names the step that failed.
type stepError struct {
	step string
	err  error
}

func (e *stepError) Error() string { return fmt.Sprintf("demo failed at step %q: %v", e.step, e.err) }
func (e *stepError) Unwrap() error { return e.err }

func demoCmd(ctx context.Context, args []string, s *stdio) error {
	fs := newFlagSet("demo", s, "mcpstack demo [--json] [--browser] [--stdio] [-v]", `
Shows MCP authorization end to end, in one process, on 127.0.0.1 over HTTPS
with a certificate authority made for the run and trusted only by the demo's
own clients. It starts the embedded authorization server, an MCP server that
it protects (one tool needs a larger scope), and a client that serves its
own Client ID Metadata Document. The client then walks the flow, and each
step is printed as the request that makes it goes by: the 401 challenge,
the protected resource metadata, the authorization server metadata, the
registration by metadata document, the authorization request, the consent
(given by the development user automatically, or by you with --browser),
the token, tools/list, a call, the 403 insufficient_scope, the step-up and
the retried call.

With --stdio it walks a plain session instead: the example server as a
child process over stdio; initialize, ping, tools, progress, cancellation.

Exits 0 when every step worked; otherwise the error names the step and the
reason.`, `  mcpstack demo
  mcpstack demo --json | jq -r .step
  mcpstack demo --browser     # consent in your own browser
  mcpstack demo --stdio`)
	asJSON := fs.Bool("json", false, "print the steps as JSON lines")
	browser := fs.Bool("browser", false, "give consent in the system browser rather than automatically")
	stdioWalk := fs.Bool("stdio", false, "walk a plain session with the example server over stdio instead")
	v := addVerbose(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	rep := &reporter{w: s.out, json: *asJSON}
	logger := newLogger(s.err, int(*v))
	if *stdioWalk {
		return runDemo(ctx, rep, logger)
	}
	return runAuthDemo(ctx, rep, logger, *browser)
}

func runDemo(ctx context.Context, rep *reporter, logger interface{ Warn(string, ...any) }) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		return &stepError{"start", err}
	}
	cmd := exec.Command(self, "serve", "--stdio")
	cmd.Stderr = io.Discard

	var progressMu sync.Mutex
	var progress []string
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpstack-demo", Version: version}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(ctx context.Context, cs *mcp.ClientSession, p *mcp.ProgressNotificationParams) {
			progressMu.Lock()
			progress = append(progress, p.Message)
			progressMu.Unlock()
			rep.step("progress", "%s (token %s)", p.Message, p.ProgressToken)
		},
	})
	rep.step("start", "server process: %s serve --stdio", self)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd})
	if err != nil {
		return &stepError{"initialize", err}
	}
	defer cs.Close()
	init := cs.InitializeResult()
	caps, _ := json.Marshal(init.Capabilities)
	rep.step("initialize", "server %s %s; protocol %s; capabilities %s", init.ServerInfo.Name, init.ServerInfo.Version, init.ProtocolVersion, caps)
	if init.Instructions != "" {
		rep.step("instructions", "%s", init.Instructions)
	}

	start := time.Now()
	if err := cs.Ping(ctx); err != nil {
		return &stepError{"ping", err}
	}
	rep.step("ping", "answered in %s", time.Since(start).Round(time.Microsecond))

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return &stepError{"tools/list", err}
	}
	names := make([]string, 0, len(tools.Tools))
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	rep.step("tools/list", "%d tools: %s", len(names), strings.Join(names, ", "))

	res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hello, MCP"}`)})
	if err != nil {
		return &stepError{"tools/call", err}
	}
	if (res.IsError != nil && *res.IsError) || len(res.Content) != 1 {
		return &stepError{"tools/call", fmt.Errorf("unexpected result %+v", res)}
	}
	rep.step("tools/call", "echo -> %q", res.Content[0].(*mcp.TextContent).Text)

	p := &mcp.CallToolRequestParams{Name: "count", Arguments: json.RawMessage(`{"n":3,"interval_ms":10}`)}
	p.Meta = mcp.Meta{}
	p.Meta.SetProgressToken(jsonrpc.StringID("demo-count"))
	res, err = cs.CallTool(ctx, p)
	if err != nil {
		return &stepError{"progress", err}
	}
	progressMu.Lock()
	n := len(progress)
	progressMu.Unlock()
	if n != 3 {
		return &stepError{"progress", fmt.Errorf("got %d progress notifications, want 3", n)}
	}
	rep.step("tools/call", "count -> %q after %d progress notifications", res.Content[0].(*mcp.TextContent).Text, n)

	cctx, ccancel := context.WithTimeout(ctx, 150*time.Millisecond)
	_, err = cs.CallTool(cctx, &mcp.CallToolRequestParams{Name: "count", Arguments: json.RawMessage(`{"n":1000,"interval_ms":50}`)})
	ccancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		return &stepError{"cancel", fmt.Errorf("expected the call to time out, got %v", err)}
	}
	rep.step("cancel", "a slow call timed out after 150ms; notifications/cancelled went to the server and the session carried on")
	if err := cs.Ping(ctx); err != nil {
		return &stepError{"cancel", fmt.Errorf("session unusable after cancellation: %w", err)}
	}

	start = time.Now()
	if err := cs.Close(); err != nil {
		return &stepError{"shutdown", err}
	}
	rep.step("shutdown", "closed the server's stdin; it exited in %s", time.Since(start).Round(time.Millisecond))
	rep.step("done", "every step worked")
	return nil
}
