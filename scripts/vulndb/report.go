package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Levels of a govulncheck finding, from the least to the most precise: the
// module is required, a vulnerable package is imported, a vulnerable
// function is reachable from our code.
const (
	levelRequired = iota + 1
	levelImported
	levelCalled
)

var levelNames = map[int]string{levelRequired: "required", levelImported: "imported", levelCalled: "called"}

// stdlibModule is the module path govulncheck gives the standard library.
const stdlibModule = "stdlib"

// message is the part of one govulncheck -format json message the report
// needs: findings, and the Go version the scan used.
type message struct {
	Config *struct {
		GoVersion string `json:"go_version"`
	} `json:"config"`
	Finding *struct {
		OSV          string `json:"osv"`
		FixedVersion string `json:"fixed_version"`
		Trace        []struct {
			Module   string `json:"module"`
			Version  string `json:"version"`
			Package  string `json:"package"`
			Function string `json:"function"`
		} `json:"trace"`
	} `json:"finding"`
}

// finding is one vulnerability in one module at its most precise level.
type finding struct {
	OSV, Module, Version, Fixed string
	Level                       int
}

// errFindings is returned by report when a finding fails the policy.
var errFindings = errors.New("vulnerabilities found")

// policy says which findings report lets pass.
type policy struct {
	// StdlibInfo shows standard-library findings only, and never fails
	// (the scan of the machine's own toolchain).
	StdlibInfo bool
	// Accepted maps "ID module" to the reason a third-party finding with no
	// fixed version is accepted (see loadAccepted).
	Accepted map[string]string
}

// report reads govulncheck's JSON stream from r, writes a table of its
// findings (one row per vulnerability and module, at its most precise
// level) to w, and returns an error wrapping errFindings when one fails
// CI's policy: any finding in a third-party module, at any level (a user's
// scanner reports a vulnerable version in go.sum whether or not we call
// it), unless accepted while it has no fix; a standard-library one only
// when it is called, which is govulncheck's own rule; and an acceptance
// that matches no finding, so that the list cannot go stale.
func report(r io.Reader, w io.Writer, p policy) error {
	dec := json.NewDecoder(r)
	goVersion := ""
	byKey := map[string]*finding{}
	for {
		var m message
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("reading govulncheck JSON: %w", err)
		}
		if m.Config != nil && m.Config.GoVersion != "" {
			goVersion = m.Config.GoVersion
		}
		if m.Finding == nil || len(m.Finding.Trace) == 0 {
			continue
		}
		top := m.Finding.Trace[0]
		level := levelRequired
		switch {
		case top.Function != "":
			level = levelCalled
		case top.Package != "":
			level = levelImported
		}
		key := m.Finding.OSV + " " + top.Module
		f := byKey[key]
		if f == nil {
			f = &finding{OSV: m.Finding.OSV, Module: top.Module, Version: top.Version, Fixed: m.Finding.FixedVersion}
			byKey[key] = f
		}
		f.Level = max(f.Level, level)
	}
	list := make([]*finding, 0, len(byKey))
	for _, f := range byKey {
		list = append(list, f)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Module != list[j].Module {
			return list[i].Module < list[j].Module
		}
		return list[i].OSV < list[j].OSV
	})
	failing, shown := 0, 0
	used := map[string]bool{}
	for _, f := range list {
		if p.StdlibInfo && f.Module != stdlibModule {
			continue // the gate's scan judges third-party modules
		}
		shown++
		fails := f.Module != stdlibModule || (f.Level == levelCalled && !p.StdlibInfo)
		mark := ""
		if reason, ok := p.Accepted[f.OSV+" "+f.Module]; ok && f.Module != stdlibModule {
			used[f.OSV+" "+f.Module] = true
			if f.Fixed == "" {
				fails = false
				mark = "  accepted: " + reason
			} else {
				mark = "  (accepted while unfixed; a fix exists now: upgrade)"
			}
		}
		if fails {
			failing++
			mark = "  FAIL" + mark
		}
		fixed := f.Fixed
		if fixed == "" {
			fixed = "no fix"
		}
		fmt.Fprintf(w, "  %-14s %-40s %-9s fixed in %s%s\n", f.OSV, f.Module+"@"+f.Version, levelNames[f.Level], fixed, mark)
	}
	for key := range p.Accepted {
		if !used[key] {
			failing++
			fmt.Fprintf(w, "  %-55s no longer found: delete its line from the accepted list  FAIL\n", key)
		}
	}
	fmt.Fprintf(w, "  %d finding(s) with %s, %d failing\n", shown, strings.TrimSpace(goVersion), failing)
	if failing > 0 {
		return fmt.Errorf("%w: %d failing", errFindings, failing)
	}
	return nil
}

// loadAccepted reads the accepted list at path (lines "ID DIR MODULE
// REASON...", '#' comments) and returns the entries for the module
// directory dir, keyed "ID MODULE". A missing file is an empty list.
func loadAccepted(path, dir string) (map[string]string, error) {
	accepted := map[string]string{}
	if path == "" {
		return accepted, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return accepted, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "GO-") {
			return nil, fmt.Errorf("%s:%d: want ID DIR MODULE REASON", path, n)
		}
		if filepath.Clean(fields[1]) == filepath.Clean(dir) {
			accepted[fields[0]+" "+fields[2]] = strings.Join(fields[3:], " ")
		}
	}
	return accepted, sc.Err()
}
