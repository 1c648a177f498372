package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// ErrCapabilityNotDeclared is matched (with errors.Is) by the error a
// ServerSession method returns, without sending anything, when the client
// did not declare the capability the request needs. The error also holds
// the *jsonrpc.Error a conforming client would have answered: -32601 for a
// missing capability, -32602 for an elicitation mode not declared.
var ErrCapabilityNotDeclared = errors.New("mcp: the client did not declare the capability")

// notDeclared returns the local refusal of a request the client's
// capabilities do not allow.
func notDeclared(code int64, what string) error {
	msg := "Method not found"
	if code == jsonrpc.CodeInvalidParams {
		msg = "Invalid params"
	}
	return fmt.Errorf("%w: %w", ErrCapabilityNotDeclared, jsonrpc.Errorf(code, "%s: %s", msg, what))
}

func (ss *ServerSession) clientCaps() ClientCapabilities {
	if p := ss.InitializeParams(); p != nil {
		return p.Capabilities
	}
	return ClientCapabilities{}
}

// ListRoots asks the client for its roots (roots/list). The client must
// have declared roots; otherwise nothing is asked and the error matches
// ErrCapabilityNotDeclared. In a 2026-07-28 request the ask is a round of
// the multi round-trip request (see Ask).
func (ss *ServerSession) ListRoots(ctx context.Context) (*ListRootsResult, error) {
	req := RootsInput()
	if r := roundFromContext(ctx); r != nil {
		res, err := r.askOne(ctx, req)
		if err != nil {
			return nil, err
		}
		return res.(*ListRootsResult), nil
	}
	if err := ss.checkAsk(ctx, &req); err != nil {
		return nil, err
	}
	var res ListRootsResult
	if err := ss.Call(ctx, MethodRootsList, &PaginatedRequestParams{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// askCaps returns the client capabilities that govern an ask made with
// ctx: those of the input round (the request's own _meta) in a 2026-07-28
// request that may ask, those of the request's _meta in any other
// 2026-07-28 request, and initialize's in a 2025-11-25 session. A modern
// request never reads the session's: it has none, and a connection's
// first request says nothing of the next one's capabilities
// (basic/index, "Per-request protocol fields").
func (ss *ServerSession) askCaps(ctx context.Context) ClientCapabilities {
	if r := roundFromContext(ctx); r != nil && r.caps != nil {
		return *r.caps
	}
	if m := modernFromContext(ctx); m != nil {
		if c := m.meta.ClientCapabilities; c != nil {
			return *c
		}
		return ClientCapabilities{}
	}
	return ss.clientCaps()
}

// checkAsk refuses a request to the client that its capabilities, as
// askCaps reads them for ctx, do not allow.
func (ss *ServerSession) checkAsk(ctx context.Context, req *InputRequest) error {
	caps := ss.askCaps(ctx)
	if missing, code, what := inputCapabilityGap(&caps, req); missing != nil {
		return notDeclared(code, what)
	}
	return nil
}

// CreateMessage asks the client to sample from its model
// (sampling/createMessage). The client must have declared sampling, and
// sampling.tools for a request with Tools or ToolChoice, and
// sampling.context for IncludeContext thisServer or allServers; otherwise
// nothing is sent and the error matches ErrCapabilityNotDeclared. In a
// 2026-07-28 request the ask is a round of the multi round-trip request
// (see Ask).
func (ss *ServerSession) CreateMessage(ctx context.Context, p *CreateMessageRequestParams) (*CreateMessageResult, error) {
	if p == nil {
		return nil, errors.New("mcp: CreateMessage needs params")
	}
	req := SamplingInput(p)
	if r := roundFromContext(ctx); r != nil {
		res, err := r.askOne(ctx, req)
		if err != nil {
			return nil, err
		}
		return res.(*CreateMessageResult), nil
	}
	if err := ss.checkAsk(ctx, &req); err != nil {
		return nil, err
	}
	var res CreateMessageResult
	if err := ss.Call(ctx, MethodSamplingCreateMessage, p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Elicit asks the client to gather information from the user
// (elicitation/create), in form mode (*ElicitRequestFormParams) or URL mode
// (*ElicitRequestURLParams). The client must have declared the mode (an
// empty elicitation capability declares form mode); otherwise nothing is
// sent and the error matches ErrCapabilityNotDeclared. In a 2026-07-28
// request the ask is a round of the multi round-trip request (see Ask).
func (ss *ServerSession) Elicit(ctx context.Context, p ElicitRequestParams) (*ElicitResult, error) {
	if p == nil || isNil(p) {
		return nil, errors.New("mcp: Elicit needs params")
	}
	req := ElicitInput(p)
	if r := roundFromContext(ctx); r != nil {
		res, err := r.askOne(ctx, req)
		if err != nil {
			return nil, err
		}
		return res.(*ElicitResult), nil
	}
	if err := ss.checkAsk(ctx, &req); err != nil {
		return nil, err
	}
	var res ElicitResult
	if err := ss.Call(ctx, MethodElicitationCreate, p, &res); err != nil {
		return nil, err
	}
	if err := checkElicitAnswer(&req, &res, ss.server.opts.SchemaLimits); err != nil {
		return nil, fmt.Errorf("mcp: elicitation/create: the client's result: %w", err)
	}
	return &res, nil
}

// NewURLElicitationRequiredError returns the error a handler returns when
// the request needs the user to complete URL-mode elicitations first: the
// client gets code CodeURLElicitationRequired (-32042) with the
// elicitations in the error data (MCP 2025-11-25
// client/elicitation#url-elicitation-required-error).
func NewURLElicitationRequiredError(message string, elicitations ...ElicitRequestURLParams) *URLElicitationRequiredError {
	if message == "" {
		message = "This request requires more information."
	}
	return &URLElicitationRequiredError{Message: message, Data: URLElicitationRequiredData{Elicitations: elicitations}}
}
