package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mcpstack/mcpstack/mcp"
)

// A server runs a slow tool as a task; the client starts it, checks on it
// and waits for its result.
func ExampleTasks() {
	ctx := context.Background()
	tasks := mcp.NewTasks(&mcp.TaskOptions{Cancel: true})
	server := mcp.NewServer(&mcp.Implementation{Name: "reports", Version: "1"}, &mcp.ServerOptions{
		ReceivingMiddleware: []mcp.Middleware{tasks.Middleware()},
		SendingMiddleware:   []mcp.Middleware{tasks.SendingMiddleware()},
	})
	server.AddTool(&mcp.Tool{
		Name:        "report",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Execution:   &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired},
	}, func(ctx context.Context, _ *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "42 pages"}}}, nil
	})

	ct, st := mcp.InMemoryTransports()
	ss, err := server.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	created, err := cs.CallToolAsTask(ctx, &mcp.CallToolRequestParams{Name: "report"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created:", created.Task.Status)
	payload, err := cs.TaskResult(ctx, created.Task.TaskID) // blocks until the task ends
	if err != nil {
		log.Fatal(err)
	}
	var res mcp.CallToolResult
	if err := payload.Decode(&res); err != nil {
		log.Fatal(err)
	}
	task, _ := cs.GetTask(ctx, created.Task.TaskID)
	fmt.Println("result:", res.Content[0].(*mcp.TextContent).Text)
	fmt.Println("status:", task.Status)
	// Output:
	// created: working
	// result: 42 pages
	// status: completed
}

// A client offers roots; the server asks for them, and is told when they
// change.
func ExampleClient_AddRoots() {
	ctx := context.Background()
	changed := make(chan struct{}, 1)
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, &mcp.ServerOptions{
		RootsListChangedHandler: func(context.Context, *mcp.ServerSession) { changed <- struct{}{} },
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		Roots: []*mcp.Root{{URI: "file:///home/me/project", Name: "project"}},
	})
	ct, st := mcp.InMemoryTransports()
	ss, _ := server.Connect(ctx, st)
	defer ss.Close()
	cs, err := client.Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	if err := client.AddRoots(&mcp.Root{URI: "file:///home/me/notes"}); err != nil {
		log.Fatal(err)
	}
	<-changed
	roots, err := ss.ListRoots(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range roots.Roots {
		fmt.Println(r.URI)
	}
	fmt.Println(client.AddRoots(&mcp.Root{URI: "file:///home/me/../other"}))
	// Output:
	// file:///home/me/project
	// file:///home/me/notes
	// mcp: invalid root: "file:///home/me/../other": dot segments are not allowed
}
