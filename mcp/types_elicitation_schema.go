package mcp

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// PrimitiveSchemaDefinition is the schema of one field of an elicitation
// form: *StringSchema, *NumberSchema, *BooleanSchema,
// *UntitledSingleSelectEnumSchema, *TitledSingleSelectEnumSchema,
// *UntitledMultiSelectEnumSchema, *TitledMultiSelectEnumSchema or
// *LegacyTitledEnumSchema; no other type can implement it.
//
// Decoding chooses by "type" and by which members are present: a string
// with "enum" and "enumNames" is legacy, with "enum" untitled, with
// "oneOf" titled, and otherwise plain; an array whose items have "anyOf"
// is titled multi-select, and otherwise untitled. An unknown type is
// refused with an error wrapping ErrInvalidType.
type PrimitiveSchemaDefinition interface {
	primitiveSchema()
}

// EnumSchema is the union of the enum schemas: the single- and
// multi-select ones and LegacyTitledEnumSchema.
type EnumSchema interface {
	PrimitiveSchemaDefinition
	enumSchema()
}

// SingleSelectEnumSchema is *UntitledSingleSelectEnumSchema or
// *TitledSingleSelectEnumSchema.
type SingleSelectEnumSchema interface {
	EnumSchema
	singleSelect()
}

// MultiSelectEnumSchema is *UntitledMultiSelectEnumSchema or
// *TitledMultiSelectEnumSchema.
type MultiSelectEnumSchema interface {
	EnumSchema
	multiSelect()
}

func decodePrimitiveSchema(data []byte) (PrimitiveSchemaDefinition, error) {
	var head struct {
		Type      *string         `json:"type"`
		Enum      json.RawMessage `json:"enum"`
		EnumNames json.RawMessage `json:"enumNames"`
		OneOf     json.RawMessage `json:"oneOf"`
		Items     *struct {
			AnyOf json.RawMessage `json:"anyOf"`
		} `json:"items"`
	}
	if err := strictjson.Unmarshal(data, &head); err != nil {
		return nil, err
	}
	if head.Type == nil {
		return nil, fmt.Errorf("%w: property schema has no type", ErrInvalidType)
	}
	var ps PrimitiveSchemaDefinition
	switch *head.Type {
	case "string":
		switch {
		case present(head.Enum) && present(head.EnumNames):
			ps = new(LegacyTitledEnumSchema)
		case present(head.Enum):
			ps = new(UntitledSingleSelectEnumSchema)
		case present(head.OneOf):
			ps = new(TitledSingleSelectEnumSchema)
		default:
			ps = new(StringSchema)
		}
	case "number", "integer":
		ps = new(NumberSchema)
	case "boolean":
		ps = new(BooleanSchema)
	case "array":
		if head.Items != nil && present(head.Items.AnyOf) {
			ps = new(TitledMultiSelectEnumSchema)
		} else {
			ps = new(UntitledMultiSelectEnumSchema)
		}
	default:
		return nil, fmt.Errorf("%w: unknown property schema type %q", ErrInvalidType, *head.Type)
	}
	if err := strictjson.Unmarshal(data, ps); err != nil {
		return nil, err
	}
	return ps, nil
}

func validatePrimitiveSchema(ps PrimitiveSchemaDefinition) error {
	if isNil(ps) {
		return invalid("PrimitiveSchemaDefinition", "", "is missing")
	}
	if v, ok := ps.(validator); ok {
		return v.Validate()
	}
	return nil
}

// StringFormat is the format of a StringSchema.
type StringFormat string

// The string formats an elicitation form may ask for.
const (
	StringFormatEmail    StringFormat = "email"
	StringFormatURI      StringFormat = "uri"
	StringFormatDate     StringFormat = "date"
	StringFormatDateTime StringFormat = "date-time"
)

// StringSchema is a free-text form field. It encodes with "type":
// "string".
type StringSchema struct {
	// Title is the field's label.
	Title string `json:"title,omitempty"`
	// Description explains the field.
	Description string `json:"description,omitempty"`
	// MinLength is the least length allowed.
	MinLength *int `json:"minLength,omitempty"`
	// MaxLength is the greatest length allowed.
	MaxLength *int `json:"maxLength,omitempty"`
	// Format constrains the text's form.
	Format StringFormat `json:"format,omitempty"`
	// Default prefills the field; empty means no default.
	Default string `json:"default,omitempty"`
}

func (*StringSchema) primitiveSchema() {}

// MarshalJSON encodes s with "type": "string".
func (s StringSchema) MarshalJSON() ([]byte, error) {
	type wire StringSchema
	return marshalTagged("type", "string", wire(s))
}

// UnmarshalJSON decodes s, refusing any "type" but "string".
func (s *StringSchema) UnmarshalJSON(data []byte) error {
	type wire StringSchema
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("StringSchema", "type", "string", w.Type); err != nil {
		return err
	}
	*s = StringSchema(w.wire)
	return nil
}

// Validate checks the format and that the length bounds are not negative.
func (s *StringSchema) Validate() error {
	const typ = "StringSchema"
	switch s.Format {
	case "", StringFormatEmail, StringFormatURI, StringFormatDate, StringFormatDateTime:
	default:
		return invalid(typ, "format", `must be "email", "uri", "date" or "date-time", got `+strconv.Quote(string(s.Format)))
	}
	return checkLengths(typ, "minLength", "maxLength", s.MinLength, s.MaxLength)
}

func checkLengths(typ, minName, maxName string, lo, hi *int) error {
	if lo != nil && *lo < 0 {
		return invalid(typ, minName, "must not be negative")
	}
	if hi != nil && *hi < 0 {
		return invalid(typ, maxName, "must not be negative")
	}
	return nil
}

// NumberSchema is a numeric form field.
type NumberSchema struct {
	// Type is "number" or "integer"; empty encodes as "number".
	Type string `json:"type"`
	// Title is the field's label.
	Title string `json:"title,omitempty"`
	// Description explains the field.
	Description string `json:"description,omitempty"`
	// Minimum is the least value allowed.
	Minimum *float64 `json:"minimum,omitempty"`
	// Maximum is the greatest value allowed.
	Maximum *float64 `json:"maximum,omitempty"`
	// Default prefills the field.
	Default *float64 `json:"default,omitempty"`
}

func (*NumberSchema) primitiveSchema() {}

// MarshalJSON encodes s, with "type": "number" if Type is empty.
func (s NumberSchema) MarshalJSON() ([]byte, error) {
	type wire NumberSchema
	w := wire(s)
	if w.Type == "" {
		w.Type = "number"
	}
	return json.Marshal(w)
}

// Validate checks the type.
func (s *NumberSchema) Validate() error {
	if s.Type != "" && s.Type != "number" && s.Type != "integer" {
		return invalid("NumberSchema", "type", `must be "number" or "integer", got `+strconv.Quote(s.Type))
	}
	return nil
}

// BooleanSchema is a yes/no form field. It encodes with "type": "boolean".
type BooleanSchema struct {
	// Title is the field's label.
	Title string `json:"title,omitempty"`
	// Description explains the field.
	Description string `json:"description,omitempty"`
	// Default prefills the field.
	Default *bool `json:"default,omitempty"`
}

func (*BooleanSchema) primitiveSchema() {}

// MarshalJSON encodes s with "type": "boolean".
func (s BooleanSchema) MarshalJSON() ([]byte, error) {
	type wire BooleanSchema
	return marshalTagged("type", "boolean", wire(s))
}

// UnmarshalJSON decodes s, refusing any "type" but "boolean".
func (s *BooleanSchema) UnmarshalJSON(data []byte) error {
	type wire BooleanSchema
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("BooleanSchema", "type", "boolean", w.Type); err != nil {
		return err
	}
	*s = BooleanSchema(w.wire)
	return nil
}

// EnumOption is one choice of a titled enum: a value and its label.
type EnumOption struct {
	// Const is the value submitted when the choice is made.
	Const string `json:"const"`
	// Title is the label shown.
	Title string `json:"title"`
}

// UntitledSingleSelectEnumSchema is a single-choice field whose choices
// are shown as their values. It encodes with "type": "string".
type UntitledSingleSelectEnumSchema struct {
	// Title is the field's label.
	Title string `json:"title,omitempty"`
	// Description explains the field.
	Description string `json:"description,omitempty"`
	// Enum lists the choices; nil encodes as [].
	Enum []string `json:"enum"`
	// Default is the preselected choice; empty means none.
	Default string `json:"default,omitempty"`
}

func (*UntitledSingleSelectEnumSchema) primitiveSchema() {}
func (*UntitledSingleSelectEnumSchema) enumSchema()      {}
func (*UntitledSingleSelectEnumSchema) singleSelect()    {}

// MarshalJSON encodes s with "type": "string".
func (s UntitledSingleSelectEnumSchema) MarshalJSON() ([]byte, error) {
	type wire UntitledSingleSelectEnumSchema
	w := wire(s)
	if w.Enum == nil {
		w.Enum = []string{}
	}
	return marshalTagged("type", "string", w)
}

// UnmarshalJSON decodes s, refusing any "type" but "string".
func (s *UntitledSingleSelectEnumSchema) UnmarshalJSON(data []byte) error {
	type wire UntitledSingleSelectEnumSchema
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("UntitledSingleSelectEnumSchema", "type", "string", w.Type); err != nil {
		return err
	}
	*s = UntitledSingleSelectEnumSchema(w.wire)
	return nil
}

// TitledSingleSelectEnumSchema is a single-choice field whose choices have
// labels. It encodes with "type": "string".
type TitledSingleSelectEnumSchema struct {
	// Title is the field's label.
	Title string `json:"title,omitempty"`
	// Description explains the field.
	Description string `json:"description,omitempty"`
	// OneOf lists the choices; nil encodes as [].
	OneOf []EnumOption `json:"oneOf"`
	// Default is the preselected choice's Const; empty means none.
	Default string `json:"default,omitempty"`
}

func (*TitledSingleSelectEnumSchema) primitiveSchema() {}
func (*TitledSingleSelectEnumSchema) enumSchema()      {}
func (*TitledSingleSelectEnumSchema) singleSelect()    {}

// MarshalJSON encodes s with "type": "string".
func (s TitledSingleSelectEnumSchema) MarshalJSON() ([]byte, error) {
	type wire TitledSingleSelectEnumSchema
	w := wire(s)
	if w.OneOf == nil {
		w.OneOf = []EnumOption{}
	}
	return marshalTagged("type", "string", w)
}

// UnmarshalJSON decodes s, refusing any "type" but "string".
func (s *TitledSingleSelectEnumSchema) UnmarshalJSON(data []byte) error {
	type wire TitledSingleSelectEnumSchema
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("TitledSingleSelectEnumSchema", "type", "string", w.Type); err != nil {
		return err
	}
	*s = TitledSingleSelectEnumSchema(w.wire)
	return nil
}

// UntitledEnumItems is the items schema of an UntitledMultiSelectEnumSchema.
// It encodes with "type": "string".
type UntitledEnumItems struct {
	// Enum lists the choices; nil encodes as [].
	Enum []string `json:"enum"`
}

// MarshalJSON encodes it with "type": "string".
func (it UntitledEnumItems) MarshalJSON() ([]byte, error) {
	type wire UntitledEnumItems
	w := wire(it)
	if w.Enum == nil {
		w.Enum = []string{}
	}
	return marshalTagged("type", "string", w)
}

// UnmarshalJSON decodes it, refusing any "type" but "string".
func (it *UntitledEnumItems) UnmarshalJSON(data []byte) error {
	type wire UntitledEnumItems
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("UntitledEnumItems", "type", "string", w.Type); err != nil {
		return err
	}
	*it = UntitledEnumItems(w.wire)
	return nil
}

// TitledEnumItems is the items schema of a TitledMultiSelectEnumSchema.
type TitledEnumItems struct {
	// AnyOf lists the choices; nil encodes as [].
	AnyOf []EnumOption `json:"anyOf"`
}

// MarshalJSON encodes it with AnyOf as [] when nil.
func (it TitledEnumItems) MarshalJSON() ([]byte, error) {
	type wire TitledEnumItems
	w := wire(it)
	if w.AnyOf == nil {
		w.AnyOf = []EnumOption{}
	}
	return json.Marshal(w)
}

// UntitledMultiSelectEnumSchema is a multiple-choice field whose choices
// are shown as their values. It encodes with "type": "array".
type UntitledMultiSelectEnumSchema struct {
	// Title is the field's label.
	Title string `json:"title,omitempty"`
	// Description explains the field.
	Description string `json:"description,omitempty"`
	// MinItems is the fewest choices allowed.
	MinItems *int `json:"minItems,omitempty"`
	// MaxItems is the most choices allowed.
	MaxItems *int `json:"maxItems,omitempty"`
	// Items lists the choices.
	Items UntitledEnumItems `json:"items"`
	// Default lists the preselected choices.
	Default []string `json:"default,omitempty"`
}

func (*UntitledMultiSelectEnumSchema) primitiveSchema() {}
func (*UntitledMultiSelectEnumSchema) enumSchema()      {}
func (*UntitledMultiSelectEnumSchema) multiSelect()     {}

// MarshalJSON encodes s with "type": "array".
func (s UntitledMultiSelectEnumSchema) MarshalJSON() ([]byte, error) {
	type wire UntitledMultiSelectEnumSchema
	return marshalTagged("type", "array", wire(s))
}

// UnmarshalJSON decodes s, refusing any "type" but "array".
func (s *UntitledMultiSelectEnumSchema) UnmarshalJSON(data []byte) error {
	type wire UntitledMultiSelectEnumSchema
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("UntitledMultiSelectEnumSchema", "type", "array", w.Type); err != nil {
		return err
	}
	*s = UntitledMultiSelectEnumSchema(w.wire)
	return nil
}

// Validate checks that the item bounds are not negative.
func (s *UntitledMultiSelectEnumSchema) Validate() error {
	return checkLengths("UntitledMultiSelectEnumSchema", "minItems", "maxItems", s.MinItems, s.MaxItems)
}

// TitledMultiSelectEnumSchema is a multiple-choice field whose choices have
// labels. It encodes with "type": "array".
type TitledMultiSelectEnumSchema struct {
	// Title is the field's label.
	Title string `json:"title,omitempty"`
	// Description explains the field.
	Description string `json:"description,omitempty"`
	// MinItems is the fewest choices allowed.
	MinItems *int `json:"minItems,omitempty"`
	// MaxItems is the most choices allowed.
	MaxItems *int `json:"maxItems,omitempty"`
	// Items lists the choices.
	Items TitledEnumItems `json:"items"`
	// Default lists the preselected choices' Const values.
	Default []string `json:"default,omitempty"`
}

func (*TitledMultiSelectEnumSchema) primitiveSchema() {}
func (*TitledMultiSelectEnumSchema) enumSchema()      {}
func (*TitledMultiSelectEnumSchema) multiSelect()     {}

// MarshalJSON encodes s with "type": "array".
func (s TitledMultiSelectEnumSchema) MarshalJSON() ([]byte, error) {
	type wire TitledMultiSelectEnumSchema
	return marshalTagged("type", "array", wire(s))
}

// UnmarshalJSON decodes s, refusing any "type" but "array".
func (s *TitledMultiSelectEnumSchema) UnmarshalJSON(data []byte) error {
	type wire TitledMultiSelectEnumSchema
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("TitledMultiSelectEnumSchema", "type", "array", w.Type); err != nil {
		return err
	}
	*s = TitledMultiSelectEnumSchema(w.wire)
	return nil
}

// Validate checks that the item bounds are not negative.
func (s *TitledMultiSelectEnumSchema) Validate() error {
	return checkLengths("TitledMultiSelectEnumSchema", "minItems", "maxItems", s.MinItems, s.MaxItems)
}

// LegacyTitledEnumSchema is the deprecated form of a titled single-choice
// field, with labels in a parallel enumNames array. It encodes with
// "type": "string". Prefer TitledSingleSelectEnumSchema.
type LegacyTitledEnumSchema struct {
	// Title is the field's label.
	Title string `json:"title,omitempty"`
	// Description explains the field.
	Description string `json:"description,omitempty"`
	// Enum lists the choices; nil encodes as [].
	Enum []string `json:"enum"`
	// EnumNames lists the choices' labels, in the order of Enum.
	EnumNames []string `json:"enumNames,omitempty"`
	// Default is the preselected choice; empty means none.
	Default string `json:"default,omitempty"`
}

func (*LegacyTitledEnumSchema) primitiveSchema() {}
func (*LegacyTitledEnumSchema) enumSchema()      {}

// MarshalJSON encodes s with "type": "string".
func (s LegacyTitledEnumSchema) MarshalJSON() ([]byte, error) {
	type wire LegacyTitledEnumSchema
	w := wire(s)
	if w.Enum == nil {
		w.Enum = []string{}
	}
	return marshalTagged("type", "string", w)
}

// UnmarshalJSON decodes s, refusing any "type" but "string".
func (s *LegacyTitledEnumSchema) UnmarshalJSON(data []byte) error {
	type wire LegacyTitledEnumSchema
	var w struct {
		Type string `json:"type"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("LegacyTitledEnumSchema", "type", "string", w.Type); err != nil {
		return err
	}
	*s = LegacyTitledEnumSchema(w.wire)
	return nil
}
