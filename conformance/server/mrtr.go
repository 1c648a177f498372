package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpstack/mcpstack/mcp"
)

// The fixtures of the suite's input-required-result-* scenarios
// (revision 2026-07-28, basic/patterns/mrtr). Each asks once, in its code;
// in a 2025-11-25 session the same ask is a request to the client.

// form returns the params of a form-mode elicitation with a schema given
// as JSON.
func form(message, schema string) *mcp.ElicitRequestFormParams {
	p := &mcp.ElicitRequestFormParams{Message: message}
	if err := json.Unmarshal([]byte(schema), &p.RequestedSchema); err != nil {
		panic(fmt.Sprintf("fixture schema %q: %v", schema, err))
	}
	return p
}

const (
	nameSchema    = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	confirmSchema = `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`
	colorSchema   = `{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`
	contextSchema = `{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`
)

func question(text string, maxTokens int64) *mcp.CreateMessageRequestParams {
	return &mcp.CreateMessageRequestParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: text}}}},
		MaxTokens: maxTokens,
	}
}

// sampledText is the text of a sampling result, or "".
func sampledText(r *mcp.CreateMessageResult) string {
	if r == nil {
		return ""
	}
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

func rootURIs(r *mcp.ListRootsResult) string {
	var uris []string
	if r != nil {
		for _, root := range r.Roots {
			uris = append(uris, root.URI)
		}
	}
	return strings.Join(uris, ", ")
}

// contentString returns the string member name of an elicitation's
// content, or "".
func contentString(r *mcp.ElicitResult, name string) string {
	if r == nil {
		return ""
	}
	s, _ := r.Content[name].(string)
	return s
}

func mrtrTool(name, description string, h mcp.ToolHandler) tool {
	return tool{&mcp.Tool{Name: name, Description: description, InputSchema: noArgs}, h}
}

func mrtrTools() []tool {
	return []tool{
		mrtrTool("test_input_required_result_elicitation", "Asks the user's name, then greets them.",
			func(ctx context.Context, ss *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				in, err := ss.Ask(ctx, mcp.InputRequests{"user_name": mcp.ElicitInput(form("What is your name?", nameSchema))})
				if err != nil {
					return nil, err
				}
				return textResult("Hello, " + contentString(in.Elicit("user_name"), "name") + "!"), nil
			}),
		mrtrTool("test_input_required_result_sampling", "Asks the client's model a question and returns its answer.",
			func(ctx context.Context, ss *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				in, err := ss.Ask(ctx, mcp.InputRequests{"capital_question": mcp.SamplingInput(question("What is the capital of France?", 100))})
				if err != nil {
					return nil, err
				}
				return textResult("Sampled: " + sampledText(in.Sampling("capital_question"))), nil
			}),
		mrtrTool("test_input_required_result_list_roots", "Asks the client for its roots and lists them.",
			func(ctx context.Context, ss *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				in, err := ss.Ask(ctx, mcp.InputRequests{"client_roots": mcp.RootsInput()})
				if err != nil {
					return nil, err
				}
				return textResult("Roots: " + rootURIs(in.Roots("client_roots"))), nil
			}),
		mrtrTool("test_input_required_result_request_state", "Asks for a confirmation, carrying sealed state between the rounds.",
			func(ctx context.Context, ss *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				if _, err := ss.Ask(ctx, mcp.InputRequests{"confirm": mcp.ElicitInput(form("Please confirm", confirmSchema))}); err != nil {
					return nil, err
				}
				// Round 2 or later means the retry brought the requestState
				// of round 1 and it opened (a tampered one is refused
				// before the handler runs).
				if mcp.RequestRound(ctx) >= 2 {
					return textResult("Confirmed: state-ok"), nil
				}
				return textResult("Confirmed"), nil
			}),
		mrtrTool("test_input_required_result_multiple_inputs", "Asks for a name, a sampled greeting and the roots at once.",
			func(ctx context.Context, ss *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				in, err := ss.Ask(ctx, mcp.InputRequests{
					"user_name":    mcp.ElicitInput(form("What is your name?", nameSchema)),
					"greeting":     mcp.SamplingInput(question("Generate a greeting", 50)),
					"client_roots": mcp.RootsInput(),
				})
				if err != nil {
					return nil, err
				}
				return textResult(fmt.Sprintf("name=%s, greeting=%s, roots=%s", contentString(in.Elicit("user_name"), "name"),
					sampledText(in.Sampling("greeting")), rootURIs(in.Roots("client_roots")))), nil
			}),
		mrtrTool("test_input_required_result_multi_round", "Asks two questions, one round each.",
			func(ctx context.Context, ss *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				in1, err := ss.Ask(ctx, mcp.InputRequests{"step1": mcp.ElicitInput(form("Step 1: What is your name?", nameSchema))})
				if err != nil {
					return nil, err
				}
				in2, err := ss.Ask(ctx, mcp.InputRequests{"step2": mcp.ElicitInput(form("Step 2: What is your favorite color?", colorSchema))})
				if err != nil {
					return nil, err
				}
				return textResult(contentString(in1.Elicit("step1"), "name") + " likes " + contentString(in2.Elicit("step2"), "color")), nil
			}),
		mrtrTool("test_input_required_result_tampered_state", "Asks for a confirmation; its requestState is sealed, so a tampered one is refused.",
			func(ctx context.Context, ss *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				if _, err := ss.Ask(ctx, mcp.InputRequests{"confirm": mcp.ElicitInput(form("Please confirm", confirmSchema))}); err != nil {
					return nil, err
				}
				return textResult("Confirmed"), nil
			}),
		mrtrTool("test_input_required_result_capabilities", "Asks only for what the client declared it can answer.",
			func(ctx context.Context, ss *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				reqs := mcp.InputRequests{}
				for k, r := range map[string]mcp.InputRequest{
					"user_name":        mcp.ElicitInput(form("What is your name?", nameSchema)),
					"capital_question": mcp.SamplingInput(question("What is the capital of France?", 100)),
					"client_roots":     mcp.RootsInput(),
				} {
					if ss.CanAsk(ctx, r) {
						reqs[k] = r
					}
				}
				if len(reqs) == 0 {
					return textResult("The client can answer no input request."), nil
				}
				in, err := ss.Ask(ctx, reqs)
				if err != nil {
					return nil, err
				}
				return textResult(fmt.Sprintf("Received %d input responses.", len(in))), nil
			}),
	}
}

func mrtrPrompts() []prompt {
	return []prompt{{
		&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "Asks for the context the prompt uses."},
		func(ctx context.Context, ss *mcp.ServerSession, _ *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
			in, err := ss.Ask(ctx, mcp.InputRequests{"user_context": mcp.ElicitInput(form("What context should the prompt use?", contextSchema))})
			if err != nil {
				return nil, err
			}
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{userText("Use this context: " + contentString(in.Elicit("user_context"), "context"))}}, nil
		},
	}}
}
