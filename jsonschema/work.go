package jsonschema

import (
	"encoding/json"
	"math"
	"regexp"
	"regexp/syntax"
	"strings"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// Validation work (#16.12). The library's cost is the sum, over every
// value of the instance, of what each subschema that applies to that value
// costs; and a subschema does not cost the same on every value: a
// "pattern" costs its program's size times the string's length, "enum"
// its number of values, a number in exponent form a big.Rat conversion of
// about 10 µs per numeric keyword (and per numeric value of an "enum").
// The depth and subschema limits bound each factor, not the product: ten
// thousand strings against an "allOf" of 100 cost about half a second.
//
// So before validating, estimateWork walks the decoded instance together
// with the compiled schema, the way the library will, and adds up what
// each (value, subschema) visit is expected to cost, in work units of
// about the cost of one plain visit (half a microsecond on the machine
// the defaults were measured on: BenchmarkValidateHostile). It routes
// members and items exactly as the library does ("properties" by name,
// "prefixItems" by index), counts every in-place applicator ("allOf",
// "anyOf", "oneOf", "not", "if"/"then"/"else", "$ref", "dependentSchemas")
// as if all its branches ran, and "patternProperties" as if every pattern
// matched every name: it overestimates, never underestimates the visits.
// It stops as soon as the sum passes the bound, so the estimate itself
// costs at most a few percent of the bound (about 30 ns per visit against
// the library's 500).
//
// Option (d) of the issue, a bound on the instance's node count alone,
// was not taken: a count cannot see that one string against one "enum"
// of 1000 numbers costs what 1000 plain values cost, nor that a
// 1 MB string costs a regular expression program a million steps.

// schemaCost is what one visit of a subschema costs beyond one unit,
// precomputed when the schema compiles.
type schemaCost struct {
	fixed        float64 // units per visit of any value
	enumValues   int     // values of "enum" and "const"
	enumNumbers  int     // of which numbers: each a big.Rat conversion
	numberOps    int     // big.Rat conversions of a number instance
	stringScans  int     // keywords that read a string instance once
	formatScan   bool    // "format" other than "regex": reads it once more
	patternSize  int     // instructions of "pattern"; 0 if none
	regexFormat  bool    // "format": "regex": parses the string
	patternNames []int   // instruction counts of "patternProperties"
}

// The work model's coefficients, measured (BenchmarkValidateHostile and
// the cases of TestValidateWork) and rounded towards overestimating.
const (
	// bytesPerScan: one unit reads this many bytes of a string
	// (rune counting, format checks, content decoding).
	bytesPerScan = 64
	// regexStepsPerUnit: one unit runs this many steps (bytes times
	// instructions) of Go's NFA; the backtracker is faster.
	regexStepsPerUnit = 24
	// regexBytesPerUnit: one unit parses this many bytes of a "format":
	// "regex" string (syntax.Parse, 1.5 µs per byte in the worst case).
	regexBytesPerUnit = 0.25
	// enumValuesPerUnit: one unit compares a value with this many "enum"
	// values of another length or type.
	enumValuesPerUnit = 16
	// exponentUnits is what converting a number written with an exponent
	// (1e100) to a big.Rat costs, and exponentDigitsPerUnit how much more
	// each power of ten adds (1e10000 costs 28 µs).
	exponentUnits         = 24
	exponentDigitsPerUnit = 100
	// formatBytesPerUnit: one unit checks this many bytes of a "format"
	// ("email" is the slowest, 22 ns per byte).
	formatBytesPerUnit = 16
	// memberUnits is what decoding and iterating each member of an
	// object or item of an array costs, besides the visits of the
	// subschemas that apply to it.
	memberUnits = 1
)

// costModel holds the cost of every subschema reachable from a compiled
// schema. It is built once by Compile and only read afterwards.
type costModel map[*sjs.Schema]*schemaCost

// newCostModel computes the costs of s and of every subschema it reaches.
func newCostModel(s *sjs.Schema) costModel {
	m := make(costModel)
	var walk func(*sjs.Schema)
	walk = func(s *sjs.Schema) {
		if s == nil || m[s] != nil {
			return
		}
		m[s] = costOf(s)
		for c := range children(s) {
			walk(c)
		}
	}
	walk(s)
	return m
}

// costOf computes the cost of one visit of s.
func costOf(s *sjs.Schema) *schemaCost {
	// A visit costs one unit, and one more if it fails: the library
	// builds an error with the value's location, and the issues are
	// collected from it (100,000 failures: 120 ms). Whether it fails is
	// not known beforehand.
	c := &schemaCost{fixed: 2}
	c.fixed += float64(len(s.Required)+len(s.DependentRequired)) / 8
	if s.Enum != nil {
		c.enumValues += len(s.Enum.Values)
		for _, v := range s.Enum.Values {
			if isNumber(v) {
				c.enumNumbers++
			}
		}
	}
	if s.Const != nil {
		c.enumValues++
		if isNumber(*s.Const) {
			c.enumNumbers++
		}
	}
	if s.Types != nil && strings.Contains(strings.Join(s.Types.ToStrings(), " "), "integer") {
		c.numberOps++
	}
	if s.Minimum != nil || s.Maximum != nil || s.ExclusiveMinimum != nil || s.ExclusiveMaximum != nil {
		c.numberOps++
	}
	if s.MultipleOf != nil {
		c.numberOps += 2 // a conversion and a division
	}
	for _, p := range []bool{s.MinLength != nil, s.MaxLength != nil, s.ContentEncoding != nil, s.ContentMediaType != nil} {
		if p {
			c.stringScans++
		}
	}
	if s.Format != nil {
		c.regexFormat = s.Format.Name == "regex"
		c.formatScan = !c.regexFormat
	}
	if s.Pattern != nil {
		c.patternSize = programSize(s.Pattern)
	}
	for re := range s.PatternProperties {
		c.patternNames = append(c.patternNames, programSize(re))
	}
	return c
}

// programSize estimates the instructions of a compiled "pattern".
func programSize(re sjs.Regexp) int {
	r, ok := re.(*regexp.Regexp)
	if !ok {
		return 1
	}
	p, err := syntax.Parse(r.String(), syntax.Perl)
	if err != nil {
		return 1
	}
	return patternSize(p, math.MaxInt32)
}

func isNumber(v any) bool {
	switch v.(type) {
	case nil, bool, string, []any, map[string]any:
		return false
	}
	return true
}

// workEstimate is one estimate in progress.
type workEstimate struct {
	costs costModel
	max   float64
	total float64
	// The in-place chains of the values being visited: the first
	// len(chain) entries in chain, the rest in more; a fixed array so
	// that the estimate of an ordinary instance does not allocate.
	chain [32]*sjs.Schema
	more  []*sjs.Schema
	n     int // entries
	base  int // where the current value's chain starts
}

func (w *workEstimate) at(i int) *sjs.Schema {
	if i < len(w.chain) {
		return w.chain[i]
	}
	return w.more[i-len(w.chain)]
}

func (w *workEstimate) push(s *sjs.Schema) {
	if w.n < len(w.chain) {
		w.chain[w.n] = s
	} else {
		w.more = append(w.more, s)
	}
	w.n++
}

func (w *workEstimate) pop() {
	if w.n--; w.n >= len(w.chain) {
		w.more = w.more[:len(w.more)-1]
	}
}

// estimateWork reports whether validating v against s is expected to
// cost at most max units (see the comment at the top of this file).
func estimateWork(costs costModel, s *sjs.Schema, v any, max int) bool {
	return workOf(costs, s, v, max) <= float64(max)
}

// visit charges validating v against s and everything it applies to v
// and to v's members or items; false when the total passes the bound.
func (w *workEstimate) visit(s *sjs.Schema, v any) bool {
	if s == nil {
		return true
	}
	for i := w.base; i < w.n; i++ {
		if w.at(i) == s {
			return true // a reference cycle at one value: the library stops it
		}
	}
	c := w.costs[s]
	if c == nil {
		c = &schemaCost{fixed: 2}
	}
	if w.total += c.fixed + w.valueCost(c, v); w.total > w.max {
		return false
	}
	w.push(s)
	ok := w.inPlace(s, v) && w.structural(s, v, c)
	w.pop()
	return ok
}

// valueCost is what the keywords of c cost on the value v, beyond the
// fixed cost of the visit.
func (w *workEstimate) valueCost(c *schemaCost, v any) float64 {
	var n float64
	switch v := v.(type) {
	case string:
		l := float64(len(v))
		n += float64(c.stringScans) * l / bytesPerScan
		n += float64(c.enumValues) * (1 + l/bytesPerScan) / enumValuesPerUnit
		if c.patternSize > 0 {
			n += 2 + l*float64(c.patternSize+4)/regexStepsPerUnit
		}
		if c.regexFormat {
			n += l / regexBytesPerUnit
		}
		if c.formatScan {
			n += l / formatBytesPerUnit
		}
	case nil, bool:
		n += float64(c.enumValues) / enumValuesPerUnit
	case []any, map[string]any:
		// Equality with an "enum" value stops at the first difference,
		// at most the size of the smaller, which the schema bounds.
		n += float64(c.enumValues)
	default:
		conv := numberCost(v)
		// Each comparison with a numeric "enum" value converts both.
		n += float64(c.numberOps)*conv + float64(c.enumNumbers)*(2+conv)
		n += float64(c.enumValues) / enumValuesPerUnit
	}
	return n
}

// numberCost is what converting the number v to a big.Rat costs, as the
// library does for every numeric keyword: a plain decimal is cheap, one
// in exponent form costs a power of ten.
func numberCost(v any) float64 {
	var text string
	switch v := v.(type) {
	case json.Number:
		text = string(v)
	case float64:
		if a := math.Abs(v); a != 0 && (a >= 1e21 || a < 1e-6) {
			return exponentUnits + math.Abs(math.Log10(a))/exponentDigitsPerUnit
		}
		return 1
	case float32:
		return numberCost(float64(v))
	default:
		return 1
	}
	i := strings.IndexAny(text, "eE")
	if i < 0 {
		return 1 + float64(len(text))/bytesPerScan
	}
	exp := 0.0
	for _, d := range strings.TrimLeft(text[i+1:], "+-") {
		exp = exp*10 + float64(d-'0')
	}
	return exponentUnits + exp/exponentDigitsPerUnit + float64(len(text))/bytesPerScan
}

// inPlace charges the subschemas that s applies to v itself.
func (w *workEstimate) inPlace(s *sjs.Schema, v any) bool {
	one := func(cs ...*sjs.Schema) bool {
		for _, c := range cs {
			if c != nil && !w.visit(c, v) {
				return false
			}
		}
		return true
	}
	var dyn *sjs.Schema
	if s.DynamicRef != nil {
		dyn = s.DynamicRef.Ref
	}
	if !one(s.Ref, s.RecursiveRef, dyn, s.Not, s.If, s.Then, s.Else) ||
		!one(s.AllOf...) || !one(s.AnyOf...) || !one(s.OneOf...) {
		return false
	}
	if _, isObject := v.(map[string]any); !isObject {
		return true
	}
	for _, c := range s.DependentSchemas {
		if !one(c) {
			return false
		}
	}
	for _, d := range s.Dependencies {
		if c, ok := d.(*sjs.Schema); ok && !one(c) {
			return false
		}
	}
	return true
}

// structural charges the subschemas that s applies to v's members or
// items, each at that member or item, with a fresh in-place chain.
func (w *workEstimate) structural(s *sjs.Schema, v any, c *schemaCost) bool {
	saved := w.base
	w.base = w.n
	defer func() { w.base = saved }()
	switch v := v.(type) {
	case map[string]any:
		w.total += memberUnits * float64(len(v))
		for name, member := range v {
			for _, size := range c.patternNames {
				w.total += 2 + float64(len(name)*(size+4))/regexStepsPerUnit
			}
			if s.PropertyNames != nil && !w.visit(s.PropertyNames, name) {
				return false
			}
			if p, ok := s.Properties[name]; ok {
				if !w.visit(p, member) {
					return false
				}
			} else if a, ok := s.AdditionalProperties.(*sjs.Schema); ok && !w.visit(a, member) {
				return false
			}
			for _, p := range s.PatternProperties {
				if !w.visit(p, member) {
					return false
				}
			}
			if !w.visit(s.UnevaluatedProperties, member) {
				return false
			}
		}
	case []any:
		w.total += memberUnits * float64(len(v))
		if s.UniqueItems {
			// Hashing every item, and comparing those whose hashes
			// collide: about one more visit per item.
			w.total += float64(len(v))
		}
		prefix := s.PrefixItems
		if items, ok := s.Items.([]*sjs.Schema); ok {
			prefix = items
		}
		for i, item := range v {
			var each *sjs.Schema
			switch {
			case i < len(prefix):
				each = prefix[i]
			case s.Items2020 != nil:
				each = s.Items2020
			default:
				each, _ = s.Items.(*sjs.Schema)
				if len(prefix) > 0 {
					each, _ = s.AdditionalItems.(*sjs.Schema)
				}
			}
			if !w.visit(each, item) || !w.visit(s.Contains, item) || !w.visit(s.UnevaluatedItems, item) {
				return false
			}
		}
	}
	return w.total <= w.max
}

// workOf returns the estimated work of validating v against s, up to max
// units (more means over max).
func workOf(costs costModel, s *sjs.Schema, v any, max int) float64 {
	w := workEstimate{costs: costs, max: float64(max)}
	w.visit(s, v)
	return w.total
}
