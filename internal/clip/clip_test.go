package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"short", "2026-07-28", `"2026-07-28"`},
		{"exactly Max", strings.Repeat("a", Max), `"` + strings.Repeat("a", Max) + `"`},
		{"long", strings.Repeat("a", 1<<20), `"` + strings.Repeat("a", Max) + `"... (1048576 bytes)`},
		{"rune boundary", strings.Repeat("a", Max-1) + "é" + "zz", `"` + strings.Repeat("a", Max-1) + `"... (131 bytes)`},
		{"invalid UTF-8", strings.Repeat("\xff", 200), `"` + strings.Repeat(`\xff`, Max) + `"... (200 bytes)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quote(tt.in); got != tt.want {
				t.Errorf("Quote = %.300s, want %.300s", got, tt.want)
			}
		})
	}
}

func FuzzQuote(f *testing.F) {
	f.Add("2026-07-28")
	f.Add(strings.Repeat("é", 100))
	f.Add(strings.Repeat("\xff", 300))
	f.Fuzz(func(t *testing.T, s string) {
		q := Quote(s)
		if len(q) > 4*Max+40 {
			t.Fatalf("Quote of %d bytes is %d bytes", len(s), len(q))
		}
		bare := String(s)
		if len(bare) > Max+30 || !strings.HasPrefix(s, strings.SplitN(bare, "... (", 2)[0]) {
			t.Fatalf("String(%q) = %q", s, bare)
		}
		if utf8.ValidString(s) && !utf8.ValidString(bare) {
			t.Fatalf("String cut a rune: %q", bare)
		}
	})
}
