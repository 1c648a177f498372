package archtest

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMCPKnowsNoHTTP: package mcp, the protocol's types and engine, does
// not depend on net/http: the HTTP transports live in mcp/mcphttp, on the
// public push seam (Server.ConnectPush, ServerSession.Deliver).
func TestMCPKnowsNoHTTP(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "list", "-json=Deps", module+"mcp").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var p struct{ Deps []string }
	if err := json.NewDecoder(bytes.NewReader(out)).Decode(&p); err != nil {
		t.Fatal(err)
	}
	if len(p.Deps) == 0 {
		t.Fatal("go list reported no dependencies of mcp")
	}
	for _, banned := range []string{"net/http", module + "mcp/mcphttp", module + "mcp/eventstore"} {
		if slices.Contains(p.Deps, banned) {
			t.Errorf("mcp depends on %s", banned)
		}
	}
}

// TestMCPHTTPUsesPublicAPI: the non-test files of mcp/mcphttp take no way
// around the compiler to reach mcp's unexported names: they import neither
// unsafe nor reflect, and use no linkname directive.
func TestMCPHTTPUsesPublicAPI(t *testing.T) {
	files, err := filepath.Glob("../../mcp/mcphttp/*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		n++
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(src, []byte("go:"+"linkname")) {
			t.Errorf("%s uses go:linkname", f)
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			if p := strings.Trim(imp.Path.Value, `"`); p == "unsafe" || p == "reflect" {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
	if n < 5 {
		t.Fatalf("found %d non-test files in mcp/mcphttp: the path is wrong", n)
	}
}
