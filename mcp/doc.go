// Package mcp implements the Model Context Protocol, revision 2025-11-25:
// the protocol's types, a Server and a Client, their sessions, and the
// lifecycle that connects them over any Transport.
//
// Browser-based clients on other origins reach a [StreamableHTTPHandler]
// only through CORS, which is off by default: [StreamableHTTPOptions].CORS
// lists the origins allowed (they then also pass the handler's
// DNS-rebinding Origin check). A handler in front of it that may answer
// by itself, such as an authorization middleware answering 401, goes
// inside the [CORS] function with the same options, so that preflights
// are answered before it and its challenges are readable from the page.
package mcp
