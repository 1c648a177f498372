// Package mcp implements the Model Context Protocol, revision 2025-11-25:
// the protocol's types, a Server and a Client, their sessions, and the
// lifecycle that connects them over any Transport.
//
// The HTTP transports (Streamable HTTP, server and client, and the
// 2024-11-05 SSE transport) are in package mcphttp, built on this
// package's public push seam: [Server.ConnectPush] starts a session whose
// inbound messages the transport hands in with [ServerSession.Deliver].
// The events kept for resuming SSE streams are in package eventstore.
package mcp
