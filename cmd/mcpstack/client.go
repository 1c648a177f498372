package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

const clientDescription = `
Connects to an MCP server, over Streamable HTTP (a URL) or over stdio (a
command after --), does one action and disconnects.

Actions (default: info):
  info                          the server's name, version, protocol and its era, capabilities, instructions
  ping                          ping the server
  tools                         list the tools (and which must or may run as a task)
  resources                     list the resources
  templates                     list the resource templates
  prompts                       list the prompts
  call TOOL [JSON]              call a tool with a JSON object of arguments (--task: run it as a
                                task and wait for its result, as a tool whose taskSupport is
                                "required" needs)
  read URI                      read a resource (--output FILE writes its bytes to FILE)
  prompt NAME [JSON]            get a prompt, with a JSON object of string arguments
  complete prompt NAME ARG VALUE
  complete resource TEMPLATE ARG VALUE
                                complete an argument of a prompt or a resource template
  watch [URI...]                print notifications until interrupted, after subscribing
                                to the resources named
  logout                        revoke this client's tokens for the server (a URL) at its
                                authorization server and forget them; the registration stays

The client speaks both eras of the protocol: revision 2026-07-28 (modern:
no handshake, each request carries its own metadata) and 2025-11-25 and
earlier (legacy: an initialize handshake). Over HTTP it asks the server
first (server/discover) and falls back to the handshake; over stdio it opens
with the handshake unless --era says otherwise, since some legacy servers
exit on an unexpected first request (--era sibling asks a second, throwaway
run of the command instead). info shows the era.

With --json, the action's result is printed as one JSON document (watch
prints one JSON object a line). Progress is drawn as a bar on standard error
when it is a terminal. A server's elicitation is answered at the terminal
(see --elicit); a request to visit a web page (URL-mode elicitation) shows
the full URL and opens it in the browser once you agree. Sampling requests
are refused unless --sampling-cmd is given: the command gets the request's
params as JSON on standard input, and what it prints is the model's answer.
`

const clientExamples = `  mcpstack client http://127.0.0.1:8080/mcp tools
  mcpstack client --json http://127.0.0.1:8080/mcp call time '{"timezone":"Asia/Tokyo"}'
  mcpstack client tools -- mcpstack serve --root .
  mcpstack client call read_file '{"path":"README.md"}' -- mcpstack serve --root .
  mcpstack client call ask -- mcpstack serve       # answer the form at the terminal
  mcpstack client complete prompt code_review language py -- ./my-server
  mcpstack client watch file:///tmp/notes.txt -- ./my-server
  mcpstack client --output logo.png read file:///logo.png -- ./my-server
  mcpstack client https://mcp.example.com/mcp logout`

// clientConfig is what the client command was asked to do.
type clientConfig struct {
	json        bool
	verbosity   int
	headers     http.Header
	timeout     time.Duration
	elicit      string
	samplingCmd string
	logLevel    string
	output      string // read: write the contents to this file
	force       bool   // read --output: replace an existing file
	task        bool   // call: run the tool as a task
	era         string // auto, modern, legacy, or "" (the library's default)

	noLogin           bool
	noBrowser         bool
	browserCmd        string
	tokenStore        string
	clientID          string
	clientSecret      string
	clientMetadataURL string
	scopes            []string
	allowPrivate      bool

	url     string   // Streamable HTTP endpoint, or
	command []string // a server to start, over stdio
	action  string
	args    []string
}

func clientCmd(ctx context.Context, args []string, s *stdio) error {
	fs := newFlagSet("client", s, "mcpstack client [flags] URL [ACTION [ARG...]]\n       mcpstack client [flags] [ACTION [ARG...]] -- COMMAND [ARG...]", clientDescription, clientExamples)
	var cfg clientConfig
	cfg.headers = http.Header{}
	fs.BoolVar(&cfg.json, "json", false, "print results as JSON, for scripts")
	fs.Func("header", "add an HTTP header `NAME: VALUE` to every request (repeatable)", func(v string) error {
		name, value, ok := strings.Cut(v, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return errors.New(`want "Name: value"`)
		}
		cfg.headers.Add(strings.TrimSpace(name), strings.TrimSpace(value))
		return nil
	})
	fs.DurationVar(&cfg.timeout, "timeout", 0, "give up after this `DURATION` (0: no limit)")
	fs.StringVar(&cfg.elicit, "elicit", "auto", "answer elicitation: auto (ask at the terminal if standard input is one, else decline), prompt (read answers from standard input), decline, cancel")
	fs.StringVar(&cfg.samplingCmd, "sampling-cmd", "", "answer sampling requests with the output of `COMMAND` (run by sh -c, request params on its standard input)")
	fs.BoolVar(&cfg.noLogin, "no-login", false, "never log in: send requests without a token of ours (a 401 then fails)")
	fs.BoolVar(&cfg.noBrowser, "no-browser", false, "print the login URL instead of opening the browser")
	fs.StringVar(&cfg.browserCmd, "browser-cmd", "", "open the login URL with `COMMAND` (the URL is its last argument) instead of the system browser")
	fs.StringVar(&cfg.tokenStore, "token-store", "", "keep tokens and client registrations in `FILE` (default: mcpstack/tokens.json in the user's config directory; 0600)")
	fs.StringVar(&cfg.clientID, "client-id", "", "log in as the pre-registered client `ID` (else: the --client-metadata-url, or dynamic registration)")
	fs.StringVar(&cfg.clientSecret, "client-secret", "", "the pre-registered client's `SECRET` (with --client-id)")
	fs.StringVar(&cfg.clientMetadataURL, "client-metadata-url", "", "this client's Client ID Metadata Document `URL`, for servers that accept it")
	fs.Func("scope", "ask for `SCOPE` when the server does not say which (repeatable)", func(v string) error {
		cfg.scopes = append(cfg.scopes, strings.Fields(v)...)
		return nil
	})
	fs.BoolVar(&cfg.allowPrivate, "allow-private-addresses", false, "when logging in, follow the URLs a server on a public address hands out (metadata, authorization server) to loopback and private addresses too; for development")
	fs.StringVar(&cfg.logLevel, "log-level", "", "ask the server to send its log messages at `LEVEL` and above (debug, info, notice, warning, error, ...)")
	fs.StringVar(&cfg.output, "output", "", "with read: write the resource's bytes (a blob is decoded from base64) to `FILE`, mode 0644, instead of printing them")
	fs.BoolVar(&cfg.force, "force", false, "with read --output: replace FILE if it exists")
	fs.BoolVar(&cfg.task, "task", false, "with call: run the tool as a task and wait for its result (for tools whose taskSupport is required; a 2026-07-28 server decides by itself, and call follows its task either way)")
	fs.StringVar(&cfg.era, "era", "", "the protocol era to speak: auto (ask the server with server/discover, else fall back to initialize), sibling (auto, but over stdio ask a second, throwaway run of the command), modern, legacy; default: auto over HTTP, legacy over stdio")
	v := addVerbose(fs)

	// Everything after the first "--" is the server's command line; flags
	// may come anywhere before it.
	var positional []string
	rest := args
	for i, a := range args {
		if a == "--" {
			rest, cfg.command = args[:i], args[i+1:]
			if len(cfg.command) == 0 {
				return usageErrorf("no command after --")
			}
			break
		}
	}
	for {
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	cfg.verbosity = int(*v)
	if cfg.clientSecret != "" && cfg.clientID == "" {
		return usageErrorf("--client-secret needs --client-id")
	}
	switch cfg.elicit {
	case "auto", "prompt", "decline", "cancel":
	default:
		return usageErrorf("--elicit %q: want auto, prompt, decline or cancel", cfg.elicit)
	}
	if _, err := eraPolicy(cfg.era); err != nil {
		return err
	}
	if cfg.command == nil {
		if len(positional) == 0 {
			return usageErrorf("give a server URL, or a command after --")
		}
		u, err := url.Parse(positional[0])
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErrorf("%q is not an http or https URL (a command to run goes after --)", positional[0])
		}
		cfg.url, positional = positional[0], positional[1:]
	}
	cfg.action = "info"
	if len(positional) > 0 {
		cfg.action, cfg.args = positional[0], positional[1:]
	}
	if err := checkAction(cfg.action, cfg.args); err != nil {
		return err
	}
	if err := checkOutput(&cfg); err != nil {
		return err
	}
	if cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.timeout)
		defer cancel()
	}
	return runClient(ctx, &cfg, s)
}

// checkAction checks the number of arguments of an action.
func checkAction(action string, args []string) error {
	n := len(args)
	bad := false
	switch action {
	case "info", "ping", "tools", "resources", "templates", "prompts", "logout":
		bad = n != 0
	case "call", "prompt":
		bad = n < 1 || n > 2
	case "read":
		bad = n != 1
	case "complete":
		bad = n != 4 || (args[0] != "prompt" && args[0] != "resource")
	case "watch":
	default:
		return usageErrorf("unknown action %q", action)
	}
	if bad {
		return usageErrorf("wrong arguments for %s", action)
	}
	return nil
}

func runClient(ctx context.Context, cfg *clientConfig, s *stdio) error {
	// A child server's standard error is copied into ours by another
	// goroutine: serialize the writes, unless the stream is a file.
	if _, ok := s.err.(*os.File); !ok {
		s = &stdio{in: s.in, out: s.out, err: &syncWriter{w: s.err}}
	}
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	facts := &sessionFacts{}
	err := runSession(ctx, cfg, s, fail, facts)
	if err != nil && ctx.Err() != nil {
		if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
			return cause
		}
	}
	return describeError(err, cfg, facts)
}

// runSession connects, does the action and disconnects. fail stops it
// with a reason.
func runSession(ctx context.Context, cfg *clientConfig, s *stdio, fail context.CancelCauseFunc, facts *sessionFacts) error {
	if cfg.action == "logout" {
		return logout(ctx, cfg, s, fail)
	}
	logger := newLogger(s.err, cfg.verbosity)
	logger = slog.New(&connLog{Handler: logger.Handler(), facts: facts, verbose: cfg.verbosity > 0})
	ui := newTerminalUI(s, cfg)
	policy, _ := eraPolicy(cfg.era) // checked in clientCmd
	opts := &mcp.ClientOptions{
		EraPolicy: policy,
		// Declared always: a modern server may answer any call with a
		// task, which the library follows to its result.
		TasksExtension:              true,
		Logger:                      logger,
		ProgressNotificationHandler: ui.progress,
		LoggingMessageHandler:       ui.logMessage,
		DisableRoots:                true,
		ReceivingMiddleware:         []mcp.Middleware{noteRefusedSampling(cfg, facts)},
	}
	// Elicitation is always declared: with --elicit decline or cancel the
	// user's answer is given in advance.
	opts.ElicitationHandler = ui.elicit
	opts.ElicitationURLMode = true
	opts.ElicitationCompleteHandler = ui.elicitationComplete
	if cfg.samplingCmd != "" {
		opts.CreateMessageHandler = ui.sample
	}
	if cfg.action == "watch" {
		opts.ToolListChangedHandler = func(ctx context.Context, cs *mcp.ClientSession) {
			ui.notification("notifications/tools/list_changed", nil)
		}
		opts.ResourceListChangedHandler = func(ctx context.Context, cs *mcp.ClientSession) {
			ui.notification("notifications/resources/list_changed", nil)
		}
		opts.PromptListChangedHandler = func(ctx context.Context, cs *mcp.ClientSession) {
			ui.notification("notifications/prompts/list_changed", nil)
		}
		opts.ResourceUpdatedHandler = func(ctx context.Context, cs *mcp.ClientSession, p *mcp.ResourceUpdatedNotificationParams) {
			ui.notification("notifications/resources/updated", p)
		}
		opts.TaskStatusHandler = func(ctx context.Context, cs *mcp.ClientSession, p *mcp.TaskStatusNotificationParams) {
			ui.notification("notifications/tasks/status", p)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpstack-client", Version: version}, opts)

	var transport mcp.Transport
	if cfg.command != nil {
		cmd := exec.Command(cfg.command[0], cfg.command[1:]...)
		facts.stderr = &lastLine{w: s.err}
		facts.exited = make(chan error, 1)
		cmd.Stderr = facts.stderr
		transport = &mcp.CommandTransport{Command: cmd, OnExit: func(err error) { facts.exited <- err }}
	} else {
		hc := &http.Client{}
		if !cfg.noLogin && cfg.headers.Get("Authorization") == "" {
			rt, closeAuth, err := loginTransport(cfg, s, fail)
			if err != nil {
				return err
			}
			defer closeAuth()
			hc.Transport = rt
		}
		hc.Transport = mcpAnswers{base: hc.Transport}
		transport = &mcphttp.ClientTransport{
			Endpoint:   cfg.url,
			HTTPClient: hc,
			Header:     cfg.headers,
			Logger:     logger,
		}
	}
	cs, err := client.Connect(ctx, transport)
	if err != nil {
		return opErr("connecting to "+cfg.target(), explain(err))
	}
	defer cs.Close()
	if cfg.logLevel != "" {
		// A modern session sends the level in each request's _meta.
		if err := cs.SetLoggingLevel(ctx, mcp.LoggingLevel(cfg.logLevel)); err != nil {
			return opErr("logging/setLevel", explain(err))
		}
	}
	out := &printer{w: s.out, json: cfg.json}
	err = doAction(ctx, cs, cfg, out, ui)
	ui.done()
	if err != nil {
		return explain(err)
	}
	return nil
}

func (cfg *clientConfig) target() string {
	if cfg.url != "" {
		return cfg.url
	}
	return strings.Join(cfg.command, " ")
}

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// explain marks JSON-RPC errors from the server with errServer, so that
// they exit with code 3; the chain is kept for describeError.
func explain(err error) error {
	var (
		rpcErr    *jsonrpc.Error
		urlElicit *mcp.URLElicitationRequiredError // -32042, decoded
	)
	if errors.As(err, &rpcErr) || errors.As(err, &urlElicit) {
		return &serverError{err: err}
	}
	return err
}

// serverError marks an error the server answered: it matches errServer
// and keeps the chain.
type serverError struct{ err error }

func (e *serverError) Error() string { return e.err.Error() }
func (e *serverError) Unwrap() []error {
	return []error{errServer, e.err}
}

// toolFailed is a tool result with isError: the server answered, so it
// matches errServer (exit code 3).
type toolFailed struct{}

func (*toolFailed) Error() string        { return "the tool reported an error (its result is printed above)" }
func (*toolFailed) Is(target error) bool { return target == errServer }

// noteRefusedSampling records in facts that the server asked for sampling
// although no --sampling-cmd was given (the client then answers -32601),
// so that a failure can name the flag.
func noteRefusedSampling(cfg *clientConfig, facts *sessionFacts) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if method != "sampling/createMessage" {
				return next(ctx, method, params)
			}
			if cfg.samplingCmd == "" {
				facts.samplingRefused.Store(true)
			}
			res, err := next(ctx, method, params)
			if err != nil && cfg.samplingCmd != "" {
				facts.samplingFailed.CompareAndSwap(nil, &err)
			}
			return res, err
		}
	}
}

func doAction(ctx context.Context, cs *mcp.ClientSession, cfg *clientConfig, out *printer, ui *terminalUI) error {
	switch cfg.action {
	case "info":
		return out.info(cs.InitializeResult(), cs.Era())
	case "ping":
		start := time.Now()
		if err := cs.Ping(ctx); err != nil {
			return opErr("ping", err)
		}
		return out.pong(time.Since(start))
	case "tools":
		var all []*mcp.Tool
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return opErr("tools/list", err)
			}
			all = append(all, t)
		}
		return out.tools(all, cs.Era())
	case "resources":
		var all []*mcp.Resource
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return opErr("resources/list", err)
			}
			all = append(all, r)
		}
		return out.resources(all)
	case "templates":
		var all []*mcp.ResourceTemplate
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				return opErr("resources/templates/list", err)
			}
			all = append(all, r)
		}
		return out.templates(all)
	case "prompts":
		var all []*mcp.Prompt
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return opErr("prompts/list", err)
			}
			all = append(all, p)
		}
		return out.prompts(all)
	case "call":
		p := &mcp.CallToolRequestParams{Name: cfg.args[0], Arguments: json.RawMessage(`{}`)}
		if len(cfg.args) == 2 {
			if err := checkJSONObject(cfg.args[1]); err != nil {
				return usageErrorf("tool arguments: %v", err)
			}
			p.Arguments = json.RawMessage(cfg.args[1])
		}
		p.Meta = mcp.Meta{}
		p.Meta.SetProgressToken(jsonrpc.StringID("mcpstack-call")) // one call per session
		res, err := callTool(ctx, cs, p, cfg.task)
		ui.done()
		if err != nil {
			return opErr("tools/call "+p.Name, err)
		}
		if err := out.callResult(res); err != nil {
			return err
		}
		if res.IsError != nil && *res.IsError {
			return opErr("tools/call "+p.Name, &toolFailed{})
		}
		return nil
	case "read":
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: cfg.args[0]})
		if err != nil {
			return opErr("resources/read "+cfg.args[0], err)
		}
		if cfg.output != "" {
			return opErr("writing --output "+cfg.output, writeResource(cfg, res, out))
		}
		return out.readResult(res)
	case "prompt":
		p := &mcp.GetPromptRequestParams{Name: cfg.args[0]}
		if len(cfg.args) == 2 {
			if err := json.Unmarshal([]byte(cfg.args[1]), &p.Arguments); err != nil {
				return usageErrorf("prompt arguments must be a JSON object of strings: %v", err)
			}
		}
		res, err := cs.GetPrompt(ctx, p)
		if err != nil {
			return opErr("prompts/get "+p.Name, err)
		}
		return out.promptResult(res)
	case "complete":
		p := &mcp.CompleteRequestParams{Argument: mcp.CompleteArgument{Name: cfg.args[2], Value: cfg.args[3]}}
		if cfg.args[0] == "prompt" {
			p.Ref = &mcp.PromptReference{Name: cfg.args[1]}
		} else {
			p.Ref = &mcp.ResourceTemplateReference{URI: cfg.args[1]}
		}
		res, err := cs.Complete(ctx, p)
		if err != nil {
			return opErr("completion/complete", err)
		}
		return out.completion(res)
	case "watch":
		// Listen: subscriptions/listen against a modern server,
		// resources/subscribe (and the GET stream) against a legacy one.
		sub, err := cs.Listen(ctx, mcp.SubscriptionFilter{
			ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true,
			ResourceSubscriptions: cfg.args,
		})
		if err != nil {
			return opErr("listen", err)
		}
		defer sub.Close(context.WithoutCancel(ctx))
		ui.watching(cfg.target())
		done := make(chan error, 2) // neither sender may block once the watch returned
		go func() { done <- cs.Wait() }()
		go func() {
			<-sub.Done()
			err := sub.Err()
			if err == nil && ctx.Err() == nil {
				// A modern server ended the stream with its result (it
				// shuts down, or this client fell behind): nothing more
				// comes, so the watch must not go on silently.
				err = errors.New("the server ended the subscriptions/listen stream (watch again to resume)")
			}
			if err != nil {
				done <- err
			}
		}()
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil // --timeout bounds a watch: not a failure
			}
			return ctx.Err()
		case err := <-done:
			if err != nil {
				return opErr("watch", err)
			}
			return opErr("watch", errors.New("the server ended the session"))
		}
	}
	return usageErrorf("unknown action %q", cfg.action)
}

// eraPolicy maps --era to the library's policy.
func eraPolicy(era string) (mcp.EraPolicy, error) {
	switch era {
	case "":
		return mcp.EraPolicyDefault, nil
	case "auto":
		return mcp.EraPolicyAuto, nil
	case "modern":
		return mcp.EraPolicyModern, nil
	case "legacy":
		return mcp.EraPolicyLegacy, nil
	case "sibling":
		return mcp.EraPolicyProbeSibling, nil
	}
	return 0, usageErrorf("--era %q: want auto, sibling, modern or legacy", era)
}

// callTool calls a tool, as a task when asTask: on a legacy session with
// the 2025-11-25 tasks (tools/call with task metadata, then tasks/result),
// on a modern one with the tasks extension the client declares, which the
// library follows to the result.
func callTool(ctx context.Context, cs *mcp.ClientSession, p *mcp.CallToolRequestParams, asTask bool) (*mcp.CallToolResult, error) {
	if !asTask || cs.Era() == mcp.EraModern {
		return cs.CallTool(ctx, p)
	}
	return cs.CallToolTask(ctx, p)
}

// checkJSONObject checks that s is one JSON object.
func checkJSONObject(s string) error {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&m); err != nil || m == nil {
		return fmt.Errorf("want a JSON object, got %q", s)
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON object in %q", s)
	}
	return nil
}
