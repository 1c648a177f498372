package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// programDirs hold programs, not library code: they choose where their
// logs go.
var programDirs = []string{"cmd/", "conformance/", "scripts/", "examples/", "e2e/", "bench/", "interop/"}

// defaultLogging matches a library falling back to the process's logger:
// slog.Default, the top-level slog functions that write to it, and the
// log package's standard logger.
var defaultLogging = regexp.MustCompile(`\bslog\.(Default|SetDefault|Debug|Info|Warn|Error|Log|DebugContext|InfoContext|WarnContext|ErrorContext|LogAttrs)\(|\blog\.(Print|Printf|Println|Fatal|Fatalf|Fatalln|Panic|Panicf|Panicln|Default)\(`)

// TestNoDefaultLogger: no library package logs through the process's
// default logger. A nil Logger option discards, in every package (#18
// item 8: one logger default); a program passes slog.Default() if it
// wants that.
func TestNoDefaultLogger(t *testing.T) {
	root := "../.."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			for _, p := range programDirs {
				if rel+"/" == p {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			code, _, _ := strings.Cut(line, "//")
			if m := defaultLogging.FindString(code); m != "" {
				t.Errorf("%s:%d: %s: a library logs to the Logger it is given, and a nil one discards", rel, i+1, strings.TrimSuffix(m, "("))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
