package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// The modern leg over a connection the server reads (stdio and other
// stream transports): a connection whose first request carries modern
// _meta, rather than initialize, is served statelessly for its whole life
// (basic/versioning: "A request carrying modern per-request _meta is
// served statelessly"; basic/transports/stdio, "Backward Compatibility").
// Notifications about a request go out on the connection, as every
// message does on stdio.

// errNoModernRequest is returned when the stateless modern session is
// asked to send something outside a request's handling: with no session,
// there is nobody to send it to.
var errNoModernRequest = errors.New("mcp: the modern (2026-07-28) leg has no session to send to outside a request; pass the handler's context")

// startsModern reports whether req, received before initialize, opens a
// modern connection: a request (not initialize) whose params name the
// modern protocolVersion _meta key.
func (ss *ServerSession) startsModern(req *jsonrpc.Request) bool {
	return !req.IsNotification() && req.Method != MethodInitialize &&
		bytes.Contains(req.Params, []byte(`"`+MetaKeyProtocolVersion+`"`))
}

// handleModernConn serves a message of a modern connection.
func (ss *ServerSession) handleModernConn(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if ss.ready != nil {
		<-ss.ready
	}
	ss.phase.CompareAndSwap(phaseNew, phaseModern)
	if req.IsNotification() {
		// notifications/cancelled is the one client notification of the
		// revision (basic/patterns/cancellation); others are ignored.
		if req.Method == NotificationCancelled {
			ss.cancelled(ctx, req.Params)
		}
		return nil, nil
	}
	s := ss.server
	if removedModernMethods[req.Method] {
		return nil, s.removedMethod(req.Method)
	}
	c := &modernContext{Context: ctx, ss: ss}
	c.req.id, c.req.sink = req.ID, connSink{ss}
	if e := s.prepareModern(c, req); e != nil {
		return nil, e
	}
	res, e := s.serveModern(c, req)
	if e != nil {
		return nil, e
	}
	return &modernResult{m: s.modern(), res: res, method: req.Method}, nil
}

// connSink sends a modern request's notifications on the connection.
type connSink struct{ ss *ServerSession }

// Notify implements ModernSink.
func (c connSink) Notify(ctx context.Context, method string, params json.RawMessage) error {
	return c.ss.conn.Notify(ctx, method, params)
}

// KeepAlive implements ModernSink: a connection needs none.
func (connSink) KeepAlive() error { return nil }

// Done implements ModernSink.
func (c connSink) Done() <-chan struct{} { return c.ss.conn.Done() }

// modernResult is a modern result as a jsonrpc.JSONAppender, so that the
// connection encodes it with appendModernResult.
type modernResult struct {
	m      *modernState
	res    any
	method string
}

// AppendJSON implements jsonrpc.JSONAppender.
func (r *modernResult) AppendJSON(b []byte) ([]byte, error) {
	return r.m.appendModernResult(b, r.res, r.method)
}

// MarshalJSON encodes r as AppendJSON does.
func (r *modernResult) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }
