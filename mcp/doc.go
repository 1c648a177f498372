// Package mcp implements the Model Context Protocol, revision 2025-11-25
// and the revisions before it back to 2024-11-05: the protocol's types, a
// [Server] and a [Client], their sessions, and the lifecycle that connects
// them over any [Transport].
//
// # A server
//
// A server offers tools, resources and prompts. [AddTool] infers a tool's
// schemas from Go types and hands the handler decoded arguments; this one
// serves a single client over standard input and output:
//
//	type greetIn struct {
//		Name string `json:"name" jsonschema:"whom to greet"`
//	}
//	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
//	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Says hello."},
//		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams, in greetIn) (*mcp.CallToolResult, any, error) {
//			text := &mcp.TextContent{Text: "Hello, " + in.Name + "!"}
//			return &mcp.CallToolResult{Content: []mcp.Content{text}}, nil, nil
//		})
//	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
//		log.Fatal(err)
//	}
//
// Over HTTP, package mcphttp serves the same server instead of Run:
//
//	http.Handle("/mcp", mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s }, nil))
//
// # A client
//
// A client starts (or reaches) a server, and calls it through the session
// that [Client.Connect] opens once initialization is done:
//
//	c := mcp.NewClient(&mcp.Implementation{Name: "caller", Version: "1.0.0"}, nil)
//	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command("./greeter")})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer cs.Close()
//	res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "greet", Arguments: json.RawMessage(`{"name":"Ada"}`)})
//	if err == nil {
//		fmt.Println(res.Content[0].(*mcp.TextContent).Text)
//	}
//
// Over HTTP, the transport is &mcphttp.ClientTransport{Endpoint: url}.
//
// # Servers, clients and sessions
//
// A [Server] or a [Client] holds what one side offers (tools, resources,
// prompts; roots and the handlers of server requests) and is safe for
// concurrent use. Each connection is a session: a [ServerSession] or a
// [ClientSession], with the capabilities and the protocol version that its
// initialize exchange negotiated. Either side may send requests to the
// other through its session (for example [ClientSession.CallTool],
// [ServerSession.CreateMessage]); middleware ([ServerOptions] and
// [ClientOptions], ReceivingMiddleware and SendingMiddleware) wraps every
// message a session receives or sends.
//
// A transport that reads its stream (stdio, a command, a pipe) is given to
// [Server.Connect] or [Client.Connect]. A push transport, which receives
// each message in goroutines of its own (an HTTP handler serving POSTs),
// starts a session with [Server.ConnectPush] and hands the messages in
// with [ServerSession.Deliver]; the contract is in ConnectPush's doc.
//
// # Where things are
//
// The files of the package, by concern:
//
//   - server.go: [Server], [ServerSession], the lifecycle of a server
//     session, the server's method table (serverMethodInfos) and tools/call;
//     server_tools.go: tool names; server_resources.go: resources,
//     templates and subscriptions; server_prompts.go: prompts;
//     server_completion.go: completion/complete; server_logging.go:
//     [ServerSession.Log] and logging/setLevel; server_requests.go: the
//     requests a server sends (roots, sampling, elicitation); pagination.go:
//     the cursors of the list methods; typed.go: [AddTool]; schema.go: tool
//     schemas; slog.go: [LoggingHandler], a log/slog handler that sends
//     notifications/message.
//   - client.go: [Client], [ClientSession], initialization from the
//     client's side, the client's method table (clientMethodInfos), and the
//     answers to sampling and elicitation; client_methods.go: the typed
//     requests of a client session; client_roots.go: roots.
//   - shared.go: version negotiation, params parsing, cancellation;
//     methods.go: the protocol versions, the method names and the shape of
//     the method tables; middleware.go: [Middleware]; transport.go:
//     [Transport], [StdioTransport], [CommandTransport], [IOTransport],
//     [InMemoryTransports]; meta.go and metakey.go: _meta.
//   - tasks.go, tasks_store.go, tasks_requestor.go: task-augmented requests
//     ([Tasks], [TaskStore], [ClientSession.CallToolAsTask]).
//   - types_*.go: the wire types, one file per page of the specification
//     (types_tools.go, types_resources.go, types_sampling.go, …), and
//     icon.go.
//
// Revision 2026-07-28 brings files of its own (its wire types, the
// stateless request path, multi round-trip requests, the tasks
// extension); they join this list as they land.
//
// # Examples
//
// The runnable examples: the package's Example (a server and a client in
// one process), [AddTool] (schemas from Go types),
// [Server.AddResourceTemplate], [NewLoggingHandler], [ClientOptions] (an
// older protocol version), [CallToolResult] (encoding and decoding),
// [ValidMetaKey], [Meta.SetProgressToken], [Tasks] and [Client.AddRoots].
// Package mcphttp has those of the HTTP transports.
//
// # The specification
//
// The package follows MCP revision 2025-11-25,
// https://modelcontextprotocol.io/specification/2025-11-25, whose pages
// are: basic (messages, _meta), basic/lifecycle (initialize, version and
// capability negotiation), basic/transports (stdio, Streamable HTTP),
// basic/utilities/ping, basic/utilities/cancellation,
// basic/utilities/progress and basic/utilities/tasks; server/tools,
// server/resources, server/prompts, server/utilities/completion,
// server/utilities/logging and server/utilities/pagination; client/roots,
// client/sampling and client/elicitation. A comment where the code
// implements a rule of the specification cites it as "MCP 2025-11-25
// page#section". Revisions 2025-06-18, 2025-03-26 (which adds JSON-RPC
// batches) and 2024-11-05 are negotiated too ([SupportedProtocolVersions]).
//
// Revision 2026-07-28 (stateless requests, server/discover, multi
// round-trip requests, tasks as an extension) is being added beside
// 2025-11-25.
//
// # Related packages
//
// The HTTP transports (Streamable HTTP, server and client, and the
// 2024-11-05 HTTP+SSE transport) are in package
// github.com/mcpstack/mcpstack/mcp/mcphttp, built only on this package's
// public API. The events kept for resuming SSE streams are in package
// github.com/mcpstack/mcpstack/mcp/eventstore, which imports nothing of
// mcp. Tasks are kept behind the [TaskStore] seam ([TaskOptions].Store):
// [NewMemoryTaskStore] for one process, or [NewJSONTaskStore] over a
// github.com/mcpstack/mcpstack/mcp/taskstore.Store such as
// store/redis.TaskStore, which the replicas of one server share, so that
// a task started on one is polled, cancelled and answered on any. JSON-RPC itself is package github.com/mcpstack/mcpstack/jsonrpc,
// and tool schemas are compiled by github.com/mcpstack/mcpstack/jsonschema.
// This package knows nothing of HTTP or OAuth.
package mcp
