package main

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// limitsRow is one row of README's "Limits and timeouts" table.
type limitsRow struct {
	line           int
	bound          string
	options, flags string // the cells, as written
}

// readmeLimits returns the rows of README's "Limits and timeouts" table.
func readmeLimits(t *testing.T) []limitsRow {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []limitsRow
	bounds := map[string]int{} // a row given twice, as merges may leave
	in := false
	for i, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			in = strings.HasPrefix(line, "## Limits and timeouts")
		case in && strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "|---") && !strings.HasPrefix(line, "| bound |"):
			cells := splitRow(line)
			if len(cells) != 4 {
				t.Errorf("README.md:%d: %d cells, want 4: %s", i+1, len(cells), line)
				continue
			}
			if prev, ok := bounds[cells[0]]; ok {
				t.Errorf("README.md:%d: the row of line %d again: %s", i+1, prev, cells[0])
			}
			bounds[cells[0]] = i + 1
			rows = append(rows, limitsRow{i + 1, cells[0], cells[2], cells[3]})
		}
	}
	if len(rows) < 20 {
		t.Fatalf("README's Limits and timeouts table: %d rows found", len(rows))
	}
	return rows
}

// splitRow splits a Markdown table row into its cells; a | inside
// backquotes does not split.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cur strings.Builder
	code := false
	for _, r := range line {
		switch {
		case r == '`':
			code = !code
		case r == '|' && !code:
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

var codeSpan = regexp.MustCompile("`([^`]*)`")

// commandWords are the commands a flags cell may name.
var commandWords = []string{"serve", "authserver", "client"}

// TestREADMELimitsNameRealFlags: every flag README's "Limits and
// timeouts" table names exists in the command the row names (in the
// code span, "serve --x", or in the text, "(serve, authserver)"), or in
// some command when the row names none.
func TestREADMELimitsNameRealFlags(t *testing.T) {
	flags := map[string]map[string]bool{}
	for _, cmd := range commandWords {
		flags[cmd] = map[string]bool{}
		for _, f := range commandFlags(t, cmd) {
			flags[cmd][f.Name] = true
		}
	}
	checked := 0
	for _, r := range readmeLimits(t) {
		// Commands named in the text outside code spans apply to every
		// flag of the cell; one inside a span, to its own flag.
		var textCmds []string
		for _, w := range strings.FieldsFunc(codeSpan.ReplaceAllString(r.flags, ""), func(r rune) bool {
			return !('a' <= r && r <= 'z')
		}) {
			for _, c := range commandWords {
				if w == c {
					textCmds = append(textCmds, c)
				}
			}
		}
		for _, m := range codeSpan.FindAllStringSubmatch(r.flags, -1) {
			cmds, name := textCmds, ""
			for _, w := range strings.Fields(m[1]) {
				switch {
				case strings.HasPrefix(w, "--"):
					name = strings.TrimPrefix(w, "--")
				case w == "serve" || w == "authserver" || w == "client":
					cmds = []string{w}
				}
			}
			if name == "" {
				t.Errorf("README.md:%d (%s): %q names no flag", r.line, r.bound, m[1])
				continue
			}
			checked++
			if len(cmds) == 0 {
				found := false
				for _, c := range commandWords {
					found = found || flags[c][name]
				}
				if !found {
					t.Errorf("README.md:%d (%s): no command has --%s", r.line, r.bound, name)
				}
				continue
			}
			for _, c := range cmds {
				if !flags[c][name] {
					t.Errorf("README.md:%d (%s): mcpstack %s has no --%s", r.line, r.bound, c, name)
				}
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d flags checked: is the table still parsed?", checked)
	}
}

// TestREADMELimitsFlagsCoverTheBounds: every numeric flag of serve and
// authserver (a count, size, rate or duration: a bound) is named in
// README's "Limits and timeouts" table, so that a new bound's flag is not
// left out of it.
func TestREADMELimitsFlagsCoverTheBounds(t *testing.T) {
	var table strings.Builder
	for _, r := range readmeLimits(t) {
		table.WriteString(r.flags + "\n")
	}
	for _, cmd := range []string{"serve", "authserver"} {
		for _, f := range commandFlags(t, cmd) {
			g, ok := f.Value.(flag.Getter)
			if !ok {
				continue
			}
			switch g.Get().(type) {
			case bool, string:
				continue
			}
			if !regexp.MustCompile("--" + regexp.QuoteMeta(f.Name) + "\\b[^-]").MatchString(table.String()) {
				t.Errorf("mcpstack %s --%s (default %s) is not in README's Limits and timeouts table", cmd, f.Name, f.DefValue)
			}
		}
	}
}

// goIndex holds the exported names of the module's Go packages (the core
// module and otel/), by package name: "Name" for a top-level name and
// "Type.Member" for a field or method.
type goIndex map[string]map[string]bool

func buildIndex(t *testing.T) goIndex {
	t.Helper()
	idx := goIndex{}
	fset := token.NewFileSet()
	root := "../.."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "bench", "interop", "conformance", "examples", "e2e", "cmd", "node_modules":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := idx[f.Name.Name]
		if names == nil {
			names = map[string]bool{}
			idx[f.Name.Name] = names
		}
		indexFile(f, names)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func indexFile(f *ast.File, names map[string]bool) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names[d.Name.Name] = true
				continue
			}
			typ := d.Recv.List[0].Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				names[id.Name+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				case *ast.TypeSpec:
					names[s.Name.Name] = true
					st, ok := s.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fld := range st.Fields.List {
						for _, n := range fld.Names {
							names[s.Name.Name+"."+n.Name] = true
						}
					}
				}
			}
		}
	}
}

// hasType reports whether some package has the type (or name) typ with
// member mem.
func (idx goIndex) hasMember(typ, mem string) bool {
	for _, names := range idx {
		if names[typ+"."+mem] {
			return true
		}
	}
	return false
}

func (idx goIndex) hasName(name string) bool {
	for _, names := range idx {
		if names[name] {
			return true
		}
	}
	return false
}

// externalPackages are the packages outside the module the table may
// name; their names are not checked.
var externalPackages = map[string]bool{"http": true}

// TestREADMELimitsNameRealOptions: every library option README's "Limits
// and timeouts" table names exists: pkg.Type.Field, Type.Field (in some
// package), pkg.Name, or a bare Field of a type the cell names.
func TestREADMELimitsNameRealOptions(t *testing.T) {
	idx := buildIndex(t)
	checked := 0
	for _, r := range readmeLimits(t) {
		var types []string // the types the cell names, for bare members
		var bare []string
		for _, m := range codeSpan.FindAllStringSubmatch(r.options, -1) {
			ref := m[1]
			if i := strings.IndexByte(ref, '('); i >= 0 {
				ref = ref[:i]
			}
			if i := strings.LastIndexByte(ref, '/'); i >= 0 { // internal/oauthhttp.MaxBody
				ref = ref[i+1:]
			}
			parts := strings.Split(ref, ".")
			checked++
			switch len(parts) {
			case 3: // pkg.Type.Member
				if externalPackages[parts[0]] {
					continue
				}
				if !idx[parts[0]][parts[1]+"."+parts[2]] {
					t.Errorf("README.md:%d (%s): no %s", r.line, r.bound, m[1])
				}
				types = append(types, parts[1])
			case 2: // pkg.Name or Type.Member
				switch {
				case externalPackages[parts[0]]:
				case idx[parts[0]] != nil:
					if !idx[parts[0]][parts[1]] {
						t.Errorf("README.md:%d (%s): no %s", r.line, r.bound, m[1])
					}
					types = append(types, parts[1])
				case idx.hasMember(parts[0], parts[1]):
					types = append(types, parts[0])
				default:
					t.Errorf("README.md:%d (%s): no %s", r.line, r.bound, m[1])
				}
			case 1:
				bare = append(bare, parts[0])
			default:
				t.Errorf("README.md:%d (%s): cannot read %q", r.line, r.bound, m[1])
			}
		}
		for _, name := range bare { // "`HTTPClient` of `JWTOptions`"
			if idx.hasName(name) {
				types = append(types, name)
			}
		}
		for _, name := range bare {
			ok := idx.hasName(name) // a type or sentinel error named alone
			for _, typ := range types {
				ok = ok || idx.hasMember(typ, name)
			}
			if !ok {
				t.Errorf("README.md:%d (%s): %s is a member of none of %v", r.line, r.bound, name, types)
			}
		}
	}
	if checked < 60 {
		t.Errorf("only %d options checked: is the table still parsed?", checked)
	}
}

// TestREADMECommandsNameRealFlags: every --flag README's "Commands"
// section for `mcpstack X` mentions (in prose or examples) is a flag of X.
func TestREADMECommandsNameRealFlags(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	heading := regexp.MustCompile("^### `mcpstack (\\w+)`")
	flagRef := regexp.MustCompile(`(?:^|[\s` + "`" + `(])--([a-z][a-z0-9-]*)`)
	flags := map[string]map[string]bool{}
	cmd, seen := "", 0
	for i, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "#") {
			cmd = ""
			if m := heading.FindStringSubmatch(line); m != nil {
				cmd = m[1]
				if flags[cmd] == nil {
					flags[cmd] = map[string]bool{"help": true}
					for _, f := range commandFlags(t, cmd) {
						flags[cmd][f.Name] = true
					}
				}
			}
			continue
		}
		if cmd == "" {
			continue
		}
		if strings.Contains(line, " -- ") { // a stdio server's own flags follow
			line = line[:strings.Index(line, " -- ")]
		}
		for _, m := range flagRef.FindAllStringSubmatch(line, -1) {
			seen++
			if !flags[cmd][m[1]] {
				t.Errorf("README.md:%d: mcpstack %s has no --%s", i+1, cmd, m[1])
			}
		}
	}
	if len(flags) < 3 || seen < 30 {
		t.Errorf("%d command sections, %d flags seen: is README still parsed?", len(flags), seen)
	}
}
