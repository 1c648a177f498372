package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// MethodHandler handles one message of a method: for a request it returns
// the result (or error); for a notification the result is ignored.
//
// In a receiving chain, params are the message's raw params and the result
// is whatever the session's own handler produced (a typed result such as
// *CallToolResult, or a json.RawMessage); a middleware may replace it with
// any value that marshals to the method's result. In a sending chain,
// params are the marshalled JSON and the result of a request is a
// json.RawMessage.
type MethodHandler func(ctx context.Context, method string, params json.RawMessage) (result any, err error)

// Middleware wraps a MethodHandler. A middleware may inspect or alter the
// method, params and result, answer the message itself without calling
// next, or call next with a different context.
type Middleware func(next MethodHandler) MethodHandler

// chain wraps h in mws, the first in the list outermost.
func chain(h MethodHandler, mws []Middleware) MethodHandler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

type serverSessionKey struct{}

type clientSessionKey struct{}

// ServerSessionFromContext returns the session a server handler runs in,
// or nil if ctx is not a server handler's context.
func ServerSessionFromContext(ctx context.Context) *ServerSession {
	ss, _ := ctx.Value(serverSessionKey{}).(*ServerSession)
	return ss
}

// ClientSessionFromContext returns the session a client handler runs in,
// or nil if ctx is not a client handler's context.
func ClientSessionFromContext(ctx context.Context) *ClientSession {
	cs, _ := ctx.Value(clientSessionKey{}).(*ClientSession)
	return cs
}

// withServerSession returns ctx carrying ss.
func withServerSession(ctx context.Context, ss *ServerSession) context.Context {
	return context.WithValue(ctx, serverSessionKey{}, ss)
}

// withClientSession returns ctx carrying cs; the client sets it on the
// context of every handler it runs.
func withClientSession(ctx context.Context, cs *ClientSession) context.Context {
	return context.WithValue(ctx, clientSessionKey{}, cs)
}

// marshalParamsRaw marshals the params of an outgoing message.
func marshalParamsRaw(params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	}
	return json.Marshal(params)
}

// decodeResult stores the result a sending chain returned into result.
func decodeResult(method string, res, result any) error {
	if result == nil || res == nil {
		return nil
	}
	var raw json.RawMessage
	switch r := res.(type) {
	case json.RawMessage:
		raw = r
	case []byte:
		raw = r
	default:
		b, err := json.Marshal(res)
		if err != nil {
			return fmt.Errorf("mcp: result of %s: %w", method, err)
		}
		raw = b
	}
	if rm, ok := result.(*json.RawMessage); ok {
		*rm = raw
		return nil
	}
	if err := strictjson.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("mcp: result of %s: %w", method, err)
	}
	return nil
}
