package authserver

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/oauth"
)

// unescapeVisible undoes visible, for the round trip the fuzz target checks.
func unescapeVisible(t *testing.T, s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			i++
			continue
		}
		if i+1 >= len(s) {
			t.Fatalf("lone backslash at the end of %q", s)
		}
		n := map[byte]int{'\\': 0, 'x': 2, 'u': 4, 'U': 8}
		w, ok := n[s[i+1]]
		if !ok || i+2+w > len(s) {
			t.Fatalf("bad escape at %d in %q", i, s)
		}
		if w == 0 {
			b.WriteByte('\\')
			i += 2
			continue
		}
		v, err := strconv.ParseUint(s[i+2:i+2+w], 16, 32)
		if err != nil {
			t.Fatalf("bad escape at %d in %q", i, s)
		}
		if s[i+1] == 'x' {
			b.WriteByte(byte(v))
		} else {
			b.WriteRune(rune(v))
		}
		i += 2 + w
	}
	return b.String()
}

// FuzzDisplayString checks the display-string rules (#17.12) on any input:
// visible output is valid UTF-8 that checkDisplayString accepts and that
// unescapes back to the input; a string checkDisplayString accepts is
// shown unchanged (backslashes aside); and checkMetadataStrings refuses
// exactly the client names checkDisplayString refuses.
func FuzzDisplayString(f *testing.F) {
	for _, s := range []string{"", "Plain App", "Good\u202Egpj.exe", "a\x00b", "\u2066x\u2069", "C:\\u202E",
		"می\u200Cخواهم", "👩\u200D💻", "\xff\xfe", "\U000E0041", "\uFDD0", "tab\there", "\u2028", "Café"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := visible(s)
		if !utf8.ValidString(v) {
			t.Fatalf("visible(%q) = %q is not UTF-8", s, v)
		}
		if why := checkDisplayString(v); why != "" {
			t.Fatalf("visible(%q) = %q still %s", s, v, why)
		}
		if back := unescapeVisible(t, v); back != s {
			t.Fatalf("visible(%q) = %q unescapes to %q", s, v, back)
		}
		ok := checkDisplayString(s) == ""
		if ok && !strings.Contains(s, `\`) && v != s {
			t.Fatalf("accepted %q shown as %q", s, v)
		}
		if !ok && v == s {
			t.Fatalf("refused %q shown unchanged", s)
		}
		m := testMetadata(s)
		if err := checkMetadataStrings(m); (err == nil) != ok {
			t.Fatalf("client_name %q: checkMetadataStrings %v, checkDisplayString ok=%v", s, err, ok)
		}
	})
}

func testMetadata(name string) oauth.ClientMetadata {
	return oauth.ClientMetadata{ClientName: name, RedirectURIs: []string{"https://a.test/cb"}}
}
