package jsonschema

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// suiteDir holds the required cases of the official JSON Schema Test
// Suite for 2020-12 and draft-07, plus the remote documents they refer
// to (see testdata/JSON-Schema-Test-Suite/README.md).
const suiteDir = "testdata/JSON-Schema-Test-Suite"

type suiteGroup struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

// suiteRemotes registers every file under remotes/ at the URL the suite
// expects it to be served from, http://localhost:1234/. Nothing is served:
// the documents resolve from memory only.
func suiteRemotes(t *testing.T) []Option {
	t.Helper()
	var opts []Option
	root := filepath.Join(suiteDir, "remotes")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		opts = append(opts, WithResource("http://localhost:1234/"+filepath.ToSlash(rel), b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(opts) == 0 {
		t.Fatal("no remotes found")
	}
	return opts
}

func TestJSONSchemaTestSuite(t *testing.T) {
	// skips lists suite cases, as "file/group description/test
	// description", that are allowed to fail, each with the reason. Every
	// required 2020-12 and draft-07 case passes, so it is empty; an entry
	// that starts passing fails the test, which keeps the list minimal.
	skips := map[string]string{}
	remotes := suiteRemotes(t)
	for _, tc := range []struct {
		dir     string
		dialect Dialect
	}{
		{"draft2020-12", Draft202012},
		{"draft7", Draft7},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join(suiteDir, "tests", tc.dir, "*.json"))
			if err != nil {
				t.Fatal(err)
			}
			if len(files) == 0 {
				t.Fatal("no test files")
			}
			opts := append([]Option{WithDefaultDialect(tc.dialect)}, remotes...)
			total, passed, skipped := 0, 0, 0
			for _, file := range files {
				b, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				var groups []suiteGroup
				if err := json.Unmarshal(b, &groups); err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				for _, g := range groups {
					s, compileErr := Compile(g.Schema, opts...)
					for _, c := range g.Tests {
						total++
						name := filepath.Base(file) + "/" + g.Description + "/" + c.Description
						var failure string
						switch {
						case compileErr != nil:
							failure = "compile: " + compileErr.Error()
						default:
							err := s.ValidateJSON(c.Data)
							if err != nil && !errors.Is(err, ErrValidation) {
								failure = "unexpected error: " + err.Error()
							} else if (err == nil) != c.Valid {
								failure = "want valid=" + boolString(c.Valid) + ", got error " + errString(err)
							}
						}
						reason, skip := skips[name]
						switch {
						case failure == "" && skip:
							t.Errorf("%s: passes but is in the skip list (%s); remove it", name, reason)
						case failure == "":
							passed++
						case skip:
							skipped++
						default:
							t.Errorf("%s: %s", name, failure)
						}
					}
				}
			}
			t.Logf("%s: %d/%d cases passed, %d skipped", tc.dir, passed, total, skipped)
		})
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return strings.TrimPrefix(err.Error(), "jsonschema: ")
}
