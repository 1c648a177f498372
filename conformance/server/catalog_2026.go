package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/mcpstack/mcpstack/mcp"
)

// The tools the suite's scenarios at protocol version 2026-07-28 call
// (server-stateless, http-custom-header-server-validation); they work in
// both eras.

// headerToolSchema mirrors its region parameter into Mcp-Param-Region
// (x-mcp-header).
const headerToolSchema = `{"type":"object","properties":{
	"region":{"type":"string","description":"A region, mirrored into the Mcp-Param-Region header","x-mcp-header":"Region"},
	"query":{"type":"string","description":"Anything"}}}`

// modernTools are the tools of the 2026-07-28 scenarios; s is the server
// they are added to (the trigger tools change its lists).
func modernTools(s *mcp.Server) []tool {
	var serial atomic.Int64 // names the tools and prompts the triggers add
	return []tool{
		{&mcp.Tool{Name: "test_missing_capability", Description: "Needs the client's sampling capability, which the request must declare.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				if caps := mcp.ClientCapabilitiesFromContext(ctx); caps == nil || caps.Sampling == nil {
					return nil, &mcp.MissingClientCapabilityError{Required: mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}}
				}
				return textResult("the client declared sampling"), nil
			}},
		{&mcp.Tool{Name: "test_logging_tool", Description: "Logs at level info; the client sees the messages only if it asked for them.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				for _, msg := range []string{"logging tool started", "logging tool finished"} {
					if err := logInfo(ctx, ss, msg); err != nil {
						return nil, err
					}
				}
				return textResult("logged"), nil
			}},
		{&mcp.Tool{Name: "test_streaming_elicitation", Description: "Asks the user who they are (elicitation), in the way of the request's era.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				if mcp.EraFromContext(ctx) == mcp.EraModern {
					// No server-to-client request exists in 2026-07-28;
					// the multi round-trip form is the MRTR tools' job.
					return textResult("elicitation is asked with an InputRequiredResult in this era"), nil
				}
				res, err := elicitForm(ctx, ss, "Who are you?", elicitationForm)
				if err != nil {
					return nil, err
				}
				return textResult("User response: " + describeElicitation(res)), nil
			}},
		{&mcp.Tool{Name: "test_trigger_tool_change", Description: "Adds a tool, which changes the tool list.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				name := fmt.Sprintf("test_dynamic_tool_%d", serial.Add(1))
				err := s.AddTool(&mcp.Tool{Name: name, Description: "Added by test_trigger_tool_change.", InputSchema: noArgs},
					func(context.Context, *mcp.ServerSession, *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
						return textResult("dynamic"), nil
					})
				if err != nil {
					return nil, err
				}
				s.RemoveTools(name) // the list is as it was; both changes are announced
				return textResult("the tool list changed"), nil
			}},
		{&mcp.Tool{Name: "test_trigger_prompt_change", Description: "Adds a prompt, which changes the prompt list.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				name := fmt.Sprintf("test_dynamic_prompt_%d", serial.Add(1))
				err := s.AddPrompt(&mcp.Prompt{Name: name, Description: "Added by test_trigger_prompt_change."},
					func(context.Context, *mcp.ServerSession, *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
						return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: text("dynamic")}}}, nil
					})
				if err != nil {
					return nil, err
				}
				s.RemovePrompts(name)
				return textResult("the prompt list changed"), nil
			}},
		{&mcp.Tool{Name: "test_header_params", Description: "Takes a region that the client mirrors into the Mcp-Param-Region header.", InputSchema: json.RawMessage(headerToolSchema)},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return textResult("ok: " + string(p.Arguments)), nil
			}},
	}
}
