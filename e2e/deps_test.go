package e2e

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// heavyModules are modules that only some parts of mcpstack need (the
// stores, the browser tests, the interoperability tests): a module using
// the library's core packages must not find them in its go.sum.
var heavyModules = []string{
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/mark3labs/mcp-go",
	"github.com/chromedp/",
	"github.com/jackc/pgx",
	"github.com/redis/go-redis",
	"modernc.org/sqlite",
}

// TestUserModuleDependencies makes, for each package a user imports, a
// fresh module that imports only it, runs `go mod tidy` as a user would,
// and checks that none of heavyModules reached its go.sum but the one the
// package exists for (a store's database driver). Tests of the imported
// packages count: tidy records their dependencies too, which is why the
// interoperability tests live in a module of their own, interop/, and the
// browser tests of authserver's pages here in e2e.
func TestUserModuleDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod tidy")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pkg   string
		allow string // the heavy module the package is for
	}{
		{pkg: "mcp"}, {pkg: "jsonrpc"}, {pkg: "jsonschema"}, {pkg: "icon"}, {pkg: "oauth"},
		{pkg: "auth"}, {pkg: "authclient"}, {pkg: "authserver"}, {pkg: "store/memory"},
		{pkg: "store/postgres", allow: "github.com/jackc/pgx"},
		{pkg: "store/redis", allow: "github.com/redis/go-redis"},
		{pkg: "store/sqlite", allow: "modernc.org/sqlite"},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "go.mod"), "module user\n\ngo 1.25.0\n\nrequire github.com/mcpstack/mcpstack v0.0.0\n\nreplace github.com/mcpstack/mcpstack => "+root+"\n")
			writeFile(t, filepath.Join(dir, "main.go"), "package main\n\nimport _ \"github.com/mcpstack/mcpstack/"+tc.pkg+"\"\n\nfunc main() {}\n")
			tidy := exec.Command(goBin, "mod", "tidy")
			tidy.Dir = dir
			tidy.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
			if out, err := tidy.CombinedOutput(); err != nil {
				t.Fatalf("go mod tidy: %v\n%s", err, out)
			}
			sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			mods := map[string]bool{}
			for _, line := range strings.Split(string(sum), "\n") {
				if f := strings.Fields(line); len(f) > 0 {
					mods[f[0]] = true
				}
			}
			for m := range mods {
				for _, heavy := range heavyModules {
					if strings.HasPrefix(m, heavy) && (tc.allow == "" || !strings.HasPrefix(m, tc.allow)) {
						t.Errorf("a module importing only %s gets %s in its go.sum", tc.pkg, m)
					}
				}
			}
			t.Logf("%s: %d modules in go.sum: %s", tc.pkg, len(mods), strings.Join(slices.Sorted(maps.Keys(mods)), " "))
		})
	}
}
