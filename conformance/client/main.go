// Command client is the MCP client that the official conformance suite
// drives (its "everything client").
//
// The suite runs it as
//
//	client SERVER-URL
//
// with MCP_CONFORMANCE_SCENARIO naming the scenario and, for scenarios that
// hand over data, MCP_CONFORMANCE_CONTEXT holding a JSON object. The client
// connects to the suite's mock server over Streamable HTTP, does what the
// scenario asks and exits 0, or prints the error to standard error and
// exits 1. Scenarios whose names start with "auth/" go to runAuthScenario.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// scenarioFunc runs one scenario against the server at serverURL.
type scenarioFunc func(ctx context.Context, serverURL string) error

// scenarios maps the suite's non-authorization scenario names to what the
// client does for them.
var scenarios = map[string]scenarioFunc{
	"initialize":                          runInitialize,
	"tools_call":                          runToolsCall,
	"elicitation-sep1034-client-defaults": runElicitationDefaults,
	"sse-retry":                           runSSERetry,
	"json-schema-2020-12-preservation":    runSchemaPreservation,
}

// overall bounds one run: the suite kills the client after 30 seconds.
const overall = 25 * time.Second

func main() {
	verbose := flag.Bool("v", false, "log debug messages to standard error")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: MCP_CONFORMANCE_SCENARIO=NAME %s SERVER-URL\n", os.Args[0])
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, overall)
	defer cancel()
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	err := run(ctx, logger, scenario, flag.Arg(0), json.RawMessage(os.Getenv("MCP_CONFORMANCE_CONTEXT")))
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: scenario %q: %v\n", scenario, err)
		os.Exit(1)
	}
}

// errUnknownScenario is returned for a scenario the client does not know.
var errUnknownScenario = errors.New("unknown scenario")

// run dispatches one scenario.
func run(ctx context.Context, logger *slog.Logger, scenario, serverURL string, conformanceContext json.RawMessage) error {
	if scenario == "" {
		return errors.New("MCP_CONFORMANCE_SCENARIO is not set")
	}
	if strings.HasPrefix(scenario, "auth/") {
		if len(conformanceContext) == 0 {
			conformanceContext = nil
		}
		return runAuthScenario(ctx, scenario, serverURL, conformanceContext)
	}
	f, ok := scenarios[scenario]
	if !ok {
		names := make([]string, 0, len(scenarios))
		for n := range scenarios {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("%w (known: %s, auth/*)", errUnknownScenario, strings.Join(names, ", "))
	}
	return f(withLogger(ctx, logger), serverURL)
}

type loggerKey struct{}

func withLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

func loggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.New(slog.DiscardHandler)
}

// connect opens a session with the server at serverURL over Streamable
// HTTP. The client declares sampling and form elicitation: it answers
// sampling with a fixed assistant message, and accepts every form, the
// library filling in the defaults the form's schema gives.
func connect(ctx context.Context, serverURL string) (*mcp.ClientSession, error) {
	logger := loggerFrom(ctx)
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpstack-conformance-client", Version: "0.1.0"}, &mcp.ClientOptions{
		Logger:               logger,
		CreateMessageHandler: answerSampling,
		ElicitationHandler:   acceptElicitation,
		DisableRoots:         true,
	})
	rt := &roundTripper{next: http.DefaultTransport, log: logger, standalone: make(chan struct{})}
	t := &mcphttp.ClientTransport{
		Endpoint:              serverURL,
		HTTPClient:            &http.Client{Transport: rt},
		DisableLegacyFallback: true,
		Logger:                logger,
	}
	cs, err := c.Connect(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", serverURL, err)
	}
	// The transport opens the standalone GET stream once the session is
	// initialized, on its own goroutine. Some servers send requests that
	// belong to no client request (the suite's elicitation mock, for one)
	// only on that stream, and drop them when it is not open yet: wait
	// until the server has answered the GET, however it answered.
	select {
	case <-rt.standalone:
	case <-time.After(standaloneWait):
		logger.Debug("no answer to the standalone GET yet; going on")
	case <-ctx.Done():
		cs.Close()
		return nil, ctx.Err()
	}
	return cs, nil
}

// standaloneWait bounds the wait for the answer to the standalone GET.
const standaloneWait = 5 * time.Second

// roundTripper logs each HTTP exchange at debug level (flag -v), for
// reading a failed scenario's stderr, and closes standalone when the
// first GET that opens the standalone stream (one without Last-Event-ID)
// has been answered or has failed.
type roundTripper struct {
	next       http.RoundTripper
	log        *slog.Logger
	once       sync.Once
	standalone chan struct{}
}

func (t *roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == "" {
		defer t.once.Do(func() { close(t.standalone) })
	}
	if err != nil {
		t.log.Debug("http", "method", r.Method, "url", r.URL.String(), "error", err)
		return nil, err
	}
	t.log.Debug("http", "method", r.Method, "url", r.URL.String(), "status", resp.StatusCode, "type", resp.Header.Get("Content-Type"))
	return resp, nil
}

// answerSampling answers sampling/createMessage with a fixed message.
func answerSampling(ctx context.Context, cs *mcp.ClientSession, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
	return &mcp.CreateMessageResult{
		Role:       mcp.RoleAssistant,
		Content:    []mcp.Content{&mcp.TextContent{Text: "This is a response from the mcpstack conformance client."}},
		Model:      "mcpstack-conformance-model",
		StopReason: "endTurn",
	}, nil
}

// acceptElicitation accepts a form elicitation with no values of its own;
// the library fills in the defaults of the requested schema. URL-mode
// elicitations are declined.
func acceptElicitation(ctx context.Context, cs *mcp.ClientSession, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
	if _, ok := p.(*mcp.ElicitRequestFormParams); !ok {
		return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
	}
	return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{}}, nil
}

// withSession connects, runs f, and closes the session.
func withSession(ctx context.Context, serverURL string, f func(*mcp.ClientSession) error) error {
	cs, err := connect(ctx, serverURL)
	if err != nil {
		return err
	}
	ferr := f(cs)
	if err := cs.Close(); err != nil {
		// The mocks often answer DELETE with an error: not the scenario's failure.
		loggerFrom(ctx).Debug("close", "error", err)
	}
	return ferr
}

// findTool lists the server's tools and returns the one named name.
func findTool(ctx context.Context, cs *mcp.ClientSession, name string) (*mcp.Tool, error) {
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		if tool.Name == name {
			return tool, nil
		}
		names = append(names, tool.Name)
	}
	return nil, fmt.Errorf("the server has no tool %q (it has %v)", name, names)
}

// callTool calls a tool and fails on a tool error.
func callTool(ctx context.Context, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: name, Arguments: raw})
	if err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", name, err)
	}
	if res.IsError != nil && *res.IsError {
		return res, fmt.Errorf("tools/call %s: the tool failed: %s", name, resultText(res))
	}
	return res, nil
}

// resultText joins the text blocks of a tool result.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// runInitialize initializes a session and ends it.
func runInitialize(ctx context.Context, serverURL string) error {
	return withSession(ctx, serverURL, func(cs *mcp.ClientSession) error { return nil })
}

// runToolsCall lists the tools and adds two numbers with add_numbers.
func runToolsCall(ctx context.Context, serverURL string) error {
	return withSession(ctx, serverURL, func(cs *mcp.ClientSession) error {
		if _, err := findTool(ctx, cs, "add_numbers"); err != nil {
			return err
		}
		_, err := callTool(ctx, cs, "add_numbers", map[string]float64{"a": 2, "b": 3})
		return err
	})
}

// runElicitationDefaults calls the tool that elicits a form whose every
// field has a default; acceptElicitation accepts it and the defaults are
// applied.
func runElicitationDefaults(ctx context.Context, serverURL string) error {
	return withSession(ctx, serverURL, func(cs *mcp.ClientSession) error {
		const name = "test_client_elicitation_defaults"
		if _, err := findTool(ctx, cs, name); err != nil {
			return err
		}
		_, err := callTool(ctx, cs, name, map[string]any{})
		return err
	})
}

// runSSERetry calls test_reconnection, whose answer stream the server cuts
// before the result; the transport resumes it with GET and Last-Event-ID
// after the retry delay the server gave.
func runSSERetry(ctx context.Context, serverURL string) error {
	return withSession(ctx, serverURL, func(cs *mcp.ClientSession) error {
		const name = "test_reconnection"
		if _, err := findTool(ctx, cs, name); err != nil {
			return err
		}
		_, err := callTool(ctx, cs, name, map[string]any{})
		return err
	})
}

// runSchemaPreservation echoes the input schema of json_schema_2020_12_tool
// back to the server as it was received, byte for byte.
func runSchemaPreservation(ctx context.Context, serverURL string) error {
	return withSession(ctx, serverURL, func(cs *mcp.ClientSession) error {
		tool, err := findTool(ctx, cs, "json_schema_2020_12_tool")
		if err != nil {
			return err
		}
		_, err = callTool(ctx, cs, "json_schema_echo", map[string]json.RawMessage{"schema": tool.InputSchema})
		return err
	})
}
