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
	var p modernParams
	if err := parseModernParams(req.Params, &p); err != nil {
		return nil, err.(*metaError).rpcError()
	}
	s := ss.server
	res, e := s.serveModern(ctx, ss, req, &p, connSink{ss})
	if e != nil {
		return nil, e
	}
	return &modernResult{m: s.modern(), res: res, method: req.Method}, nil
}

// connSink sends a modern request's notifications on the connection.
type connSink struct{ ss *ServerSession }

func (c connSink) notify(ctx context.Context, method string, params json.RawMessage) error {
	return c.ss.conn.Notify(ctx, method, params)
}

func (connSink) keepAlive() error { return nil }

func (c connSink) closed() <-chan struct{} { return c.ss.conn.Done() }

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
