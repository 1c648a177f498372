package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
)

// A 1x1 red PNG and a short silent WAV, for the content scenarios.
var (
	redPixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	silentWAV, _   = base64.StdEncoding.DecodeString("UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=")
)

var noArgs = json.RawMessage(`{"type":"object","properties":{}}`)

// schema2020 is the input schema of json_schema_2020_12_tool, served
// verbatim: every keyword must reach the client unchanged.
const schema2020 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
    }
  },
  "properties": {
    "name": { "type": "string" },
    "address": { "$ref": "#/$defs/address" },
    "contactMethod": { "type": "string", "enum": ["phone", "email"] },
    "phone": { "type": "string" },
    "email": { "type": "string" }
  },
  "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
  "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
  "then": { "required": ["phone"] },
  "else": { "required": ["email"] },
  "additionalProperties": false
}`

// The forms of the elicitation scenarios.
const (
	elicitationForm = `{"type":"object","properties":{
		"username":{"type":"string","description":"Your username"},
		"email":{"type":"string","description":"Your email address"}},
		"required":["username","email"]}`
	defaultsForm = `{"type":"object","properties":{
		"name":{"type":"string","description":"User name","default":"John Doe"},
		"age":{"type":"integer","description":"User age","default":30},
		"score":{"type":"number","description":"User score","default":95.5},
		"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
		"verified":{"type":"boolean","description":"Verification status","default":true}}}`
	enumsForm = `{"type":"object","properties":{
		"untitledSingle":{"type":"string","description":"Untitled single-select","enum":["option1","option2","option3"]},
		"titledSingle":{"type":"string","description":"Titled single-select","oneOf":[
			{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
		"legacyEnum":{"type":"string","description":"Legacy titled enum","enum":["opt1","opt2","opt3"],
			"enumNames":["Option One","Option Two","Option Three"]},
		"untitledMulti":{"type":"array","description":"Untitled multi-select","items":{"type":"string","enum":["option1","option2","option3"]}},
		"titledMulti":{"type":"array","description":"Titled multi-select","items":{"anyOf":[
			{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`
)

// reconnectionToolName is the tool whose SSE stream the HTTP server cuts.
const reconnectionToolName = "test_reconnection"

func text(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{text(s)}}
}

func toolError(s string) *mcp.CallToolResult {
	isErr := true
	return &mcp.CallToolResult{IsError: &isErr, Content: []mcp.Content{text(s)}}
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// elicitForm sends elicitation/create with a form given as JSON.
func elicitForm(ctx context.Context, ss *mcp.ServerSession, message, schema string) (*mcp.ElicitResult, error) {
	p := &mcp.ElicitRequestFormParams{Message: message}
	if err := json.Unmarshal([]byte(schema), &p.RequestedSchema); err != nil {
		return nil, fmt.Errorf("requested schema: %w", err)
	}
	return ss.Elicit(ctx, p)
}

func describeElicitation(res *mcp.ElicitResult) string {
	content, _ := json.Marshal(res.Content)
	if res.Content == nil {
		content = []byte("{}")
	}
	return fmt.Sprintf("action=%s, content=%s", res.Action, content)
}

// tool is a tool and its handler.
type tool struct {
	tool *mcp.Tool
	h    mcp.ToolHandler
}

func tools() []tool {
	return []tool{
		{&mcp.Tool{Name: "test_simple_text", Description: "Returns simple text content.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return textResult("This is a simple text response for testing."), nil
			}},
		{&mcp.Tool{Name: "test_image_content", Description: "Returns image content.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"}}}, nil
			}},
		{&mcp.Tool{Name: "test_audio_content", Description: "Returns audio content.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: silentWAV, MIMEType: "audio/wav"}}}, nil
			}},
		{&mcp.Tool{Name: "test_embedded_resource", Description: "Returns an embedded resource.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{
					URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content.",
				}}}}, nil
			}},
		{&mcp.Tool{Name: "test_multiple_content_types", Description: "Returns text, image and resource content.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{
					text("Multiple content types test:"),
					&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"},
					&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
				}}, nil
			}},
		{&mcp.Tool{Name: "test_tool_with_logging", Description: "Sends three log messages while it runs.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
					if i > 0 {
						if err := pause(ctx, 50*time.Millisecond); err != nil {
							return nil, err
						}
					}
					if err := logInfo(ctx, ss, msg); err != nil {
						return nil, err
					}
				}
				return textResult("Tool with logging executed successfully"), nil
			}},
		{&mcp.Tool{Name: "test_tool_with_progress", Description: "Reports progress three times.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				tok, ok := p.Meta.ProgressToken()
				total := 100.0
				for i, step := range []float64{0, 50, 100} {
					if i > 0 {
						if err := pause(ctx, 50*time.Millisecond); err != nil {
							return nil, err
						}
					}
					if ok {
						if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: step, Total: &total}); err != nil {
							return nil, err
						}
					}
				}
				return textResult("Progress test completed"), nil
			}},
		{&mcp.Tool{Name: "test_error_handling", Description: "Always fails, as a tool error.", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return toolError("This tool intentionally returns an error for testing"), nil
			}},
		{&mcp.Tool{Name: "test_sampling", Description: "Asks the client's model to answer a prompt.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send"}},"required":["prompt"]}`)},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				var in struct {
					Prompt string `json:"prompt"`
				}
				if err := json.Unmarshal(p.Arguments, &in); err != nil {
					return nil, err
				}
				ask := &mcp.CreateMessageRequestParams{MaxTokens: 100,
					Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{text(in.Prompt)}}}}
				// CanAsk reads the capabilities of the era the request
				// is in: the request's own _meta (2026-07-28), or
				// initialize's (2025-11-25).
				if !ss.CanAsk(ctx, mcp.SamplingInput(ask)) {
					return toolError("The client does not support sampling"), nil
				}
				res, err := ss.CreateMessage(ctx, ask)
				if err != nil {
					return nil, err
				}
				answer := ""
				for _, c := range res.Content {
					if t, ok := c.(*mcp.TextContent); ok {
						answer += t.Text
					}
				}
				return textResult("LLM response: " + answer), nil
			}},
		{&mcp.Tool{Name: "test_elicitation", Description: "Asks the user for a username and an email address.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`)},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				var in struct {
					Message string `json:"message"`
				}
				if err := json.Unmarshal(p.Arguments, &in); err != nil {
					return nil, err
				}
				res, err := elicitForm(ctx, ss, in.Message, elicitationForm)
				if err != nil {
					return nil, err
				}
				return textResult("User response: " + describeElicitation(res)), nil
			}},
		{&mcp.Tool{Name: "test_elicitation_sep1034_defaults", Description: "Asks for a form whose every field has a default (SEP-1034).", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				res, err := elicitForm(ctx, ss, "Please review and update the form fields with defaults", defaultsForm)
				if err != nil {
					return nil, err
				}
				return textResult("Elicitation completed: " + describeElicitation(res)), nil
			}},
		{&mcp.Tool{Name: "test_elicitation_sep1330_enums", Description: "Asks for a form with every kind of enum field (SEP-1330).", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				res, err := elicitForm(ctx, ss, "Please select options from the enum fields", enumsForm)
				if err != nil {
					return nil, err
				}
				return textResult("Elicitation completed: " + describeElicitation(res)), nil
			}},
		{&mcp.Tool{Name: "json_schema_2020_12_tool", Description: "Takes arguments described with JSON Schema 2020-12 keywords.",
			InputSchema: json.RawMessage(schema2020)},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return textResult("ok: " + string(p.Arguments)), nil
			}},
		{&mcp.Tool{Name: reconnectionToolName, Description: "Answers after its SSE stream has been cut, so that the client must resume it (SEP-1699).", InputSchema: noArgs},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				// Over HTTP, wait for the cut (see cutReconnection);
				// elsewhere there is nothing to cut.
				if cut, ok := ctx.Value(cutKey{}).(<-chan struct{}); ok {
					t := time.NewTimer(10 * time.Second)
					defer t.Stop()
					select {
					case <-cut:
					case <-t.C:
						return nil, errors.New("the stream was not cut within 10s")
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return textResult("Reconnection test completed successfully"), nil
			}},
	}
}

// logInfo sends a log message at level info to the client of ss, if the
// client asked for messages of that level.
func logInfo(ctx context.Context, ss *mcp.ServerSession, msg string) error {
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return ss.Log(ctx, &mcp.LoggingMessageNotificationParams{Level: mcp.LoggingLevelInfo, Logger: "conformance", Data: data})
}

// resource is a resource and its handler.
type resource struct {
	resource *mcp.Resource
	h        mcp.ResourceHandler
}

// readText answers resources/read with one text item.
func readText(uri, mimeType, body string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: uri, MIMEType: mimeType, Text: body}}}
}

func resources() []resource {
	return []resource{
		{&mcp.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MIMEType: "text/plain"},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
				return readText(p.URI, "text/plain", "This is the content of the static text resource."), nil
			}},
		{&mcp.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource (a PNG image)", MIMEType: "image/png"},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.BlobResourceContents{URI: p.URI, MIMEType: "image/png", Blob: redPixelPNG}}}, nil
			}},
		{&mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource to subscribe to", MIMEType: "text/plain"},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
				return readText(p.URI, "text/plain", "Watched resource content"), nil
			}},
	}
}

// dataTemplate is the URI template of the template resource.
const dataTemplate = "test://template/{id}/data"

// readTemplate reads a resource of dataTemplate.
func readTemplate(ctx context.Context, ss *mcp.ServerSession, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	vars, ok := mcp.MatchURITemplate(dataTemplate, p.URI)
	if !ok {
		return nil, mcp.ResourceNotFoundError(p.URI)
	}
	body, err := json.Marshal(struct {
		ID           string `json:"id"`
		TemplateTest bool   `json:"templateTest"`
		Data         string `json:"data"`
	}{vars["id"], true, "Data for ID: " + vars["id"]})
	if err != nil {
		return nil, err
	}
	return readText(p.URI, "application/json", string(body)), nil
}

// prompt is a prompt and its handler.
type prompt struct {
	prompt *mcp.Prompt
	h      mcp.PromptHandler
}

func userText(s string) mcp.PromptMessage {
	return mcp.PromptMessage{Role: mcp.RoleUser, Content: text(s)}
}

func required() *bool { t := true; return &t }

func prompts() []prompt {
	return []prompt{
		{&mcp.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments"},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{userText("This is a simple prompt for testing.")}}, nil
			}},
		{&mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two required arguments", Arguments: []mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: required()},
			{Name: "arg2", Description: "Second test argument", Required: required()},
		}},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
					userText(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", p.Arguments["arg1"], p.Arguments["arg2"])),
				}}, nil
			}},
		{&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt that embeds a resource", Arguments: []mcp.PromptArgument{
			{Name: "resourceUri", Description: "URI of the resource to embed", Required: required()},
		}},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
					{Role: mcp.RoleUser, Content: &mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{
						URI: p.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}},
					userText("Please process the embedded resource above."),
				}}, nil
			}},
		{&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt that holds an image"},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
					{Role: mcp.RoleUser, Content: &mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"}},
					userText("Please analyze the image above."),
				}}, nil
			}},
	}
}

// complete suggests values for the arguments of test_prompt_with_arguments
// and for the id of the template resource: the candidates that start with
// what the user typed.
func complete(ctx context.Context, ss *mcp.ServerSession, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	var candidates []string
	switch ref := p.Ref.(type) {
	case *mcp.PromptReference:
		if ref.Name == "test_prompt_with_arguments" {
			candidates = []string{"paris", "park", "party", "test", "testValue1", "testValue2"}
		}
	case *mcp.ResourceTemplateReference:
		if ref.URI == dataTemplate && p.Argument.Name == "id" {
			candidates = []string{"1", "2", "3", "123"}
		}
	}
	values := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(c, p.Argument.Value) {
			values = append(values, c)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.Completion{Values: values}}, nil
}

// newServer returns the everything-server, with its whole catalog.
func newServer(logger *slog.Logger) (*mcp.Server, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpstack-conformance-server", Version: "0.1.0"}, &mcp.ServerOptions{
		Logger: logger,
		Capabilities: &mcp.ServerCapabilities{
			Logging:   &mcp.LoggingCapability{},
			Resources: &mcp.ResourcesCapability{Subscribe: true},
		},
		CompletionHandler:   complete,
		ReceivingMiddleware: []mcp.Middleware{modernTasks()},
	})
	for _, t := range append(append(append(tools(), modernTools(s)...), mrtrTools()...), taskTools()...) {
		if err := s.AddTool(t.tool, t.h); err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.tool.Name, err)
		}
	}
	for _, r := range resources() {
		if err := s.AddResource(r.resource, r.h); err != nil {
			return nil, fmt.Errorf("resource %s: %w", r.resource.URI, err)
		}
	}
	err := s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: dataTemplate, Name: "template-data",
		Description: "Data for an id", MIMEType: "application/json"}, readTemplate)
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", dataTemplate, err)
	}
	for _, p := range append(prompts(), mrtrPrompts()...) {
		if err := s.AddPrompt(p.prompt, p.h); err != nil {
			return nil, fmt.Errorf("prompt %s: %w", p.prompt.Name, err)
		}
	}
	return s, nil
}
