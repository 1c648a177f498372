// Package jsonschema compiles JSON Schemas and validates JSON values
// against them, as MCP requires of tool input and output schemas and of
// elicitation schemas.
//
// # Dialects
//
// A schema without "$schema" is JSON Schema 2020-12. A schema may name
// another dialect in its root "$schema"; the supported dialects are:
//
//   - 2020-12: https://json-schema.org/draft/2020-12/schema ([Draft202012])
//   - 2019-09: https://json-schema.org/draft/2019-09/schema ([Draft201909])
//   - draft-07: http://json-schema.org/draft-07/schema# ([Draft7])
//   - draft-06: http://json-schema.org/draft-06/schema# ([Draft6])
//   - draft-04: http://json-schema.org/draft-04/schema# ([Draft4])
//
// Each URI is also accepted with the other scheme (http or https) and with
// or without an empty trailing "#". Any other "$schema" is rejected with
// an [*UnsupportedDialectError] (matching [ErrUnsupportedDialect]), unless
// it names a custom meta-schema registered with [WithResource].
//
// Every schema is first validated against its dialect's meta-schema; one
// that is not valid for its dialect is an [*InvalidSchemaError] whose
// issues point at the offending keywords.
//
// In 2020-12 and 2019-09 "format" is an annotation only, as those
// specifications say, unless [WithFormatAssertion] is given; the older
// dialects assert it. Regular expressions ("pattern",
// "patternProperties") use Go's RE2 syntax, which lacks some ECMA-262
// features such as back-references.
//
// # References
//
// Compile never touches the network or the file system. A "$ref"
// resolves only to the schema itself (JSON Pointers, anchors, embedded
// "$id" resources), to the bundled meta-schemas of the supported
// dialects, or to documents registered with [WithResource]; anything
// else is a [*RemoteRefError] (matching [ErrRemoteRef]).
//
// # Limits
//
// Schemas and instances may come from a peer, so their cost is bounded by
// [Limits] (see [WithLimits]; every field has a default that a public
// client or server can run with): the schema's size, nesting, subschema
// count (also with every reference expanded) and regular expressions are
// checked before it is compiled, and an instance's nesting and the
// estimated work of validating it (the subschemas that apply to each of
// its values, weighted by their keywords' cost) before it is validated. A refusal is a [*LimitError] naming the limit, matching
// [ErrLimit].
//
// # Validation
//
// [Schema.Validate] and [Schema.ValidateJSON] return a [*ValidationError]
// whose [Issue] list names each failing instance location with a short
// message, suitable for an MCP tool result with isError set, such as
// "jsonschema: validation failed: /age: must be >= 0".
//
// The checking itself is done by github.com/santhosh-tekuri/jsonschema/v6,
// chosen by measurement (see README.md); this package pins its behaviour
// to what MCP requires and gives its results stable, typed errors.
package jsonschema
