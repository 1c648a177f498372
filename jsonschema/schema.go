package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// baseURI is the retrieval URI given to a schema document that has no
// "$id". It is hierarchical so that relative references resolve (to
// URLs that then fail as remote references unless registered).
const baseURI = "mcpstack:///schema.json"

// An Option configures [Compile] and [CompileToolSchema].
type Option func(*config)

type config struct {
	defaultDialect Dialect
	resources      map[string][]byte
	assertFormat   bool
	limits         Limits
}

// WithDefaultDialect sets the dialect of a schema that has no "$schema".
// Without it the default is [Draft202012], as MCP requires; use it only
// for schemas known to be written for another dialect.
func WithDefaultDialect(d Dialect) Option {
	return func(c *config) { c.defaultDialect = d }
}

// WithResource registers an in-memory JSON document under the absolute
// URI uri, so that "$ref" (or a custom "$schema") naming uri resolves to
// it. A fragment in uri is ignored. Registered documents are the only
// non-local references that resolve: nothing is ever fetched.
func WithResource(uri string, doc []byte) Option {
	return func(c *config) {
		if c.resources == nil {
			c.resources = make(map[string][]byte)
		}
		c.resources[stripFragment(uri)] = doc
	}
}

// WithFormatAssertion makes "format" an assertion for every dialect.
// By default "format" is only an annotation in 2020-12 and 2019-09 (as
// those specifications say) and an assertion in draft-07, -06 and -04.
func WithFormatAssertion() Option {
	return func(c *config) { c.assertFormat = true }
}

// A Schema is a compiled JSON Schema. It is immutable and safe for
// concurrent use.
type Schema struct {
	compiled *sjs.Schema
	dialect  Dialect
	defaults []propertyDefault // top-level property defaults, in name order
	fast     *fastValidator    // nil unless the schema is in its simple form
	maxDepth int               // of instances: Limits.MaxInstanceDepth
	maxWork  int               // Limits.MaxValidationWork
	costs    costModel         // of every subschema, for the work estimate
}

// propertyDefault is one top-level property's "default" value as JSON.
type propertyDefault struct {
	name  string
	value json.RawMessage
}

// Compile parses schema, checks it against its dialect's meta-schema and
// compiles it for validation.
//
// The dialect is taken from the root "$schema" (see [ParseDialect]); a
// schema without one is 2020-12 unless [WithDefaultDialect] says
// otherwise. Errors are typed: [*UnsupportedDialectError] for an unknown
// "$schema", [*InvalidSchemaError] for a schema that is malformed or not
// valid for its dialect, and [*RemoteRefError] for a reference to a
// document that is not registered with [WithResource]. Compile never
// reads the network or the file system.
func Compile(schema []byte, opts ...Option) (*Schema, error) {
	s, _, err := compile(schema, opts)
	return s, err
}

// compile does the work of Compile and also returns the decoded root
// document, which must not be modified.
func compile(schema []byte, opts []Option) (*Schema, any, error) {
	cfg := config{defaultDialect: Draft202012}
	for _, o := range opts {
		o(&cfg)
	}
	def, err := ParseDialect(string(cfg.defaultDialect))
	if err != nil {
		return nil, nil, err
	}
	limits := cfg.limits.withDefaults()
	// The library's cost grows faster than the schema (with its depth,
	// and with the references that expand into one another): bound the
	// shape before any of it runs.
	if err := checkShape(schema, limits); err != nil {
		return nil, nil, err
	}
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, nil, &InvalidSchemaError{Err: fmt.Errorf("malformed JSON: %w", err)}
	}
	if loc, num, found := badNumber(doc); found {
		return nil, nil, &InvalidSchemaError{Issues: []Issue{numberIssue(loc, num)}}
	}
	if obj, ok := doc.(map[string]any); ok {
		if v, ok := obj["$schema"]; ok {
			uri, ok := v.(string)
			if !ok {
				return nil, nil, &InvalidSchemaError{Issues: []Issue{{"/$schema", "must be string, not " + jsonTypeName(v)}}}
			}
			if _, err := ParseDialect(uri); err != nil {
				if _, custom := cfg.resources[stripFragment(uri)]; !custom {
					return nil, nil, err
				}
			}
		}
	}

	c := sjs.NewCompiler()
	c.DefaultDraft(libraryDraft(def))
	if cfg.assertFormat {
		c.AssertFormat()
	}
	ld := &memLoader{resources: cfg.resources, root: doc}
	c.UseLoader(ld)
	re := newRegexps(limits.MaxPatternSize)
	c.UseRegexpEngine(re.compile)
	if err := c.AddResource(baseURI, doc); err != nil {
		return nil, nil, &InvalidSchemaError{Err: errors.New(cleanMessage(err))}
	}
	compiled, err := c.Compile(baseURI)
	re.done()
	if re.failure != nil {
		return nil, nil, re.failure
	}
	if err != nil {
		return nil, nil, translateCompileError(err, ld.failure)
	}
	if err := checkExpanded(compiled, limits.MaxSubschemas); err != nil {
		return nil, nil, err
	}
	instanceDepth := min(limits.MaxInstanceDepth, maxDepth)
	return &Schema{
		compiled: compiled,
		dialect:  dialectOfVersion(compiled.DraftVersion),
		defaults: topLevelDefaults(doc),
		fast:     newFastValidator(doc, instanceDepth),
		maxDepth: instanceDepth,
		maxWork:  limits.MaxValidationWork,
		costs:    newCostModel(compiled),
	}, doc, nil
}

// translateCompileError maps a library compile error to this package's
// typed errors. loadFailure is the error our loader reported, if any.
func translateCompileError(err, loadFailure error) error {
	if loadFailure != nil {
		return loadFailure
	}
	var sve *sjs.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *sjs.ValidationError
		if errors.As(sve.Err, &ve) {
			var c issueCollector
			e := &InvalidSchemaError{Issues: c.issues(ve)}
			if u := stripFragment(sve.URL); u != baseURI {
				// The issues are in a registered resource.
				e.Err = fmt.Errorf("in resource %q", u)
			}
			return e
		}
	}
	return &InvalidSchemaError{Err: errors.New(cleanMessage(err))}
}

// cleanMessage drops the synthetic base URI from a library message, so
// that `"mcpstack:///schema.json#/$defs/x"` reads `"#/$defs/x"`.
func cleanMessage(err error) string {
	return strings.ReplaceAll(err.Error(), baseURI, "")
}

// Dialect reports the dialect the schema was compiled with. For a schema
// whose "$schema" names a registered custom meta-schema, it is the
// dialect that meta-schema is written in.
func (s *Schema) Dialect() Dialect { return s.dialect }

// Validate checks instance against the schema. It returns nil if the
// instance conforms and a [*ValidationError] if it does not.
//
// The instance is best given as encoding/json would decode JSON into an
// [any] (map[string]any, []any, string, float64 or [json.Number], bool,
// nil); Go integers are accepted too. Any other value (a struct, a typed
// map or slice) is first converted through its JSON encoding; if that
// fails, the error wraps [ErrInvalidJSON], as it does for a
// [json.Number] that is malformed or out of range and for a cyclic value.
// An instance that nests its arrays and objects deeper than
// [Limits].MaxInstanceDepth, or whose validation is estimated to cost more
// than [Limits].MaxValidationWork, is a [*LimitError], and is not
// validated.
func (s *Schema) Validate(instance any) error {
	if !isJSONValue(instance, 0, s.maxDepth) {
		b, err := json.Marshal(instance)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidJSON, err)
		}
		if err := s.checkDepth(b); err != nil {
			return err
		}
		if instance, err = sjs.UnmarshalJSON(bytes.NewReader(b)); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidJSON, err)
		}
		if loc, num, found := badNumber(instance); found {
			return fmt.Errorf("%w: %s", ErrInvalidJSON, numberIssue(loc, num))
		}
	}
	return s.validate(instance)
}

// ValidateJSON decodes data as a single JSON value (numbers keep their
// full precision) and validates it like [Schema.Validate]. Malformed JSON
// yields an error wrapping [ErrInvalidJSON], as does a number longer than
// 1000 bytes or with a decimal exponent beyond ±10000; an instance nested
// deeper than [Limits].MaxInstanceDepth is a [*LimitError], as is one
// whose validation is estimated to cost more than
// [Limits].MaxValidationWork. Its cost is linear in len(data) (decoding)
// plus at most that bound.
func (s *Schema) ValidateJSON(data []byte) error {
	if s.fast != nil && s.fast.valid(data) {
		return nil
	}
	if v, badNum, ok := decodeInstance(data, s.maxDepth); ok && !badNum {
		return s.validate(v)
	}
	// Too deep, malformed JSON, or a number out of range: the library
	// builds an instance location per level of every error (quadratic in
	// the depth), so the depth is refused first; then decode the
	// library's way, for the same error as ever.
	if err := s.checkDepth(data); err != nil {
		return err
	}
	v, err := sjs.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidJSON, err)
	}
	if loc, num, found := badNumber(v); found {
		return fmt.Errorf("%w: %s", ErrInvalidJSON, numberIssue(loc, num))
	}
	return s.validate(v)
}

// checkDepth refuses the JSON text data when it nests deeper than the
// schema's instance depth limit: a *LimitError, unless the limit is the
// one of JSON decoding itself (no limit was set), which makes the instance
// invalid JSON.
func (s *Schema) checkDepth(data []byte) error {
	err := checkInstanceDepth(data, s.maxDepth)
	if err != nil && s.maxDepth >= maxDepth {
		return fmt.Errorf("%w: nested deeper than %d levels", ErrInvalidJSON, maxDepth)
	}
	return err
}

func (s *Schema) validate(v any) error {
	// The estimate runs before the library, which cannot be stopped once
	// started (see work.go).
	if !estimateWork(s.costs, s.compiled, v, s.maxWork) {
		return &LimitError{Limit: LimitValidationWork, Max: s.maxWork}
	}
	err := s.compiled.Validate(v)
	if err == nil {
		return nil
	}
	var ve *sjs.ValidationError
	if errors.As(err, &ve) {
		var c issueCollector
		if issues := c.issues(ve); len(issues) > 0 {
			return &ValidationError{Issues: issues}
		}
	}
	return &ValidationError{Issues: []Issue{{Message: cleanMessage(err)}}}
}

// maxDepth is the deepest nesting of arrays and objects that
// encoding/json's decoder accepts, and so the most that
// Limits.MaxInstanceDepth can allow.
const maxDepth = 10000

// isJSONValue reports whether v consists only of the types the library
// validates directly, with every json.Number acceptable to numberOK, and
// nests its arrays and objects no deeper than max (so a cyclic map is not
// followed forever).
func isJSONValue(v any, depth, max int) bool {
	switch v := v.(type) {
	case json.Number:
		return numberOK(string(v))
	case nil, bool, string,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	case float64:
		return !math.IsNaN(v) && !math.IsInf(v, 0)
	case float32:
		return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
	case []any:
		if depth >= max {
			return false
		}
		for _, e := range v {
			if !isJSONValue(e, depth+1, max) {
				return false
			}
		}
		return true
	case map[string]any:
		if depth >= max {
			return false
		}
		for _, e := range v {
			if !isJSONValue(e, depth+1, max) {
				return false
			}
		}
		return true
	}
	return false
}

// jsonTypeName names the JSON type of a decoded value.
func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return "number"
	}
}

func libraryDraft(d Dialect) *sjs.Draft {
	switch d {
	case Draft201909:
		return sjs.Draft2019
	case Draft7:
		return sjs.Draft7
	case Draft6:
		return sjs.Draft6
	case Draft4:
		return sjs.Draft4
	default:
		return sjs.Draft2020
	}
}

func stripFragment(uri string) string {
	u, _, _ := strings.Cut(uri, "#")
	return u
}

// memLoader serves registered resources and refuses everything else,
// remembering why, so that the caller can return a typed error. The
// library consults it only for URLs that are neither inside the schema
// nor bundled meta-schemas.
type memLoader struct {
	resources map[string][]byte
	root      any
	failure   error
}

// Load implements the library's URLLoader.
func (l *memLoader) Load(url string) (any, error) {
	if b, ok := l.resources[stripFragment(url)]; ok {
		doc, err := sjs.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, l.fail(&InvalidSchemaError{Err: fmt.Errorf("resource %q: malformed JSON: %w", url, err)})
		}
		if loc, num, found := badNumber(doc); found {
			is := numberIssue(loc, num)
			return nil, l.fail(&InvalidSchemaError{Err: fmt.Errorf("resource %q: %s", url, is)})
		}
		return doc, nil
	}
	if declaresSchema(l.root, url) {
		return nil, l.fail(&UnsupportedDialectError{URI: url})
	}
	return nil, l.fail(&RemoteRefError{URL: url})
}

func (l *memLoader) fail(err error) error {
	if l.failure == nil {
		l.failure = err
	}
	return err
}

// declaresSchema reports whether some object in doc has a "$schema"
// naming uri (ignoring fragments): the library loads a subschema's
// unknown meta-schema like a reference, and this tells the two apart.
func declaresSchema(doc any, uri string) bool {
	switch v := doc.(type) {
	case map[string]any:
		if s, ok := v["$schema"].(string); ok && stripFragment(s) == stripFragment(uri) {
			return true
		}
		for _, e := range v {
			if declaresSchema(e, uri) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if declaresSchema(e, uri) {
				return true
			}
		}
	}
	return false
}
