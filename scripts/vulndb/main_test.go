package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, file, body string
	}{
		{"not JSON", "GO-2026-0001.json", `{`},
		{"name differs from id", "GO-2026-0001.json", `{"id":"GO-2026-0002","affected":[{"package":{"name":"m"}}]}`},
		{"not a Go id", "CVE-1.json", `{"id":"CVE-1","affected":[{"package":{"name":"m"}}]}`},
		{"id with a path", "x.json", `{"id":"GO-../x","affected":[{"package":{"name":"m"}}]}`},
		{"no affected package", "GO-2026-0001.json", `{"id":"GO-2026-0001","affected":[]}`},
		{"empty package name", "GO-2026-0001.json", `{"id":"GO-2026-0001","affected":[{"package":{"name":""}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := parse(tt.file, []byte(tt.body)); !errors.Is(err, errEntry) {
				t.Fatalf("parse = %v, want errEntry", err)
			}
		})
	}
}

func TestBuildLayout(t *testing.T) {
	src := t.TempDir()
	entries := map[string]string{
		"GO-2026-0002.json": `{"id":"GO-2026-0002","modified":"2026-01-02T00:00:00Z","affected":[{"package":{"name":"example.com/b"}},{"package":{"name":"example.com/a"}},{"package":{"name":"example.com/a"}}]}`,
		"GO-2026-0001.json": `{"id":"GO-2026-0001","modified":"0001-01-01T00:00:00Z","affected":[{"package":{"name":"example.com/a"}}]}`,
	}
	for name, body := range entries {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, "README"), []byte("not an entry"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		asOf         time.Time
		wantModified string
	}{
		{"newest entry wins", time.Time{}, "2026-01-02T00:00:00Z"},
		{"as-of time wins", time.Date(2026, 11, 5, 23, 49, 57, 0, time.UTC), "2026-11-05T23:49:57Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "db")
			n, err := build(src, dst, tt.asOf)
			if err != nil || n != 2 {
				t.Fatalf("build = %d, %v", n, err)
			}
			db, _ := os.ReadFile(filepath.Join(dst, "index", "db.json"))
			if want := `{"modified":"` + tt.wantModified + `"}`; string(db) != want {
				t.Errorf("db.json = %s, want %s", db, want)
			}
			mods, _ := os.ReadFile(filepath.Join(dst, "index", "modules.json"))
			want := `[{"path":"example.com/a","vulns":[{"id":"GO-2026-0001","modified":"0001-01-01T00:00:00Z"},{"id":"GO-2026-0002","modified":"2026-01-02T00:00:00Z"}]},` +
				`{"path":"example.com/b","vulns":[{"id":"GO-2026-0002","modified":"2026-01-02T00:00:00Z"}]}]`
			if string(mods) != want {
				t.Errorf("modules.json =\n%s\nwant\n%s", mods, want)
			}
			for name, body := range entries {
				got, err := os.ReadFile(filepath.Join(dst, "ID", name))
				if err != nil || string(got) != body {
					t.Errorf("ID/%s = %q, %v; want the entry byte for byte", name, got, err)
				}
			}
		})
	}
}

// TestBuildLeavesNoHalfDatabase: a bad entry fails the build and leaves
// neither the destination nor a temporary directory behind.
func TestBuildLeavesNoHalfDatabase(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "GO-2026-0001.json"), []byte(`{"id":"GO-2026-0009","affected":[{"package":{"name":"m"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	if _, err := build(src, filepath.Join(parent, "db"), time.Time{}); !errors.Is(err, errEntry) {
		t.Fatalf("build = %v, want errEntry", err)
	}
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

func TestReportPolicy(t *testing.T) {
	type frame struct {
		Module   string `json:"module"`
		Version  string `json:"version,omitempty"`
		Package  string `json:"package,omitempty"`
		Function string `json:"function,omitempty"`
	}
	finding := func(id string, f frame) string {
		b, _ := json.Marshal(map[string]any{"finding": map[string]any{"osv": id, "fixed_version": "v9", "trace": []frame{f}}})
		return string(b)
	}
	config := `{"config":{"go_version":"go1.27.3"}}`
	stdCalled := finding("GO-1", frame{Module: "stdlib", Version: "v1.26.8", Package: "net/http", Function: "Serve"})
	stdImported := finding("GO-2", frame{Module: "stdlib", Version: "v1.26.8", Package: "net/http"})
	modRequired := finding("GO-3", frame{Module: "example.com/m", Version: "v1.0.0"})
	unfixed := func(s string) string { return strings.Replace(s, `"fixed_version":"v9",`, "", 1) }
	accept := func(key string) map[string]string { return map[string]string{key: "why"} }
	tests := []struct {
		name     string
		stream   []string
		policy   policy
		wantFail bool
		wantRows []string
	}{
		{"clean", []string{config}, policy{}, false, nil},
		{"third-party module only required", []string{config, modRequired}, policy{}, true, []string{"GO-3 example.com/m@v1.0.0 required"}},
		{"stdlib imported, not called", []string{config, stdImported}, policy{}, false, []string{"GO-2 stdlib@v1.26.8 imported"}},
		// govulncheck reports the same vulnerability at each level as it
		// refines; the row keeps the most precise.
		{"stdlib called", []string{config, stdImported, stdCalled, finding("GO-1", frame{Module: "stdlib", Version: "v1.26.8"})}, policy{}, true, []string{"GO-1 stdlib@v1.26.8 called", "GO-2 stdlib@v1.26.8 imported"}},
		{"stdlib called, information only", []string{config, stdCalled, modRequired}, policy{StdlibInfo: true}, false, []string{"GO-1 stdlib@v1.26.8 called"}},
		{"accepted while unfixed", []string{config, unfixed(modRequired)}, policy{Accepted: accept("GO-3 example.com/m")}, false, []string{"GO-3 example.com/m@v1.0.0 required"}},
		{"accepted but a fix exists", []string{config, modRequired}, policy{Accepted: accept("GO-3 example.com/m")}, true, []string{"GO-3 example.com/m@v1.0.0 required"}},
		{"acceptance of another module", []string{config, unfixed(modRequired)}, policy{Accepted: accept("GO-3 example.com/other")}, true, []string{"GO-3 example.com/m@v1.0.0 required", "GO-3 example.com/other no"}},
		{"stale acceptance", []string{config}, policy{Accepted: accept("GO-3 example.com/m")}, true, []string{"GO-3 example.com/m no"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := report(strings.NewReader(strings.Join(tt.stream, "\n")), &out, tt.policy)
			if got := errors.Is(err, errFindings); got != tt.wantFail {
				t.Fatalf("report = %v, want failing %v; output:\n%s", err, tt.wantFail, out.String())
			}
			var rows []string
			for _, line := range strings.Split(out.String(), "\n") {
				if f := strings.Fields(line); len(f) >= 3 && strings.HasPrefix(f[0], "GO-") {
					rows = append(rows, strings.Join(f[:3], " "))
				}
			}
			if strings.Join(rows, "|") != strings.Join(tt.wantRows, "|") {
				t.Errorf("rows = %q, want %q", rows, tt.wantRows)
			}
		})
	}
}

func TestLoadAccepted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "accepted.txt")
	body := "# comment\n\nGO-1 bench example.com/m only in benchmarks\nGO-2 . example.com/n core\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir  string
		want map[string]string
	}{
		{"bench", map[string]string{"GO-1 example.com/m": "only in benchmarks"}},
		{"./bench/", map[string]string{"GO-1 example.com/m": "only in benchmarks"}},
		{".", map[string]string{"GO-2 example.com/n": "core"}},
		{"otel", map[string]string{}},
	}
	for _, tt := range tests {
		got, err := loadAccepted(path, tt.dir)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("loadAccepted(%q) = %v, %v; want %v", tt.dir, got, err, tt.want)
		}
	}
	if err := os.WriteFile(path, []byte("GO-1 bench\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadAccepted(path, "bench"); err == nil {
		t.Error("a line without module and reason was accepted")
	}
}
