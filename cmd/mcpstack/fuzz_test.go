package main

import (
	"encoding/json"
	"io"
	"io/fs"
	"strings"
	"testing"
	"unicode"
)

// FuzzPathArg checks that whatever path a client sends, what the file
// tools open is a valid path inside the root (no "..", not absolute), or a
// refusal.
func FuzzPathArg(f *testing.F) {
	for _, s := range []string{"", ".", "a/b", "../x", "/etc/passwd", `..\x`, "a/../../b", "a//b/", "./a", "\x00", "%2e%2e/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		args, err := json.Marshal(map[string]string{"path": p})
		if err != nil {
			return
		}
		rel, err := pathArg(args, false)
		if err != nil {
			return
		}
		if !fs.ValidPath(rel) || strings.Contains(rel, `\`) || strings.HasPrefix(rel, "/") {
			t.Errorf("pathArg(%q) = %q, which is not a valid path under the root", p, rel)
		}
		for _, part := range strings.Split(rel, "/") {
			if part == ".." {
				t.Errorf("pathArg(%q) = %q climbs out", p, rel)
			}
		}
	})
}

// FuzzServerText checks what the client prints of a server's text
// (instructions, URL elicitation messages) and keeps of a child's
// standard error: no control character but newline and tab reaches the
// terminal, every line after the first is indented, and the last stderr
// line kept is bounded and is one line.
func FuzzServerText(f *testing.F) {
	for _, s := range []string{"", "a\nb", "a\r\nb\r\n", "\x1b[2J\x1b[H", "x\u009b31m", "\n\n\n", "tab\there  \n  two"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := indentLines(s, "  ")
		for _, r := range out {
			if r != '\n' && r != '\t' && unicode.IsControl(r) {
				t.Fatalf("indentLines(%q) = %q keeps control character %U", s, out, r)
			}
		}
		for i, l := range strings.Split(out, "\n") {
			if i > 0 && l != "" && !strings.HasPrefix(l, "  ") {
				t.Fatalf("indentLines(%q): line %d %q not indented", s, i, l)
			}
		}
		ll := &lastLine{w: io.Discard}
		_, _ = ll.Write([]byte(s))
		if got := ll.get(); len(got) > maxLastLine || strings.Contains(got, "\n") {
			t.Fatalf("lastLine of %q = %q", s, got)
		}
	})
}
