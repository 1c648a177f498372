package archtest

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEListsEveryPackage: README's "Packages" table has a row for
// every package of the module, so that a newcomer finds each one there.
// A row for a directory that is not a package itself (store/, examples/)
// covers the packages under it; a package's own row is needed under a
// directory that is one (mcp/taskstore under mcp/).
func TestREADMEListsEveryPackage(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "list", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		pkgs[strings.TrimPrefix(p, module)] = true
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	row := regexp.MustCompile("^\\| `([a-z0-9/_-]+)/` \\|")
	in := false
	for _, line := range bytes.Split(readme, []byte("\n")) {
		switch {
		case bytes.HasPrefix(line, []byte("## ")):
			in = bytes.Equal(line, []byte("## Packages"))
		case in:
			if m := row.FindSubmatch(line); m != nil {
				rows[string(m[1])] = true
			}
		}
	}
	if len(rows) < 10 || len(pkgs) < 10 {
		t.Fatalf("%d rows in README's Packages table, %d packages listed: is either still read?", len(rows), len(pkgs))
	}
	for p := range pkgs {
		if rows[p] || coveredByDirectoryRow(p, rows, pkgs) {
			continue
		}
		t.Errorf("README's Packages table has no row for %s/", p)
	}
	for r := range rows {
		if _, err := os.Stat("../../" + r + "/go.mod"); err == nil {
			continue // a module of its own (otel/, bench/, interop/)
		}
		if !pkgs[r] && !hasPackageUnder(r, pkgs) {
			t.Errorf("README's Packages table lists %s/, which holds no package of the module", r)
		}
	}
}

// coveredByDirectoryRow reports whether a row names a directory above p
// that is not itself a package, and no package between them is.
func coveredByDirectoryRow(p string, rows, pkgs map[string]bool) bool {
	for dir := p; strings.Contains(dir, "/"); {
		dir = dir[:strings.LastIndexByte(dir, '/')]
		if pkgs[dir] {
			return false
		}
		if rows[dir] {
			return true
		}
	}
	return false
}

func hasPackageUnder(dir string, pkgs map[string]bool) bool {
	for p := range pkgs {
		if strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}
