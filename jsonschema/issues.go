package jsonschema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// maxDisplayLen bounds how much of a value an issue message quotes.
const maxDisplayLen = 40

// maxIssues is about the most issues a ValidationError lists (the first
// ones the validator found, in location order): enough to correct an
// instance, and a bound on the cost of collecting them.
const maxIssues = 100

// maxEnumDisplay bounds how many of an "enum"'s values an issue lists.
const maxEnumDisplay = 10

// issueCollector turns the library's error tree into a flat, sorted,
// de-duplicated list of short issues.
type issueCollector struct {
	printer *message.Printer // for kinds without a message of our own; created lazily
}

// found is an Issue plus, for a type mismatch, its parts, so that
// alternatives can merge "must be string, not boolean" and "must be
// integer, not boolean" into "must be string or integer, not boolean".
type found struct {
	Issue
	want []string
	got  string
}

// issues flattens the tree rooted at e.
func (c *issueCollector) issues(e *sjs.ValidationError) []Issue {
	fs := c.collect(e)
	out := make([]Issue, len(fs))
	for i, f := range fs {
		out[i] = f.Issue
	}
	slices.SortStableFunc(out, func(a, b Issue) int {
		if n := strings.Compare(a.Location, b.Location); n != 0 {
			return n
		}
		return strings.Compare(a.Message, b.Message)
	})
	return slices.Compact(out)
}

func (c *issueCollector) collect(e *sjs.ValidationError) []found {
	loc := pointer(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		out := make([]found, 0, min(len(k.Missing), maxIssues))
		for _, p := range k.Missing[:min(len(k.Missing), maxIssues)] {
			out = append(out, found{Issue: Issue{loc, "missing required property " + strconv.Quote(p)}})
		}
		return out
	case *kind.AdditionalProperties:
		out := make([]found, 0, min(len(k.Properties), maxIssues))
		for _, p := range k.Properties[:min(len(k.Properties), maxIssues)] {
			out = append(out, found{Issue: Issue{loc, "unexpected property " + strconv.Quote(p)}})
		}
		return out
	case *kind.Type:
		return []found{{Issue{loc, c.message(k)}, k.Want, k.Got}}
	case *kind.AnyOf:
		return c.alternatives(loc, e.Causes, "must match at least one of the allowed schemas")
	case *kind.OneOf:
		if len(k.Subschemas) >= 2 {
			return []found{{Issue: Issue{loc, fmt.Sprintf("must match exactly one schema in oneOf, but matches %d and %d", k.Subschemas[0], k.Subschemas[1])}}}
		}
		return c.alternatives(loc, e.Causes, "must match exactly one schema in oneOf")
	}
	if len(e.Causes) > 0 {
		var out []found
		for _, cause := range e.Causes {
			// Past maxIssues the rest is dropped: flattening, sorting
			// and rendering every failed assertion of a wide instance
			// cost more than the validation itself (#16.12).
			if len(out) >= maxIssues {
				break
			}
			out = append(out, c.collect(cause)...)
		}
		return out
	}
	return []found{{Issue: Issue{loc, c.message(e.ErrorKind)}}}
}

// alternatives reports a failed anyOf/oneOf. It keeps only the branches
// that got furthest into the instance (the likeliest intended ones); if
// all their issues sit at loc itself, they are merged into one issue
// whose message joins the alternatives with "or".
func (c *issueCollector) alternatives(loc string, branches []*sjs.ValidationError, fallback string) []found {
	if len(branches) == 0 {
		return []found{{Issue: Issue{loc, fallback}}}
	}
	best, bestDepth := []found(nil), -1
	for _, b := range branches {
		fs := c.collect(b)
		d := 0
		for _, f := range fs {
			d = max(d, strings.Count(f.Location, "/"))
		}
		switch {
		case d > bestDepth:
			best, bestDepth = fs, d
		case d == bestDepth:
			best = append(best, fs...)
		}
	}
	var (
		msgs      []string
		want      []string // merged type alternatives
		got       string
		typeIndex = -1 // where in msgs the merged type message goes
	)
	for _, f := range best {
		if f.Location != loc {
			return best
		}
		if f.want != nil && (typeIndex < 0 || f.got == got) {
			if typeIndex < 0 {
				typeIndex, got = len(msgs), f.got
				msgs = append(msgs, "")
			}
			for _, w := range f.want {
				if !slices.Contains(want, w) {
					want = append(want, w)
				}
			}
			continue
		}
		if !slices.Contains(msgs, f.Message) {
			msgs = append(msgs, f.Message)
		}
	}
	if typeIndex >= 0 {
		msgs[typeIndex] = typeMessage(want, got)
	}
	if len(msgs) == 0 {
		return []found{{Issue: Issue{loc, fallback}}}
	}
	if typeIndex >= 0 && len(msgs) == 1 {
		return []found{{Issue{loc, msgs[0]}, want, got}}
	}
	return []found{{Issue: Issue{loc, strings.Join(msgs, ", or ")}}}
}

func typeMessage(want []string, got string) string {
	return "must be " + strings.Join(want, " or ") + ", not " + got
}

// message renders one leaf error kind.
func (c *issueCollector) message(k sjs.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return typeMessage(k.Want, k.Got)
	case *kind.Enum:
		if len(k.Want) == 1 {
			return "must be " + display(k.Want[0])
		}
		// A long list is cut: the message of every invalid value would
		// otherwise cost the whole list (#16.12: 1000 values times 10,000
		// invalid items cost seconds).
		want := make([]string, 0, min(len(k.Want), maxEnumDisplay)+1)
		for _, w := range k.Want[:min(len(k.Want), maxEnumDisplay)] {
			want = append(want, display(w))
		}
		if n := len(k.Want) - maxEnumDisplay; n > 0 {
			want = append(want, fmt.Sprintf("... (%d more)", n))
		}
		return "must be one of " + strings.Join(want, ", ")
	case *kind.Const:
		return "must be " + display(k.Want)
	case *kind.Minimum:
		return "must be >= " + rat(k.Want)
	case *kind.Maximum:
		return "must be <= " + rat(k.Want)
	case *kind.ExclusiveMinimum:
		return "must be > " + rat(k.Want)
	case *kind.ExclusiveMaximum:
		return "must be < " + rat(k.Want)
	case *kind.MultipleOf:
		return "must be a multiple of " + rat(k.Want)
	case *kind.MinLength:
		return "must be at least " + count(k.Want, "character") + " long"
	case *kind.MaxLength:
		return "must be at most " + count(k.Want, "character") + " long"
	case *kind.Pattern:
		return "must match pattern " + truncate(strconv.Quote(k.Want), maxDisplayLen*2)
	case *kind.Format:
		if k.Err != nil {
			return "must be a valid " + k.Want + ": " + truncate(k.Err.Error(), maxDisplayLen*2)
		}
		return "must be a valid " + k.Want
	case *kind.MinItems:
		return "must have at least " + count(k.Want, "item")
	case *kind.MaxItems:
		return "must have at most " + count(k.Want, "item")
	case *kind.UniqueItems:
		return fmt.Sprintf("must not contain duplicates (items %d and %d are equal)", k.Duplicates[0], k.Duplicates[1])
	case *kind.MinProperties:
		return "must have at least " + count(k.Want, "property")
	case *kind.MaxProperties:
		return "must have at most " + count(k.Want, "property")
	case *kind.FalseSchema:
		return "is not allowed"
	case *kind.Not:
		return "must not match the schema in not"
	}
	if c.printer == nil {
		c.printer = message.NewPrinter(language.English)
	}
	return k.LocalizedString(c.printer)
}

// pointer renders reference tokens as a JSON Pointer (RFC 6901).
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

// display renders a JSON value compactly for a message.
func display(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncate(string(b), maxDisplayLen)
}

// truncate shortens s to at most n bytes, cutting at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// rat renders a number as an integer when it is one, otherwise as the
// shortest float that reads back to the same float64.
func rat(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// count renders n with the singular or plural form of noun.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if p, ok := strings.CutSuffix(noun, "y"); ok {
		return strconv.Itoa(n) + " " + p + "ies"
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
