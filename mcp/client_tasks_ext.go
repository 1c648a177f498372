package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// The client side of the tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663; docs/extensions/tasks-overview), which revision 2026-07-28
// moved out of the core protocol: a client that declares the extension in
// each request's capabilities may get, for any supported request, a flat
// CreateTaskResult (resultType "task", taskId, status, ttlMs,
// pollIntervalMs) instead of the result; it polls tasks/get until the task
// is terminal, answers inputRequests with tasks/update, and may send
// tasks/cancel.

// tasksExtensionID is the extension's identifier in capabilities.
const tasksExtensionID = "io.modelcontextprotocol/tasks"

// Methods of the tasks extension that core 2026-07-28 does not have.
const methodTasksUpdate = "tasks/update"

// DefaultTaskPollInterval is how often a modern session polls a task
// whose CreateTaskResult suggests no pollIntervalMs
// (ClientOptions.TaskPollInterval).
const DefaultTaskPollInterval = time.Second

// Bounds on a server's pollIntervalMs: a server cannot make the client
// poll in a busy loop, nor park it for hours.
const (
	minTaskPoll = 50 * time.Millisecond
	maxTaskPoll = time.Minute
)

// ErrTaskCancelled is returned (wrapped) when a task the client awaited
// ended in status cancelled.
var ErrTaskCancelled = errors.New("mcp: the task was cancelled")

// extTaskState is what tasks/get answers (and the first part of a
// CreateTaskResult): the task's state and, once terminal, its outcome.
type extTaskState struct {
	ResultType     ResultType                 `json:"resultType"`
	TaskID         string                     `json:"taskId"`
	Status         TaskStatus                 `json:"status"`
	StatusMessage  string                     `json:"statusMessage"`
	PollIntervalMs *int64                     `json:"pollIntervalMs"`
	Result         json.RawMessage            `json:"result"`
	Error          *jsonrpc.Error             `json:"error"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
}

// pollInterval is the wait before the next tasks/get.
func (cs *ClientSession) pollInterval(st *extTaskState) time.Duration {
	d := cs.client.opts.TaskPollInterval
	if d <= 0 {
		d = DefaultTaskPollInterval
	}
	if st.PollIntervalMs != nil && *st.PollIntervalMs > 0 {
		d = time.Duration(*st.PollIntervalMs) * time.Millisecond
	}
	return min(max(d, minTaskPoll), maxTaskPoll)
}

// awaitExtTask follows the task a CreateTaskResult (raw) names to its end
// and returns what the original request would have returned: the
// completed task's result, or its error. When ctx ends first, the task is
// cancelled with tasks/cancel (bounded by ClientOptions.CancelTimeout).
func (cs *ClientSession) awaitExtTask(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var st extTaskState
	if err := strictjson.Unmarshal(raw, &st); err != nil || st.TaskID == "" {
		return nil, fmt.Errorf("mcp: a task result without a taskId: %v", err)
	}
	id := st.TaskID
	for {
		switch st.Status {
		case TaskStatusCompleted:
			if len(st.Result) == 0 {
				return nil, fmt.Errorf("mcp: task %s completed without a result", id)
			}
			return st.Result, nil
		case TaskStatusFailed:
			if st.Error != nil {
				return nil, st.Error
			}
			return nil, fmt.Errorf("mcp: task %s failed: %s", id, st.StatusMessage)
		case TaskStatusCancelled:
			return nil, fmt.Errorf("%w: %s %s", ErrTaskCancelled, id, st.StatusMessage)
		case TaskStatusInputRequired:
			if len(st.InputRequests) > 0 {
				responses, err := cs.answerInputs(ctx, st.InputRequests)
				if err != nil {
					cs.cancelExtTask(id)
					return nil, err
				}
				if err := cs.call(ctx, methodTasksUpdate, map[string]any{"taskId": id, "inputResponses": responses}, nil); err != nil {
					return nil, fmt.Errorf("mcp: %s: %w", methodTasksUpdate, err)
				}
				break // poll at once: the answers may have let it go on
			}
			fallthrough
		default:
			t := time.NewTimer(cs.pollInterval(&st))
			select {
			case <-ctx.Done():
				t.Stop()
				cs.cancelExtTask(id)
				return nil, ctx.Err()
			case <-t.C:
			}
		}
		var next extTaskState
		if err := cs.call(ctx, MethodTasksGet, map[string]string{"taskId": id}, &next); err != nil {
			if ctx.Err() != nil {
				cs.cancelExtTask(id)
			}
			return nil, fmt.Errorf("mcp: %s %s: %w", MethodTasksGet, id, err)
		}
		if next.PollIntervalMs == nil {
			next.PollIntervalMs = st.PollIntervalMs
		}
		st = next
	}
}

// cancelExtTask tells the server the client no longer waits for task id.
func (cs *ClientSession) cancelExtTask(id string) {
	d := cs.client.opts.CancelTimeout
	if d <= 0 {
		d = DefaultCancelTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := cs.call(ctx, MethodTasksCancel, map[string]string{"taskId": id}, nil); err != nil {
		cs.client.log.Debug("mcp: tasks/cancel", "task", id, "error", err)
	}
}
