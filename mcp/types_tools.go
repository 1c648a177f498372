package mcp

import (
	"encoding/json"
	"strconv"
)

// Tool describes a tool a server offers, as listed by tools/list.
type Tool struct {
	// Name identifies the tool: 1 to 128 characters from [A-Za-z0-9_.-]
	// are recommended. Required.
	Name string `json:"name"`
	// Title is a human-readable display name.
	Title string `json:"title,omitempty"`
	// Description tells the model what the tool does.
	Description string `json:"description,omitempty"`
	// Icons are images for the tool.
	Icons []Icon `json:"icons,omitempty"`
	// InputSchema is the JSON Schema of the arguments: an object whose root
	// "type" is "object"; other keywords are kept verbatim. nil encodes as
	// {"type":"object"}.
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema, if set, is the JSON Schema of the StructuredContent of
	// the tool's results; its root "type" must be "object".
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are untrusted hints about the tool's behaviour.
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
	// Execution describes how the tool may be run.
	Execution *ToolExecution `json:"execution,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes t, with {"type":"object"} for a nil InputSchema.
func (t Tool) MarshalJSON() ([]byte, error) {
	type wire Tool
	w := wire(t)
	if w.InputSchema == nil {
		w.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	return json.Marshal(w)
}

// Validate checks the name, that the schemas are objects with root type
// "object", the execution settings and the icons.
func (t *Tool) Validate() error {
	const typ = "Tool"
	if err := checkRequired(typ, "name", t.Name); err != nil {
		return err
	}
	if t.InputSchema != nil {
		if err := checkSchemaRoot(typ, "inputSchema", t.InputSchema); err != nil {
			return err
		}
	}
	if t.OutputSchema != nil {
		if err := checkSchemaRoot(typ, "outputSchema", t.OutputSchema); err != nil {
			return err
		}
	}
	if t.Execution != nil {
		if err := t.Execution.TaskSupport.Validate(); err != nil {
			return inField(typ, "execution.taskSupport", err)
		}
	}
	return checkIcons(typ, t.Icons)
}

// ToolAnnotations are hints about a tool's behaviour. Clients must treat
// them as untrusted unless they trust the server. A nil hint takes the
// default given on each field.
type ToolAnnotations struct {
	// Title is a human-readable display name, used if Tool.Title is empty.
	Title string `json:"title,omitempty"`
	// ReadOnlyHint says the tool does not change its environment. Default
	// false.
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint says the tool may destroy or overwrite data; it
	// matters only when the tool is not read-only. Default true.
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint says repeated calls with the same arguments have no
	// further effect; it matters only when the tool is not read-only.
	// Default false.
	IdempotentHint *bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint says the tool reaches an open world of external
	// entities, such as the web. Default true.
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}

// ToolExecution describes how a tool may be run.
type ToolExecution struct {
	// TaskSupport says whether tools/call may or must run as a task. Empty
	// means TaskSupportForbidden.
	TaskSupport TaskSupport `json:"taskSupport,omitempty"`
}

// TaskSupport says whether a tool runs as a task.
type TaskSupport string

// The task support levels.
const (
	TaskSupportForbidden TaskSupport = "forbidden"
	TaskSupportOptional  TaskSupport = "optional"
	TaskSupportRequired  TaskSupport = "required"
)

// Validate reports an error unless s is empty or one of the defined levels.
func (s TaskSupport) Validate() error {
	switch s {
	case "", TaskSupportForbidden, TaskSupportOptional, TaskSupportRequired:
		return nil
	}
	return invalid("TaskSupport", "", `must be "forbidden", "optional" or "required", got `+strconv.Quote(string(s)))
}

// CallToolRequestParams is the params of tools/call.
type CallToolRequestParams struct {
	// Name is the tool to call. Required.
	Name string `json:"name"`
	// Arguments is the tool's arguments, a JSON object.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Task, if set, asks the server to run the call as a task.
	Task *TaskMetadata `json:"task,omitempty"`
	// Meta holds protocol and application metadata; its progressToken entry
	// asks for progress notifications.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate checks the name, that Arguments is an object, and the task
// metadata.
func (p *CallToolRequestParams) Validate() error {
	const typ = "CallToolRequestParams"
	if err := checkRequired(typ, "name", p.Name); err != nil {
		return err
	}
	if err := checkObject(typ, "arguments", p.Arguments); err != nil {
		return err
	}
	return validateTaskMetadata(typ, p.Task)
}

// CallToolResult is the result of tools/call. A tool that fails for
// reasons of its own, argument validation included, reports it here with
// IsError rather than as a JSON-RPC error.
type CallToolResult struct {
	// Content is the result as ContentBlock values; nil encodes as [].
	Content []Content `json:"content"`
	// StructuredContent, if set, is the result as a JSON object, matching
	// the tool's OutputSchema if it has one.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError, if true, says the tool call failed.
	IsError *bool `json:"isError,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes r with Content as [] when nil.
func (r CallToolResult) MarshalJSON() ([]byte, error) {
	type wire CallToolResult
	w := wire(r)
	if w.Content == nil {
		w.Content = []Content{}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes r, refusing content that is not a ContentBlock.
func (r *CallToolResult) UnmarshalJSON(data []byte) error {
	type wire CallToolResult
	var w struct {
		Content []json.RawMessage `json:"content"`
		wire
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	var err error
	if w.wire.Content, err = decodeContentList(w.Content, contentBlockSet); err != nil {
		return err
	}
	*r = CallToolResult(w.wire)
	return nil
}

// Validate checks the content blocks and that StructuredContent is an
// object.
func (r *CallToolResult) Validate() error {
	const typ = "CallToolResult"
	if err := validateContents(typ, "content", r.Content, contentBlockSet); err != nil {
		return err
	}
	return checkObject(typ, "structuredContent", r.StructuredContent)
}

// ListToolsResult is the result of tools/list.
type ListToolsResult struct {
	// Tools is this page of tools; nil encodes as [].
	Tools []Tool `json:"tools"`
	// NextCursor is the position after this page; empty on the last page.
	NextCursor Cursor `json:"nextCursor,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes r with Tools as [] when nil.
func (r ListToolsResult) MarshalJSON() ([]byte, error) {
	type wire ListToolsResult
	w := wire(r)
	if w.Tools == nil {
		w.Tools = []Tool{}
	}
	return json.Marshal(w)
}

// Validate checks each tool.
func (r *ListToolsResult) Validate() error {
	for i := range r.Tools {
		if err := r.Tools[i].Validate(); err != nil {
			return inField("ListToolsResult", indexed("tools", i), err)
		}
	}
	return nil
}

// Tool request and notification envelopes.
type (
	// ListToolsRequest is a tools/list request.
	ListToolsRequest = Request[*PaginatedRequestParams]
	// CallToolRequest is a tools/call request.
	CallToolRequest = Request[*CallToolRequestParams]
	// ToolListChangedNotification is a notifications/tools/list_changed
	// notification.
	ToolListChangedNotification = Notification[*NotificationParams]
)
