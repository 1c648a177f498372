package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// sentBy reports whether method is, in table (the side that receives it),
// a request or a notification.
func sentBy[S any](table map[string]methodInfo[S], method string) (request, notification bool) {
	info, ok := table[method]
	if !ok {
		return false, false
	}
	n := info.flags.has(methodNotification)
	return !n, n
}

// methodConstants returns the values of the Method… and Notification…
// string constants declared in methods.go, by name: the methods this
// package knows. Reading the source means that a new constant without a
// table entry fails TestMethodTables.
func methodConstants(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "methods.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string)
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Method") && !strings.HasPrefix(name.Name, "Notification") {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("%s is not a string literal", name.Name)
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out[name.Name] = v
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no method constants found in methods.go")
	}
	return out
}

// schemaUnionMethods returns the method of every member of the schema's
// union definition name, such as ClientRequest.
func schemaUnionMethods(t *testing.T, defs map[string]json.RawMessage, name string) []string {
	t.Helper()
	var union struct {
		AnyOf []struct {
			Ref string `json:"$ref"`
		} `json:"anyOf"`
	}
	if err := json.Unmarshal(defs[name], &union); err != nil || len(union.AnyOf) == 0 {
		t.Fatalf("schema union %s: %v", name, err)
	}
	var out []string
	for _, m := range union.AnyOf {
		member, ok := strings.CutPrefix(m.Ref, "#/$defs/")
		if !ok {
			t.Fatalf("%s: member %q", name, m.Ref)
		}
		var def struct {
			Properties struct {
				Method struct {
					Const string `json:"const"`
				} `json:"method"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(defs[member], &def); err != nil || def.Properties.Method.Const == "" {
			t.Fatalf("%s: no method const (%v)", member, err)
		}
		out = append(out, def.Properties.Method.Const)
	}
	sort.Strings(out)
	return out
}

// tableMethods returns the methods of table with the notification flag
// set to notification, sorted.
func tableMethods[S any](table map[string]methodInfo[S], notification bool) []string {
	var out []string
	for m, info := range table {
		if info.flags.has(methodNotification) == notification {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

// TestMethodTables checks that the two method tables are complete and
// agree with the 2025-11-25 schema: every method constant has an entry;
// the server's table holds exactly the ClientRequest and
// ClientNotification unions, the client's exactly ServerRequest and
// ServerNotification; the notification flag matches the schema and the
// "notifications/" name rule; the other flags sit only where they mean
// something.
func TestMethodTables(t *testing.T) {
	data, err := os.ReadFile(schemaFile)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("schema not found")
	}
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}

	sides := []struct {
		name                string
		requests, notifs    []string // from the tables
		schemaReq, schemaNo string   // the schema's unions
	}{
		{"server (receives from the client)", tableMethods(serverMethodInfos, false), tableMethods(serverMethodInfos, true), "ClientRequest", "ClientNotification"},
		{"client (receives from the server)", tableMethods(clientMethodInfos, false), tableMethods(clientMethodInfos, true), "ServerRequest", "ServerNotification"},
	}
	for _, side := range sides {
		if want := schemaUnionMethods(t, schema.Defs, side.schemaReq); !slices.Equal(side.requests, want) {
			t.Errorf("%s: requests %v, schema's %s %v", side.name, side.requests, side.schemaReq, want)
		}
		if want := schemaUnionMethods(t, schema.Defs, side.schemaNo); !slices.Equal(side.notifs, want) {
			t.Errorf("%s: notifications %v, schema's %s %v", side.name, side.notifs, side.schemaNo, want)
		}
	}

	consts := methodConstants(t)
	known := make(map[string]bool)
	for name, m := range consts {
		_, inServer := serverMethodInfos[m]
		_, inClient := clientMethodInfos[m]
		if !inServer && !inClient {
			t.Errorf("%s (%q) has no entry in either method table", name, m)
		}
		if strings.HasPrefix(name, "Notification") != isNotificationMethod(m) {
			t.Errorf("%s (%q): constant's name and method name disagree on notification", name, m)
		}
		known[m] = true
	}
	checkFlags(t, "server", serverMethodInfos, known, true)
	checkFlags(t, "client", clientMethodInfos, known, false)

	names := MethodNames()
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(names) || len(names) != len(known) {
		t.Errorf("MethodNames() = %d names (%d distinct), want each of the %d methods once", len(names), len(slices.Compact(sorted)), len(known))
	}
	for _, m := range names {
		if !known[m] {
			t.Errorf("MethodNames() has %q, which no constant names", m)
		}
	}
}

// checkFlags checks the entries of one side's table: a constant for each,
// the notification flag by the name rule, inline and before-init only on
// the requests that the spec lets through early (ping; initialize on the
// server), and a handler everywhere but on tasks/* requests (answered by
// a task middleware) and on the server's notifications/tasks/status.
func checkFlags[S any](t *testing.T, side string, table map[string]methodInfo[S], known map[string]bool, server bool) {
	t.Helper()
	early := map[string]bool{MethodPing: true}
	if server {
		early[MethodInitialize] = true
	}
	for m, info := range table {
		if !known[m] {
			t.Errorf("%s table: %q has no constant", side, m)
		}
		if info.flags.has(methodNotification) != isNotificationMethod(m) {
			t.Errorf("%s table: %q notification flag %v", side, m, info.flags.has(methodNotification))
		}
		if info.flags.has(methodInline) != early[m] {
			t.Errorf("%s table: %q inline flag %v", side, m, info.flags.has(methodInline))
		}
		if info.flags.has(methodBeforeInit) != (server && early[m]) {
			t.Errorf("%s table: %q before-init flag %v", side, m, info.flags.has(methodBeforeInit))
		}
		noHandler := strings.HasPrefix(m, "tasks/") || (server && m == NotificationTasksStatus)
		if (info.handler == nil) != noHandler {
			t.Errorf("%s table: %q handler nil = %v", side, m, info.handler == nil)
		}
	}
}

// TestDispatchByKind checks that a session serves a method only as the
// kind its table gives: a request named like a notification, or like a
// request the session does not serve, gets -32601; a notification named
// like a request is ignored.
func TestDispatchByKind(t *testing.T) {
	ctx := context.Background()
	ct, st := InMemoryTransports()
	ss, err := testServer(nil).Connect(ctx, st)
	mustOK(t, err)
	cs, err := testClient(nil).Connect(ctx, ct)
	mustOK(t, err)
	t.Cleanup(func() { cs.Close(); ss.Close() })
	tests := []struct {
		name   string
		call   func() error
		notFor bool // want -32601
	}{
		{"server: notification method as a request", func() error {
			return cs.conn.Call(ctx, NotificationInitialized, nil, nil)
		}, true},
		{"server: tasks/get without a task middleware", func() error {
			return cs.conn.Call(ctx, MethodTasksGet, json.RawMessage(`{"taskId":"x"}`), nil)
		}, true},
		{"server: a method of the client's side", func() error {
			return cs.conn.Call(ctx, MethodRootsList, nil, nil)
		}, true},
		{"server: request method as a notification, then ping", func() error {
			if err := cs.conn.Notify(ctx, MethodPing, nil); err != nil {
				return err
			}
			return cs.Ping(ctx)
		}, false},
		{"client: a method of the server's side", func() error {
			return ss.conn.Call(ctx, MethodToolsList, nil, nil)
		}, true},
		{"client: ping", func() error { return ss.Ping(ctx) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if tt.notFor != errors.Is(err, jsonrpc.ErrMethodNotFound) || (!tt.notFor && err != nil) {
				t.Errorf("err = %v, want method not found: %v", err, tt.notFor)
			}
		})
	}
}
