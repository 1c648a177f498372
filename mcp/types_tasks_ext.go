package mcp

import (
	"encoding/json"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// Wire types of the tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663), which revision 2026-07-28 moved tasks into
// (docs/extensions/tasks-overview.mdx): the server decides per request to
// answer a task, the client polls tasks/get (whose answer inlines the
// result or error), answers input with tasks/update, and may cancel.
// tasks/result and tasks/list are gone; durations carry their unit (ttlMs,
// pollIntervalMs).

// TasksExtensionID is the extension's identifier, the key under
// capabilities.extensions on both sides.
const TasksExtensionID = "io.modelcontextprotocol/tasks"

// MethodTasksUpdate delivers the client's input to a task that is
// input_required.
const MethodTasksUpdate = "tasks/update"

// ExtensionTask is the extension's Task: the state of a task, as
// CreateTaskResult and tasks/get carry it, flat in the result.
type ExtensionTask struct {
	// TaskID identifies the task. Required.
	TaskID string `json:"taskId"`
	// Status is the task's state. Required.
	Status TaskStatus `json:"status"`
	// StatusMessage describes the state.
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreatedAt is the ISO 8601 creation time. Required.
	CreatedAt string `json:"createdAt"`
	// LastUpdatedAt is the ISO 8601 time of the last change. Required.
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTLMs is how long, in milliseconds from creation, the server keeps
	// the task; nil (null) means unlimited. The member is always sent.
	TTLMs *int64 `json:"ttlMs"`
	// PollIntervalMs is the suggested tasks/get interval in milliseconds.
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
}

// extensionTask converts a store's Task to the extension's shape.
func extensionTask(t *Task) ExtensionTask {
	e := ExtensionTask{TaskID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt, TTLMs: t.TTL}
	if t.PollInterval != nil && *t.PollInterval > 0 {
		e.PollIntervalMs = t.PollInterval
	}
	return e
}

// ExtensionCreateTaskResult is the answer to a request the server runs as
// a task: the task, flat, with "resultType": "task".
type ExtensionCreateTaskResult struct {
	ExtensionTask
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes r with "resultType": "task".
func (r ExtensionCreateTaskResult) MarshalJSON() ([]byte, error) {
	type wire ExtensionCreateTaskResult
	return marshalTagged("resultType", string(ResultTypeTask), wire(r))
}

func (*ExtensionCreateTaskResult) isServerResult() {}

// DetailedTask is the result of tasks/get: the task, and what its status
// calls for: InputRequests while input_required, Result once completed
// (what the request would have returned; a tool's own failure is a
// completed task whose result has isError), Error once failed.
type DetailedTask struct {
	ExtensionTask
	// InputRequests are the requests the task waits on, while
	// input_required; answered keys leave it.
	InputRequests InputRequests `json:"inputRequests,omitempty"`
	// Result is the request's result, once completed.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the request's JSON-RPC error, once failed.
	Error *jsonrpc.Error `json:"error,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

func (*DetailedTask) isServerResult() {}

// TaskIDParams is the params of tasks/get and tasks/cancel.
type TaskIDParams struct {
	// TaskID names the task. Required.
	TaskID string `json:"taskId"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate reports an error if TaskID is empty.
func (p *TaskIDParams) Validate() error { return checkRequired("TaskIDParams", "taskId", p.TaskID) }

// UpdateTaskRequestParams is the params of tasks/update.
type UpdateTaskRequestParams struct {
	// TaskID names the task. Required.
	TaskID string `json:"taskId"`
	// InputResponses answer the task's InputRequests, by their keys.
	InputResponses InputResponses `json:"inputResponses"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate reports an error if TaskID is empty.
func (p *UpdateTaskRequestParams) Validate() error {
	return checkRequired("UpdateTaskRequestParams", "taskId", p.TaskID)
}
