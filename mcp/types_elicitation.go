package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// Elicitation modes.
const (
	ElicitationModeForm = "form"
	ElicitationModeURL  = "url"
)

// ElicitRequestParams is the params of elicitation/create: an
// *ElicitRequestFormParams or an *ElicitRequestURLParams; no other type
// can implement it. Decoding chooses by the "mode" member: absent or
// "form" is form mode, "url" is URL mode, anything else is refused with an
// error wrapping ErrInvalidType.
type ElicitRequestParams interface {
	elicitationMode() string
}

func decodeElicitRequestParams(data []byte) (ElicitRequestParams, error) {
	var head struct {
		Mode *string `json:"mode"`
	}
	if err := strictjson.Unmarshal(data, &head); err != nil {
		return nil, err
	}
	var p ElicitRequestParams
	switch {
	case head.Mode == nil || *head.Mode == ElicitationModeForm:
		p = new(ElicitRequestFormParams)
	case *head.Mode == ElicitationModeURL:
		p = new(ElicitRequestURLParams)
	default:
		return nil, fmt.Errorf("%w: unknown elicitation mode %q", ErrInvalidType, *head.Mode)
	}
	if err := strictjson.Unmarshal(data, p); err != nil {
		return nil, err
	}
	return p, nil
}

// ElicitRequestFormParams is the params of a form-mode elicitation/create:
// the server asks the user to fill in a flat form.
type ElicitRequestFormParams struct {
	// Mode is "form" or empty; clients treat both as form mode. It is kept
	// as received, so that a decoded request re-encodes exactly.
	Mode string `json:"mode,omitempty"`
	// Message is shown to the user. Required.
	Message string `json:"message"`
	// RequestedSchema describes the form.
	RequestedSchema RequestedSchema `json:"requestedSchema"`
	// Task, if set, asks the client to run the request as a task.
	Task *TaskMetadata `json:"task,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

func (*ElicitRequestFormParams) elicitationMode() string { return ElicitationModeForm }

// Validate checks the mode, the requested schema and the task metadata.
func (p *ElicitRequestFormParams) Validate() error {
	const typ = "ElicitRequestFormParams"
	if p.Mode != "" && p.Mode != ElicitationModeForm {
		return invalid(typ, "mode", `must be "form" or absent, got `+strconv.Quote(p.Mode))
	}
	if err := p.RequestedSchema.Validate(); err != nil {
		return inField(typ, "requestedSchema", err)
	}
	return validateTaskMetadata(typ, p.Task)
}

// RequestedSchema is the restricted JSON Schema of an elicitation form: an
// object whose properties are all primitive schemas.
type RequestedSchema struct {
	// Schema is the optional $schema dialect URI.
	Schema string `json:"$schema,omitempty"`
	// Type is "object"; empty encodes as "object".
	Type string `json:"type"`
	// Properties are the form's fields; nil encodes as {}.
	Properties map[string]PrimitiveSchemaDefinition `json:"properties"`
	// Required lists the fields the user must fill in.
	Required []string `json:"required,omitempty"`
}

// MarshalJSON encodes s, with "type": "object" and {} for nil Properties.
func (s RequestedSchema) MarshalJSON() ([]byte, error) {
	type wire RequestedSchema
	w := wire(s)
	if w.Type == "" {
		w.Type = "object"
	}
	if w.Properties == nil {
		w.Properties = map[string]PrimitiveSchemaDefinition{}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes s, choosing each property's schema type.
func (s *RequestedSchema) UnmarshalJSON(data []byte) error {
	type wire RequestedSchema
	var w struct {
		Properties map[string]json.RawMessage `json:"properties"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Properties != nil {
		w.wire.Properties = make(map[string]PrimitiveSchemaDefinition, len(w.Properties))
		for k, raw := range w.Properties {
			ps, err := decodePrimitiveSchema(raw)
			if err != nil {
				return fmt.Errorf("properties.%s: %w", k, err)
			}
			w.wire.Properties[k] = ps
		}
	}
	*s = RequestedSchema(w.wire)
	return nil
}

// Validate checks the type and each property.
func (s *RequestedSchema) Validate() error {
	const typ = "RequestedSchema"
	if s.Type != "" && s.Type != "object" {
		return invalid(typ, "type", `must be "object", got `+strconv.Quote(s.Type))
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := validatePrimitiveSchema(s.Properties[k]); err != nil {
			return inField(typ, "properties."+k, err)
		}
	}
	return nil
}

// ElicitRequestURLParams is the params of a URL-mode elicitation/create:
// the server asks the user to visit a URL, for example to enter a secret
// or authorize a third party, out of the client's sight.
type ElicitRequestURLParams struct {
	// ElicitationID identifies the elicitation, for
	// notifications/elicitation/complete. Required in revision 2025-11-25;
	// revision 2026-07-28 removed it (URL mode completes by retry), so an
	// empty one is left out.
	ElicitationID string `json:"elicitationId,omitempty"`
	// URL is the page to open. Required.
	URL string `json:"url"`
	// Message tells the user why. Required.
	Message string `json:"message"`
	// Task, if set, asks the client to run the request as a task.
	Task *TaskMetadata `json:"task,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

func (*ElicitRequestURLParams) elicitationMode() string { return ElicitationModeURL }

// MarshalJSON encodes p with "mode": "url".
func (p ElicitRequestURLParams) MarshalJSON() ([]byte, error) {
	type wire ElicitRequestURLParams
	return marshalTagged("mode", ElicitationModeURL, wire(p))
}

// UnmarshalJSON decodes p, refusing any "mode" but "url".
func (p *ElicitRequestURLParams) UnmarshalJSON(data []byte) error {
	type wire ElicitRequestURLParams
	var w struct {
		Mode string `json:"mode"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("ElicitRequestURLParams", "mode", ElicitationModeURL, w.Mode); err != nil {
		return err
	}
	*p = ElicitRequestURLParams(w.wire)
	return nil
}

// Validate checks the elicitation id, that URL is an absolute URL, and the
// task metadata.
func (p *ElicitRequestURLParams) Validate() error {
	const typ = "ElicitRequestURLParams"
	if err := checkRequired(typ, "elicitationId", p.ElicitationID); err != nil {
		return err
	}
	if err := checkRequired(typ, "url", p.URL); err != nil {
		return err
	}
	if u, err := url.Parse(p.URL); err != nil || !u.IsAbs() {
		return invalid(typ, "url", "must be an absolute URL")
	}
	return validateTaskMetadata(typ, p.Task)
}

// ElicitAction is the user's answer to an elicitation.
type ElicitAction string

// The elicitation actions.
const (
	// ElicitActionAccept: the user submitted the form, or agreed to open
	// the URL.
	ElicitActionAccept ElicitAction = "accept"
	// ElicitActionDecline: the user explicitly declined.
	ElicitActionDecline ElicitAction = "decline"
	// ElicitActionCancel: the user dismissed the request without choosing.
	ElicitActionCancel ElicitAction = "cancel"
)

// Validate reports an error unless a is a defined action.
func (a ElicitAction) Validate() error {
	switch a {
	case ElicitActionAccept, ElicitActionDecline, ElicitActionCancel:
		return nil
	}
	return invalid("ElicitAction", "", `must be "accept", "decline" or "cancel", got `+strconv.Quote(string(a)))
}

// ElicitResult is the result of elicitation/create.
type ElicitResult struct {
	// Action is the user's answer. Required.
	Action ElicitAction `json:"action"`
	// Content is the submitted form, for an accepted form-mode elicitation
	// only. Each value is a string, a number, a boolean or a []string;
	// decoding yields string, float64, bool and []string and refuses other
	// JSON values.
	Content map[string]any `json:"content,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// UnmarshalJSON decodes r, refusing content values that are not strings,
// numbers, booleans or arrays of strings.
func (r *ElicitResult) UnmarshalJSON(data []byte) error {
	type wire ElicitResult
	var w struct {
		Content map[string]json.RawMessage `json:"content"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Content != nil {
		w.wire.Content = make(map[string]any, len(w.Content))
		for k, raw := range w.Content {
			v, err := decodeElicitValue(raw)
			if err != nil {
				return fmt.Errorf("content.%s: %w", k, err)
			}
			w.wire.Content[k] = v
		}
	}
	*r = ElicitResult(w.wire)
	return nil
}

func decodeElicitValue(raw json.RawMessage) (any, error) {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 {
		return nil, fmt.Errorf("empty value")
	}
	switch c := t[0]; {
	case c == '"':
		var s string
		err := strictjson.Unmarshal(raw, &s)
		return s, err
	case c == 't' || c == 'f':
		var b bool
		err := strictjson.Unmarshal(raw, &b)
		return b, err
	case c == '-' || '0' <= c && c <= '9':
		var f float64
		err := strictjson.Unmarshal(raw, &f)
		return f, err
	case c == '[':
		var ss []string
		if err := strictjson.Unmarshal(raw, &ss); err != nil {
			return nil, fmt.Errorf("an array must hold only strings: %w", err)
		}
		if ss == nil {
			ss = []string{}
		}
		return ss, nil
	}
	return nil, fmt.Errorf("must be a string, number, boolean or array of strings")
}

// Validate checks the action and that Content holds only allowed value
// types.
func (r *ElicitResult) Validate() error {
	const typ = "ElicitResult"
	if err := r.Action.Validate(); err != nil {
		return inField(typ, "action", err)
	}
	keys := make([]string, 0, len(r.Content))
	for k := range r.Content {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch v := r.Content[k].(type) {
		case string, bool, []string, json.Number,
			float64, float32, int, int8, int16, int32, int64,
			uint, uint8, uint16, uint32, uint64:
		case []any:
			// As encoding/json decodes an array into an any (and so
			// jsonschema.ApplyDefaults fills in a multi-select default).
			if _, ok := stringsOf(v); !ok {
				return invalid(typ, "content."+k, "an array must hold only strings")
			}
		default:
			return invalid(typ, "content."+k, "must be a string, a number, a boolean or an array of strings")
		}
	}
	return nil
}

// stringsOf returns the elements of a, if all are strings.
func stringsOf(a []any) ([]string, bool) {
	out := make([]string, len(a))
	for i, e := range a {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// normalizeContent gives each array of strings in content the type that
// values decoded from the wire have, []string, whatever produced it (a
// default filled in by jsonschema.ApplyDefaults is a []any), so that the
// content validates and reads the same before and after a round trip.
func normalizeContent(content map[string]any) {
	for k, v := range content {
		if a, ok := v.([]any); ok {
			if ss, ok := stringsOf(a); ok {
				content[k] = ss
			}
		}
	}
}

// ElicitationCompleteNotificationParams is the params of
// notifications/elicitation/complete.
type ElicitationCompleteNotificationParams struct {
	// ElicitationID is the URL elicitation that completed. Required.
	ElicitationID string `json:"elicitationId"`
	// Meta holds protocol and application metadata (not in the schema,
	// tolerated).
	Meta Meta `json:"_meta,omitempty"`
}

// Validate reports an error if ElicitationID is empty.
func (p *ElicitationCompleteNotificationParams) Validate() error {
	return checkRequired("ElicitationCompleteNotificationParams", "elicitationId", p.ElicitationID)
}
