package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// emptyResult is the result of requests that return nothing: {}.
var emptyResult = json.RawMessage("{}")

// UnsupportedVersionError is returned by Client.Connect when the server
// answered initialize with a protocol version the client cannot use. The
// client has disconnected.
type UnsupportedVersionError struct {
	Requested string // the version the client asked for
	Offered   string // the version the server answered with
	Supported []string
}

func (e *UnsupportedVersionError) Error() string {
	return fmt.Sprintf("mcp: server answered protocol version %s, which this client does not support (asked for %q; supports %v)", clip.Quote(e.Offered), e.Requested, e.Supported)
}

// errNotInitialized is the error a session answers to requests (other
// than ping) received before initialization. MCP 2025-11-25
// basic/lifecycle#initialization: the client should send no request but
// pings before the server has answered initialize.
var errNotInitialized = jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: the session is not initialized; send initialize first")

// parseParams decodes raw params into p and validates them, returning a
// -32602 error that says what is wrong.
func parseParams(raw json.RawMessage, p any) error {
	if len(raw) == 0 {
		raw = emptyResult
	}
	if err := strictjson.Unmarshal(raw, p); err != nil {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %s", jsonErrorText(err))
	}
	if v, ok := p.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %v", err)
		}
	}
	return nil
}

// jsonErrorText says what is wrong with params a peer sent, in JSON
// terms: no Go type name reaches the peer.
func jsonErrorText(err error) string { return strictjson.Describe(err) }

// checkMeta applies the strict _meta key check to raw params.
func checkMeta(raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var p struct {
		Meta Meta `json:"_meta"`
	}
	if err := strictjson.Unmarshal(raw, &p); err != nil {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: _meta: %s", jsonErrorText(err))
	}
	if err := ValidateMeta(p.Meta); err != nil {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %v", err)
	}
	return nil
}

// negotiate picks the protocol version a server answers with: the client's
// if the server supports it, else the server's newest. MCP 2025-11-25
// basic/lifecycle#version-negotiation: the server answers with the
// requested version when it supports it, otherwise with another it
// supports, preferably its latest.
func negotiate(requested string, supported []string) string {
	if slices.Contains(supported, requested) {
		return requested
	}
	return supported[0]
}

// DefaultCancelTimeout is the default of ClientOptions.CancelTimeout and
// ServerOptions.CancelTimeout.
const DefaultCancelTimeout = time.Second

// sendCancel is the ConnOptions.OnCancel of both sides: it tells the peer
// that an abandoned request is cancelled, except for initialize. The caller
// whose context ended waits for it, so it is bounded by timeout (zero means
// DefaultCancelTimeout): notifications/cancelled is advisory (MCP
// 2025-11-25 basic/utilities/cancellation#behavior-requirements: the
// receiver may ignore it; initialize must never be cancelled), and a peer
// or an HTTP client that cannot take it at once must not keep the caller.
// A request abandoned on a timeout is cancelled the same way (MCP
// 2025-11-25 basic/lifecycle#timeouts).
func sendCancel(conn func() *jsonrpc.Conn, skip func(jsonrpc.ID) bool, timeout time.Duration) func(jsonrpc.ID, error) {
	if timeout <= 0 {
		timeout = DefaultCancelTimeout
	}
	return func(id jsonrpc.ID, cause error) {
		if skip(id) {
			return
		}
		c := conn()
		if c == nil {
			return
		}
		reason := "request cancelled"
		if cause != nil {
			reason = cause.Error()
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_ = c.Notify(ctx, NotificationCancelled, &CancelledNotificationParams{RequestID: id, Reason: reason})
	}
}
