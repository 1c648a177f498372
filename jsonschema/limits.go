package jsonschema

import (
	"errors"
	"fmt"
	"iter"
	"regexp"
	"regexp/syntax"
	"sync"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// The defaults of [Limits]. Within them, compiling any schema costs at
// most a few tens of milliseconds of CPU (BenchmarkCompileHostile), and
// they leave room many times over for real tool and elicitation schemas,
// which are a few KiB, nest a dozen levels and hold at most a few hundred
// subschemas and patterns.
const (
	DefaultMaxSchemaBytes   = 256 << 10 // 256 KiB
	DefaultMaxSchemaDepth   = 64
	DefaultMaxSubschemas    = 500
	DefaultMaxInstanceDepth = 64
	DefaultMaxPatternSize   = 30000
	// DefaultMaxValidationWork is 80,000 units of about half a
	// microsecond: at most about 50 ms of CPU per validation, decoding
	// included (#16.12; BenchmarkValidateHostile -unbounded reports the
	// calibration), while the arguments of a real tool call (a few
	// hundred values against a few dozen subschemas) cost a few hundred
	// units and an array of 10,000 strings against one plain subschema
	// 30,000.
	DefaultMaxValidationWork = 80000
)

// ErrLimit matches a [*LimitError].
var ErrLimit = errors.New("jsonschema: limit exceeded")

// The names of the limits, as a [*LimitError] reports them.
const (
	LimitSchemaBytes    = "schema size"
	LimitSchemaDepth    = "schema depth"
	LimitSubschemas     = "subschema count"
	LimitInstanceDepth  = "instance depth"
	LimitPatternSize    = "regular expression size"
	LimitValidationWork = "validation work"
)

// A LimitError reports a schema or an instance over one of the [Limits]. It
// is returned before any costly work: the schema is not compiled, the
// instance not validated.
type LimitError struct {
	// Limit names the bound: LimitSchemaBytes, LimitSchemaDepth,
	// LimitSubschemas, LimitPatternSize, LimitInstanceDepth or
	// LimitValidationWork.
	Limit string
	// Max is the bound.
	Max int
}

func (e *LimitError) Error() string {
	var what string
	switch e.Limit {
	case LimitSchemaBytes:
		what = "over %d bytes"
	case LimitSubschemas:
		what = "over %d (counting objects, and each $ref expanded)"
	case LimitPatternSize:
		what = "over %d instructions, all patterns together"
	case LimitValidationWork:
		what = "over %d units (the values of the instance times the subschemas that apply to each, weighted by their cost)"
	default:
		what = "over %d levels of arrays and objects"
	}
	return "jsonschema: limit exceeded: " + e.Limit + " " + fmt.Sprintf(what, e.Max)
}

// Is reports whether target is [ErrLimit].
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// Limits bounds what [Compile] and validation accept, so that a schema or an
// instance from a peer cannot cost unbounded CPU or memory: the schema's
// size, nesting and subschema count are checked by a linear pre-pass over
// its bytes before it is compiled, its subschema count once more after
// compiling with every "$ref" expanded (so that references fanning out to
// references cannot multiply the work of validation), and an instance's
// nesting and the estimated work of validating it before it is validated. A zero field means its default; a
// negative one means no bound (only for trusted input).
type Limits struct {
	// MaxSchemaBytes bounds the schema document. Zero means
	// DefaultMaxSchemaBytes.
	MaxSchemaBytes int
	// MaxSchemaDepth bounds the nesting of arrays and objects in the
	// schema document. Zero means DefaultMaxSchemaDepth.
	MaxSchemaDepth int
	// MaxSubschemas bounds the objects in the schema document, and the
	// subschemas of the compiled schema counted with every reference
	// expanded (a reference cycle counts once). Zero means
	// DefaultMaxSubschemas.
	MaxSubschemas int
	// MaxPatternSize bounds the regular expressions of the schema
	// ("pattern", "patternProperties"), in estimated instructions of
	// their compiled programs plus 100 per expression, all distinct
	// patterns together; and, alone,
	// a string that a "format": "regex" assertion checks. Zero means
	// DefaultMaxPatternSize.
	MaxPatternSize int
	// MaxInstanceDepth bounds the nesting of arrays and objects in an
	// instance given to [Schema.ValidateJSON] or [Schema.Validate]. Zero
	// means DefaultMaxInstanceDepth.
	MaxInstanceDepth int
	// MaxValidationWork bounds the estimated cost of validating one
	// instance, in units of about one subschema applied to one value
	// (half a microsecond of CPU on a current core): the sum, over every
	// value of the instance, of the subschemas that may apply to it, each
	// weighted by what its keywords cost on that value (a "pattern" its
	// program size times the string's length, an "enum" its values, a
	// number in exponent form its conversion). An instance over it is a
	// [*LimitError] naming LimitValidationWork, and is not validated.
	// Zero means DefaultMaxValidationWork.
	MaxValidationWork int
}

// WithLimits sets the limits of [Compile] and of the compiled schema's
// validation. Without it, every field has its default.
func WithLimits(l Limits) Option {
	return func(c *config) { c.limits = l }
}

// withDefaults returns l with every zero field set to its default and
// every negative one to no bound.
func (l Limits) withDefaults() Limits {
	set := func(v *int, def int) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0:
			*v = int(^uint(0) >> 1)
		}
	}
	set(&l.MaxSchemaBytes, DefaultMaxSchemaBytes)
	set(&l.MaxSchemaDepth, DefaultMaxSchemaDepth)
	set(&l.MaxSubschemas, DefaultMaxSubschemas)
	set(&l.MaxPatternSize, DefaultMaxPatternSize)
	set(&l.MaxInstanceDepth, DefaultMaxInstanceDepth)
	set(&l.MaxValidationWork, DefaultMaxValidationWork)
	return l
}

// checkShape is the pre-pass of Compile: one linear scan over the schema's
// bytes that checks its size, its nesting and the number of objects in it
// (an upper bound of its subschemas). It does not check that data is valid
// JSON; the decoder that follows does.
func checkShape(data []byte, l Limits) error {
	if len(data) > l.MaxSchemaBytes {
		return &LimitError{Limit: LimitSchemaBytes, Max: l.MaxSchemaBytes}
	}
	depth, objects := 0, 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			i = skipString(data, i)
		case '{':
			if objects++; objects > l.MaxSubschemas {
				return &LimitError{Limit: LimitSubschemas, Max: l.MaxSubschemas}
			}
			fallthrough
		case '[':
			if depth++; depth > l.MaxSchemaDepth {
				return &LimitError{Limit: LimitSchemaDepth, Max: l.MaxSchemaDepth}
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// skipString returns the index of the quote that closes the string whose
// opening quote is at data[i], or len(data) if there is none.
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(data)
}

// checkInstanceDepth reports whether data, a JSON text, nests its arrays
// and objects deeper than max, by one linear scan.
func checkInstanceDepth(data []byte, max int) error {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			i = skipString(data, i)
		case '{', '[':
			if depth++; depth > max {
				return &LimitError{Limit: LimitInstanceDepth, Max: max}
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// checkExpanded counts the subschemas of the compiled schema s with every
// reference expanded in place, and fails when there are more than max.
// Validation visits at most that many subschemas per instance location, so
// this bounds schemas whose references fan out to references (each
// doubling the work of the one before) although they are small on the
// wire. Counts are memoized per subschema and saturate at max+1, so the
// walk is linear in the compiled graph; a reference back to a subschema
// being counted (a cycle, which validation follows only into deeper
// instance locations or refuses) counts once.
func checkExpanded(s *sjs.Schema, max int) error {
	c := expansion{memo: make(map[*sjs.Schema]int), max: max}
	if c.count(s) > max {
		return &LimitError{Limit: LimitSubschemas, Max: max}
	}
	return nil
}

type expansion struct {
	memo map[*sjs.Schema]int // -1 while being counted
	max  int
}

func (c *expansion) count(s *sjs.Schema) int {
	if s == nil {
		return 0
	}
	switch n, ok := c.memo[s]; {
	case ok && n < 0:
		return 1
	case ok:
		return n
	}
	c.memo[s] = -1
	n := 1
	for child := range children(s) {
		if n += c.count(child); n > c.max {
			n = c.max + 1
			break
		}
	}
	c.memo[s] = n
	return n
}

// children yields the subschemas that s applies, references included.
func children(s *sjs.Schema) iter.Seq[*sjs.Schema] {
	return func(yield func(*sjs.Schema) bool) {
		one := func(cs ...*sjs.Schema) bool {
			for _, c := range cs {
				if c != nil && !yield(c) {
					return false
				}
			}
			return true
		}
		anyOne := func(v any) bool {
			switch v := v.(type) {
			case *sjs.Schema:
				return one(v)
			case []*sjs.Schema:
				return one(v...)
			}
			return true
		}
		var dyn *sjs.Schema
		if s.DynamicRef != nil {
			dyn = s.DynamicRef.Ref
		}
		if !one(s.Ref, s.RecursiveRef, dyn, s.Not, s.If, s.Then, s.Else, s.PropertyNames,
			s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema) ||
			!one(s.AllOf...) || !one(s.AnyOf...) || !one(s.OneOf...) || !one(s.PrefixItems...) ||
			!anyOne(s.AdditionalProperties) || !anyOne(s.Items) || !anyOne(s.AdditionalItems) {
			return
		}
		for _, c := range s.Properties {
			if !yield(c) {
				return
			}
		}
		for _, c := range s.PatternProperties {
			if !yield(c) {
				return
			}
		}
		for _, c := range s.DependentSchemas {
			if !yield(c) {
				return
			}
		}
		for _, d := range s.Dependencies {
			if !anyOne(d) {
				return
			}
		}
	}
}

// regexps is the regular expression engine of one compiled schema. While
// the schema compiles, it compiles each distinct pattern once (the
// library asks twice: to check the meta-schema's "format": "regex" and to
// compile "pattern" and "patternProperties"), charging its estimated size
// to the schema's budget, because a short pattern can cost milliseconds
// to compile ("((x+x+)+y){1000}" is 16 bytes and over 10,000
// instructions). Once the schema is compiled, it serves only the "format":
// "regex" assertion on instances, which needs to know whether a string is
// a valid expression, not to compile it: it parses and sizes it, in time
// linear in its length. RE2, Go's engine, matches in linear time, so
// matching needs no bound.
type regexps struct {
	mu       sync.Mutex
	cache    map[string]sjs.Regexp // nil once compiled
	budget   int                   // instructions left to compile
	max      int                   // Limits.MaxPatternSize
	failure  error                 // the first *LimitError
	compiled bool
}

func newRegexps(max int) *regexps {
	return &regexps{cache: make(map[string]sjs.Regexp), budget: max, max: max}
}

// compile implements sjs.RegexpEngine. It may run concurrently once the
// schema is compiled (format assertion by concurrent validations).
func (r *regexps) compile(pattern string) (sjs.Regexp, error) {
	r.mu.Lock()
	c, ok := r.cache[pattern]
	r.mu.Unlock()
	if ok {
		return c, nil
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err // the *syntax.Error that regexp.Compile returns
	}
	size := patternSize(re, r.max+1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.compiled {
		if size > r.max {
			return nil, &LimitError{Limit: LimitPatternSize, Max: r.max}
		}
		return nil, nil // only its validity is asked for
	}
	// Every compiled expression also costs a fixed overhead (tens of
	// microseconds), charged as patternOverhead instructions.
	if r.budget -= size + patternOverhead; r.budget < 0 {
		if r.failure == nil {
			r.failure = &LimitError{Limit: LimitPatternSize, Max: r.max}
		}
		return nil, r.failure
	}
	if c, err = regexp.Compile(pattern); err != nil {
		return nil, err
	}
	r.cache[pattern] = c
	return c, nil
}

// patternOverhead is what compiling one regular expression costs besides
// its instructions, in instructions: measured, about as much as a literal
// of a hundred characters.
const patternOverhead = 100

// done switches r to serving the format assertion only.
func (r *regexps) done() {
	r.mu.Lock()
	r.compiled, r.cache = true, nil
	r.mu.Unlock()
}

// patternSize estimates the instructions of the compiled program of re:
// a literal costs one per rune, a counted repetition its maximum times its
// operand. The result saturates at limit.
func patternSize(re *syntax.Regexp, limit int) int {
	n := 1
	switch re.Op {
	case syntax.OpLiteral:
		n = len(re.Rune)
	case syntax.OpRepeat:
		times := re.Max
		if times < 0 {
			times = re.Min + 1
		}
		sub := patternSize(re.Sub[0], limit)
		if times > 0 && sub > limit/times {
			return limit
		}
		n = 1 + sub*max(times, 1)
	default:
		for _, s := range re.Sub {
			if n += patternSize(s, limit); n >= limit {
				return limit
			}
		}
	}
	return min(n, limit)
}
