// Package archtest holds tests of the repository's shape: which packages
// may depend on which.
package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcpstack/mcpstack/"

// forbidden lists, per package (a path relative to the module, or a
// prefix ending in "/"), the packages it must not depend on, directly or
// through others: the import rules of the README. allowed lists the
// exceptions to it.
//
// mcp is the protocol's types and engine: it knows nothing of HTTP (see
// TestMCPKnowsNoHTTP). mcp/mcphttp, the HTTP transports, is built on mcp's
// public API only: the compiler enforces that, since it is another
// package, and TestMCPHTTPUsesPublicAPI that it takes no way around it.
// mcp/eventstore is a leaf that imports nothing of mcp, so that the stores
// under store/ may implement it; store/ may import it and no other mcp
// package; likewise mcp/taskstore, the JSON-only seam of the tasks
// engine (#21: store/redis.TaskStore implements it, and mcp adapts it to
// its typed TaskStore). The stores' contract tests,
// mcp/eventstore/eventstoretest and mcp/taskstore/taskstoretest, are
// leaves as well (each imports its seam and nothing else of the module),
// so that the tests of every store, in memory and under store/, run the
// same cases: store/ may import them too (TestStoreTestImports checks the
// tests, which TestImportRules does not see).
var forbidden = map[string][]string{
	"jsonrpc":                       {"mcp", "mcp/", "oauth", "auth", "authclient", "authserver", "store/", "icon", "jsonschema"},
	"jsonschema":                    {"jsonrpc", "mcp", "mcp/", "oauth", "auth", "authclient", "authserver", "store/"},
	"mcp":                           {"mcp/", "oauth", "auth", "authclient", "authserver", "store/"},
	"mcp/mcphttp":                   {"oauth", "auth", "authclient", "authserver", "store/"},
	"mcp/eventstore":                {"mcp", "mcp/", "jsonrpc", "jsonschema", "oauth", "auth", "authclient", "authserver", "store/", "internal/"},
	"mcp/eventstore/eventstoretest": {"mcp", "mcp/", "jsonrpc", "jsonschema", "oauth", "auth", "authclient", "authserver", "store/", "internal/"},
	"mcp/taskstore":                 {"mcp", "mcp/", "jsonrpc", "jsonschema", "oauth", "auth", "authclient", "authserver", "store/", "internal/"},
	"mcp/taskstore/taskstoretest":   {"mcp", "mcp/", "jsonrpc", "jsonschema", "oauth", "auth", "authclient", "authserver", "store/", "internal/"},
	// seal is cryptography only: it knows nothing of the protocol.
	"seal":       {"mcp", "mcp/", "jsonrpc", "jsonschema", "oauth", "auth", "authclient", "authserver", "store/", "internal/"},
	"icon":       {"oauth", "auth", "authclient", "authserver", "store/"},
	"oauth":      {"mcp", "mcp/", "jsonrpc", "auth", "authclient", "authserver", "store/"},
	"auth":       {"authclient", "authserver", "store/"},
	"authclient": {"auth", "authserver", "store/"},
	"authserver": {"auth", "authclient", "mcp", "mcp/", "jsonrpc", "store/"},
	"store/":     {"mcp", "mcp/", "jsonrpc", "auth", "authclient"},
	// The one OAuth HTTP client (#18.6) serves auth and authclient, which
	// must not import each other: it knows neither, nor the authorization
	// server, nor MCP.
	"internal/oauthhttp": {"auth", "authclient", "authserver", "mcp", "mcp/", "jsonrpc", "store/"},
	// The test authorization server of auth's and authclient's tests.
	"internal/oauthtest": {"auth", "authclient", "authserver", "mcp", "mcp/", "jsonrpc", "store/"},
	// The tests' shared helpers (request bodies that count): a leaf.
	"internal/testutil": {"jsonrpc", "jsonschema", "mcp", "mcp/", "oauth", "auth", "authclient", "authserver", "store/", "icon"},
}

// allowed lists, per rule of forbidden, the packages that the rule's bans
// would match but that the rule's packages may depend on.
var allowed = map[string][]string{
	// The seams the stores implement, and their contract tests, which the
	// stores' tests run (one copy of the cases for every store).
	"store/": {"mcp/eventstore", "mcp/eventstore/eventstoretest", "mcp/taskstore", "mcp/taskstore/taskstoretest"},
	// mcp adapts the tasks seam to its typed TaskStore (JSONTaskStore).
	"mcp": {"mcp/taskstore"},
	// The contract tests are written against their seam alone.
	"mcp/eventstore/eventstoretest": {"mcp/eventstore"},
	"mcp/taskstore/taskstoretest":   {"mcp/taskstore"},
}

// TestImportRules checks every package's dependencies against forbidden,
// and that nothing depends on cmd/ or conformance/ (but themselves).
func TestImportRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Deps", module+"...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.Bytes())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	seen := 0
	for {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		pkg := strings.TrimPrefix(p.ImportPath, module)
		for _, d := range p.Deps {
			if !strings.HasPrefix(d, module) {
				continue
			}
			dep := strings.TrimPrefix(d, module)
			for _, top := range []string{"cmd/", "conformance/"} {
				if strings.HasPrefix(dep, top) && !strings.HasPrefix(pkg, top) {
					t.Errorf("%s depends on %s: nothing may depend on %s", pkg, dep, top)
				}
			}
			for rule, bans := range forbidden {
				if !matches(pkg, rule) {
					continue
				}
				for _, ban := range bans {
					if matches(dep, ban) && !slices.Contains(allowed[rule], dep) {
						t.Errorf("%s depends on %s, which the import rules forbid (%s must not depend on %s)", pkg, dep, rule, ban)
					}
				}
			}
		}
	}
	if seen < 10 {
		t.Fatalf("go list saw %d packages: the pattern is wrong", seen)
	}
}

// TestStoreTestImports applies the store/ rule to the tests of the
// stores too (TestImportRules sees only the packages themselves): a
// store's tests may use mcp/eventstore and its contract test, no other
// package of mcp, so that the stores stay testable without the protocol.
func TestStoreTestImports(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command("go", "list", "-json=ImportPath,TestImports,XTestImports", module+"store/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.Bytes())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	seen := 0
	for {
		var p struct {
			ImportPath                string
			TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		for _, d := range append(p.TestImports, p.XTestImports...) {
			dep, ok := strings.CutPrefix(d, module)
			if !ok {
				continue
			}
			for _, ban := range forbidden["store/"] {
				if matches(dep, ban) && !slices.Contains(allowed["store/"], dep) {
					t.Errorf("the tests of %s import %s, which the import rules forbid (store/ must not depend on %s)", p.ImportPath, dep, ban)
				}
			}
		}
	}
	if seen < 3 {
		t.Fatalf("go list saw %d store packages: the pattern is wrong", seen)
	}
}

// matches reports whether pkg is rule, or lies under it when rule ends in
// "/".
func matches(pkg, rule string) bool {
	if strings.HasSuffix(rule, "/") {
		return strings.HasPrefix(pkg, rule)
	}
	return pkg == rule
}

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		pkg, rule string
		want      bool
	}{
		{"auth", "auth", true},
		{"authclient", "auth", false},
		{"store/redis", "store/", true},
		{"store", "store/", false},
		{"mcp", "store/", false},
		{"mcp", "mcp/", false},
		{"mcp/eventstore", "mcp/", true},
	} {
		if got := matches(tc.pkg, tc.rule); got != tc.want {
			t.Errorf("matches(%q, %q) = %v", tc.pkg, tc.rule, got)
		}
	}
}
