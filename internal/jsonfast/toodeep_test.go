package jsonfast

import (
	"strings"
	"testing"
)

// tooDeepOracle says whether SkipValue(data, 0, 0, maxDepth) failed for
// the depth alone: without the bound, the scan gets past the place where
// it stopped (an opener there starts a valid value), while malformed JSON
// fails at the same place whatever the bound.
func tooDeepOracle(data []byte, maxDepth int) (end int, failed, deep bool) {
	end, ok := SkipValue(data, 0, 0, maxDepth)
	if ok {
		return end, false, false
	}
	endInf, okInf := SkipValue(data, 0, 0, len(data)+1)
	return end, true, okInf || endInf > end
}

func TestTooDeep(t *testing.T) {
	tests := []struct {
		in       string
		maxDepth int
		want     bool
	}{
		{"[[[]]]", 2, true},
		{"[[[]]]", 3, false},
		{`{"a":{"b":[1]}}`, 2, true},
		{`{"a":{"b":[1]}}`, 3, false},
		{`{{}}`, 5, false},            // an object where a key goes
		{`[1 [2]]`, 5, false},         // an array where a comma goes
		{`["[[[[", [[]]]`, 2, true},   // brackets in a string do not count
		{`["\"[[", [[[]]]]`, 3, true}, // nor after an escaped quote
		{`[[[`, 5, false},             // cut short
		{strings.Repeat("[", 100), 10, true},
		{`[[],[[]],[]]`, 2, true}, // the depth comes back down
		{`[[],[],[[]]]`, 3, false},
	}
	for _, tt := range tests {
		end, failed, deep := tooDeepOracle([]byte(tt.in), tt.maxDepth)
		if deep != tt.want {
			t.Errorf("oracle(%q, %d) = %v, want %v", tt.in, tt.maxDepth, deep, tt.want)
		}
		if got := failed && TooDeep([]byte(tt.in), 0, end, 0, tt.maxDepth); got != tt.want {
			t.Errorf("TooDeep(%q, %d) = %v, want %v", tt.in, tt.maxDepth, got, tt.want)
		}
	}
}

// FuzzTooDeep checks TooDeep against the oracle on any input and bound.
func FuzzTooDeep(f *testing.F) {
	for _, s := range []string{"[[[]]]", `{"a":{"b":[1]}}`, `{{}}`, `["[[", [[]]]`, `[1 [2]]`, `[[[`} {
		f.Add([]byte(s), uint8(2))
	}
	f.Fuzz(func(t *testing.T, data []byte, md uint8) {
		maxDepth := int(md%16) + 1
		end, failed, deep := tooDeepOracle(data, maxDepth)
		if !failed {
			return
		}
		if got := TooDeep(data, 0, end, 0, maxDepth); got != deep {
			t.Fatalf("TooDeep(%q, %d) at %d = %v, want %v", data, maxDepth, end, got, deep)
		}
	})
}
