package jsonrpc

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestDecodeTooDeepSaysSo: input refused for its nesting is answered
// -32700 with a message that says it nests too deep (not merely "invalid
// JSON"), wherever the deep value is; malformed input, deep or not, is
// still "invalid JSON", and nesting up to the bound is accepted.
func TestDecodeTooDeepSaysSo(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	deepObj := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	tooDeep := "nests deeper than " + strconv.Itoa(maxDepth) + " levels"
	tests := []struct {
		name string
		in   string
		want string // in the message; "" means Decode succeeds
	}{
		{"100000-deep array", deep(100000), tooDeep},
		{"just too deep array", deep(maxDepth + 1), tooDeep},
		{"deep params", `{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":` + deep(maxDepth) + `}}`, tooDeep},
		{"deep objects in params", `{"jsonrpc":"2.0","id":1,"method":"a","params":` + deepObj(maxDepth) + `}`, tooDeep},
		{"deep in a batch", `[{"jsonrpc":"2.0","method":"a","params":{"x":` + deep(maxDepth) + `}}]`, tooDeep},
		{"deep after strings with brackets", `{"jsonrpc":"2.0","id":"[[[","method":"]]]","params":{"x":` + deep(maxDepth) + `}}`, tooDeep},
		{"deepest accepted", `{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":` + deep(maxDepth-2) + `}}`, ""},
		{"deep but truncated", strings.Repeat("[", maxDepth-1), "invalid JSON"},
		{"object in key position", `{"jsonrpc":"2.0","params":{{}}}`, "invalid JSON"},
		{"array in key position", `{"jsonrpc":"2.0","params":{[]}}`, "invalid JSON"},
		{"deep then malformed", `{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":` + strings.Repeat("[", 50) + `}`, "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.in))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				return
			}
			var de *DecodeError
			if !errors.As(err, &de) || de.Err.Code != CodeParseError {
				t.Fatalf("Decode: %v, want a parse error (-32700)", err)
			}
			if !strings.Contains(de.Err.Message, tt.want) {
				t.Errorf("message %q lacks %q", de.Err.Message, tt.want)
			}
			if tt.want != tooDeep && strings.Contains(de.Err.Message, "deeper") {
				t.Errorf("malformed input said to nest too deep: %q", de.Err.Message)
			}
		})
	}
}
