// Command vulndb turns the OSV entries of the golang.org/x/vulndb module
// (its data/osv directory, as the Go module proxy serves it) into the v1
// layout of the Go vulnerability database, which govulncheck reads with
// -db file:///DIR (https://go.dev/security/vuln/database#api):
//
//	DIR/index/db.json       {"modified": <newest modification>}
//	DIR/index/modules.json  [{"path": <module>, "vulns": [{"id", "modified"}]}]
//	DIR/ID/<GO-ID>.json     each OSV entry, byte for byte
//
// scripts/govulncheck.sh runs it once per pinned vulndb version, so that CI
// scans offline: vuln.go.dev is not reachable from the machines CI runs on,
// and the vulndb repository's own cmd/indexdb pulls a large dependency tree
// (about 7 minutes to build here). This command uses the standard library only.
//
// Its report subcommand reads govulncheck's -format json output and
// applies CI's policy (see report).
//
// Usage:
//
//	go run . -src DIR/data/osv -dst OUT [-modified RFC3339]
//	govulncheck -format json ./... | go run . report [-stdlib-info] [-accept FILE -dir DIR]
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "report" {
		fs := flag.NewFlagSet("report", flag.ExitOnError)
		info := fs.Bool("stdlib-info", false, "show standard-library findings only, without failing")
		acceptPath := fs.String("accept", "", "file of accepted third-party findings (ID DIR MODULE REASON)")
		dir := fs.String("dir", ".", "the module directory scanned, as the accepted list names it")
		_ = fs.Parse(os.Args[2:])
		accepted, err := loadAccepted(*acceptPath, *dir)
		if err == nil {
			err = report(os.Stdin, os.Stdout, policy{StdlibInfo: *info, Accepted: accepted})
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "vulndb report: %v\n", err)
			os.Exit(1)
		}
		return
	}
	src := flag.String("src", "", "directory of OSV entries named <ID>.json (the vulndb module's data/osv)")
	dst := flag.String("dst", "", "directory to create in the v1 layout; replaced if it exists")
	modified := flag.String("modified", "", "RFC 3339 time the data is as of (the vulndb pseudo-version's commit time); the entries in the module carry a zero time")
	flag.Parse()
	if *src == "" || *dst == "" {
		fmt.Fprintln(os.Stderr, "usage: vulndb -src DIR -dst OUT [-modified RFC3339]")
		os.Exit(2)
	}
	var asOf time.Time
	if *modified != "" {
		t, err := time.Parse(time.RFC3339, *modified)
		if err != nil {
			fmt.Fprintf(os.Stderr, "vulndb: -modified: %v\n", err)
			os.Exit(2)
		}
		asOf = t
	}
	n, err := build(*src, *dst, asOf)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vulndb: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("vulndb: %d entries indexed into %s\n", n, *dst)
}

// entry is the part of an OSV entry the index needs (OSV schema 1.3:
// id, modified, affected[].package.name; the Go database names a module
// in package.name, and the standard library as "stdlib").
type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
	} `json:"affected"`
}

// moduleVuln is one row of index/modules.json. The optional "fixed" member
// is left out: govulncheck then reads every entry of a module it uses and
// decides from the entry's own ranges, which is exact, and costs only a few
// more local file reads.
type moduleVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
}

type moduleMeta struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

// errEntry marks an OSV file that cannot go into the database.
var errEntry = errors.New("bad OSV entry")

// build writes the database for the entries in src into dst (through a
// sibling temporary directory renamed into place, so that an interrupted
// run leaves no half-built database) and returns the number of entries.
// asOf, when later than every entry's modification time, is the database's
// modification time.
func build(src, dst string, asOf time.Time) (int, error) {
	names, err := filepath.Glob(filepath.Join(src, "*.json"))
	if err != nil {
		return 0, err
	}
	if len(names) == 0 {
		return 0, fmt.Errorf("%w: no *.json in %s", errEntry, src)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), filepath.Base(dst)+".tmp-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "ID"), 0o755); err != nil {
		return 0, err
	}
	modules := map[string]*moduleMeta{}
	newest := asOf
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return 0, err
		}
		e, err := parse(filepath.Base(name), b)
		if err != nil {
			return 0, err
		}
		if e.Modified.After(newest) {
			newest = e.Modified
		}
		for _, path := range modulePaths(e) {
			m := modules[path]
			if m == nil {
				m = &moduleMeta{Path: path, Vulns: []moduleVuln{}}
				modules[path] = m
			}
			m.Vulns = append(m.Vulns, moduleVuln{ID: e.ID, Modified: e.Modified})
		}
		if err := os.WriteFile(filepath.Join(tmp, "ID", e.ID+".json"), b, 0o644); err != nil {
			return 0, err
		}
	}
	if err := writeIndex(tmp, newest, modules); err != nil {
		return 0, err
	}
	if err := os.RemoveAll(dst); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return 0, err
	}
	return len(names), nil
}

// parse checks one OSV file: valid JSON, an ID of the Go database's form
// that matches the file name (govulncheck fetches ID/<id>.json), and at
// least one affected package.
func parse(base string, b []byte) (entry, error) {
	var e entry
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("%w: %s: %v", errEntry, base, err)
	}
	if !strings.HasPrefix(e.ID, "GO-") || strings.ContainsAny(e.ID, `/\`) {
		return e, fmt.Errorf("%w: %s: id %q is not a Go database ID", errEntry, base, e.ID)
	}
	if base != e.ID+".json" {
		return e, fmt.Errorf("%w: %s: file name does not match id %q", errEntry, base, e.ID)
	}
	if len(modulePaths(e)) == 0 {
		return e, fmt.Errorf("%w: %s: no affected package", errEntry, base)
	}
	return e, nil
}

// modulePaths lists the distinct module paths an entry affects, in order.
func modulePaths(e entry) []string {
	var paths []string
	seen := map[string]bool{}
	for _, a := range e.Affected {
		p := a.Package.Name
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		paths = append(paths, p)
	}
	return paths
}

// writeIndex writes index/db.json and index/modules.json, modules sorted by
// path and each module's vulnerabilities by ID, so that the same entries
// always give the same bytes.
func writeIndex(dir string, modified time.Time, modules map[string]*moduleMeta) error {
	if err := os.MkdirAll(filepath.Join(dir, "index"), 0o755); err != nil {
		return err
	}
	db, err := json.Marshal(struct {
		Modified time.Time `json:"modified"`
	}{modified})
	if err != nil {
		return err
	}
	list := make([]*moduleMeta, 0, len(modules))
	for _, m := range modules {
		sort.Slice(m.Vulns, func(i, j int) bool { return m.Vulns[i].ID < m.Vulns[j].ID })
		list = append(list, m)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Path < list[j].Path })
	mods, err := json.Marshal(list)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "index", "db.json"), db, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "index", "modules.json"), mods, fs.FileMode(0o644))
}
