package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// Prompt describes a prompt template a server offers, as listed by
// prompts/list.
type Prompt struct {
	// Name identifies the prompt. Required.
	Name string `json:"name"`
	// Title is a human-readable display name.
	Title string `json:"title,omitempty"`
	// Description says what the prompt is for.
	Description string `json:"description,omitempty"`
	// Arguments lists the arguments the prompt takes.
	Arguments []PromptArgument `json:"arguments,omitempty"`
	// Icons are images for the prompt.
	Icons []Icon `json:"icons,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate checks the name, the arguments' names and the icons.
func (p *Prompt) Validate() error {
	const typ = "Prompt"
	if err := checkRequired(typ, "name", p.Name); err != nil {
		return err
	}
	for i, a := range p.Arguments {
		if a.Name == "" {
			return invalid(typ, indexed("arguments", i)+".name", "is required")
		}
	}
	return checkIcons(typ, p.Icons)
}

// PromptArgument describes an argument of a prompt.
type PromptArgument struct {
	// Name identifies the argument. Required.
	Name string `json:"name"`
	// Title is a human-readable display name.
	Title string `json:"title,omitempty"`
	// Description describes the argument.
	Description string `json:"description,omitempty"`
	// Required, if true, says the argument must be given. Default false.
	Required *bool `json:"required,omitempty"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	// Role is the message's sender.
	Role Role `json:"role"`
	// Content is the message's ContentBlock. Required.
	Content Content `json:"content"`
}

// UnmarshalJSON decodes m, refusing content that is not a ContentBlock.
func (m *PromptMessage) UnmarshalJSON(data []byte) error {
	var w struct {
		Role    Role            `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	var c Content
	if present(w.Content) {
		var err error
		if c, err = decodeContent(w.Content, contentBlockSet); err != nil {
			return fmt.Errorf("content: %w", err)
		}
	}
	*m = PromptMessage{Role: w.Role, Content: c}
	return nil
}

// Validate checks the role and the content.
func (m *PromptMessage) Validate() error {
	const typ = "PromptMessage"
	if err := m.Role.Validate(); err != nil {
		return inField(typ, "role", err)
	}
	return validateContent(typ, "content", m.Content, contentBlockSet)
}

// ListPromptsResult is the result of prompts/list.
type ListPromptsResult struct {
	// Prompts is this page of prompts; nil encodes as [].
	Prompts []Prompt `json:"prompts"`
	// NextCursor is the position after this page; empty on the last page.
	NextCursor Cursor `json:"nextCursor,omitempty"`
	// TTLMs is how long, in milliseconds, a client may cache this result
	// (0: stale at once); revision 2026-07-28 requires it, earlier ones do
	// not have it. A modern server fills in its default when nil.
	TTLMs *int64 `json:"ttlMs,omitempty"`
	// CacheScope says who may cache this result (revision 2026-07-28). A
	// modern server fills in its default when empty.
	CacheScope CacheScope `json:"cacheScope,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes r with Prompts as [] when nil.
func (r ListPromptsResult) MarshalJSON() ([]byte, error) {
	type wire ListPromptsResult
	w := wire(r)
	if w.Prompts == nil {
		w.Prompts = []Prompt{}
	}
	return json.Marshal(w)
}

// Validate checks each prompt.
func (r *ListPromptsResult) Validate() error {
	for i := range r.Prompts {
		if err := r.Prompts[i].Validate(); err != nil {
			return inField("ListPromptsResult", indexed("prompts", i), err)
		}
	}
	return nil
}

// GetPromptRequestParams is the params of prompts/get.
type GetPromptRequestParams struct {
	// Name is the prompt to get. Required.
	Name string `json:"name"`
	// Arguments are the values of the prompt's arguments.
	Arguments map[string]string `json:"arguments,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
	// InputResponses, on a retry (revision 2026-07-28, MRTR), are the
	// client's results for the InputRequests of the server's
	// InputRequiredResult.
	InputResponses InputResponses `json:"inputResponses,omitempty"`
	// RequestState, on a retry (revision 2026-07-28, MRTR), echoes the
	// RequestState of the server's InputRequiredResult.
	RequestState string `json:"requestState,omitempty"`
}

// Validate reports an error if Name is empty.
func (p *GetPromptRequestParams) Validate() error {
	return checkRequired("GetPromptRequestParams", "name", p.Name)
}

// GetPromptResult is the result of prompts/get.
type GetPromptResult struct {
	// Description describes the prompt.
	Description string `json:"description,omitempty"`
	// Messages are the prompt's messages; nil encodes as [].
	Messages []PromptMessage `json:"messages"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes r with Messages as [] when nil.
func (r GetPromptResult) MarshalJSON() ([]byte, error) {
	type wire GetPromptResult
	w := wire(r)
	if w.Messages == nil {
		w.Messages = []PromptMessage{}
	}
	return json.Marshal(w)
}

// Validate checks each message.
func (r *GetPromptResult) Validate() error {
	for i := range r.Messages {
		if err := r.Messages[i].Validate(); err != nil {
			return inField("GetPromptResult", indexed("messages", i), err)
		}
	}
	return nil
}
