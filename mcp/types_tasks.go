package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// TaskStatus is the state of a task.
type TaskStatus string

// The task states. A task starts working; completed, failed and cancelled
// are terminal.
const (
	TaskStatusWorking       TaskStatus = "working"
	TaskStatusInputRequired TaskStatus = "input_required"
	TaskStatusCompleted     TaskStatus = "completed"
	TaskStatusFailed        TaskStatus = "failed"
	TaskStatusCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether s is a final state: completed, failed or
// cancelled.
func (s TaskStatus) Terminal() bool {
	return s == TaskStatusCompleted || s == TaskStatusFailed || s == TaskStatusCancelled
}

// Validate reports an error unless s is a defined state.
func (s TaskStatus) Validate() error {
	switch s {
	case TaskStatusWorking, TaskStatusInputRequired, TaskStatusCompleted, TaskStatusFailed, TaskStatusCancelled:
		return nil
	}
	return invalid("TaskStatus", "", "unknown status "+clip.Quote(string(s)))
}

// Task is the state of a task-augmented request, kept by its receiver.
type Task struct {
	// TaskID identifies the task; the receiver generates it. Required.
	TaskID string `json:"taskId"`
	// Status is the task's state. Required.
	Status TaskStatus `json:"status"`
	// StatusMessage describes the state, such as the reason for a failure.
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreatedAt is the ISO 8601 creation time. Required.
	CreatedAt string `json:"createdAt"`
	// LastUpdatedAt is the ISO 8601 time of the last change. Required.
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTL is how long, in milliseconds from creation, the receiver keeps
	// the task; nil means unlimited and encodes as null (the member is
	// required).
	TTL *int64 `json:"ttl"`
	// PollInterval is the suggested tasks/get interval in milliseconds.
	PollInterval *int64 `json:"pollInterval,omitempty"`
}

// Validate checks the required fields, the status and the durations.
func (t *Task) Validate() error {
	const typ = "Task"
	if err := checkRequired(typ, "taskId", t.TaskID); err != nil {
		return err
	}
	if err := t.Status.Validate(); err != nil {
		return inField(typ, "status", err)
	}
	if err := checkRequired(typ, "createdAt", t.CreatedAt); err != nil {
		return err
	}
	if err := checkRequired(typ, "lastUpdatedAt", t.LastUpdatedAt); err != nil {
		return err
	}
	if err := checkNonNegative(typ, "ttl", t.TTL); err != nil {
		return err
	}
	return checkNonNegative(typ, "pollInterval", t.PollInterval)
}

// TaskMetadata, in a request's params, asks the receiver to run the
// request as a task.
type TaskMetadata struct {
	// TTL is the requested retention in milliseconds from creation.
	TTL *int64 `json:"ttl,omitempty"`
}

func validateTaskMetadata(typ string, m *TaskMetadata) error {
	if m == nil {
		return nil
	}
	return checkNonNegative(typ, "task.ttl", m.TTL)
}

// RelatedTaskMetadata is the value of the io.modelcontextprotocol/related-task
// _meta entry, which ties a message to a task.
type RelatedTaskMetadata struct {
	// TaskID is the related task's id.
	TaskID string `json:"taskId"`
}

// CreateTaskResult is the immediate reply to a task-augmented request.
// The schema puts it in neither result union; it is decoded by context
// (the request carried params.task and the receiver supports tasks).
type CreateTaskResult struct {
	// Task is the new task.
	Task Task `json:"task"`
	// Meta holds protocol and application metadata, such as
	// io.modelcontextprotocol/model-immediate-response.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate checks the task.
func (r *CreateTaskResult) Validate() error {
	return inField("CreateTaskResult", "task", r.Task.Validate())
}

// GetTaskRequestParams is the params of tasks/get.
type GetTaskRequestParams struct {
	// TaskID is the task to get. Required.
	TaskID string `json:"taskId"`
	// Meta holds metadata (not in the schema, tolerated).
	Meta Meta `json:"_meta,omitempty"`
}

// Validate reports an error if TaskID is empty.
func (p *GetTaskRequestParams) Validate() error {
	return checkRequired("GetTaskRequestParams", "taskId", p.TaskID)
}

// GetTaskResult is the result of tasks/get: the task's fields.
type GetTaskResult struct {
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
	Task
}

// GetTaskPayloadRequestParams is the params of tasks/result.
type GetTaskPayloadRequestParams struct {
	// TaskID is the task whose result is wanted. Required.
	TaskID string `json:"taskId"`
	// Meta holds metadata (not in the schema, tolerated).
	Meta Meta `json:"_meta,omitempty"`
}

// Validate reports an error if TaskID is empty.
func (p *GetTaskPayloadRequestParams) Validate() error {
	return checkRequired("GetTaskPayloadRequestParams", "taskId", p.TaskID)
}

// GetTaskPayloadResult is the result of tasks/result: the JSON object the
// original request would have returned (a CallToolResult for tools/call,
// and so on), with the related-task _meta entry. It is kept raw; Decode it
// into the expected result type. An empty GetTaskPayloadResult encodes as
// {}.
type GetTaskPayloadResult json.RawMessage

// MarshalJSON returns r, or {} if r is empty.
func (r GetTaskPayloadResult) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("{}"), nil
	}
	if !isJSONObject(json.RawMessage(r)) {
		return nil, fmt.Errorf("mcp: GetTaskPayloadResult is not a JSON object")
	}
	return r, nil
}

// UnmarshalJSON stores a copy of data, which must be a JSON object.
func (r *GetTaskPayloadResult) UnmarshalJSON(data []byte) error {
	if !isJSONObject(data) {
		return fmt.Errorf("mcp: tasks/result payload must be a JSON object")
	}
	*r = append((*r)[:0], bytes.TrimSpace(data)...)
	return nil
}

// Decode decodes the payload into v, such as a *CallToolResult.
func (r GetTaskPayloadResult) Decode(v any) error {
	return strictjson.Unmarshal(r, v)
}

// Validate reports an error unless r is empty or a JSON object.
func (r *GetTaskPayloadResult) Validate() error {
	if len(*r) == 0 || isJSONObject(json.RawMessage(*r)) {
		return nil
	}
	return invalid("GetTaskPayloadResult", "", "must be a JSON object")
}

// CancelTaskRequestParams is the params of tasks/cancel.
type CancelTaskRequestParams struct {
	// TaskID is the task to cancel. Required.
	TaskID string `json:"taskId"`
	// Meta holds metadata (not in the schema, tolerated).
	Meta Meta `json:"_meta,omitempty"`
}

// Validate reports an error if TaskID is empty.
func (p *CancelTaskRequestParams) Validate() error {
	return checkRequired("CancelTaskRequestParams", "taskId", p.TaskID)
}

// CancelTaskResult is the result of tasks/cancel: the task's fields, with
// status cancelled.
type CancelTaskResult struct {
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
	Task
}

// ListTasksResult is the result of tasks/list.
type ListTasksResult struct {
	// Tasks is this page of tasks; nil encodes as [].
	Tasks []Task `json:"tasks"`
	// NextCursor is the position after this page; empty on the last page.
	NextCursor Cursor `json:"nextCursor,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes r with Tasks as [] when nil.
func (r ListTasksResult) MarshalJSON() ([]byte, error) {
	type wire ListTasksResult
	w := wire(r)
	if w.Tasks == nil {
		w.Tasks = []Task{}
	}
	return json.Marshal(w)
}

// Validate checks each task.
func (r *ListTasksResult) Validate() error {
	for i := range r.Tasks {
		if err := r.Tasks[i].Validate(); err != nil {
			return inField("ListTasksResult", indexed("tasks", i), err)
		}
	}
	return nil
}

// TaskStatusNotificationParams is the params of
// notifications/tasks/status: the task's fields.
type TaskStatusNotificationParams struct {
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
	Task
}
