package mcp

import (
	"context"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// The push seam: what a transport that receives the client's messages in
// goroutines of its own (mcphttp's Streamable HTTP handler) builds on.

// ConnectPush starts a session over stream for a push transport: one that
// receives the client's messages in goroutines of its own (an HTTP handler
// serving POSTs) and hands each one to the session with Deliver, rather
// than have the session read stream. It is the seam on which mcphttp's
// Streamable HTTP handler is built, and any other push transport can use
// it as well.
//
// The contract, for the transport:
//
//   - The session has no goroutine of its own (but one for
//     ServerOptions.KeepAlive, if set): it never calls stream.Read, and it
//     calls stream.Write from the goroutines of its handlers and of the
//     methods of ServerSession (Notify, Call, …), so Write must be safe
//     for concurrent use. Write may block (a slow client); it blocks only
//     its caller. The context given to Write for a response, and for
//     anything a request's handler sends, carries the id of that request
//     (jsonrpc.RequestIDFromContext), so that the transport can route it
//     to the exchange that carried the request.
//   - Deliver may be called from any number of goroutines at once.
//   - ServerSession.Close ends the session: it closes stream (once),
//     cancels the requests being handled and forgets the session (the
//     server no longer notifies it). The transport must end every session
//     it started with ServerSession.Close, also when it closes stream for
//     reasons of its own (an expiry, a client's DELETE), and must not call
//     stream.Close otherwise; Close may be called more than once and from
//     any goroutine. Wait, after Close, waits for the handlers still
//     running.
//   - A response may reach Write with its result not yet encoded (a
//     handler's jsonrpc.JSONAppender); Write must encode every message
//     with jsonrpc.Encode or jsonrpc.AppendMessage.
//   - If stream has a method SessionID() string, ServerSession.ID reports
//     it.
//   - If stream has a method RequestIDPrefix() string that returns a
//     non-empty prefix, the requests the server sends to the client
//     (sampling, elicitation, roots, ping) get string ids that start with
//     it (jsonrpc.ConnOptions.IDPrefix): a transport whose client may
//     answer through another process (replicas) routes the response by it.
//   - If stream has a method PingsClient() bool, the session's keep-alive
//     pings (ServerOptions.KeepAlive) are sent only at the ticks when it
//     reports true: a transport whose session has a copy in several
//     processes (replicas) lets one of them ping the client, rather than
//     one ping per copy. It is called from the keep-alive goroutine.
//
// ConnectPush does not block and does not touch stream.
func (s *Server) ConnectPush(stream jsonrpc.Stream) *ServerSession {
	ss := &ServerSession{server: s}
	ss.chainMiddleware()
	o := s.connOptions(ss)
	if p, ok := stream.(interface{ RequestIDPrefix() string }); ok {
		o.IDPrefix = p.RequestIDPrefix()
	}
	ss.conn = jsonrpc.NewPushConn(stream, o)
	s.mu.Lock()
	s.sessions[ss] = struct{}{}
	s.mu.Unlock()
	if s.opts.KeepAlive > 0 {
		var pings func() bool
		if p, ok := stream.(interface{ PingsClient() bool }); ok {
			pings = p.PingsClient
		}
		go keepAlive(ss.conn, ss.Close, s.opts.KeepAlive, s.log, pings)
	}
	return ss
}

// Deliver hands the session of a push transport (see Server.ConnectPush)
// one inbound message, in the caller's goroutine, and returns when it has
// been handled:
//
//   - a request, once its handler has returned and its response has been
//     given to the stream's Write (a request waiting for one of the
//     ServerOptions.MaxConcurrency handler slots blocks its caller; past
//     ServerOptions.MaxQueuedRequests waiting ones, it is answered at once
//     with an overloaded error);
//   - a notification, once handled;
//   - a response, once it has completed the call awaiting it;
//   - a batch (2025-03-26), once all its requests are answered.
//
// A request's handler runs with a context that ends when the request is
// cancelled or the session closes, not when ctx ends, so that a request
// outlives the exchange that delivered it; it carries ctx's values (such
// as mcphttp's HTTP request). Deliver may be called concurrently from any
// number of goroutines; it must not be called on a session made by
// Server.Connect, which reads its transport itself. See
// jsonrpc.Conn.Deliver for the details.
func (ss *ServerSession) Deliver(ctx context.Context, m jsonrpc.Message) {
	ss.conn.Deliver(ctx, m)
}

// ProtocolVersions returns the protocol versions the server speaks,
// newest first (ServerOptions.ProtocolVersions, or
// SupportedProtocolVersions). The slice is the server's own: the caller
// must not modify it. It is safe to call from any goroutine.
func (s *Server) ProtocolVersions() []string { return s.opts.ProtocolVersions }

// ended forgets a session made by ConnectPush, which has no goroutine
// waiting for its end; it may be called more than once.
func (ss *ServerSession) ended() {
	s := ss.server
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
	s.unsubscribeAll(ss)
}
