package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// Resource is a piece of data a server offers, as listed by resources/list.
type Resource struct {
	// URI identifies the resource. Required.
	URI string `json:"uri"`
	// Name is the programmatic name. Required.
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

// Validate checks the required fields, the size, annotations and icons.
func (r *Resource) Validate() error {
	const typ = "Resource"
	if err := checkRequired(typ, "uri", r.URI); err != nil {
		return err
	}
	if err := checkRequired(typ, "name", r.Name); err != nil {
		return err
	}
	if err := checkNonNegative(typ, "size", r.Size); err != nil {
		return err
	}
	if err := validateAnnotations(typ, r.Annotations); err != nil {
		return err
	}
	return checkIcons(typ, r.Icons)
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template, as listed by resources/templates/list.
type ResourceTemplate struct {
	// URITemplate is the RFC 6570 template. Required.
	URITemplate string `json:"uriTemplate"`
	// Name is the programmatic name. Required.
	Name string `json:"name"`
	// Title is a human-readable display name.
	Title string `json:"title,omitempty"`
	// Description describes the resources.
	Description string `json:"description,omitempty"`
	// MIMEType is the media type, set only if every match shares it.
	MIMEType string `json:"mimeType,omitempty"`
	// Annotations are optional hints for the client.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Icons are images for the template.
	Icons []Icon `json:"icons,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate checks the required fields, annotations and icons.
func (t *ResourceTemplate) Validate() error {
	const typ = "ResourceTemplate"
	if err := checkRequired(typ, "uriTemplate", t.URITemplate); err != nil {
		return err
	}
	if err := checkRequired(typ, "name", t.Name); err != nil {
		return err
	}
	if err := validateAnnotations(typ, t.Annotations); err != nil {
		return err
	}
	return checkIcons(typ, t.Icons)
}

// ResourceContents is the contents of a resource: a *TextResourceContents
// or a *BlobResourceContents; no other type can implement it. Structs
// holding ResourceContents decode it as text when the object has a "text"
// member and as a blob when it has a "blob" member, and refuse an object
// with both or neither (with an error wrapping ErrInvalidType).
//
// The schema's ResourceContents definition, the fields the two share, is
// the pair URI and MIMEType.
type ResourceContents interface {
	resourceContents()
}

// TextResourceContents is the contents of a text resource.
type TextResourceContents struct {
	// URI identifies the resource. Required.
	URI string `json:"uri"`
	// MIMEType is the media type, if known.
	MIMEType string `json:"mimeType,omitempty"`
	// Text is the resource's text; it may be empty.
	Text string `json:"text"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

func (*TextResourceContents) resourceContents() {}

// Validate reports an error if URI is empty.
func (c *TextResourceContents) Validate() error {
	return checkRequired("TextResourceContents", "uri", c.URI)
}

// BlobResourceContents is the contents of a binary resource.
type BlobResourceContents struct {
	// URI identifies the resource. Required.
	URI string `json:"uri"`
	// MIMEType is the media type, if known.
	MIMEType string `json:"mimeType,omitempty"`
	// Blob is the resource's bytes; JSON carries them in standard base64.
	Blob []byte `json:"blob"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

func (*BlobResourceContents) resourceContents() {}

// MarshalJSON encodes c; a nil Blob encodes as "".
func (c BlobResourceContents) MarshalJSON() ([]byte, error) {
	type wire BlobResourceContents
	w := wire(c)
	if w.Blob == nil {
		w.Blob = []byte{}
	}
	return json.Marshal(w)
}

// Validate reports an error if URI is empty.
func (c *BlobResourceContents) Validate() error {
	return checkRequired("BlobResourceContents", "uri", c.URI)
}

func decodeResourceContents(data []byte) (ResourceContents, error) {
	var head struct {
		Text json.RawMessage `json:"text"`
		Blob json.RawMessage `json:"blob"`
	}
	if err := strictjson.Unmarshal(data, &head); err != nil {
		return nil, err
	}
	var rc ResourceContents
	switch text, blob := present(head.Text), present(head.Blob); {
	case text && blob:
		return nil, fmt.Errorf("%w: resource contents has both text and blob", ErrInvalidType)
	case text:
		rc = new(TextResourceContents)
	case blob:
		rc = new(BlobResourceContents)
	default:
		return nil, fmt.Errorf("%w: resource contents has neither text nor blob", ErrInvalidType)
	}
	if err := strictjson.Unmarshal(data, rc); err != nil {
		return nil, err
	}
	return rc, nil
}

func validateResourceContents(typ, field string, rc ResourceContents) error {
	switch rc := rc.(type) {
	case *TextResourceContents:
		if rc != nil {
			return inField(typ, field, rc.Validate())
		}
	case *BlobResourceContents:
		if rc != nil {
			return inField(typ, field, rc.Validate())
		}
	}
	return invalid(typ, field, "is missing")
}

// ListResourcesResult is the result of resources/list.
type ListResourcesResult struct {
	// Resources is this page of resources; nil encodes as [].
	Resources []Resource `json:"resources"`
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

// MarshalJSON encodes r with Resources as [] when nil.
func (r ListResourcesResult) MarshalJSON() ([]byte, error) {
	type wire ListResourcesResult
	w := wire(r)
	if w.Resources == nil {
		w.Resources = []Resource{}
	}
	return json.Marshal(w)
}

// Validate checks each resource.
func (r *ListResourcesResult) Validate() error {
	for i := range r.Resources {
		if err := r.Resources[i].Validate(); err != nil {
			return inField("ListResourcesResult", indexed("resources", i), err)
		}
	}
	return nil
}

// ListResourceTemplatesResult is the result of resources/templates/list.
type ListResourceTemplatesResult struct {
	// ResourceTemplates is this page of templates; nil encodes as [].
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
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

// MarshalJSON encodes r with ResourceTemplates as [] when nil.
func (r ListResourceTemplatesResult) MarshalJSON() ([]byte, error) {
	type wire ListResourceTemplatesResult
	w := wire(r)
	if w.ResourceTemplates == nil {
		w.ResourceTemplates = []ResourceTemplate{}
	}
	return json.Marshal(w)
}

// Validate checks each template.
func (r *ListResourceTemplatesResult) Validate() error {
	for i := range r.ResourceTemplates {
		if err := r.ResourceTemplates[i].Validate(); err != nil {
			return inField("ListResourceTemplatesResult", indexed("resourceTemplates", i), err)
		}
	}
	return nil
}

// ReadResourceRequestParams is the params of resources/read.
type ReadResourceRequestParams struct {
	// URI is the resource to read. Required.
	URI string `json:"uri"`
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

// Validate reports an error if URI is empty.
func (p *ReadResourceRequestParams) Validate() error {
	return checkRequired("ReadResourceRequestParams", "uri", p.URI)
}

// ReadResourceResult is the result of resources/read.
type ReadResourceResult struct {
	// Contents holds the resource's contents, possibly with sub-resources:
	// *TextResourceContents and *BlobResourceContents. nil encodes as [].
	Contents []ResourceContents `json:"contents"`
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

// MarshalJSON encodes r with Contents as [] when nil.
func (r ReadResourceResult) MarshalJSON() ([]byte, error) {
	type wire ReadResourceResult
	w := wire(r)
	if w.Contents == nil {
		w.Contents = []ResourceContents{}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes r, telling text from blob contents.
func (r *ReadResourceResult) UnmarshalJSON(data []byte) error {
	type wire ReadResourceResult
	var w struct {
		Contents []json.RawMessage `json:"contents"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Contents != nil {
		w.wire.Contents = make([]ResourceContents, len(w.Contents))
		for i, raw := range w.Contents {
			rc, err := decodeResourceContents(raw)
			if err != nil {
				return fmt.Errorf("contents[%d]: %w", i, err)
			}
			w.wire.Contents[i] = rc
		}
	}
	*r = ReadResourceResult(w.wire)
	return nil
}

// Validate checks each item of Contents.
func (r *ReadResourceResult) Validate() error {
	for i, rc := range r.Contents {
		if err := validateResourceContents("ReadResourceResult", indexed("contents", i), rc); err != nil {
			return err
		}
	}
	return nil
}

// SubscribeRequestParams is the params of resources/subscribe.
type SubscribeRequestParams struct {
	// URI is the resource to watch. Required.
	URI string `json:"uri"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate reports an error if URI is empty.
func (p *SubscribeRequestParams) Validate() error {
	return checkRequired("SubscribeRequestParams", "uri", p.URI)
}

// UnsubscribeRequestParams is the params of resources/unsubscribe.
type UnsubscribeRequestParams struct {
	// URI is the resource to stop watching. Required.
	URI string `json:"uri"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate reports an error if URI is empty.
func (p *UnsubscribeRequestParams) Validate() error {
	return checkRequired("UnsubscribeRequestParams", "uri", p.URI)
}

// ResourceUpdatedNotificationParams is the params of
// notifications/resources/updated.
type ResourceUpdatedNotificationParams struct {
	// URI is the resource that changed, possibly a sub-resource of the one
	// subscribed to. Required.
	URI string `json:"uri"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate reports an error if URI is empty.
func (p *ResourceUpdatedNotificationParams) Validate() error {
	return checkRequired("ResourceUpdatedNotificationParams", "uri", p.URI)
}
