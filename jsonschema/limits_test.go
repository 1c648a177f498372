package jsonschema

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// nest wraps leaf n times in the template around, whose "%s" is the inner
// schema.
func nest(n int, around, leaf string) string {
	prefix, suffix, _ := strings.Cut(around, "%s")
	return strings.Repeat(prefix, n) + leaf + strings.Repeat(suffix, n)
}

// list joins n copies of item, with "%d" replaced by the index, into a
// JSON array's or object's members.
func list(n int, item string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strings.ReplaceAll(item, "%d", fmt.Sprint(i)))
	}
	return b.String()
}

// refChain is n definitions, each a reference to the next.
func refChain(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `"d%d":{"$ref":"#/$defs/d%d"},`, i, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"string"}`, n)
	return `{"$ref":"#/$defs/d0","$defs":{` + b.String() + `}}`
}

// refFanout is n definitions, each referring twice to the next: small on
// the wire, 2^n subschemas once expanded.
func refFanout(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"string"}`, n)
	return `{"$ref":"#/$defs/d0","$defs":{` + b.String() + `}}`
}

// hostileSchema is a schema built to cost the compiler or the validator.
type hostileSchema struct {
	name   string
	schema string
	limit  string // the limit it must hit, or "" if it must compile
}

// hostileSchemas returns schemas just within and just over the default
// limits, nesting and widening every kind of subschema.
func hostileSchemas() []hostileSchema {
	const in, over = DefaultMaxSchemaDepth/2 - 1, DefaultMaxSchemaDepth
	var out []hostileSchema
	for _, k := range []struct{ name, around string }{
		{"properties", `{"type":"object","properties":{"a":%s}}`},
		{"items", `{"type":"array","items":%s}`},
		{"prefixItems", `{"prefixItems":[%s]}`},
		{"allOf", `{"allOf":[%s]}`},
		{"anyOf", `{"anyOf":[%s,{"type":"null"}]}`},
		{"oneOf", `{"oneOf":[%s,{"type":"null"}]}`},
		{"not", `{"not":%s}`},
		{"if/then", `{"if":%s,"then":%s}`},
		{"$defs", `{"$defs":{"a":%s}}`},
		{"additionalProperties", `{"additionalProperties":%s}`},
	} {
		leaf := `{"type":"string"}`
		if k.name == "if/then" {
			// Both branches nest: 2^n subschemas in a tree.
			out = append(out, hostileSchema{"deep if/then tree", ifThen(12), LimitSubschemas})
			continue
		}
		out = append(out,
			hostileSchema{"deep " + k.name + " within", nest(in/2, k.around, leaf), ""},
			hostileSchema{"deep " + k.name + " over", nest(over, k.around, leaf), LimitSchemaDepth},
			hostileSchema{"deep " + k.name + " 5000", nest(5000, k.around, leaf), LimitSchemaDepth},
		)
	}
	const wide = DefaultMaxSubschemas - 10
	out = append(out,
		hostileSchema{"wide allOf within", `{"allOf":[` + list(wide, `{"minimum":%d}`) + `]}`, ""},
		hostileSchema{"wide allOf over", `{"allOf":[` + list(DefaultMaxSubschemas+1, `{}`) + `]}`, LimitSubschemas},
		hostileSchema{"wide allOf 100000", `{"allOf":[` + list(100000, `{}`) + `]}`, LimitSchemaBytes},
		hostileSchema{"wide anyOf within", `{"anyOf":[` + list(wide, `{"const":%d}`) + `]}`, ""},
		hostileSchema{"wide properties within", `{"properties":{` + list(wide, `"p%d":{"type":"integer"}`) + `}}`, ""},
		hostileSchema{"wide $defs within", `{"$defs":{` + list(wide, `"p%d":{"type":"integer"}`) + `}}`, ""},
		hostileSchema{"$ref chain within", refChain(wide / 2), ""},
		hostileSchema{"$ref chain over", refChain(DefaultMaxSubschemas), LimitSubschemas},
		hostileSchema{"$ref fan-out", refFanout(30), LimitSubschemas},
		hostileSchema{"$ref cycle", `{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`, ""},
		hostileSchema{"$ref to itself", `{"$ref":"#"}`, ""},
		hostileSchema{"huge enum within", `{"enum":[` + list(40000, `%d`) + `]}`, ""},
		hostileSchema{"huge enum of objects", `{"enum":[` + list(DefaultMaxSubschemas+1, `{}`) + `]}`, LimitSubschemas},
		hostileSchema{"long pattern within", `{"pattern":"` + strings.Repeat("a", DefaultMaxPatternSize-patternOverhead-10) + `"}`, ""},
		hostileSchema{"long pattern over", `{"pattern":"` + strings.Repeat("a", DefaultMaxSchemaBytes-20) + `"}`, LimitPatternSize},
		hostileSchema{"heavy patterns", `{"patternProperties":{` + list(100, `"((x+x+)+y%d){1000}":{}`) + `}}`, LimitPatternSize},
		hostileSchema{"one heavy pattern many times", `{"allOf":[` + list(DefaultMaxSubschemas-10, `{"pattern":"((x+x+)+y){1000}"}`) + `]}`, ""},
		hostileSchema{"nested repetition pattern", `{"pattern":"((a{1000}){1000}){1000}"}`, ""},
		hostileSchema{"catastrophic pattern", `{"pattern":"^(a+)+$"}`, ""},
		hostileSchema{"many patterns within", `{"patternProperties":{` + list(250, `"^p%d(x+x+)+y$":{}`) + `}}`, ""},
		hostileSchema{"many patterns over", `{"patternProperties":{` + list(400, `"^p%d(x+x+)+y$":{}`) + `}}`, LimitPatternSize},
		hostileSchema{"over the size", `{"description":"` + strings.Repeat("x", DefaultMaxSchemaBytes) + `"}`, LimitSchemaBytes},
	)
	return out
}

// ifThen nests if/then n deep, both branches recursing.
func ifThen(n int) string {
	s := `{"type":"string"}`
	for range n {
		s = `{"if":` + s + `,"then":` + s + `}`
	}
	return s
}

// TestCompileHostile checks that every hostile schema is refused with the
// limit it exceeds, or compiles (the benchmark measures what that costs).
func TestCompileHostile(t *testing.T) {
	for _, h := range hostileSchemas() {
		t.Run(h.name, func(t *testing.T) {
			_, err := Compile([]byte(h.schema))
			if h.limit == "" {
				if err != nil && !errors.Is(err, ErrInvalidSchema) {
					t.Fatalf("Compile: %v", err)
				}
				return
			}
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != h.limit || !errors.Is(err, ErrLimit) {
				t.Fatalf("Compile = %v, want the %s limit", err, h.limit)
			}
			if !strings.Contains(err.Error(), "limit exceeded: "+h.limit) {
				t.Errorf("message %q does not say a limit was exceeded", err)
			}
		})
	}
}

// BenchmarkCompileHostile measures the CPU that each hostile schema costs
// to compile or to refuse, reported as cpu-ms/op (process CPU time, which
// includes the garbage collector's and does not grow when other processes
// take the cores, as ns/op does).
func BenchmarkCompileHostile(b *testing.B) {
	for _, h := range hostileSchemas() {
		data := []byte(h.schema)
		b.Run(strings.ReplaceAll(h.name, " ", "_"), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			start := processCPU()
			for b.Loop() {
				Compile(data)
			}
			reportCPU(b, start)
		})
	}
}

// reportCPU reports the process CPU time used since start per iteration.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// hostileInstance is an instance built to cost the validator.
type hostileInstance struct {
	name     string
	schema   string
	instance string
	want     error  // nil, ErrValidation or ErrLimit
	limit    string // with ErrLimit: the limit named
}

// hostileInstances returns deep instances, and wide ones of n items (the
// cost of these is linear in n: each item costs the subschemas that apply
// to it, weighted by what their keywords cost on it). The verdicts are
// those for n = 10,000 (about 1 MB of arguments), where every instance
// either costs less than the target of #16.12 (50 ms of CPU) or is
// refused for the work it would cost.
func hostileInstances(n int) []hostileInstance {
	const recursive = `{"type":"array","items":{"$ref":"#"}}`
	const draft7 = `"$schema":"http://json-schema.org/draft-07/schema#",`
	deepArray := func(n int, leaf string) string { return strings.Repeat("[", n) + leaf + strings.Repeat("]", n) }
	strs := func(n int, s string) string { return "[" + list(n, `"`+s+`"`) + "]" }
	nums := func(n int, s string) string { return "[" + list(n, s) + "]" }
	long := func(n int, s string) string { return `"` + strings.Repeat(s, n) + `"` }
	const work = LimitValidationWork
	return []hostileInstance{
		{"deep argument 9000", recursive, deepArray(9000, `"x"`), ErrLimit, LimitInstanceDepth},
		{"deep argument at the limit, invalid at the bottom", recursive, deepArray(DefaultMaxInstanceDepth-1, `"x"`), ErrValidation, ""},
		{"deep argument over the limit", recursive, deepArray(DefaultMaxInstanceDepth+1, ``), ErrLimit, LimitInstanceDepth},
		{"deep argument, simple schema", `{"type":"object"}`, `{"a":` + deepArray(9000, ``) + `}`, ErrLimit, LimitInstanceDepth},
		{"deep objects", `{"$defs":{"n":{"type":"object","additionalProperties":{"$ref":"#/$defs/n"}}},"$ref":"#/$defs/n"}`, nest(9000, `{"a":%s}`, `1`), ErrLimit, LimitInstanceDepth},
		{"malformed and deep", recursive, strings.Repeat("[", 9000), ErrLimit, LimitInstanceDepth},
		{"items, catastrophic pattern", `{"items":{"type":"string","pattern":"^(a+)+$"}}`, strs(n, strings.Repeat("a", 30)+"!"), ErrLimit, work},
		{"items, format regex", `{` + draft7 + `"items":{"format":"regex"}}`, strs(n, `((x+x+)+y){1000}`), ErrLimit, work},
		{"items, enum of 1000", `{"items":{"enum":[` + list(1000, `"v%d"`) + `]}}`, strs(n, "v999"), ErrLimit, work},
		{"items, enum of 1000, none matching", `{"items":{"enum":[` + list(1000, `"v%d"`) + `]}}`, strs(n/10, "x"), ErrValidation, ""},
		{"items, allOf of 100", `{"items":{"allOf":[` + list(100, `{"minLength":%d}`) + `]}}`, strs(n, strings.Repeat("a", 100)), ErrLimit, work},
		{"items, plain", `{"items":{"type":"string"}}`, strs(n, strings.Repeat("a", 100)), nil, ""},
		{"items, empty schema, 10 times as many", `{"items":{}}`, nums(10*n, `1`), ErrLimit, work},
		{"items, simple pattern", `{"items":{"pattern":"^[a-z]+$"}}`, strs(n/10, strings.Repeat("a", 90)), nil, ""},
		{"items, format email", `{` + draft7 + `"items":{"format":"email"}}`, strs(n/2, strings.Repeat("a", 90)+"@x"), ErrValidation, ""},
		{"items, allOf of 100, every one failing", `{"items":{"allOf":[` + list(100, `{"minLength":1000}`) + `]}}`, strs(n/30, "a"), ErrValidation, ""},
		{"members against 450 properties", `{"properties":{` + list(450, `"p%d":{"type":"integer"}`) + `}}`, `{` + list(n, `"p%d":"x"`) + `}`, ErrValidation, ""},
		{"big numbers, minimum", `{"items":{"minimum":0.5}}`, nums(n, `1e9999`), ErrLimit, work},
		{"big numbers, multipleOf", `{"items":{"multipleOf":0.7}}`, nums(n, `1e9999`), ErrLimit, work},
		{"big numbers, enum of 100", `{"items":{"enum":[` + list(100, `%d`) + `]}}`, nums(n/100, `1e9999`), ErrLimit, work},
		{"plain numbers, enum of 100", `{"items":{"enum":[` + list(100, `%d`) + `]}}`, nums(n/50, `99`), nil, ""},
		{"plain numbers, enum of 100, 10 times as many", `{"items":{"enum":[` + list(100, `%d`) + `]}}`, nums(n/5, `99`), ErrLimit, work},
		{"long string, allOf of 100 minLength", `{"allOf":[` + list(100, `{"minLength":%d}`) + `]}`, long(50*n, "é"), ErrLimit, work},
		{"long string, large pattern", `{"pattern":"[ab]{999}[ab]{999}c"}`, long(n, "a"), ErrLimit, work},
		{"long string, format regex", `{` + draft7 + `"format":"regex"}`, long(30*n, "(a)"), ErrLimit, work},
		{"tool arguments", toolSchema, string(benchInput), nil, ""},
	}
}

// TestValidateHostile checks the verdict on each hostile instance: a
// clear limit error naming the limit before any validation, or an answer
// (whose cost BenchmarkValidateHostile measures). It fails on code
// without the validation work limit, which validated every wide instance
// whatever it cost.
func TestValidateHostile(t *testing.T) {
	for _, h := range hostileInstances(10000) {
		t.Run(h.name, func(t *testing.T) {
			s, err := Compile([]byte(h.schema))
			if err != nil {
				t.Fatal(err)
			}
			err = s.ValidateJSON([]byte(h.instance))
			if (h.want == nil) != (err == nil) || !errors.Is(err, h.want) {
				t.Fatalf("ValidateJSON = %.200v, want %v", err, h.want)
			}
			var le *LimitError
			if errors.Is(err, ErrLimit) && (!errors.As(err, &le) || le.Limit != h.limit) {
				t.Fatalf("ValidateJSON = %v, want the %s limit", err, h.limit)
			}
			var v any
			if json.Unmarshal([]byte(h.instance), &v) == nil {
				if err2 := s.Validate(v); !errors.Is(err2, h.want) || (err2 == nil) != (err == nil) {
					t.Fatalf("Validate = %.200v, ValidateJSON = %.200v", err2, err)
				}
			}
		})
	}
}

// BenchmarkValidateHostile measures the CPU that each hostile instance
// costs, in cpu-ms/op, the wide ones with 10,000 items, under the default
// limits; with -unbounded, without the validation work limit, which also
// reports the estimate (work-units/op) and its calibration (cpu-ms per
// 100,000 units, which must stay under 50 for the default to meet the
// target).
func BenchmarkValidateHostile(b *testing.B) {
	for _, h := range hostileInstances(10000) {
		var opts []Option
		if *unbounded {
			opts = append(opts, WithLimits(Limits{MaxValidationWork: -1}))
		}
		s, err := Compile([]byte(h.schema), opts...)
		if err != nil {
			b.Fatal(err)
		}
		data := []byte(h.instance)
		b.Run(strings.ReplaceAll(h.name, " ", "_"), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			start := processCPU()
			for b.Loop() {
				s.ValidateJSON(data)
			}
			reportCPU(b, start)
			if v, _, ok := decodeInstance(data, s.maxDepth); ok && *unbounded {
				units := workOf(s.costs, s.compiled, v, math.MaxInt)
				ms := float64(processCPU()-start) / float64(time.Millisecond) / float64(b.N)
				b.ReportMetric(units, "work-units/op")
				b.ReportMetric(ms/units*1e5, "cpu-ms/100k-units")
			}
		})
	}
}

// unbounded makes BenchmarkValidateHostile measure without the validation
// work limit, to calibrate DefaultMaxValidationWork.
var unbounded = flag.Bool("unbounded", false, "BenchmarkValidateHostile: no validation work limit")
