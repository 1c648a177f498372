package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpstack/mcpstack/internal/jsonfast"
	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// Content is a block of content: in a tool result, a prompt message, a
// sampling message or an embedded tool result. The concrete types are
// *TextContent, *ImageContent, *AudioContent, *ResourceLink,
// *EmbeddedResource, *ToolUseContent and *ToolResultContent; no other type
// can implement Content.
//
// Each concrete type encodes with its "type" member ("text", "image",
// "audio", "resource_link", "resource", "tool_use", "tool_result"). A struct
// that holds Content decodes it by that member, and refuses, with an error
// wrapping ErrInvalidType, a type that is unknown or not allowed in that
// position: tool results and prompt messages take ContentBlock types only;
// sampling messages take text, image, audio, tool_use and tool_result.
type Content interface {
	contentType() string
}

// ContentBlock is the schema's union of the content types allowed in tool
// results, prompt messages and tool_result blocks: *TextContent,
// *ImageContent, *AudioContent, *ResourceLink and *EmbeddedResource.
type ContentBlock = Content

// SamplingMessageContentBlock is the schema's union of the content types
// allowed in sampling messages: *TextContent, *ImageContent, *AudioContent,
// *ToolUseContent and *ToolResultContent.
type SamplingMessageContentBlock = Content

// Content type discriminators.
const (
	ContentTypeText         = "text"
	ContentTypeImage        = "image"
	ContentTypeAudio        = "audio"
	ContentTypeResourceLink = "resource_link"
	ContentTypeResource     = "resource"
	ContentTypeToolUse      = "tool_use"
	ContentTypeToolResult   = "tool_result"
)

// contentSet is a set of content types allowed in one position.
type contentSet uint8

const (
	allowText contentSet = 1 << iota
	allowImage
	allowAudio
	allowResourceLink
	allowResource
	allowToolUse
	allowToolResult

	contentBlockSet    = allowText | allowImage | allowAudio | allowResourceLink | allowResource
	samplingContentSet = allowText | allowImage | allowAudio | allowToolUse | allowToolResult
)

func contentBit(t string) contentSet {
	switch t {
	case ContentTypeText:
		return allowText
	case ContentTypeImage:
		return allowImage
	case ContentTypeAudio:
		return allowAudio
	case ContentTypeResourceLink:
		return allowResourceLink
	case ContentTypeResource:
		return allowResource
	case ContentTypeToolUse:
		return allowToolUse
	case ContentTypeToolResult:
		return allowToolResult
	}
	return 0
}

func newContent(t string) Content {
	switch t {
	case ContentTypeText:
		return new(TextContent)
	case ContentTypeImage:
		return new(ImageContent)
	case ContentTypeAudio:
		return new(AudioContent)
	case ContentTypeResourceLink:
		return new(ResourceLink)
	case ContentTypeResource:
		return new(EmbeddedResource)
	case ContentTypeToolUse:
		return new(ToolUseContent)
	case ContentTypeToolResult:
		return new(ToolResultContent)
	}
	return nil
}

// decodeContent decodes one content block whose type must be in allowed.
func decodeContent(data []byte, allowed contentSet) (Content, error) {
	var head struct {
		Type *string `json:"type"`
	}
	if err := strictjson.Unmarshal(data, &head); err != nil {
		return nil, err
	}
	if head.Type == nil {
		return nil, fmt.Errorf("%w: content block has no type", ErrInvalidType)
	}
	c := newContent(*head.Type)
	if c == nil {
		return nil, fmt.Errorf("%w: unknown content type %q", ErrInvalidType, *head.Type)
	}
	if contentBit(*head.Type)&allowed == 0 {
		return nil, fmt.Errorf("%w: content type %q is not allowed here", ErrInvalidType, *head.Type)
	}
	if err := strictjson.Unmarshal(data, c); err != nil {
		return nil, err
	}
	return c, nil
}

func decodeContentList(raws []json.RawMessage, allowed contentSet) ([]Content, error) {
	if raws == nil {
		return nil, nil
	}
	out := make([]Content, len(raws))
	for i, raw := range raws {
		c, err := decodeContent(raw, allowed)
		if err != nil {
			return nil, fmt.Errorf("content[%d]: %w", i, err)
		}
		out[i] = c
	}
	return out, nil
}

// decodeContentOneOrMany decodes a sampling message's content: one block or
// an array of blocks.
func decodeContentOneOrMany(raw json.RawMessage, allowed contentSet) ([]Content, error) {
	if !present(raw) {
		return nil, nil
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); t[0] == '[' {
		var raws []json.RawMessage
		if err := strictjson.Unmarshal(raw, &raws); err != nil {
			return nil, err
		}
		if raws == nil {
			raws = []json.RawMessage{}
		}
		return decodeContentList(raws, allowed)
	}
	c, err := decodeContent(raw, allowed)
	if err != nil {
		return nil, err
	}
	return []Content{c}, nil
}

// marshalContentOneOrMany encodes one block as an object and zero or
// several as an array.
func marshalContentOneOrMany(cs []Content) any {
	if len(cs) == 1 {
		return cs[0]
	}
	if cs == nil {
		return []Content{}
	}
	return cs
}

// validateContents checks that every block is present, allowed and valid.
func validateContents(typ, field string, cs []Content, allowed contentSet) error {
	for i, c := range cs {
		f := indexed(field, i)
		if err := validateContent(typ, f, c, allowed); err != nil {
			return err
		}
	}
	return nil
}

func validateContent(typ, field string, c Content, allowed contentSet) error {
	if isNilContent(c) {
		return invalid(typ, field, "is missing")
	}
	if contentBit(c.contentType())&allowed == 0 {
		return invalid(typ, field, fmt.Sprintf("content type %q is not allowed here", c.contentType()))
	}
	if v, ok := c.(validator); ok {
		return inField(typ, field, v.Validate())
	}
	return nil
}

func isNilContent(c Content) bool {
	switch c := c.(type) {
	case nil:
		return true
	case *TextContent:
		return c == nil
	case *ImageContent:
		return c == nil
	case *AudioContent:
		return c == nil
	case *ResourceLink:
		return c == nil
	case *EmbeddedResource:
		return c == nil
	case *ToolUseContent:
		return c == nil
	case *ToolResultContent:
		return c == nil
	}
	return false
}

// marshalTagged encodes v, a struct, as a JSON object whose first member is
// "key": value. value must not need JSON escaping.
func marshalTagged(key, value string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(key)+len(value)+8)
	out = append(out, `{"`...)
	out = append(out, key...)
	out = append(out, `":"`...)
	out = append(out, value...)
	out = append(out, '"')
	if len(b) > 2 {
		out = append(out, ',')
		out = append(out, b[1:]...)
	} else {
		out = append(out, '}')
	}
	return out, nil
}

func checkTag(typ, key, want, got string) error {
	if got != want {
		return fmt.Errorf("%w: %s needs %s %q, got %q", ErrInvalidType, typ, key, want, got)
	}
	return nil
}

// TextContent is a block of text.
type TextContent struct {
	// Text is the text; it may be empty.
	Text string `json:"text"`
	// Annotations are optional hints for the client.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

func (*TextContent) contentType() string { return ContentTypeText }

// MarshalJSON encodes c with "type": "text".
func (c TextContent) MarshalJSON() ([]byte, error) {
	return c.AppendJSON(nil)
}

// AppendJSON appends the JSON encoding of c to b: the same bytes as
// json.Marshal(c), with the text escaped eight bytes at a time where it
// needs no escaping. A nil c encodes as null.
func (c *TextContent) AppendJSON(b []byte) ([]byte, error) {
	if c == nil {
		return append(b, "null"...), nil
	}
	b0 := b
	b = append(b, `{"type":"text","text":`...)
	b = jsonfast.AppendString(b, c.Text)
	var ok bool
	if c.Annotations != nil {
		b = append(b, `,"annotations":`...)
		if b, ok = appendMarshal(b, c.Annotations); !ok {
			return c.appendWire(b0)
		}
	}
	if len(c.Meta) > 0 {
		b = append(b, `,"_meta":`...)
		if b, ok = appendMarshal(b, c.Meta); !ok {
			return c.appendWire(b0)
		}
	}
	return append(b, '}'), nil
}

// appendWire appends the encoding/json encoding of c that AppendJSON must
// reproduce (and returns its error).
func (c *TextContent) appendWire(b []byte) ([]byte, error) {
	type wire TextContent
	raw, err := marshalTagged("type", ContentTypeText, wire(*c))
	if err != nil {
		return b, err
	}
	return append(b, raw...), nil
}

// appendContent appends one content block of a list as json.Marshal would
// encode it; false means it could not (an encoding error).
func appendContent(b []byte, c Content) ([]byte, bool) {
	switch c := c.(type) {
	case nil:
		return append(b, "null"...), true
	case *TextContent:
		out, err := c.AppendJSON(b)
		return out, err == nil
	}
	return appendMarshal(b, c)
}

// appendMarshal appends json.Marshal(v); false means it failed.
func appendMarshal(b []byte, v any) ([]byte, bool) {
	raw, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, raw...), true
}

// appendRawMessage appends raw as encoding/json encodes a json.RawMessage
// field: compacted, with '<', '>', '&', U+2028 and U+2029 escaped in its
// strings. Valid JSON holding none of the bytes that this changes is
// copied as it is; false means raw is not valid JSON.
func appendRawMessage(b []byte, raw json.RawMessage) ([]byte, bool) {
	if !jsonfast.NeedsCompact(raw) && jsonrpc.Valid(raw) {
		return append(b, raw...), true
	}
	return appendMarshal(b, raw)
}

// UnmarshalJSON decodes c, refusing any "type" but "text".
func (c *TextContent) UnmarshalJSON(data []byte) error {
	type wire TextContent
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("TextContent", "type", ContentTypeText, w.Type); err != nil {
		return err
	}
	*c = TextContent(w.wire)
	return nil
}

// Validate checks the annotations.
func (c *TextContent) Validate() error {
	return validateAnnotations("TextContent", c.Annotations)
}

// ImageContent is an image, carried as base64 in JSON.
type ImageContent struct {
	// Data is the image bytes; JSON carries them in standard base64.
	Data []byte `json:"data"`
	// MIMEType is the image's media type, such as "image/png". Required.
	MIMEType string `json:"mimeType"`
	// Annotations are optional hints for the client.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

func (*ImageContent) contentType() string { return ContentTypeImage }

// MarshalJSON encodes c with "type": "image".
func (c ImageContent) MarshalJSON() ([]byte, error) {
	type wire ImageContent
	w := wire(c)
	if w.Data == nil {
		w.Data = []byte{}
	}
	return marshalTagged("type", ContentTypeImage, w)
}

// UnmarshalJSON decodes c, refusing any "type" but "image".
func (c *ImageContent) UnmarshalJSON(data []byte) error {
	type wire ImageContent
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("ImageContent", "type", ContentTypeImage, w.Type); err != nil {
		return err
	}
	*c = ImageContent(w.wire)
	return nil
}

// Validate checks that MIMEType is set, and the annotations.
func (c *ImageContent) Validate() error {
	if err := checkRequired("ImageContent", "mimeType", c.MIMEType); err != nil {
		return err
	}
	return validateAnnotations("ImageContent", c.Annotations)
}

// AudioContent is audio, carried as base64 in JSON.
type AudioContent struct {
	// Data is the audio bytes; JSON carries them in standard base64.
	Data []byte `json:"data"`
	// MIMEType is the audio's media type, such as "audio/wav". Required.
	MIMEType string `json:"mimeType"`
	// Annotations are optional hints for the client.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

func (*AudioContent) contentType() string { return ContentTypeAudio }

// MarshalJSON encodes c with "type": "audio".
func (c AudioContent) MarshalJSON() ([]byte, error) {
	type wire AudioContent
	w := wire(c)
	if w.Data == nil {
		w.Data = []byte{}
	}
	return marshalTagged("type", ContentTypeAudio, w)
}

// UnmarshalJSON decodes c, refusing any "type" but "audio".
func (c *AudioContent) UnmarshalJSON(data []byte) error {
	type wire AudioContent
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("AudioContent", "type", ContentTypeAudio, w.Type); err != nil {
		return err
	}
	*c = AudioContent(w.wire)
	return nil
}

// Validate checks that MIMEType is set, and the annotations.
func (c *AudioContent) Validate() error {
	if err := checkRequired("AudioContent", "mimeType", c.MIMEType); err != nil {
		return err
	}
	return validateAnnotations("AudioContent", c.Annotations)
}

// ResourceLink is a reference to a resource the client may read; the
// resource need not appear in resources/list.
type ResourceLink struct {
	// URI is the resource's URI. Required.
	URI string `json:"uri"`
	// Name is the resource's programmatic name. Required.
	Name string `json:"name"`
	// Title is a human-readable display name.
	Title string `json:"title,omitempty"`
	// Description describes the resource.
	Description string `json:"description,omitempty"`
	// MIMEType is the resource's media type, if known.
	MIMEType string `json:"mimeType,omitempty"`
	// Size is the raw content size in bytes, if known.
	Size *int64 `json:"size,omitempty"`
	// Annotations are optional hints for the client.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Icons are images for the resource.
	Icons []Icon `json:"icons,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

func (*ResourceLink) contentType() string { return ContentTypeResourceLink }

// MarshalJSON encodes l with "type": "resource_link".
func (l ResourceLink) MarshalJSON() ([]byte, error) {
	type wire ResourceLink
	return marshalTagged("type", ContentTypeResourceLink, wire(l))
}

// UnmarshalJSON decodes l, refusing any "type" but "resource_link".
func (l *ResourceLink) UnmarshalJSON(data []byte) error {
	type wire ResourceLink
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("ResourceLink", "type", ContentTypeResourceLink, w.Type); err != nil {
		return err
	}
	*l = ResourceLink(w.wire)
	return nil
}

// Validate checks the required fields, the size, annotations and icons.
func (l *ResourceLink) Validate() error {
	const typ = "ResourceLink"
	if err := checkRequired(typ, "uri", l.URI); err != nil {
		return err
	}
	if err := checkRequired(typ, "name", l.Name); err != nil {
		return err
	}
	if err := checkNonNegative(typ, "size", l.Size); err != nil {
		return err
	}
	if err := validateAnnotations(typ, l.Annotations); err != nil {
		return err
	}
	return checkIcons(typ, l.Icons)
}

// EmbeddedResource is the contents of a resource, embedded in a prompt or
// a tool result.
type EmbeddedResource struct {
	// Resource is a *TextResourceContents or a *BlobResourceContents.
	// Required.
	Resource ResourceContents `json:"resource"`
	// Annotations are optional hints for the client.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

func (*EmbeddedResource) contentType() string { return ContentTypeResource }

// MarshalJSON encodes r with "type": "resource".
func (r EmbeddedResource) MarshalJSON() ([]byte, error) {
	type wire EmbeddedResource
	return marshalTagged("type", ContentTypeResource, wire(r))
}

// UnmarshalJSON decodes r, refusing any "type" but "resource".
func (r *EmbeddedResource) UnmarshalJSON(data []byte) error {
	type wire EmbeddedResource
	var w struct {
		Type     string          `json:"type"`
		Resource json.RawMessage `json:"resource"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("EmbeddedResource", "type", ContentTypeResource, w.Type); err != nil {
		return err
	}
	if present(w.Resource) {
		rc, err := decodeResourceContents(w.Resource)
		if err != nil {
			return fmt.Errorf("resource: %w", err)
		}
		w.wire.Resource = rc
	}
	*r = EmbeddedResource(w.wire)
	return nil
}

// Validate checks that Resource is set and valid, and the annotations.
func (r *EmbeddedResource) Validate() error {
	const typ = "EmbeddedResource"
	if err := validateResourceContents(typ, "resource", r.Resource); err != nil {
		return err
	}
	return validateAnnotations(typ, r.Annotations)
}

// ToolUseContent is a model's request, inside a sampling result, to call a
// tool.
type ToolUseContent struct {
	// ID identifies this tool use; the ToolResultContent answering it
	// carries the same id. Required.
	ID string `json:"id"`
	// Name is the tool's name. Required.
	Name string `json:"name"`
	// Input is the tool's arguments, a JSON object; nil encodes as {}.
	Input json.RawMessage `json:"input"`
	// Meta holds protocol and application metadata; clients should keep it
	// when they send the block back.
	Meta Meta `json:"_meta,omitempty"`
}

func (*ToolUseContent) contentType() string { return ContentTypeToolUse }

// MarshalJSON encodes c with "type": "tool_use".
func (c ToolUseContent) MarshalJSON() ([]byte, error) {
	type wire ToolUseContent
	w := wire(c)
	if w.Input == nil {
		w.Input = json.RawMessage("{}")
	}
	return marshalTagged("type", ContentTypeToolUse, w)
}

// UnmarshalJSON decodes c, refusing any "type" but "tool_use".
func (c *ToolUseContent) UnmarshalJSON(data []byte) error {
	type wire ToolUseContent
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("ToolUseContent", "type", ContentTypeToolUse, w.Type); err != nil {
		return err
	}
	*c = ToolUseContent(w.wire)
	return nil
}

// Validate checks the required fields and that Input is an object.
func (c *ToolUseContent) Validate() error {
	const typ = "ToolUseContent"
	if err := checkRequired(typ, "id", c.ID); err != nil {
		return err
	}
	if err := checkRequired(typ, "name", c.Name); err != nil {
		return err
	}
	return checkObject(typ, "input", c.Input)
}

// ToolResultContent is the result of a tool use, sent back to the model in
// a sampling request.
type ToolResultContent struct {
	// ToolUseID is the ID of the ToolUseContent this answers. Required.
	ToolUseID string `json:"toolUseId"`
	// Content is the result, as ContentBlock values; nil encodes as [].
	Content []Content `json:"content"`
	// StructuredContent is an optional JSON object holding the result.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError, if true, says the tool use failed.
	IsError *bool `json:"isError,omitempty"`
	// Meta holds protocol and application metadata; clients should keep it
	// when they send the block back.
	Meta Meta `json:"_meta,omitempty"`
}

func (*ToolResultContent) contentType() string { return ContentTypeToolResult }

// MarshalJSON encodes c with "type": "tool_result".
func (c ToolResultContent) MarshalJSON() ([]byte, error) {
	type wire ToolResultContent
	w := wire(c)
	if w.Content == nil {
		w.Content = []Content{}
	}
	return marshalTagged("type", ContentTypeToolResult, w)
}

// UnmarshalJSON decodes c, refusing any "type" but "tool_result" and any
// content block that is not a ContentBlock.
func (c *ToolResultContent) UnmarshalJSON(data []byte) error {
	type wire ToolResultContent
	var w struct {
		Type    string            `json:"type"`
		Content []json.RawMessage `json:"content"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("ToolResultContent", "type", ContentTypeToolResult, w.Type); err != nil {
		return err
	}
	var err error
	if w.wire.Content, err = decodeContentList(w.Content, contentBlockSet); err != nil {
		return err
	}
	*c = ToolResultContent(w.wire)
	return nil
}

// Validate checks ToolUseID, the content blocks and that StructuredContent
// is an object.
func (c *ToolResultContent) Validate() error {
	const typ = "ToolResultContent"
	if err := checkRequired(typ, "toolUseId", c.ToolUseID); err != nil {
		return err
	}
	if err := validateContents(typ, "content", c.Content, contentBlockSet); err != nil {
		return err
	}
	return checkObject(typ, "structuredContent", c.StructuredContent)
}
