package main

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// TestClientInputOverHTTPModern calls, over the 2026-07-28 leg (our
// client, our server), the tools that read the client's capabilities or
// ask the client for input: each must see the capabilities the request's
// own _meta declares and ask through multi round-trip requests, as
// TestToolsOverHTTP checks they do on the 2025-11-25 leg.
func TestClientInputOverHTTPModern(t *testing.T) {
	url := startHTTP(t)
	rec := &recorder{}
	cs := connectHTTPEra(t, url, rec, mcp.EraPolicyModern, true)
	if cs.Era() != mcp.EraModern {
		t.Fatalf("era %v, want modern", cs.Era())
	}
	ctx := context.Background()
	tests := []struct {
		name  string
		args  string
		check func(t *testing.T, res *mcp.CallToolResult)
	}{
		{"test_simple_text", `{}`, wantText("This is a simple text response for testing.")},
		{"test_sampling", `{"prompt":"Test prompt for sampling"}`, wantText("LLM response: This is a test response from the client")},
		{"test_elicitation", `{"message":"Please provide your information"}`,
			wantText(`User response: action=accept, content={"email":"test@example.com","username":"testuser"}`)},
		{"test_elicitation_sep1034_defaults", `{}`,
			wantText(`Elicitation completed: action=accept, content={"age":30,"name":"John Doe","score":95.5,"status":"active","verified":true}`)},
		{"test_elicitation_sep1330_enums", `{}`, wantText(`Elicitation completed: action=accept, content={}`)},
		{"test_missing_capability", `{}`, wantText("the client declared sampling")},
		// No server-to-client request exists in 2026-07-28: the tool
		// says so (the MRTR tools ask in this era's way).
		{"test_streaming_elicitation", `{}`, wantText("elicitation is asked with an InputRequiredResult in this era")},
		{"test_input_required_result_elicitation", `{}`, wantText("Hello, Alice!")},
		{"test_input_required_result_sampling", `{}`, wantText("Sampled: This is a test response from the client")},
		{"test_input_required_result_list_roots", `{}`, wantText("Roots: ")},
		{"test_input_required_result_request_state", `{}`, wantText("Confirmed: state-ok")}, // the state the first round kept
		{"test_input_required_result_multiple_inputs", `{}`, wantText("name=Alice, greeting=This is a test response from the client, roots=")},
		{"test_input_required_result_multi_round", `{}`, wantText("Alice likes Alice")},
		{"test_input_required_result_capabilities", `{}`, wantText("Received 3 input responses.")},
		{"greet", `{"name":"World"}`, wantText("Hello, World!")},
		{"confirm_delete", `{"filename":"f"}`, wantText("Deleted f")},
		{"multi_input", `{}`, wantText("name=Alice")},
		{"test_tool_with_task", `{}`, wantText("Hello, Alice!")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: tt.name, Arguments: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, res)
		})
	}
}

// TestTaskRequiredModern checks that, on the 2026-07-28 leg, a tool that
// requires a task is refused (-32021, naming the tasks extension) to a
// client that did not declare the extension, and runs for one that did:
// the revision has no per-request task flag (changelog, major change 6:
// servers return task handles without per-request opt-in).
func TestTaskRequiredModern(t *testing.T) {
	url := startHTTP(t)
	ctx := context.Background()
	p := &mcp.CallToolRequestParams{Name: "test_tool_with_task", Arguments: json.RawMessage(`{}`)}

	without := connectHTTPEra(t, url, &recorder{}, mcp.EraPolicyModern, false)
	_, err := without.CallTool(ctx, p)
	var missing *mcp.MissingClientCapabilityError
	if !errors.As(err, &missing) {
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != mcp.CodeMissingRequiredClientCapability {
			t.Fatalf("without the extension: %v, want -32021", err)
		}
	}

	with := connectHTTPEra(t, url, &recorder{}, mcp.EraPolicyModern, true)
	res, err := with.CallTool(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	wantText("Hello, Alice!")(t, res)
}
