package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// appendJSONStringRef is the byte-at-a-time appendJSONString that the
// word-at-a-time one replaced; the two must agree on every input.
func appendJSONStringRef(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

var swarStrings = []string{
	"", "a", "method/name", `with "quotes" and \ backslash`, "ctl\x00\x01\b\f\n\r\t\x1f",
	"utf8 é 日本 🎉", "bad \xff\xc3", strings.Repeat("abcdefgh", 5) + "\n", strings.Repeat("x", 15) + `"`,
	"<>&\u2028",
}

func checkAppendJSONString(t *testing.T, s string) {
	t.Helper()
	got := appendJSONString(nil, s)
	if want := appendJSONStringRef(nil, s); string(got) != string(want) {
		t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
	}
	if !json.Valid(got) {
		t.Fatalf("appendJSONString(%q) = %s, not valid JSON", s, got)
	}
}

func TestAppendJSONStringMatchesReference(t *testing.T) {
	for _, s := range swarStrings {
		checkAppendJSONString(t, s)
	}
}

// FuzzAppendJSONString compares appendJSONString with the byte-at-a-time
// reference.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range swarStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkAppendJSONString(t, s) })
}

// FuzzValid compares Valid with encoding/json's Valid, including inputs
// built around long strings so that the word-at-a-time scan is exercised.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{}`, `[1,"a",{"b":null}]`, `"` + strings.Repeat("p", 40) + `\u00e9"`, "\"x\x01\"", `{"a":"b\"c"}`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid = %v", data, got, want)
		}
		wrapped := append(append([]byte(`{"k":"`+strings.Repeat("w", 13)), data...), `"}`...)
		if got, want := Valid(wrapped), json.Valid(wrapped); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid = %v", wrapped, got, want)
		}
	})
}
