package mcp

import (
	"context"
	"encoding/json"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// CompletionHandler answers completion/complete. It may return more than
// MaxCompletionValues values: the server keeps the first hundred and sets
// Total and HasMore (MCP 2025-11-25
// server/utilities/completion#completion-results: at most 100 values).
type CompletionHandler func(ctx context.Context, ss *ServerSession, params *CompleteRequestParams) (*CompleteResult, error)

func (ss *ServerSession) complete(ctx context.Context, method string, params json.RawMessage) (any, error) {
	s := ss.server
	h := s.opts.CompletionHandler
	if h == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s (the server offers no completions)", method)
	}
	var p CompleteRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	if ref, ok := p.Ref.(*PromptReference); ok {
		s.mu.RLock()
		_, known := s.prompts[ref.Name]
		s.mu.RUnlock()
		if !known {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: unknown prompt %s", clip.Quote(ref.Name))
		}
	}
	res, err := h(ctx, ss, &p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &CompleteResult{}
	}
	truncateCompletion(&res.Completion)
	return res, nil
}

// truncateCompletion keeps at most MaxCompletionValues values, and then
// says how many there were and that there are more.
func truncateCompletion(c *Completion) {
	n := len(c.Values)
	if n <= MaxCompletionValues {
		return
	}
	c.Values = c.Values[:MaxCompletionValues:MaxCompletionValues]
	if c.Total == nil || *c.Total < n {
		c.Total = &n
	}
	more := true
	c.HasMore = &more
}
