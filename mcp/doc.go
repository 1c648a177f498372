// Package mcp implements the Model Context Protocol, revision 2025-11-25:
// the protocol's types, a Server and a Client, their sessions, and the
// lifecycle that connects them over any Transport.
package mcp
