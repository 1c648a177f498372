package jsonschema

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors, matchable with [errors.Is] against the typed errors
// this package returns.
var (
	// ErrUnsupportedDialect matches an [*UnsupportedDialectError].
	ErrUnsupportedDialect = errors.New("jsonschema: unsupported JSON Schema dialect")
	// ErrInvalidSchema matches an [*InvalidSchemaError].
	ErrInvalidSchema = errors.New("jsonschema: invalid schema")
	// ErrRemoteRef matches a [*RemoteRefError].
	ErrRemoteRef = errors.New("jsonschema: remote reference not allowed")
	// ErrValidation matches a [*ValidationError].
	ErrValidation = errors.New("jsonschema: validation failed")
	// ErrInvalidJSON is returned (wrapped) by [Schema.ValidateJSON] when
	// the instance is not a single well-formed JSON value.
	ErrInvalidJSON = errors.New("jsonschema: invalid JSON instance")
)

// maxIssuesInMessage bounds how many issues an error message lists.
const maxIssuesInMessage = 10

// An Issue is one problem found at one location.
type Issue struct {
	// Location is a JSON Pointer (RFC 6901): into the instance for a
	// [*ValidationError], into the schema document for an
	// [*InvalidSchemaError]. The empty string is the document root.
	Location string
	// Message is a short English description, such as "must be >= 0".
	Message string
}

// String formats the issue as "location: message", writing the root
// location as "(root)".
func (i Issue) String() string {
	loc := i.Location
	if loc == "" {
		loc = "(root)"
	}
	return loc + ": " + i.Message
}

// joinIssues renders at most maxIssuesInMessage issues, separated by "; ".
func joinIssues(issues []Issue) string {
	var b strings.Builder
	for i, is := range issues {
		if i == maxIssuesInMessage {
			b.WriteString("; and " + strconv.Itoa(len(issues)-i) + " more")
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(is.String())
	}
	return b.String()
}

// An UnsupportedDialectError reports a "$schema" value that names no
// supported dialect (see [SupportedDialects]).
type UnsupportedDialectError struct {
	// URI is the "$schema" value as written in the schema.
	URI string
}

func (e *UnsupportedDialectError) Error() string {
	return fmt.Sprintf("jsonschema: unsupported JSON Schema dialect %q (supported: 2020-12, 2019-09, draft-07, draft-06, draft-04)", e.URI)
}

// Is reports whether target is [ErrUnsupportedDialect].
func (e *UnsupportedDialectError) Is(target error) bool { return target == ErrUnsupportedDialect }

// An InvalidSchemaError reports a schema that is not valid for its
// dialect: malformed JSON, a violation of the dialect's meta-schema, or a
// reference that points nowhere.
type InvalidSchemaError struct {
	// Issues lists meta-schema violations; each Location points into the
	// schema document at the offending keyword.
	Issues []Issue
	// Err describes a problem that is not a meta-schema violation, such as
	// a JSON syntax error or an unresolvable local "$ref". It may be nil.
	Err error
}

func (e *InvalidSchemaError) Error() string {
	var parts []string
	if len(e.Issues) > 0 {
		parts = append(parts, joinIssues(e.Issues))
	}
	if e.Err != nil {
		parts = append(parts, e.Err.Error())
	}
	if len(parts) == 0 {
		return ErrInvalidSchema.Error()
	}
	return "jsonschema: invalid schema: " + strings.Join(parts, "; ")
}

// Is reports whether target is [ErrInvalidSchema].
func (e *InvalidSchemaError) Is(target error) bool { return target == ErrInvalidSchema }

// Unwrap returns e.Err.
func (e *InvalidSchemaError) Unwrap() error { return e.Err }

// A RemoteRefError reports a reference (from "$ref", "$dynamicRef" or a
// custom "$schema") to a document that is neither inside the schema, a
// bundled meta-schema, nor registered with [WithResource]. This package
// never fetches schemas from the network or the file system.
type RemoteRefError struct {
	// URL is the absolute URL of the document that was asked for.
	URL string
}

func (e *RemoteRefError) Error() string {
	return fmt.Sprintf("jsonschema: reference to %q not allowed: only local references, bundled meta-schemas and registered resources resolve (no network or file access)", e.URL)
}

// Is reports whether target is [ErrRemoteRef].
func (e *RemoteRefError) Is(target error) bool { return target == ErrRemoteRef }

// A ValidationError reports why an instance does not conform to a schema.
// Its message is short enough to return to a model or user, for example
// `jsonschema: validation failed: /age: must be >= 0`.
type ValidationError struct {
	// Issues lists the failed assertions; each Location points into the
	// instance. It is never empty. Of an instance with many failures it
	// lists the first hundred or so that the validator found, not all.
	Issues []Issue
}

func (e *ValidationError) Error() string {
	return "jsonschema: validation failed: " + joinIssues(e.Issues)
}

// Is reports whether target is [ErrValidation].
func (e *ValidationError) Is(target error) bool { return target == ErrValidation }
