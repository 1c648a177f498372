package mcp

import (
	"encoding/json"
	"sort"
	"strings"
)

// Implementation names and describes an MCP client or server.
type Implementation struct {
	// Name is the programmatic name. Required.
	Name string `json:"name"`
	// Title is a human-readable display name.
	Title string `json:"title,omitempty"`
	// Version is the implementation's version. Required.
	Version string `json:"version"`
	// Description says what the implementation does.
	Description string `json:"description,omitempty"`
	// Icons are images for the implementation.
	Icons []Icon `json:"icons,omitempty"`
	// WebsiteURL is the implementation's home page.
	WebsiteURL string `json:"websiteUrl,omitempty"`
}

// Validate checks Name, Version and the icons.
func (i *Implementation) Validate() error {
	const typ = "Implementation"
	if err := checkRequired(typ, "name", i.Name); err != nil {
		return err
	}
	if err := checkRequired(typ, "version", i.Version); err != nil {
		return err
	}
	return checkIcons(typ, i.Icons)
}

// Capability is a capability or sub-capability with no settings of its
// own. A nil *Capability means "not supported"; a non-nil one encodes as
// {} and means "supported".
type Capability struct{}

// ClientCapabilities are the features a client declares in initialize.
// Each non-nil field is a supported feature. Keys this revision does not
// define are ignored on decode.
type ClientCapabilities struct {
	// Experimental holds non-standard capabilities, each a JSON object.
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	// Roots is set if the client answers roots/list.
	Roots *RootsCapability `json:"roots,omitempty"`
	// Sampling is set if the client answers sampling/createMessage.
	Sampling *SamplingCapability `json:"sampling,omitempty"`
	// Elicitation is set if the client answers elicitation/create. An
	// empty ElicitationCapability means form mode only.
	Elicitation *ElicitationCapability `json:"elicitation,omitempty"`
	// Tasks is set if the client runs task-augmented requests.
	Tasks *ClientTasksCapability `json:"tasks,omitempty"`
	// Extensions lists the optional extensions the client supports
	// (revision 2026-07-28), keyed by extension identifier (a _meta-style
	// key with a prefix, such as "io.modelcontextprotocol/tasks"), each
	// with its settings object ({} for none).
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// Validate checks that every experimental capability is a JSON object.
func (c *ClientCapabilities) Validate() error {
	if err := checkExperimental("ClientCapabilities", c.Experimental); err != nil {
		return err
	}
	return checkExtensions("ClientCapabilities", c.Extensions)
}

// RootsCapability declares roots support.
type RootsCapability struct {
	// ListChanged is true if the client sends
	// notifications/roots/list_changed.
	ListChanged bool `json:"listChanged,omitempty"`
}

// SamplingCapability declares sampling support.
type SamplingCapability struct {
	// Context is set if the client honours includeContext values other than
	// "none".
	Context *Capability `json:"context,omitempty"`
	// Tools is set if the client accepts tools and toolChoice.
	Tools *Capability `json:"tools,omitempty"`
}

// ElicitationCapability declares elicitation support and its modes. With
// neither mode set it means form mode only.
type ElicitationCapability struct {
	// Form is set if the client supports form-mode elicitation.
	Form *Capability `json:"form,omitempty"`
	// URL is set if the client supports URL-mode elicitation.
	URL *Capability `json:"url,omitempty"`
}

// SupportsForm reports whether form mode is supported: declared, or
// implied by an empty capability.
func (c *ElicitationCapability) SupportsForm() bool {
	return c != nil && (c.Form != nil || c.URL == nil)
}

// SupportsURL reports whether URL mode is supported.
func (c *ElicitationCapability) SupportsURL() bool {
	return c != nil && c.URL != nil
}

// ClientTasksCapability declares which task features a client offers as a
// task receiver.
type ClientTasksCapability struct {
	// List is set if the client answers tasks/list.
	List *Capability `json:"list,omitempty"`
	// Cancel is set if the client answers tasks/cancel.
	Cancel *Capability `json:"cancel,omitempty"`
	// Requests lists the requests the client runs as tasks.
	Requests *ClientTaskRequests `json:"requests,omitempty"`
}

// ClientTaskRequests lists the server-to-client requests a client accepts
// with task augmentation.
type ClientTaskRequests struct {
	// Sampling covers sampling requests.
	Sampling *SamplingTaskRequests `json:"sampling,omitempty"`
	// Elicitation covers elicitation requests.
	Elicitation *ElicitationTaskRequests `json:"elicitation,omitempty"`
}

// SamplingTaskRequests lists the sampling requests that may run as tasks.
type SamplingTaskRequests struct {
	// CreateMessage is set if sampling/createMessage may run as a task.
	CreateMessage *Capability `json:"createMessage,omitempty"`
}

// ElicitationTaskRequests lists the elicitation requests that may run as
// tasks.
type ElicitationTaskRequests struct {
	// Create is set if elicitation/create may run as a task.
	Create *Capability `json:"create,omitempty"`
}

// ServerCapabilities are the features a server declares in its initialize
// result. Each non-nil field is a supported feature. Keys this revision
// does not define are ignored on decode.
type ServerCapabilities struct {
	// Experimental holds non-standard capabilities, each a JSON object.
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	// Logging is set if the server sends log messages and answers
	// logging/setLevel.
	Logging *LoggingCapability `json:"logging,omitempty"`
	// Completions is set if the server answers completion/complete.
	Completions *CompletionsCapability `json:"completions,omitempty"`
	// Prompts is set if the server offers prompts.
	Prompts *PromptsCapability `json:"prompts,omitempty"`
	// Resources is set if the server offers resources.
	Resources *ResourcesCapability `json:"resources,omitempty"`
	// Tools is set if the server offers tools.
	Tools *ToolsCapability `json:"tools,omitempty"`
	// Tasks is set if the server runs task-augmented requests.
	Tasks *ServerTasksCapability `json:"tasks,omitempty"`
	// Extensions lists the optional extensions the server supports
	// (revision 2026-07-28), keyed by extension identifier, each with its
	// settings object ({} for none).
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// Validate checks that every experimental capability is a JSON object.
func (c *ServerCapabilities) Validate() error {
	if err := checkExperimental("ServerCapabilities", c.Experimental); err != nil {
		return err
	}
	return checkExtensions("ServerCapabilities", c.Extensions)
}

// LoggingCapability declares logging support. It has no settings.
type LoggingCapability struct{}

// CompletionsCapability declares argument completion support. It has no
// settings.
type CompletionsCapability struct{}

// PromptsCapability declares prompt support.
type PromptsCapability struct {
	// ListChanged is true if the server sends
	// notifications/prompts/list_changed.
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability declares resource support.
type ResourcesCapability struct {
	// Subscribe is true if the server answers resources/subscribe.
	Subscribe bool `json:"subscribe,omitempty"`
	// ListChanged is true if the server sends
	// notifications/resources/list_changed.
	ListChanged bool `json:"listChanged,omitempty"`
}

// ToolsCapability declares tool support.
type ToolsCapability struct {
	// ListChanged is true if the server sends
	// notifications/tools/list_changed.
	ListChanged bool `json:"listChanged,omitempty"`
}

// ServerTasksCapability declares which task features a server offers as a
// task receiver.
type ServerTasksCapability struct {
	// List is set if the server answers tasks/list.
	List *Capability `json:"list,omitempty"`
	// Cancel is set if the server answers tasks/cancel.
	Cancel *Capability `json:"cancel,omitempty"`
	// Requests lists the requests the server runs as tasks.
	Requests *ServerTaskRequests `json:"requests,omitempty"`
}

// ServerTaskRequests lists the client-to-server requests a server accepts
// with task augmentation.
type ServerTaskRequests struct {
	// Tools covers tool requests.
	Tools *ToolsTaskRequests `json:"tools,omitempty"`
}

// ToolsTaskRequests lists the tool requests that may run as tasks.
type ToolsTaskRequests struct {
	// Call is set if tools/call may run as a task.
	Call *Capability `json:"call,omitempty"`
}

// checkExtensions checks that every extension identifier is a _meta-style
// key with a prefix and every settings value a JSON object
// (basic/versioning, "Extension Negotiation").
func checkExtensions(typ string, m map[string]json.RawMessage) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := ValidMetaKey(k); err != nil || !strings.Contains(k, "/") {
			return invalid(typ, "extensions."+k, "must be an identifier with a prefix")
		}
		if !isJSONObject(m[k]) {
			return invalid(typ, "extensions."+k, "must be a JSON object")
		}
	}
	return nil
}

func checkExperimental(typ string, m map[string]json.RawMessage) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !isJSONObject(m[k]) {
			return invalid(typ, "experimental."+k, "must be a JSON object")
		}
	}
	return nil
}

// InitializeRequestParams is the params of initialize.
type InitializeRequestParams struct {
	// ProtocolVersion is the revision the client proposes, normally its
	// latest. Required.
	ProtocolVersion string `json:"protocolVersion"`
	// Capabilities are the client's capabilities.
	Capabilities ClientCapabilities `json:"capabilities"`
	// ClientInfo names the client.
	ClientInfo Implementation `json:"clientInfo"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate checks the version, capabilities and client info.
func (p *InitializeRequestParams) Validate() error {
	const typ = "InitializeRequestParams"
	if err := checkRequired(typ, "protocolVersion", p.ProtocolVersion); err != nil {
		return err
	}
	if err := inField(typ, "capabilities", p.Capabilities.Validate()); err != nil {
		return err
	}
	return inField(typ, "clientInfo", p.ClientInfo.Validate())
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	// ProtocolVersion is the revision the server chose: the client's if the
	// server supports it. Required.
	ProtocolVersion string `json:"protocolVersion"`
	// Capabilities are the server's capabilities.
	Capabilities ServerCapabilities `json:"capabilities"`
	// ServerInfo names the server.
	ServerInfo Implementation `json:"serverInfo"`
	// Instructions tell the client how to use the server; a client may give
	// them to the model.
	Instructions string `json:"instructions,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate checks the version, capabilities and server info.
func (r *InitializeResult) Validate() error {
	const typ = "InitializeResult"
	if err := checkRequired(typ, "protocolVersion", r.ProtocolVersion); err != nil {
		return err
	}
	if err := inField(typ, "capabilities", r.Capabilities.Validate()); err != nil {
		return err
	}
	return inField(typ, "serverInfo", r.ServerInfo.Validate())
}
