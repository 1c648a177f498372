// Package mcphttp serves and reaches MCP servers over HTTP: the
// Streamable HTTP transport (MCP 2025-11-25
// basic/transports#streamable-http), server side ([Handler]) and client
// side ([ClientTransport]), and the HTTP+SSE transport of revision
// 2024-11-05 ([SSEHandler]), with the DNS-rebinding defence (Host and
// Origin checks) and opt-in CORS for browser-based clients.
//
// A server of package mcp, on a loopback address:
//
//	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return server }, nil)
//	http.Handle("/mcp", h)
//	log.Fatal(http.ListenAndServe("127.0.0.1:8080", nil))
//
// and a client of it:
//
//	cs, err := client.Connect(ctx, &mcphttp.ClientTransport{Endpoint: "http://127.0.0.1:8080/mcp"})
//
// The runnable examples: [NewHandler] (a server and a client over
// loopback), [NewSSEHandler] (both transports in one process), [Options]
// (resumption from an event store), [ErrSessionExpired] and [CORS].
//
// The comments of the HTTP rules cite the section of MCP 2025-11-25
// basic/transports that states each; [Handler]'s doc lists the rules in
// the order they are checked. Revision 2026-07-28's transport is being
// added beside it.
//
// It is built only on the public API of package mcp: a session of an
// [mcp.Server] is started with [mcp.Server.ConnectPush], and each message
// a POST carries is handed to it with [mcp.ServerSession.Deliver]. A
// handler's tools can find the HTTP request that delivered their call
// with [RequestFromContext]. The events kept so that clients can resume
// SSE streams go to an [eventstore.Store].
//
// The files, by job:
//
//   - options.go: [Options] and the defaults of its bounds;
//   - handler.go: the HTTP rules (POST, GET, DELETE, headers, the
//     stateless mode, resumption);
//   - session.go: a session: lifecycle, expiry, routing what the server
//     sends to the stream of the request it is about;
//   - stream.go: the stream of one request or GET, from JSON answer to SSE,
//     and its pump;
//   - answer.go: the writer of an answer, JSON or SSE events;
//   - requests.go: the requests in flight of a session;
//   - guard.go: the Host and Origin checks; cors.go: CORS;
//   - deadline.go: read and write deadlines, the session bound;
//   - context.go: the HTTP request in the context of a message;
//   - client.go: the client transport; sse2024.go: the 2024-11-05
//     transport; sse.go: the SSE codec.
//
// Several replicas of one server, behind a load balancer without
// stickiness, share their sessions through [Options].Replicas and a
// shared [Options].EventStore (store/redis.EventStore is both): a
// session is rebuilt from its record on whichever replica a request
// reaches, a client's response and a notifications/cancelled are routed
// to the replica whose request they concern, and a resumed stream is
// served from the store (see replicas.go and README's "Running several
// replicas"). Without Replicas, a session lives on the replica that
// created it.
//
// Browser-based clients on other origins reach a [Handler] only through
// CORS, which is off by default: [Options].CORS lists the origins allowed
// (they then also pass the handler's DNS-rebinding Origin check). A
// handler in front of it that may answer by itself, such as an
// authorization middleware answering 401, goes inside the [CORS] function
// with the same options, so that preflights are answered before it and
// its challenges are readable from the page.
package mcphttp
