package mcp

// The client's answers to the server's sampling and elicitation requests,
// whether they come as requests (2025-11-25) or as the input requests of
// an InputRequiredResult (2026-07-28, client_mrtr.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/jsonschema"
)

// createMessage answers sampling/createMessage. Tools and toolChoice are
// refused with -32602 unless the client declared sampling.tools; the tool
// loop rules of the conversation are checked before the handler runs.
func (cs *ClientSession) createMessage(ctx context.Context, raw json.RawMessage) (any, error) {
	c := cs.client
	var p CreateMessageRequestParams
	if err := parseParams(raw, &p); err != nil {
		return nil, err
	}
	caps := c.capabilities().Sampling
	if (len(p.Tools) > 0 || p.ToolChoice != nil) && (caps == nil || caps.Tools == nil) {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: tools and toolChoice need the sampling.tools capability, which this client did not declare")
	}
	for i := range p.Tools {
		if _, err := compileTool(&p.Tools[i], c.opts.SchemaLimits); err != nil {
			var tse *ToolSchemaError
			errors.As(err, &tse)
			return nil, schemaError(fmt.Sprintf("tools[%d] (%q) %s", i, p.Tools[i].Name, tse.Field), tse.Err)
		}
	}
	if err := CheckToolLoop(p.Messages); err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %v", err)
	}
	res, err := c.opts.CreateMessageHandler(ctx, cs, &p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, errors.New("mcp: sampling handler returned no result")
	}
	if err := res.Validate(); err != nil {
		return nil, fmt.Errorf("mcp: sampling handler: %w", err)
	}
	if len(p.Tools) == 0 && hasContent(res.Content, ContentTypeToolUse) {
		return nil, errors.New("mcp: sampling handler returned tool_use content for a request that offered no tools")
	}
	return res, nil
}

func hasContent(cs []Content, typ string) bool {
	for _, c := range cs {
		if contentTypeOf(c) == typ {
			return true
		}
	}
	return false
}

func contentTypeOf(c Content) string {
	if t, ok := c.(interface{ contentType() string }); ok {
		return t.contentType()
	}
	return ""
}

// ToolLoopError reports a sampling conversation that breaks the tool loop
// rules: a user message holding tool_result blocks must hold nothing else,
// and every tool_use of an assistant message must be answered, by id, in
// the user message that follows it.
type ToolLoopError struct {
	// Message is the index of the offending message.
	Message int
	// Reason says what is wrong.
	Reason string
}

func (e *ToolLoopError) Error() string {
	return fmt.Sprintf("mcp: messages[%d]: %s", e.Message, e.Reason)
}

// CheckToolLoop checks the tool loop rules of a sampling conversation; it
// returns a *ToolLoopError for the first message that breaks them.
func CheckToolLoop(msgs []SamplingMessage) error {
	var pending []string // tool_use ids the next message must answer
	pendingAt := -1
	for i, m := range msgs {
		var uses, results []string
		other := 0
		for _, c := range m.Content {
			switch b := c.(type) {
			case *ToolUseContent:
				uses = append(uses, b.ID)
			case *ToolResultContent:
				results = append(results, b.ToolUseID)
			default:
				other++
			}
		}
		if len(results) > 0 && other > 0 {
			return &ToolLoopError{Message: i, Reason: "a message with tool_result blocks must hold only tool results"}
		}
		if len(results) > 0 && m.Role != RoleUser {
			return &ToolLoopError{Message: i, Reason: "tool_result blocks belong in a user message"}
		}
		if len(uses) > 0 && m.Role != RoleAssistant {
			return &ToolLoopError{Message: i, Reason: "tool_use blocks belong in an assistant message"}
		}
		if pending != nil {
			for _, id := range pending {
				if !slices.Contains(results, id) {
					return &ToolLoopError{Message: i, Reason: fmt.Sprintf("tool_use %q of messages[%d] has no tool_result", id, pendingAt)}
				}
			}
			for _, id := range results {
				if !slices.Contains(pending, id) {
					return &ToolLoopError{Message: i, Reason: fmt.Sprintf("tool_result for %q answers no tool_use of messages[%d]", id, pendingAt)}
				}
			}
			pending = nil
		} else if len(results) > 0 {
			return &ToolLoopError{Message: i, Reason: "tool_result blocks without a preceding tool_use"}
		}
		if len(uses) > 0 {
			pending, pendingAt = uses, i
		}
	}
	return nil
}

// ElicitationContentError reports an elicitation handler's accepted
// content that does not match the form's requested schema. The server is
// answered with -32603 and the detail is logged.
type ElicitationContentError struct {
	Err error
}

func (e *ElicitationContentError) Error() string {
	return "mcp: elicitation content does not match the requested schema: " + e.Err.Error()
}

func (e *ElicitationContentError) Unwrap() error { return e.Err }

func (cs *ClientSession) elicit(ctx context.Context, raw json.RawMessage) (any, error) {
	c := cs.client
	p, err := decodeElicitRequestParams(raw)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %s", jsonErrorText(err))
	}
	if v, ok := p.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %v", err)
		}
	}
	caps := c.capabilities().Elicitation
	var form *ElicitRequestFormParams
	var schema *jsonschema.Schema
	switch p := p.(type) {
	case *ElicitRequestURLParams:
		if !caps.SupportsURL() {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: this client does not support URL-mode elicitation")
		}
		cs.rememberURLElicitation(p.ElicitationID)
	case *ElicitRequestFormParams:
		if !caps.SupportsForm() {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: this client does not support form-mode elicitation")
		}
		b, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: requestedSchema: %v", err)
		}
		if schema, err = jsonschema.Compile(b, jsonschema.WithLimits(c.opts.SchemaLimits)); err != nil {
			return nil, schemaError("requestedSchema", err)
		}
		form = p
	}
	res, err := c.opts.ElicitationHandler(ctx, cs, p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, errors.New("mcp: elicitation handler returned no result")
	}
	if err := res.Action.Validate(); err != nil {
		return nil, fmt.Errorf("mcp: elicitation handler: %w", err)
	}
	if res.Action != ElicitActionAccept || form == nil {
		// Content belongs only to an accepted form.
		r := *res
		r.Content = nil
		return &r, nil
	}
	if res.Content == nil {
		res.Content = map[string]any{}
	}
	res.Content = jsonschema.ApplyDefaults(schema, res.Content)
	normalizeContent(res.Content)
	if err := res.Validate(); err != nil {
		return nil, &ElicitationContentError{Err: err}
	}
	b, err := json.Marshal(res.Content)
	if err != nil {
		return nil, &ElicitationContentError{Err: err}
	}
	if err := schema.ValidateJSON(b); err != nil {
		return nil, &ElicitationContentError{Err: err}
	}
	return res, nil
}
