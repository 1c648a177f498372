// Package jsonrpc implements JSON-RPC 2.0 as the Model Context Protocol
// uses it: the wire types, a strict codec, the standard error codes, and a
// bidirectional connection in which either side sends requests.
//
// The package knows nothing of MCP methods; it moves messages.
//
// The pieces:
//
//   - The wire types: [Message] is a [*Request] (a notification is a
//     request without an [ID]), a [*Response] or, for the one revision
//     that has them (MCP 2025-03-26), a [Batch]. [Error] is a JSON-RPC
//     error object, with the standard codes as constants.
//   - The codec: [Decode] and [Decoder] read one message strictly (a
//     member given twice, a version other than "2.0" or a malformed id is
//     a [*DecodeError] whose Response answers it); a Decoder made with
//     [NewDecoder] shares
//     the strings of known method names rather than allocate them.
//     [Encode] and [AppendMessage] write one.
//   - The stream: a [Stream] reads and writes whole messages;
//     [NewLineStream] frames them one per line (MCP's stdio transport) and
//     [NewPipe] joins two in memory.
//   - The connection: a [Conn] matches responses to the requests it sent
//     ([Conn.Call], [Conn.Notify]) and serves the requests it receives
//     with a [Handler], a bounded number at once. [NewConn] makes one that
//     reads its stream itself; [NewPushConn] makes one for a push
//     transport, which hands it each inbound message with [Conn.Deliver]
//     in a goroutine of its own (an HTTP handler serving a POST).
//
// Everything a handler sends while it serves a request carries that
// request's id in its context ([RequestIDFromContext]), so that a
// transport with several channels, such as MCP's Streamable HTTP, can
// route it to the exchange that carried the request.
package jsonrpc
