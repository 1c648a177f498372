package mcp

import (
	"strconv"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// RequestID identifies a request within a session: a string or an integer
// that keeps its JSON kind, so "1" and 1 are different ids.
type RequestID = jsonrpc.ID

// ProgressToken associates notifications/progress with the request that
// asked for them: a string or an integer, like a RequestID.
type ProgressToken = jsonrpc.ID

// Cursor is an opaque pagination position. Clients must not parse it or
// keep it beyond the session.
type Cursor = string

// Role is who a message or a piece of data is from or for.
type Role string

// The two roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Validate reports an error unless r is RoleUser or RoleAssistant.
func (r Role) Validate() error {
	if r == RoleUser || r == RoleAssistant {
		return nil
	}
	return invalid("Role", "", `must be "user" or "assistant", got `+strconv.Quote(string(r)))
}

// BaseMetadata is the schema's common shape for named things: a
// programmatic name and an optional display title. Tool, Prompt, Resource,
// ResourceTemplate, PromptReference and Implementation repeat these fields
// rather than embed this type.
type BaseMetadata struct {
	// Name is the programmatic identifier; the display fallback if Title is
	// empty.
	Name string `json:"name"`
	// Title is a human-readable display name.
	Title string `json:"title,omitempty"`
}

// Validate reports an error if Name is empty.
func (m *BaseMetadata) Validate() error {
	return checkRequired("BaseMetadata", "name", m.Name)
}

// Icons is the schema's mixin for objects that carry icons. Types that have
// icons repeat the field rather than embed this type.
type Icons struct {
	// Icons lists images for the object, for different sizes and themes.
	Icons []Icon `json:"icons,omitempty"`
}

// Validate checks each icon's src and theme.
func (ic *Icons) Validate() error {
	return checkIcons("Icons", ic.Icons)
}

// Annotations are hints about how a client may use or show an object.
type Annotations struct {
	// Audience lists who the object is meant for.
	Audience []Role `json:"audience,omitempty"`
	// Priority is the importance from 0 (optional) to 1 (effectively
	// required).
	Priority *float64 `json:"priority,omitempty"`
	// LastModified is an ISO 8601 timestamp, such as
	// "2025-01-12T15:00:58Z".
	LastModified string `json:"lastModified,omitempty"`
}

// Validate checks the audience roles and the priority range.
func (a *Annotations) Validate() error {
	for i, r := range a.Audience {
		if err := r.Validate(); err != nil {
			return inField("Annotations", indexed("audience", i), err)
		}
	}
	return checkUnit("Annotations", "priority", a.Priority)
}

func validateAnnotations(typ string, a *Annotations) error {
	if a == nil {
		return nil
	}
	return inField(typ, "annotations", a.Validate())
}

// Result is a result with no fields of its own: the reply to ping,
// resources/subscribe, resources/unsubscribe and logging/setLevel, and the
// schema's base for every result. It encodes as {} when Meta is empty.
type Result struct {
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// EmptyResult is the schema's name for a Result with no fields.
type EmptyResult = Result

// RequestParams is the params of a request with no fields of its own (ping,
// roots/list), and the schema's base for every request's params.
type RequestParams struct {
	// Meta holds protocol and application metadata; its progressToken entry
	// asks for progress notifications.
	Meta Meta `json:"_meta,omitempty"`
}

// NotificationParams is the params of a notification with no fields of its
// own, and the schema's base for every notification's params.
type NotificationParams struct {
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// PaginatedRequestParams is the params of the list requests: resources/list,
// resources/templates/list, prompts/list, tools/list and tasks/list.
type PaginatedRequestParams struct {
	// Cursor is the NextCursor of the previous page; empty for the first.
	Cursor Cursor `json:"cursor,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// PaginatedResult is the schema's base for the list results.
type PaginatedResult struct {
	// NextCursor is the position after this page; empty on the last page.
	NextCursor Cursor `json:"nextCursor,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// TaskAugmentedRequestParams is the schema's base for the params of requests
// that may run as a task: tools/call, sampling/createMessage and
// elicitation/create.
type TaskAugmentedRequestParams struct {
	// Task, if set, asks the receiver to run the request as a task and reply
	// at once with a CreateTaskResult.
	Task *TaskMetadata `json:"task,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate checks the task metadata.
func (p *TaskAugmentedRequestParams) Validate() error {
	return validateTaskMetadata("TaskAugmentedRequestParams", p.Task)
}

// ResourceRequestParams is the schema's base for the params of requests
// about one resource.
type ResourceRequestParams struct {
	// URI is the resource's URI.
	URI string `json:"uri"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate reports an error if URI is empty.
func (p *ResourceRequestParams) Validate() error {
	return checkRequired("ResourceRequestParams", "uri", p.URI)
}
