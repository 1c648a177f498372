package mcp

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// SamplingMessage is one message of a sampling conversation. A user
// message that holds tool results holds nothing else, and the tool uses of
// an assistant message are answered in the next one (MCP 2025-11-25
// client/sampling#message-content-constraints; see CheckToolLoop).
//
// In JSON the content is one block or an array of blocks. Content holds
// either form: a single block encodes as an object (the form every
// revision understands) and zero or several blocks as an array.
type SamplingMessage struct {
	// Role is the message's sender.
	Role Role `json:"role"`
	// Content is the message's blocks: *TextContent, *ImageContent,
	// *AudioContent, *ToolUseContent or *ToolResultContent.
	Content []Content `json:"content"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes m, with one block as an object.
func (m SamplingMessage) MarshalJSON() ([]byte, error) {
	type wire SamplingMessage
	var w struct {
		Content any `json:"content"`
		wire
	}
	w.wire = wire(m)
	w.Content = marshalContentOneOrMany(m.Content)
	return json.Marshal(w)
}

// UnmarshalJSON decodes m, accepting one block or an array and refusing
// block types not allowed in sampling.
func (m *SamplingMessage) UnmarshalJSON(data []byte) error {
	type wire SamplingMessage
	var w struct {
		Content json.RawMessage `json:"content"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	var err error
	if w.wire.Content, err = decodeContentOneOrMany(w.Content, samplingContentSet); err != nil {
		return fmt.Errorf("content: %w", err)
	}
	*m = SamplingMessage(w.wire)
	return nil
}

// Validate checks the role and the content blocks.
func (m *SamplingMessage) Validate() error {
	const typ = "SamplingMessage"
	if err := m.Role.Validate(); err != nil {
		return inField(typ, "role", err)
	}
	return validateContents(typ, "content", m.Content, samplingContentSet)
}

// ModelPreferences are a server's advisory wishes for model selection; the
// client has the final say (MCP 2025-11-25 client/sampling#model-preferences).
type ModelPreferences struct {
	// Hints are model name hints, tried in order as substrings.
	Hints []ModelHint `json:"hints,omitempty"`
	// CostPriority is how much cost matters, from 0 to 1.
	CostPriority *float64 `json:"costPriority,omitempty"`
	// SpeedPriority is how much speed matters, from 0 to 1.
	SpeedPriority *float64 `json:"speedPriority,omitempty"`
	// IntelligencePriority is how much capability matters, from 0 to 1.
	IntelligencePriority *float64 `json:"intelligencePriority,omitempty"`
}

// Validate checks that the priorities are between 0 and 1.
func (p *ModelPreferences) Validate() error {
	const typ = "ModelPreferences"
	if err := checkUnit(typ, "costPriority", p.CostPriority); err != nil {
		return err
	}
	if err := checkUnit(typ, "speedPriority", p.SpeedPriority); err != nil {
		return err
	}
	return checkUnit(typ, "intelligencePriority", p.IntelligencePriority)
}

// ModelHint is a hint for model selection.
type ModelHint struct {
	// Name is a substring of a model name, such as "sonnet".
	Name string `json:"name,omitempty"`
}

// IncludeContext says which servers' context a sampling request wants
// included.
type IncludeContext string

// The include-context values. ThisServer and AllServers are
// soft-deprecated and need the client's sampling.context capability (MCP
// 2025-11-25 client/sampling#capabilities).
const (
	IncludeContextNone       IncludeContext = "none"
	IncludeContextThisServer IncludeContext = "thisServer"
	IncludeContextAllServers IncludeContext = "allServers"
)

// Validate reports an error unless c is empty or a defined value.
func (c IncludeContext) Validate() error {
	switch c {
	case "", IncludeContextNone, IncludeContextThisServer, IncludeContextAllServers:
		return nil
	}
	return invalid("IncludeContext", "", `must be "none", "thisServer" or "allServers", got `+strconv.Quote(string(c)))
}

// ToolChoice controls how the model uses tools in sampling.
type ToolChoice struct {
	// Mode is auto (the default), required or none.
	Mode ToolChoiceMode `json:"mode,omitempty"`
}

// ToolChoiceMode says whether the model may, must or must not use tools
// (MCP 2025-11-25 client/sampling#tool-choice-modes).
type ToolChoiceMode string

// The tool choice modes.
const (
	ToolChoiceAuto     ToolChoiceMode = "auto"
	ToolChoiceRequired ToolChoiceMode = "required"
	ToolChoiceNone     ToolChoiceMode = "none"
)

// Validate reports an error unless m is empty or a defined mode.
func (m ToolChoiceMode) Validate() error {
	switch m {
	case "", ToolChoiceAuto, ToolChoiceRequired, ToolChoiceNone:
		return nil
	}
	return invalid("ToolChoiceMode", "", `must be "auto", "required" or "none", got `+strconv.Quote(string(m)))
}

// CreateMessageRequestParams is the params of sampling/createMessage (MCP
// 2025-11-25 client/sampling#creating-messages). Tools and ToolChoice need
// the client's sampling.tools capability (client/sampling#sampling-with-tools).
type CreateMessageRequestParams struct {
	// Messages is the conversation; nil encodes as [].
	Messages []SamplingMessage `json:"messages"`
	// ModelPreferences are advisory model selection wishes.
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	// SystemPrompt is a system prompt the client may use, change or drop.
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// IncludeContext asks for context from MCP servers; default none.
	IncludeContext IncludeContext `json:"includeContext,omitempty"`
	// Temperature is the sampling temperature.
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens caps the tokens to sample. Required, positive.
	MaxTokens int64 `json:"maxTokens"`
	// StopSequences end sampling when produced.
	StopSequences []string `json:"stopSequences,omitempty"`
	// Metadata is provider-specific, a JSON object.
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// Tools are tools the model may use; needs the client's sampling.tools
	// capability.
	Tools []Tool `json:"tools,omitempty"`
	// ToolChoice controls tool use; needs the client's sampling.tools
	// capability.
	ToolChoice *ToolChoice `json:"toolChoice,omitempty"`
	// Task, if set, asks the client to run the request as a task.
	Task *TaskMetadata `json:"task,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes p with Messages as [] when nil.
func (p CreateMessageRequestParams) MarshalJSON() ([]byte, error) {
	type wire CreateMessageRequestParams
	w := wire(p)
	if w.Messages == nil {
		w.Messages = []SamplingMessage{}
	}
	return json.Marshal(w)
}

// Validate checks the messages, MaxTokens, the enums, the preferences,
// the tools, Metadata and the task metadata.
func (p *CreateMessageRequestParams) Validate() error {
	const typ = "CreateMessageRequestParams"
	for i := range p.Messages {
		if err := p.Messages[i].Validate(); err != nil {
			return inField(typ, indexed("messages", i), err)
		}
	}
	if p.MaxTokens < 1 {
		return invalid(typ, "maxTokens", "must be positive")
	}
	if p.ModelPreferences != nil {
		if err := p.ModelPreferences.Validate(); err != nil {
			return inField(typ, "modelPreferences", err)
		}
	}
	if err := p.IncludeContext.Validate(); err != nil {
		return inField(typ, "includeContext", err)
	}
	if err := checkObject(typ, "metadata", p.Metadata); err != nil {
		return err
	}
	for i := range p.Tools {
		if err := p.Tools[i].Validate(); err != nil {
			return inField(typ, indexed("tools", i), err)
		}
	}
	if p.ToolChoice != nil {
		if err := p.ToolChoice.Mode.Validate(); err != nil {
			return inField(typ, "toolChoice.mode", err)
		}
	}
	return validateTaskMetadata(typ, p.Task)
}

// Stop reasons of a CreateMessageResult. Others may appear.
const (
	StopReasonEndTurn      = "endTurn"
	StopReasonStopSequence = "stopSequence"
	StopReasonMaxTokens    = "maxTokens"
	StopReasonToolUse      = "toolUse"
)

// CreateMessageResult is the result of sampling/createMessage. Like a
// SamplingMessage, its content is one block (encoded as an object) or
// several (an array).
type CreateMessageResult struct {
	// Role is the role of the generated message, normally assistant.
	Role Role `json:"role"`
	// Content is the generated blocks.
	Content []Content `json:"content"`
	// Model is the name of the model that generated the message. Required.
	Model string `json:"model"`
	// StopReason says why sampling stopped, such as StopReasonEndTurn.
	StopReason string `json:"stopReason,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes r, with one block as an object.
func (r CreateMessageResult) MarshalJSON() ([]byte, error) {
	type wire CreateMessageResult
	var w struct {
		Content any `json:"content"`
		wire
	}
	w.wire = wire(r)
	w.Content = marshalContentOneOrMany(r.Content)
	return json.Marshal(w)
}

// UnmarshalJSON decodes r, accepting one block or an array and refusing
// block types not allowed in sampling.
func (r *CreateMessageResult) UnmarshalJSON(data []byte) error {
	type wire CreateMessageResult
	var w struct {
		Content json.RawMessage `json:"content"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	var err error
	if w.wire.Content, err = decodeContentOneOrMany(w.Content, samplingContentSet); err != nil {
		return fmt.Errorf("content: %w", err)
	}
	*r = CreateMessageResult(w.wire)
	return nil
}

// Validate checks the role, the model and the content blocks.
func (r *CreateMessageResult) Validate() error {
	const typ = "CreateMessageResult"
	if err := r.Role.Validate(); err != nil {
		return inField(typ, "role", err)
	}
	if err := checkRequired(typ, "model", r.Model); err != nil {
		return err
	}
	return validateContents(typ, "content", r.Content, samplingContentSet)
}
