package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpstack/mcpstack/mcp"
)

// The scenarios of revision 2026-07-28 (the suite runs them with
// --spec-version 2026-07-28; their mock servers are modern). The library
// negotiates the era itself: connect sends server/discover first and
// falls back to initialize only for a legacy server.

type contextKey struct{}

// withContext attaches the scenario's MCP_CONFORMANCE_CONTEXT.
func withContext(ctx context.Context, raw json.RawMessage) context.Context {
	return context.WithValue(ctx, contextKey{}, raw)
}

// scenarioContext returns the scenario's MCP_CONFORMANCE_CONTEXT.
func scenarioContext(ctx context.Context) json.RawMessage {
	raw, _ := ctx.Value(contextKey{}).(json.RawMessage)
	return raw
}

// runRequestMetadata connects (the mock refuses the first request with
// UnsupportedProtocolVersionError; the library retries with a version it
// names) and lists the tools: every request carries the _meta members
// and the MCP-Protocol-Version header.
func runRequestMetadata(ctx context.Context, serverURL string) error {
	return withSession(ctx, serverURL, func(cs *mcp.ClientSession) error {
		_, err := cs.ListTools(ctx, nil)
		return err
	})
}

// runRequestState calls the MRTR tools: the library answers each
// InputRequiredResult with the elicitation handler and retries with the
// requestState echoed (or none when none came) under a new id.
func runRequestState(ctx context.Context, serverURL string) error {
	return withSession(ctx, serverURL, func(cs *mcp.ClientSession) error {
		for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"} {
			if _, err := callTool(ctx, cs, name, map[string]any{}); err != nil {
				return err
			}
		}
		return nil
	})
}

// runStandardHeaders sends one request of each kind whose Mcp-Method and
// Mcp-Name headers the mock checks.
func runStandardHeaders(ctx context.Context, serverURL string) error {
	return withSession(ctx, serverURL, func(cs *mcp.ClientSession) error {
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		for _, t := range tools.Tools {
			if _, err := callTool(ctx, cs, t.Name, map[string]any{}); err != nil {
				return err
			}
		}
		resources, err := cs.ListResources(ctx, nil)
		if err != nil {
			return err
		}
		for _, r := range resources.Resources {
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: r.URI}); err != nil {
				return fmt.Errorf("resources/read %s: %w", r.URI, err)
			}
		}
		prompts, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			return err
		}
		for _, p := range prompts.Prompts {
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: p.Name}); err != nil {
				return fmt.Errorf("prompts/get %s: %w", p.Name, err)
			}
		}
		return nil
	})
}

// runCustomHeaders lists the tools (which records their x-mcp-header
// annotations) and makes the calls the scenario's context names.
func runCustomHeaders(ctx context.Context, serverURL string) error {
	var sc struct {
		ToolCalls []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCalls"`
	}
	if raw := scenarioContext(ctx); len(raw) > 0 {
		if err := json.Unmarshal(raw, &sc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	if len(sc.ToolCalls) == 0 {
		return errors.New("MCP_CONFORMANCE_CONTEXT names no tool calls")
	}
	return withSession(ctx, serverURL, func(cs *mcp.ClientSession) error {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return err
		}
		for _, c := range sc.ToolCalls {
			if _, err := callTool(ctx, cs, c.Name, c.Arguments); err != nil {
				return err
			}
		}
		return nil
	})
}

// runInvalidToolHeaders lists the tools, which leaves out those with
// invalid x-mcp-header annotations, and calls every tool that is left.
func runInvalidToolHeaders(ctx context.Context, serverURL string) error {
	return withSession(ctx, serverURL, func(cs *mcp.ClientSession) error {
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		for _, t := range tools.Tools {
			if _, err := callTool(ctx, cs, t.Name, map[string]any{"region": "us-west1"}); err != nil {
				return err
			}
		}
		return nil
	})
}

// runRefNoDeref lists the tools. A schema whose $ref names a network URI
// is never fetched: the library compiles schemas from the document alone,
// and reports such a tool's schema as unusable without failing the list.
func runRefNoDeref(ctx context.Context, serverURL string) error {
	return withSession(ctx, serverURL, func(cs *mcp.ClientSession) error {
		res, err := cs.ListTools(ctx, nil)
		if res == nil {
			return err
		}
		var tse *mcp.ToolSchemaError
		if err != nil && !errors.As(err, &tse) {
			return err
		}
		if err != nil {
			loggerFrom(ctx).Debug("a tool schema is unusable", "error", err)
		}
		return nil
	})
}
