package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

func TestToolsAnswer(t *testing.T) {
	s, err := newServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.InMemoryTransports()
	ctx := context.Background()
	if _, err := s.Connect(ctx, st); err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, cs *mcp.ClientSession, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "4"}}}, nil
		},
	})
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"test_simple_text": 1, "test_image_content": 1, "test_audio_content": 1, "test_embedded_resource": 1, "test_multiple_content_types": 3, "test_error_handling": 1, "test_tool_with_progress": 1, "test_sampling": 1}
	if len(list.Tools) != len(want) {
		t.Fatalf("got %d tools", len(list.Tools))
	}
	for _, tool := range list.Tools {
		args := json.RawMessage(`{}`)
		if tool.Name == "test_sampling" {
			args = json.RawMessage(`{"prompt":"2+2?"}`)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: tool.Name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		if len(res.Content) != want[tool.Name] {
			t.Errorf("%s: %d content blocks, want %d", tool.Name, len(res.Content), want[tool.Name])
		}
		if isErr := res.IsError != nil && *res.IsError; isErr != (tool.Name == "test_error_handling") {
			t.Errorf("%s: isError %v", tool.Name, isErr)
		}
	}
}
