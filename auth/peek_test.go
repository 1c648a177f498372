package auth

import (
	"bytes"
	"encoding/json"
	"testing"
)

// For every valid JSON object, eachMember sees the members encoding/json
// sees with exact keys (the last of a repeated key), with equal values.
func FuzzEachMember(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}], "d":"x\"y" } `,
		`{"m\u0065thod":"tools/call","params":{"name":"x"}}`,
		`{"a":1,"a":2}`, `{"a":{"b":[[],[{}]]},"c":null,"d":true,"e":-1.5e3}`,
		`{"a":"\ud83d\ude00"}`, `[1,2]`, `{"a":1`, `{"a" 1}`, `{"a":[1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := map[string][]byte{}
		ok := eachMember(b, func(k, v []byte) { got[string(k)] = v })
		var want map[string]json.RawMessage
		if err := json.Unmarshal(b, &want); err != nil || want == nil || !json.Valid(b) {
			return // eachMember may or may not follow invalid input: the handler refuses it
		}
		if !ok {
			t.Fatalf("valid object not read: %q", b)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d members, want %d", b, len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(bytes.TrimSpace(got[k]), bytes.TrimSpace(v)) {
				t.Fatalf("%q: member %q = %q, want %q", b, k, got[k], v)
			}
		}
	})
}

func TestStringValue(t *testing.T) {
	for lit, want := range map[string]string{`"abc"`: "abc", `"a\u0062c"`: "abc", `"a\"b"`: `a"b`, `""`: ""} {
		got, ok := stringValue([]byte(lit))
		if !ok || string(got) != want {
			t.Errorf("%s: %q %v", lit, got, ok)
		}
	}
	for _, bad := range []string{`abc`, `"abc`, `1`, `"\x"`, ``} {
		if _, ok := stringValue([]byte(bad)); ok {
			t.Errorf("%s accepted", bad)
		}
	}
}
