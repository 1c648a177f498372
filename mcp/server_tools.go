package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// ErrInvalidToolName is matched (with errors.Is) by the error ValidToolName
// and Server.AddTool return for a name that breaks the tool-name rules.
var ErrInvalidToolName = errors.New("mcp: invalid tool name")

// MaxToolNameLength is the longest tool name allowed.
const MaxToolNameLength = 128

// ValidToolName checks name against the tool-name rules: 1 to 128
// characters, each an ASCII letter or digit, '_', '-' or '.'. Names are
// case-sensitive.
func ValidToolName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidToolName)
	}
	if len(name) > MaxToolNameLength {
		return fmt.Errorf("%w: %d characters; at most %d are allowed", ErrInvalidToolName, len(name), MaxToolNameLength)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', c == '.':
		default:
			return fmt.Errorf("%w: %q has the character %q at byte %d; only A-Z, a-z, 0-9, '_', '-' and '.' are allowed", ErrInvalidToolName, name, rune(c), i)
		}
	}
	return nil
}

func (ss *ServerSession) callTool(ctx context.Context, _ string, params json.RawMessage) (any, error) {
	s := ss.server
	mr := modernFromContext(ctx)
	p := new(CallToolRequestParams)
	var err error
	if mr != nil {
		// The protocol keys of a modern request's _meta stay out of
		// p.Meta (RequestMetaFromContext has them).
		err = decodeModernCallToolParams(params, p, knownName(ctx))
	} else {
		err = decodeCallToolParams(params, p)
	}
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	t, ok := s.tools[p.Name]
	s.mu.RUnlock()
	if !ok {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: unknown tool %s", clip.Quote(p.Name))
	}
	args := []byte(p.Arguments)
	if len(args) == 0 {
		args = []byte("{}")
	}
	if err := t.schemas.input.ValidateJSON(args); err != nil {
		return toolError("invalid arguments for tool %q: %v", p.Name, err), nil
	}
	if mr != nil {
		target := mrtrTarget{method: MethodToolsCall, name: p.Name, arguments: p.Arguments, principal: principalFromContext(ctx)}
		rctx, r, err := s.beginRound(ctx, target, mr.meta.ClientCapabilities, p.InputResponses, p.RequestState)
		if err != nil {
			return nil, err
		}
		res, err := ss.runTool(rctx, t, p)
		return s.endRound(r, res, err)
	}
	return ss.runTool(ctx, t, p)
}

// knownName returns the tool name that a modern request's context keeps
// for Mcp-Name, or "" (decodeModernCallToolParams reuses it).
func knownName(ctx context.Context) string {
	if c, ok := ctx.(*modernContext); ok && c.name != nil {
		return *c.name
	}
	return ""
}

// runTool runs the tool's handler and checks its result against the
// tool's output schema.
func (ss *ServerSession) runTool(ctx context.Context, t *serverTool, p *CallToolRequestParams) (any, error) {
	s := ss.server
	res, err := t.handler(ctx, ss, p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &CallToolResult{}
	}
	if t.schemas.output != nil && (res.IsError == nil || !*res.IsError) {
		if len(res.StructuredContent) == 0 {
			s.log.Error("mcp: tool result lacks the structuredContent its outputSchema requires", "tool", p.Name)
			return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: tool %q returned no structured content", p.Name)
		}
		if err := t.schemas.output.ValidateJSON(res.StructuredContent); err != nil {
			s.log.Error("mcp: tool result does not match its outputSchema", "tool", p.Name, "error", err)
			return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: tool %q returned structured content that does not match its output schema", p.Name)
		}
	}
	return res, nil
}
