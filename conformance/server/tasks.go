package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
)

// The fixtures of the suite's tasks-* scenarios (the tasks extension,
// io.modelcontextprotocol/tasks, on the 2026-07-28 leg). A tool with task
// support becomes a task when its handler calls mcp.BeginTask; in a
// 2025-11-25 session, or for a client that did not declare the extension,
// BeginTask does nothing and the call is answered when the handler
// returns.

// taskTool returns a tool with the given task support.
func taskTool(name, description, schema string, support mcp.TaskSupport, h mcp.ToolHandler) tool {
	return tool{&mcp.Tool{Name: name, Description: description, InputSchema: json.RawMessage(schema),
		Execution: &mcp.ToolExecution{TaskSupport: support}}, h}
}

// args decodes a call's arguments into v.
func args(p *mcp.CallToolRequestParams, v any) error {
	if len(p.Arguments) == 0 {
		return nil
	}
	return json.Unmarshal(p.Arguments, v)
}

func taskTools() []tool {
	confirmDelete := form("Delete the file?", `{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)
	return []tool{
		{&mcp.Tool{Name: "greet", Description: "Greets by name, at once (no task support).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)},
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				var in struct{ Name string }
				if err := args(p, &in); err != nil {
					return toolError(err.Error()), nil
				}
				return textResult("Hello, " + in.Name + "!"), nil
			}},
		taskTool("slow_compute", "Sleeps for the given seconds as a task, then answers; 0 answers at once.",
			`{"type":"object","properties":{"seconds":{"type":"number"},"label":{"type":"string"}}}`, mcp.TaskSupportOptional,
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				var in struct {
					Seconds float64
					Label   string
				}
				if err := args(p, &in); err != nil {
					return toolError(err.Error()), nil
				}
				if in.Seconds > 0 {
					if err := mcp.BeginTask(ctx); err != nil {
						return nil, err
					}
					if err := pause(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
						return nil, err // cancelled: the task is already cancelled
					}
				}
				return textResult(fmt.Sprintf("Computed %s after %gs", in.Label, in.Seconds)), nil
			}),
		taskTool("failing_job", "Fails as a tool error after about a second, as a task (task required).",
			`{"type":"object"}`, mcp.TaskSupportRequired,
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				if err := mcp.BeginTask(ctx); err != nil {
					return nil, err
				}
				if err := pause(ctx, time.Second); err != nil {
					return nil, err
				}
				return toolError("the job failed"), nil
			}),
		taskTool("protocol_error_job", "Panics as a task: a protocol error.", `{"type":"object"}`, mcp.TaskSupportOptional,
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				if err := mcp.BeginTask(ctx); err != nil {
					return nil, err
				}
				panic("protocol_error_job always panics")
			}),
		taskTool("confirm_delete", "Asks, as a task, whether to delete a file.",
			`{"type":"object","properties":{"filename":{"type":"string"}}}`, mcp.TaskSupportOptional,
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				var in struct{ Filename string }
				if err := args(p, &in); err != nil {
					return toolError(err.Error()), nil
				}
				if err := mcp.BeginTask(ctx); err != nil {
					return nil, err
				}
				res, err := ss.Elicit(ctx, confirmDelete)
				if err != nil {
					return nil, err
				}
				if ok, _ := res.Content["confirm"].(bool); res.Action == mcp.ElicitActionAccept && ok {
					return textResult("Deleted " + in.Filename), nil
				}
				return textResult("Kept " + in.Filename), nil
			}),
		taskTool("multi_input", "Asks, as a task, two questions at once.", `{"type":"object"}`, mcp.TaskSupportOptional,
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				if err := mcp.BeginTask(ctx); err != nil {
					return nil, err
				}
				in, err := ss.Ask(ctx, mcp.InputRequests{
					"name":    mcp.ElicitInput(form("What is your name?", nameSchema)),
					"confirm": mcp.ElicitInput(confirmDelete),
				})
				if err != nil {
					return nil, err
				}
				return textResult("name=" + contentString(in.Elicit("name"), "name")), nil
			}),
		taskTool("test_tool_with_task", "Asks the user's name in a round of the request, then greets them as a task (task required).",
			`{"type":"object"}`, mcp.TaskSupportRequired,
			func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				in, err := ss.Ask(ctx, mcp.InputRequests{"user_name": mcp.ElicitInput(form("What is your name?", nameSchema))})
				if err != nil {
					return nil, err
				}
				if err := mcp.BeginTask(ctx); err != nil {
					return nil, err
				}
				return textResult("Hello, " + contentString(in.Elicit("user_name"), "name") + "!"), nil
			}),
	}
}

// modernTasks returns receiving middleware that serves the tasks
// extension to 2026-07-28 requests and leaves 2025-11-25 sessions as they
// are (their scenarios expect no tasks capability).
func modernTasks() mcp.Middleware {
	ext := mcp.NewTasks(nil).Middleware()
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		withTasks := ext(next)
		return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if mcp.EraFromContext(ctx) == mcp.EraModern {
				return withTasks(ctx, method, params)
			}
			return next(ctx, method, params)
		}
	}
}
