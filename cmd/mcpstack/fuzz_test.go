package main

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
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
