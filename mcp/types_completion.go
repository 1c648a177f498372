package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// Completion reference types.
const (
	RefTypePrompt   = "ref/prompt"
	RefTypeResource = "ref/resource"
)

// CompleteReference is what a completion/complete request completes an
// argument of: a *PromptReference or a *ResourceTemplateReference; no
// other type can implement it. Decoding chooses by "type" and refuses an
// unknown one with an error wrapping ErrInvalidType.
type CompleteReference interface {
	refType() string
}

// PromptReference refers to a prompt. It encodes with "type":
// "ref/prompt".
type PromptReference struct {
	// Name is the prompt's name. Required.
	Name string `json:"name"`
	// Title is a human-readable display name.
	Title string `json:"title,omitempty"`
}

func (*PromptReference) refType() string { return RefTypePrompt }

// MarshalJSON encodes r with "type": "ref/prompt".
func (r PromptReference) MarshalJSON() ([]byte, error) {
	type wire PromptReference
	return marshalTagged("type", RefTypePrompt, wire(r))
}

// UnmarshalJSON decodes r, refusing any "type" but "ref/prompt".
func (r *PromptReference) UnmarshalJSON(data []byte) error {
	type wire PromptReference
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("PromptReference", "type", RefTypePrompt, w.Type); err != nil {
		return err
	}
	*r = PromptReference(w.wire)
	return nil
}

// Validate reports an error if Name is empty.
func (r *PromptReference) Validate() error {
	return checkRequired("PromptReference", "name", r.Name)
}

// ResourceTemplateReference refers to a resource template (or a resource).
// It encodes with "type": "ref/resource".
type ResourceTemplateReference struct {
	// URI is the URI or URI template. Required.
	URI string `json:"uri"`
}

func (*ResourceTemplateReference) refType() string { return RefTypeResource }

// MarshalJSON encodes r with "type": "ref/resource".
func (r ResourceTemplateReference) MarshalJSON() ([]byte, error) {
	type wire ResourceTemplateReference
	return marshalTagged("type", RefTypeResource, wire(r))
}

// UnmarshalJSON decodes r, refusing any "type" but "ref/resource".
func (r *ResourceTemplateReference) UnmarshalJSON(data []byte) error {
	type wire ResourceTemplateReference
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("ResourceTemplateReference", "type", RefTypeResource, w.Type); err != nil {
		return err
	}
	*r = ResourceTemplateReference(w.wire)
	return nil
}

// Validate reports an error if URI is empty.
func (r *ResourceTemplateReference) Validate() error {
	return checkRequired("ResourceTemplateReference", "uri", r.URI)
}

func decodeCompleteReference(data []byte) (CompleteReference, error) {
	var head struct {
		Type *string `json:"type"`
	}
	if err := strictjson.Unmarshal(data, &head); err != nil {
		return nil, err
	}
	var ref CompleteReference
	switch {
	case head.Type == nil:
		return nil, fmt.Errorf("%w: reference has no type", ErrInvalidType)
	case *head.Type == RefTypePrompt:
		ref = new(PromptReference)
	case *head.Type == RefTypeResource:
		ref = new(ResourceTemplateReference)
	default:
		return nil, fmt.Errorf("%w: unknown reference type %q", ErrInvalidType, *head.Type)
	}
	if err := strictjson.Unmarshal(data, ref); err != nil {
		return nil, err
	}
	return ref, nil
}

// CompleteArgument is the argument being completed.
type CompleteArgument struct {
	// Name is the argument's name.
	Name string `json:"name"`
	// Value is what the user has typed so far.
	Value string `json:"value"`
}

// CompleteContext holds what is known besides the argument being
// completed.
type CompleteContext struct {
	// Arguments are the values of arguments already resolved.
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteRequestParams is the params of completion/complete.
type CompleteRequestParams struct {
	// Ref is the prompt or resource template whose argument is completed.
	// Required.
	Ref CompleteReference `json:"ref"`
	// Argument is the argument being completed.
	Argument CompleteArgument `json:"argument"`
	// Context holds arguments already resolved.
	Context *CompleteContext `json:"context,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// UnmarshalJSON decodes p, choosing the reference's type.
func (p *CompleteRequestParams) UnmarshalJSON(data []byte) error {
	type wire CompleteRequestParams
	var w struct {
		Ref json.RawMessage `json:"ref"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if present(w.Ref) {
		ref, err := decodeCompleteReference(w.Ref)
		if err != nil {
			return fmt.Errorf("ref: %w", err)
		}
		w.wire.Ref = ref
	}
	*p = CompleteRequestParams(w.wire)
	return nil
}

// Validate checks the reference and the argument's name.
func (p *CompleteRequestParams) Validate() error {
	const typ = "CompleteRequestParams"
	if isNil(p.Ref) {
		return invalid(typ, "ref", "is required")
	}
	if v, ok := p.Ref.(validator); ok {
		if err := v.Validate(); err != nil {
			return inField(typ, "ref", err)
		}
	}
	return checkRequired(typ, "argument.name", p.Argument.Name)
}

// MaxCompletionValues is the most values a CompleteResult may hold.
const MaxCompletionValues = 100

// Completion is the completion member of a CompleteResult.
type Completion struct {
	// Values are the suggestions, most relevant first, at most
	// MaxCompletionValues; nil encodes as [].
	Values []string `json:"values"`
	// Total is the number of suggestions available, which may exceed
	// len(Values).
	Total *int `json:"total,omitempty"`
	// HasMore says whether more suggestions exist than Values holds.
	HasMore *bool `json:"hasMore,omitempty"`
}

// MarshalJSON encodes c with Values as [] when nil.
func (c Completion) MarshalJSON() ([]byte, error) {
	type wire Completion
	w := wire(c)
	if w.Values == nil {
		w.Values = []string{}
	}
	return json.Marshal(w)
}

// CompleteResult is the result of completion/complete.
type CompleteResult struct {
	// Completion holds the suggestions.
	Completion Completion `json:"completion"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate checks the number of values and the total.
func (r *CompleteResult) Validate() error {
	const typ = "CompleteResult"
	if len(r.Completion.Values) > MaxCompletionValues {
		return invalid(typ, "completion.values", fmt.Sprintf("has %d values; at most %d are allowed", len(r.Completion.Values), MaxCompletionValues))
	}
	if t := r.Completion.Total; t != nil && *t < 0 {
		return invalid(typ, "completion.total", "must not be negative")
	}
	return nil
}
