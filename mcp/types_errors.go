package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// MCP-specific JSON-RPC error codes. The standard JSON-RPC codes live in
// package jsonrpc.
const (
	// CodeResourceNotFound is the error code for resources/read (and
	// subscribe) on a URI the server does not know.
	CodeResourceNotFound = -32002
	// CodeURLElicitationRequired is the error code a server returns when a
	// request can proceed only after the user completes one or more URL-mode
	// elicitations; the error data is a URLElicitationRequiredData.
	CodeURLElicitationRequired = -32042
)

// ErrInvalidType is returned (wrapped) when a union member such as a
// content block, resource contents, completion reference, elicitation
// params or elicitation property schema has a missing or unknown
// discriminator, or one that is not allowed where it appears.
var ErrInvalidType = errors.New("mcp: unknown or misplaced type")

// ValidationError reports a value that breaks a rule of the protocol schema
// that Go's type system cannot express, such as a missing required string,
// an unknown enum value, or a tool input schema whose root is not of type
// "object".
type ValidationError struct {
	// Type is the Go name of the value that was validated, such as
	// "CallToolResult".
	Type string
	// Field is the JSON path of the offending member inside that value,
	// such as "tools[2].inputSchema". It is empty when the value as a whole
	// is at fault.
	Field string
	// Reason says what is wrong.
	Reason string
}

// Error implements the error interface.
func (e *ValidationError) Error() string {
	if e.Field == "" {
		return "mcp: invalid " + e.Type + ": " + e.Reason
	}
	return "mcp: invalid " + e.Type + ": " + e.Field + ": " + e.Reason
}

func invalid(typ, field, reason string) error {
	return &ValidationError{Type: typ, Field: field, Reason: reason}
}

// inField re-roots err, the failure of a member named field, at typ.
func inField(typ, field string, err error) error {
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		f := field
		if ve.Field != "" {
			f += "." + ve.Field
		}
		return &ValidationError{Type: typ, Field: f, Reason: ve.Reason}
	}
	return &ValidationError{Type: typ, Field: field, Reason: err.Error()}
}

func indexed(field string, i int) string {
	return field + "[" + strconv.Itoa(i) + "]"
}

// validator is implemented by the types that have a Validate method.
type validator interface{ Validate() error }

// present reports whether a raw member was present and not null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// isNil reports whether v is nil or a nil pointer, interface, map or
// slice.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		return rv.IsNil()
	}
	return false
}

// isJSONObject reports whether raw is a well-formed JSON object.
func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// checkObject validates an optional member that must be a JSON object when
// present.
func checkObject(typ, field string, raw json.RawMessage) error {
	if raw == nil || isJSONObject(raw) {
		return nil
	}
	return invalid(typ, field, "must be a JSON object")
}

// checkSchemaRoot validates a tool's input or output schema: a JSON object
// whose "type" member is the string "object".
func checkSchemaRoot(typ, field string, raw json.RawMessage) error {
	if !isJSONObject(raw) {
		return invalid(typ, field, "must be a JSON Schema object")
	}
	var members map[string]json.RawMessage
	if err := strictjson.Unmarshal(raw, &members); err != nil {
		return invalid(typ, field, err.Error())
	}
	t, ok := members["type"]
	if !ok {
		return invalid(typ, field, `root must have "type": "object"`)
	}
	var s string
	if err := strictjson.Unmarshal(t, &s); err != nil || s != "object" {
		return invalid(typ, field, `root "type" must be "object", got `+string(t))
	}
	return nil
}

func checkRequired(typ, field, value string) error {
	if value == "" {
		return invalid(typ, field, "is required")
	}
	return nil
}

func checkUnit(typ, field string, v *float64) error {
	if v != nil && (*v < 0 || *v > 1) {
		return invalid(typ, field, "must be between 0 and 1")
	}
	return nil
}

func checkNonNegative(typ, field string, v *int64) error {
	if v != nil && *v < 0 {
		return invalid(typ, field, "must not be negative")
	}
	return nil
}

func checkIcons(typ string, icons []Icon) error {
	for i, ic := range icons {
		f := indexed("icons", i)
		if ic.Src == "" {
			return invalid(typ, f+".src", "is required")
		}
		switch ic.Theme {
		case "", "light", "dark":
		default:
			return invalid(typ, f+".theme", `must be "light" or "dark", got `+strconv.Quote(ic.Theme))
		}
	}
	return nil
}
