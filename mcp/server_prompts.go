package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// PromptHandler answers prompts/get for one prompt. The server has already
// checked that every argument the prompt declares as required is present.
type PromptHandler func(ctx context.Context, ss *ServerSession, params *GetPromptRequestParams) (*GetPromptResult, error)

type serverPrompt struct {
	prompt  *Prompt
	handler PromptHandler
}

// AddPrompt adds or replaces the prompt named p.Name. The prompt is checked
// with Validate first. Running sessions are told with
// notifications/prompts/list_changed (MCP 2025-11-25
// server/prompts#list-changed-notification).
func (s *Server) AddPrompt(p *Prompt, h PromptHandler) error {
	if p == nil || h == nil {
		return errors.New("mcp: AddPrompt needs a prompt and a handler")
	}
	if err := p.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	if _, ok := s.prompts[p.Name]; !ok {
		s.promptList = append(s.promptList, p.Name)
	}
	s.prompts[p.Name] = &serverPrompt{prompt: p, handler: h}
	sessions := s.sessionList()
	s.mu.Unlock()
	s.notifyAll(sessions, NotificationPromptsListChanged)
	return nil
}

// RemovePrompts removes the named prompts.
func (s *Server) RemovePrompts(names ...string) {
	s.mu.Lock()
	for _, n := range names {
		delete(s.prompts, n)
	}
	s.promptList = slices.DeleteFunc(s.promptList, func(n string) bool { return slices.Contains(names, n) })
	sessions := s.sessionList()
	s.mu.Unlock()
	s.notifyAll(sessions, NotificationPromptsListChanged)
}

func (s *Server) hasPrompts() bool {
	return len(s.prompts) > 0 || (s.opts.Capabilities != nil && s.opts.Capabilities.Prompts != nil)
}

func (ss *ServerSession) listPrompts(_ context.Context, method string, params json.RawMessage) (any, error) {
	s := ss.server
	var p PaginatedRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	if !s.hasPrompts() {
		s.mu.RUnlock()
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s (the server has no prompts)", method)
	}
	all := make([]Prompt, 0, len(s.promptList))
	for _, n := range s.promptList {
		all = append(all, *s.prompts[n].prompt)
	}
	s.mu.RUnlock()
	items, next, err := page("prompts", all, p.Cursor, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	return &ListPromptsResult{Prompts: items, NextCursor: next}, nil
}

func (ss *ServerSession) getPrompt(ctx context.Context, method string, params json.RawMessage) (any, error) {
	s := ss.server
	var p GetPromptRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	has := s.hasPrompts()
	sp, ok := s.prompts[p.Name]
	s.mu.RUnlock()
	if !has {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s (the server has no prompts)", method)
	}
	if !ok {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: unknown prompt %s", clip.Quote(p.Name))
	}
	var missing []string
	for _, a := range sp.prompt.Arguments {
		if a.Required != nil && *a.Required {
			if _, ok := p.Arguments[a.Name]; !ok {
				missing = append(missing, a.Name)
			}
		}
	}
	if len(missing) > 0 {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: prompt %q needs the argument(s) %s", p.Name, strings.Join(missing, ", "))
	}
	run := func(ctx context.Context) (any, error) {
		res, err := sp.handler(ctx, ss, &p)
		if err != nil {
			return nil, err
		}
		if res == nil {
			res = &GetPromptResult{}
		}
		return res, nil
	}
	if mr := modernFromContext(ctx); mr != nil {
		args, err := json.Marshal(p.Arguments)
		if err != nil {
			return nil, err
		}
		target := mrtrTarget{method: MethodPromptsGet, name: p.Name, arguments: args, principal: principalFromContext(ctx)}
		return s.runRound(ctx, target, mr.meta.ClientCapabilities, p.InputResponses, p.RequestState, run)
	}
	return run(ctx)
}
