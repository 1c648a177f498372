package jsonfast

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// naiveIndex is the byte-at-a-time definition of the Index functions.
func naiveIndex(s []byte, stop func(c byte) bool) int {
	for i, c := range s {
		if stop(c) {
			return i
		}
	}
	return len(s)
}

func special(c byte) bool       { return c < 0x20 || c == '"' || c == '\\' }
func specialOrHigh(c byte) bool { return special(c) || c >= utf8.RuneSelf }
func htmlUnsafe(c byte) bool    { return specialOrHigh(c) || c == '<' || c == '>' || c == '&' }

var stringCases = []string{
	"",
	"a",
	"plain ascii text that is longer than one word",
	`quote " here`,
	`back\slash`,
	"tab\tnew\nline\rcr\bbs\fff\x00nul\x1fus\x7fdel",
	"<html> & </html>",
	"héllo wörld 日本語 🎉",
	"bad \xff utf8 \xc3 end",
	"line\u2028sep\u2029para",
	strings.Repeat("x", 7) + `"`,
	strings.Repeat("x", 8) + `"`,
	strings.Repeat("x", 9) + "\x01",
	strings.Repeat("y", 31) + "\x80",
	"\x20\x1f\x21\x00",
}

func TestIndex(t *testing.T) {
	for _, s := range stringCases {
		checkIndex(t, s)
	}
	// Long inputs, with a special byte around the window boundaries.
	for _, pos := range []int{0, 63, 64, 65, 319, 320, 321, 831, 832, 833, 1855, 1856, 4000, 5999} {
		for _, c := range []string{`"`, `\`, "\x01", "\x1f", "<", ">", "&", "\x80", "\xff"} {
			b := []byte(strings.Repeat("abcdefgh", 750))
			b[pos] = c[0]
			checkIndex(t, string(b))
		}
	}
	checkIndex(t, strings.Repeat("a", 6000))
	checkIndex(t, strings.Repeat(`ab\"`, 2000))
}

// FuzzIndex compares the word-at-a-time Index functions with their
// byte-at-a-time definitions, at every alignment.
func FuzzIndex(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Add(strings.Repeat("a", 40) + "<" + strings.Repeat("b", 40) + "\x80")
	f.Fuzz(func(t *testing.T, s string) {
		checkIndex(t, s)
		checkIndex(t, strings.Repeat("p", 300)+s)
	})
}

func checkIndex(t *testing.T, s string) {
	t.Helper()
	{
		for off := 0; off < 9 && off <= len(s); off++ {
			b := []byte(s[off:])
			if got, want := IndexSpecial(b), naiveIndex(b, special); got != want {
				t.Errorf("IndexSpecial(%q) = %d, want %d", b, got, want)
			}
			if got, want := IndexSpecialOrHigh(b), naiveIndex(b, specialOrHigh); got != want {
				t.Errorf("IndexSpecialOrHigh(%q) = %d, want %d", b, got, want)
			}
			if got, want := IndexSpecialOrHighString(string(b)), naiveIndex(b, specialOrHigh); got != want {
				t.Errorf("IndexSpecialOrHigh(string %q) = %d, want %d", b, got, want)
			}
			if got, want := indexHTMLUnsafe(string(b)), naiveIndex(b, htmlUnsafe); got != want {
				t.Errorf("indexHTMLUnsafe(%q) = %d, want %d", b, got, want)
			}
		}
	}
}

// checkAppendString compares AppendString with json.Marshal.
func checkAppendString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := AppendString([]byte("prefix"), s); string(got) != "prefix"+string(want) {
		t.Errorf("AppendString(%q) = %s, want %s", s, got[6:], want)
	}
}

// checkScanUnquote compares ScanString and Unquote with encoding/json's
// reading of data as one string literal.
func checkScanUnquote(t *testing.T, data []byte) {
	t.Helper()
	if len(data) == 0 || data[0] != '"' {
		return
	}
	end, escaped, ok := ScanString(data, 0)
	whole := ok && end == len(data)
	wantWhole := json.Valid(data) && data[len(data)-1] == '"'
	if whole != wantWhole {
		t.Fatalf("ScanString(%q) = %d, %v, %v; encoding/json valid: %v", data, end, escaped, ok, wantWhole)
	}
	if ok && json.Valid(data[:end]) != true {
		t.Fatalf("ScanString(%q) accepted %q, which encoding/json refuses", data, data[:end])
	}
	if !ok {
		return
	}
	if !escaped && bytes.IndexByte(data[1:end-1], '\\') >= 0 {
		t.Fatalf("ScanString(%q) missed an escape", data)
	}
	var want string
	if err := json.Unmarshal(data[:end], &want); err != nil {
		t.Fatal(err)
	}
	if got := Unquote(data[:end], escaped); got != want {
		t.Fatalf("Unquote(%q) = %q, want %q", data[:end], got, want)
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range stringCases {
		checkAppendString(t, s)
	}
}

func TestScanUnquote(t *testing.T) {
	for _, s := range []string{
		`""`, `"a"`, `"abc\"def"`, `"\\"`, `"\/\b\f\n\r\t"`, `"\u0041\u00e9\u65e5"`,
		`"\ud83c\udf89"`, `"\ud83c"`, `"\ud83cx"`, `"\udf89\ud83c"`, `"\ud83c\u0041"`, `"\ud83c\ud83c\udf89"`,
		"\"bad \xff\xfe utf8\"", "\"trunc \xe6\x97\"", `"unterminated`, `"bad \x escape"`, `"\u12"`, `"\u12g4"`,
		"\"ctl \x01\"", "\"del \x7f\"", `"a" `, `"a"b`, `"` + strings.Repeat("z", 100) + `\n` + strings.Repeat("q", 17) + `"`,
	} {
		checkScanUnquote(t, []byte(s))
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkAppendString(t, s) })
}

func FuzzScanUnquote(f *testing.F) {
	for _, s := range stringCases {
		q, _ := json.Marshal(s)
		f.Add(q)
		f.Add([]byte(`"` + s + `"`))
	}
	f.Add([]byte(`"\ud83c\udf89 \u00e9 \ud800"`))
	f.Fuzz(func(t *testing.T, data []byte) { checkScanUnquote(t, data) })
}

func TestNeedsCompact(t *testing.T) {
	for _, s := range append(stringCases, `{"a":1}`, `{"a": 1}`, "[\"\u2028\"]", `["<"]`, strings.Repeat("q", 15)+"&") {
		want := strings.ContainsAny(s, " \t\n\r<>&") || strings.Contains(s, "\xe2")
		if got := NeedsCompact([]byte(s)); got != want {
			t.Errorf("NeedsCompact(%q) = %v, want %v", s, got, want)
		}
	}
}
