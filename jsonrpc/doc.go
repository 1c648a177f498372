// Package jsonrpc implements JSON-RPC 2.0 as the Model Context Protocol
// uses it: the wire types, a strict codec, the standard error codes, and a
// bidirectional connection in which either side sends requests.
//
// The package knows nothing of MCP methods; it moves messages.
package jsonrpc
