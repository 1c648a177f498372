package archtest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines bounds a non-test Go file: past it, a file holds more than
// one job (issue #18: the Streamable HTTP server was 2,447 lines).
const maxFileLines = 1000

// oversized are the files known to be over maxFileLines, each with the
// work that splits it.
var oversized = map[string]string{
	"jsonrpc/conn.go": "#18 item 3: one endpoint core, a read-loop driver and a push driver",
}

// TestFileSize: no non-test Go file of the module is over maxFileLines
// lines, but those of oversized.
func TestFileSize(t *testing.T) {
	root := "../.."
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			// Other modules and data are not the library's code.
			if d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			if rel != "." {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		n++
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if lines := bytes.Count(src, []byte("\n")); lines > maxFileLines {
			if _, ok := oversized[rel]; !ok {
				t.Errorf("%s has %d lines, over %d: split it by job", rel, lines, maxFileLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Fatalf("saw %d Go files: the root is wrong", n)
	}
}
