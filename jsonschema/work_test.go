package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestValidationWork checks the estimate's routing and weights on small
// cases: what it charges, that it follows the library's routing (a member
// not named in "properties" costs no visit of that property's subschema)
// and that a reference cycle at one value ends.
func TestValidationWork(t *testing.T) {
	tests := []struct {
		name     string
		schema   string
		instance string
		min, max float64 // the estimate's expected range
	}{
		{"empty schema: decoding the items", `{}`, `[1,2,3]`, 5, 5},
		{"items: one visit per item", `{"items":{}}`, `[1,2,3]`, 2 + 3*(1+2), 2 + 3*(1+2)},
		{"properties route by name", `{"properties":{"a":{"allOf":[{},{},{}]}}}`, `{"b":1}`, 3, 3},
		{"properties route by name, named", `{"properties":{"a":{"allOf":[{},{},{}]}}}`, `{"a":1}`, 3 + 8, 3 + 8},
		{"prefixItems by index", `{"prefixItems":[{"allOf":[{},{}]}],"items":{}}`, `[1,2]`, 2 + 2 + 6 + 2, 2 + 2 + 6 + 2},
		{"allOf fan-out", `{"allOf":[{},{},{},{}]}`, `1`, 10, 10},
		{"$ref cycle at one value", `{"$ref":"#"}`, `1`, 2, 2},
		{"$ref chain longer than the fixed chain", refChain(40), `"x"`, 2 * 42, 2 * 42},
		{"$ref cycle through a long chain", `{"$ref":"#/$defs/d0","$defs":{` + refCycle(40) + `}}`, `1`, 2 * 41, 2 * 41},
		{"recursion into deeper values", `{"items":{"$ref":"#"}}`, `[[[]]]`, 12, 14},
		{"enum of 160 on a string", `{"enum":[` + list(160, `"v%d"`) + `]}`, `"v"`, 2 + 10, 2 + 11},
		{"pattern on a long string", `{"pattern":"[ab]{100}"}`, `"` + strings.Repeat("a", 2400) + `"`, 10000, 11000},
		{"format regex on a long string", `{"format":"regex"}`, `"` + strings.Repeat("a", 1000) + `"`, 4000, 4003},
		{"minimum on an exponent", `{"minimum":1}`, `1e1000`, 34, 37},
		{"numeric enum on an exponent", `{"enum":[1,2]}`, `1e1000`, 2 + 2*(2+34), 2 + 2*(2+35)},
		{"patternProperties charged for every name", `{"patternProperties":{"^x":{},"^y":{}}}`, `{"a":1}`, 2 + 1 + 2*2 + 2*2, 2 + 1 + 2*2 + 2*2 + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile([]byte(tc.schema), WithFormatAssertion())
			if err != nil {
				t.Fatal(err)
			}
			v, _, ok := decodeInstance([]byte(tc.instance), DefaultMaxInstanceDepth)
			if !ok {
				t.Fatal("bad instance")
			}
			got := workOf(s.costs, s.compiled, v, math.MaxInt)
			if got < tc.min || got > tc.max {
				t.Fatalf("work = %v, want %v..%v", got, tc.min, tc.max)
			}
		})
	}
}

// TestMaxValidationWork checks the option: an instance over the bound is
// a *LimitError naming "validation work", one within it is validated, and
// a negative bound means none.
func TestMaxValidationWork(t *testing.T) {
	const schema = `{"items":{"allOf":[{"type":"string"},{"minLength":1}]}}`
	instance := []byte("[" + list(100, `"x"`) + "]")
	s, err := Compile([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	v, _, _ := decodeInstance(instance, DefaultMaxInstanceDepth)
	work := int(math.Ceil(workOf(s.costs, s.compiled, v, math.MaxInt)))
	if work < 700 {
		t.Fatalf("work = %d, want 100 items times 3 visits", work)
	}
	tests := []struct {
		max     int
		wantErr bool
	}{
		{max: work - 1, wantErr: true},
		{max: work},
		{max: -1},
		{max: 0}, // the default
		{max: 10, wantErr: true},
	}
	for _, tc := range tests {
		s, err := Compile([]byte(schema), WithLimits(Limits{MaxValidationWork: tc.max}))
		if err != nil {
			t.Fatal(err)
		}
		for _, validate := range []func() error{
			func() error { return s.ValidateJSON(instance) },
			func() error {
				var v any
				json.Unmarshal(instance, &v)
				return s.Validate(v)
			},
		} {
			err := validate()
			var le *LimitError
			if tc.wantErr != (err != nil) {
				t.Fatalf("max %d: err = %v, want error %v", tc.max, err, tc.wantErr)
			}
			if tc.wantErr && (!errors.As(err, &le) || le.Limit != LimitValidationWork || le.Max != tc.max || !strings.Contains(err.Error(), "limit exceeded: validation work over")) {
				t.Fatalf("max %d: err = %v, want the validation work limit", tc.max, err)
			}
		}
	}
}

// TestIssuesBounded checks that a wide invalid instance yields a bounded
// list of issues, and that a long "enum" is cut in its message: both cost
// the whole instance or the whole list per issue before (#16.12).
func TestIssuesBounded(t *testing.T) {
	s, err := Compile([]byte(`{"items":{"enum":[`+list(1000, `"v%d"`)+`]}}`), WithLimits(Limits{MaxValidationWork: -1}))
	if err != nil {
		t.Fatal(err)
	}
	err = s.ValidateJSON([]byte("[" + list(5000, `"x"`) + "]"))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v", err)
	}
	if n := len(ve.Issues); n == 0 || n > 2*maxIssues {
		t.Errorf("%d issues, want at most %d", n, 2*maxIssues)
	}
	msg := ve.Issues[0].Message
	if !strings.HasSuffix(msg, `"v9", ... (990 more)`) {
		t.Errorf("message %q does not cut the enum", msg)
	}
}

// refCycle is n definitions, each a reference to the next, the last to
// the first.
func refCycle(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"d%d":{"$ref":"#/$defs/d%d"}`, i, (i+1)%n)
	}
	return b.String()
}
