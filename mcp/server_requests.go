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
// have declared roots.
func (ss *ServerSession) ListRoots(ctx context.Context) (*ListRootsResult, error) {
	if ss.clientCaps().Roots == nil {
		return nil, notDeclared(jsonrpc.CodeMethodNotFound, "roots/list needs roots")
	}
	var res ListRootsResult
	if err := ss.Call(ctx, MethodRootsList, &PaginatedRequestParams{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// CreateMessage asks the client to sample from its model
// (sampling/createMessage). The client must have declared sampling, and
// sampling.tools for a request with Tools or ToolChoice, and
// sampling.context for IncludeContext thisServer or allServers; otherwise
// nothing is sent and the error matches ErrCapabilityNotDeclared.
func (ss *ServerSession) CreateMessage(ctx context.Context, p *CreateMessageRequestParams) (*CreateMessageResult, error) {
	if p == nil {
		return nil, errors.New("mcp: CreateMessage needs params")
	}
	sc := ss.clientCaps().Sampling
	switch {
	case sc == nil:
		return nil, notDeclared(jsonrpc.CodeMethodNotFound, "sampling/createMessage needs sampling")
	case (len(p.Tools) > 0 || p.ToolChoice != nil) && sc.Tools == nil:
		return nil, notDeclared(jsonrpc.CodeInvalidParams, "sampling with tools or toolChoice needs sampling.tools")
	case (p.IncludeContext == IncludeContextThisServer || p.IncludeContext == IncludeContextAllServers) && sc.Context == nil:
		return nil, notDeclared(jsonrpc.CodeInvalidParams, fmt.Sprintf("includeContext %q needs sampling.context", p.IncludeContext))
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
// sent and the error matches ErrCapabilityNotDeclared.
func (ss *ServerSession) Elicit(ctx context.Context, p ElicitRequestParams) (*ElicitResult, error) {
	if p == nil {
		return nil, errors.New("mcp: Elicit needs params")
	}
	ec := ss.clientCaps().Elicitation
	if ec == nil {
		return nil, notDeclared(jsonrpc.CodeMethodNotFound, "elicitation/create needs elicitation")
	}
	switch p.(type) {
	case *ElicitRequestURLParams:
		if ec.URL == nil {
			return nil, notDeclared(jsonrpc.CodeInvalidParams, "URL-mode elicitation needs elicitation.url")
		}
	default:
		if ec.Form == nil && ec.URL != nil {
			return nil, notDeclared(jsonrpc.CodeInvalidParams, "form-mode elicitation needs elicitation.form")
		}
	}
	var res ElicitResult
	if err := ss.Call(ctx, MethodElicitationCreate, p, &res); err != nil {
		return nil, err
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
