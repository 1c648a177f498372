package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/internal/jsonfast"
	"github.com/mcpstack/mcpstack/internal/strictjson"
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
	// Arguments is the tool's arguments, a JSON object. On a server, it
	// may share memory with the request it arrived in: do not modify it.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Task, if set, asks the server to run the call as a task.
	Task *TaskMetadata `json:"task,omitempty"`
	// Meta holds protocol and application metadata; its progressToken entry
	// asks for progress notifications. On a server, for a call of revision
	// 2026-07-28, it holds the request's _meta without the protocol keys
	// that RequestMetaFromContext gives (protocolVersion,
	// clientCapabilities, clientInfo, logLevel), nil if nothing else was
	// sent; values are decoded as Meta.UnmarshalJSON decodes them.
	Meta Meta `json:"_meta,omitempty"`
	// InputResponses, on a retry (revision 2026-07-28, MRTR), are the
	// client's results for the InputRequests of the server's
	// InputRequiredResult.
	InputResponses InputResponses `json:"inputResponses,omitempty"`
	// RequestState, on a retry (revision 2026-07-28, MRTR), echoes the
	// RequestState of the server's InputRequiredResult.
	RequestState string `json:"requestState,omitempty"`
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
	return r.AppendJSON(nil)
}

// AppendJSON appends the JSON encoding of r to b: the same bytes as
// json.Marshal(r), produced without encoding/json for text content and
// structured content that needs no compaction, which makes it fast for
// large results. A nil r encodes as null. It implements
// jsonrpc.JSONAppender, so that a tools/call result is encoded this way.
func (r *CallToolResult) AppendJSON(b []byte) ([]byte, error) {
	if r == nil {
		return append(b, "null"...), nil
	}
	if b == nil {
		b = make([]byte, 0, r.sizeHint())
	}
	if out, ok := r.appendJSON(b); ok {
		return out, nil
	}
	raw, err := r.marshalWire()
	if err != nil {
		return b, err
	}
	return append(b, raw...), nil
}

// sizeHint is about the size of r's encoding when its text needs no
// escaping.
func (r *CallToolResult) sizeHint() int {
	n := 64 + len(r.StructuredContent)
	for _, c := range r.Content {
		n += 32
		if t, ok := c.(*TextContent); ok && t != nil {
			n += len(t.Text)
		}
	}
	return n
}

// appendJSON is AppendJSON's fast path; it reports false if it met a value
// it cannot encode (the caller then starts over with marshalWire).
func (r *CallToolResult) appendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"content":[`...)
	var ok bool
	for i, c := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = appendContent(b, c); !ok {
			return b, false
		}
	}
	b = append(b, ']')
	if len(r.StructuredContent) > 0 {
		b = append(b, `,"structuredContent":`...)
		if b, ok = appendRawMessage(b, r.StructuredContent); !ok {
			return b, false
		}
	}
	if r.IsError != nil {
		b = append(b, `,"isError":`...)
		b = strconv.AppendBool(b, *r.IsError)
	}
	if len(r.Meta) > 0 {
		b = append(b, `,"_meta":`...)
		if b, ok = appendMarshal(b, r.Meta); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// marshalWire is the encoding/json encoding of r that AppendJSON must
// reproduce.
func (r *CallToolResult) marshalWire() ([]byte, error) {
	type wire CallToolResult
	w := wire(*r)
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
	if err := strictjson.Unmarshal(data, &w); err != nil {
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

// largeArguments is the size of tools/call arguments from which
// decodeCallToolParams decodes them apart from params members it does not
// know.
const largeArguments = 1 << 10

// decodeCallToolParams decodes raw into p as parseParams does, with the
// same result and the same errors, but without encoding/json, which would
// check the arguments, copy them and then check them again in Validate.
// When raw is an object whose "arguments" member is an object and appears
// once, spelled exactly (a member whose name matches it only
// case-insensitively sends the whole of raw to parseParams, which ignores
// it as unknown), the arguments, checked
// here word by word, are not copied (see below); a "name" member holding a string is
// read here too; any other members go through parseParams on their own,
// when the arguments are large. Anything else, and any error, takes
// parseParams on the whole of raw.
func decodeCallToolParams(raw json.RawMessage, p *CallToolRequestParams) error {
	sp, ok := splitCallTool(raw)
	if !ok || (sp.rest != nil && len(sp.args) < largeArguments) {
		return parseParams(raw, p)
	}
	*p = CallToolRequestParams{}
	var err error
	if sp.rest != nil {
		err = parseParams(sp.rest, p)
	} else {
		p.Name = sp.name
		err = p.Validate()
	}
	if err != nil {
		*p = CallToolRequestParams{}
		return parseParams(raw, p)
	}
	// The arguments share the request's memory rather than being copied:
	// a decoded jsonrpc.Request owns its data (the transport never reuses
	// it), and a megabyte copied per call is costly. Handlers must treat
	// Arguments as read-only, as the field's documentation says.
	p.Arguments = sp.args[:len(sp.args):len(sp.args)]
	return nil
}

// callToolSplit is tools/call params taken apart by splitCallTool.
type callToolSplit struct {
	args []byte // the arguments object's text
	name string // the name, when rest is nil
	rest []byte // the params without the arguments; nil if they hold only a name
}

// splitCallTool finds, in the object raw, an "arguments" member holding an
// object and returns it with the rest of the object: either just the
// value of a string "name" member, when that is all the rest holds, or the
// object without the arguments. ok is false if raw is not a valid JSON
// object, or its arguments are absent, not an object, repeated or in
// doubt.
func splitCallTool(raw []byte) (sp callToolSplit, ok bool) {
	const maxDepth = 10000
	i := jsonfast.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return sp, false
	}
	astart, aend, vstart := -1, -1, -1 // the member, from its name; its value
	nstart, nend := -1, -1             // the name's value
	other := false
	i = jsonfast.SkipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return sp, false
	}
	for {
		i = jsonfast.SkipSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return sp, false
		}
		kstart := i
		kend, escaped, ok := jsonfast.ScanString(raw, i)
		if !ok || escaped {
			return sp, false
		}
		key := raw[kstart+1 : kend-1]
		i = jsonfast.SkipSpace(raw, kend)
		if i >= len(raw) || raw[i] != ':' {
			return sp, false
		}
		vs := jsonfast.SkipSpace(raw, i+1)
		if i, ok = jsonfast.SkipValue(raw, vs, 1, maxDepth); !ok {
			return sp, false
		}
		switch {
		case string(key) == "arguments":
			if astart >= 0 || raw[vs] != '{' {
				return sp, false
			}
			astart, vstart, aend = kstart, vs, i
		case bytes.EqualFold(key, []byte("arguments")) || !isASCII(key):
			return sp, false
		case string(key) == "name" && nstart < 0 && raw[vs] == '"':
			nstart, nend = vs, i
		default:
			other = true
		}
		i = jsonfast.SkipSpace(raw, i)
		if i >= len(raw) {
			return sp, false
		}
		if raw[i] == '}' {
			i++
			break
		}
		if raw[i] != ',' {
			return sp, false
		}
		i++
	}
	if jsonfast.SkipSpace(raw, i) != len(raw) || astart < 0 {
		return sp, false
	}
	sp.args = raw[vstart:aend]
	if !other {
		if nstart >= 0 {
			_, escaped, _ := jsonfast.ScanString(raw, nstart)
			sp.name = jsonfast.Unquote(raw[nstart:nend], escaped)
		}
		return sp, true
	}
	// Cut the member out with the comma that joins it to a neighbour.
	before := bytes.TrimRight(raw[:astart], " \t\r\n")
	after := raw[jsonfast.SkipSpace(raw, aend):]
	rest := make([]byte, 0, len(before)+len(after))
	if before[len(before)-1] == ',' { // a member comes before
		rest = append(append(rest, before[:len(before)-1]...), after...)
	} else if after[0] == ',' { // the first member, with others after it
		rest = append(append(rest, before...), after[1:]...)
	} else { // the only member
		rest = append(append(rest, before...), after...)
	}
	sp.rest = rest
	return sp, true
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
