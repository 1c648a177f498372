package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rpcErrorServer answers every JSON-RPC request with error code -32000.
func rpcErrorServer(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "no", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"the moon is not in the right phase"}}`, req.ID)
}

// samplingServer is a stdio server, as a shell script, that asks for
// sampling during a tool call although the client did not declare it, and
// then reports the tool as failed.
const samplingServer = `
id() { printf '%s' "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'; }
read l; printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}\n' "$(id "$l")"
read l
read l; call=$(id "$l")
printf '{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}\n'
read l
printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"no model"}],"isError":true}}\n' "$call"
read l
`

// urlRequiredServer is a stdio server, as a shell script, whose every
// tool call is refused with -32042 until the user visits a page.
const urlRequiredServer = `
id() { printf '%s' "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'; }
read l; printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}\n' "$(id "$l")"
read l
read l; printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32042,"message":"Authorization with GitHub required","data":{"elicitations":[{"mode":"url","elicitationId":"gh-1","url":"https://github.example/login","message":"Sign in to GitHub"}]}}}\n' "$(id "$l")"
read l
`

// versionServer is a stdio server, as a shell script, that answers
// initialize with the protocol version in $V (none when empty).
const versionServer = `
id() { printf '%s' "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'; }
read l; printf '{"jsonrpc":"2.0","id":%s,"result":{%s"capabilities":{},"serverInfo":{"name":"s","version":"1"}}}\n' "$(id "$l")" "$V"
read l
`

// TestClientErrorsExplainThemselves runs the client against servers that
// fail in each way the command line explains, and checks the one line it
// prints: what failed, why, what to do, without the libraries' stacked
// prefixes.
func TestClientErrorsExplainThemselves(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(http.NotFound))
	defer srv.Close()
	fail500 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "database on fire", http.StatusInternalServerError)
	}))
	defer fail500.Close()
	unauthorized := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer scope="mcp:tools"`)
		http.Error(w, "no token", http.StatusUnauthorized)
	}))
	defer unauthorized.Close()
	rpcErr := httptest.NewServer(http.HandlerFunc(rpcErrorServer))
	defer rpcErr.Close()
	stop := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer slow.Close()
	defer close(stop) // before Close, which waits for the handlers
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html>\n<html><head><title>Welcome &amp; hello</title></head><body><p>a web site</p></body></html>")
	}))
	defer page.Close()
	getOnly := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotImplemented)
		fmt.Fprint(w, "<html><head><title>Error response</title></head><body><h1>Unsupported method ('POST')</h1></body></html>")
	}))
	defer getOnly.Close()

	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("a"), 0o600))
	aURI := "file://" + filepath.ToSlash(root) + "/a.txt"
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string // in the last line of standard error
		// only is set when the error must be all standard error holds:
		// no log line before it.
		only bool
	}{
		{"404", []string{"client", "--no-login", srv.URL + "/api/v1", "tools"}, exitFailure,
			[]string{"connecting to " + srv.URL + "/api/v1 failed", "no MCP endpoint at path /api/v1", "404", "/mcp"}, false},
		{"500", []string{"client", "--no-login", fail500.URL + "/mcp", "tools"}, exitFailure,
			[]string{"failed with HTTP 500 Internal Server Error", "database on fire", "server's log"}, false},
		{"401 without login", []string{"client", "--no-login", unauthorized.URL + "/mcp", "tools"}, exitFailure,
			[]string{"HTTP 401 Unauthorized", "drop --no-login"}, false},
		{"json-rpc error", []string{"client", "--no-login", rpcErr.URL + "/mcp", "tools"}, exitServerError,
			[]string{"JSON-RPC error -32000: the moon is not in the right phase"}, false},
		{"timeout", []string{"client", "--no-login", "--timeout", "300ms", slow.URL + "/mcp", "tools"}, exitFailure,
			[]string{"no answer within --timeout 300ms", "longer --timeout"}, false},
		{"refused", []string{"client", "--no-login", "http://127.0.0.1:1/mcp", "tools"}, exitFailure,
			[]string{"nothing is listening at 127.0.0.1:1", "connection refused"}, false},
		{"stdio exit", []string{"client", "tools", "--", "sh", "-c", "echo starting >&2; echo 'cannot open database' >&2; exit 3"}, exitFailure,
			[]string{"failed: the server exited with status 3", `last line on standard error: "cannot open database"`}, false},
		{"stdio exit after reading", []string{"client", "tools", "--", "sh", "-c", "read l; echo 'bad request' >&2; exit 4"}, exitFailure,
			[]string{"failed: the server exited with status 4", `last line on standard error: "bad request"`}, false},
		{"url elicitation required", []string{"client", "call", "repos", "--", "sh", "-c", urlRequiredServer}, exitServerError,
			[]string{"tools/call repos failed", "visit https://github.example/login first", "run the command again"}, false},
		{"unknown tool", []string{"client", "call", "nosuch", "--", self(t), "serve"}, exitServerError,
			[]string{"tools/call nosuch failed", "JSON-RPC error -32602", `unknown tool "nosuch"`}, false},
		{"sampling refused", []string{"client", "call", "think", "--", "sh", "-c", samplingServer}, exitServerError,
			[]string{"tools/call think failed", "--sampling-cmd"}, false},
		{"sampling command failed", []string{"client", "--sampling-cmd", "echo no model here >&2; exit 3", "call", "think", "--", "sh", "-c", samplingServer}, exitServerError,
			[]string{"tools/call think failed", "the server asked for a model's answer (sampling), and --sampling-cmd failed: exit status 3"}, false},
		{"logout unreachable", []string{"client", "--token-store", filepath.Join(t.TempDir(), "tokens.json"), "http://127.0.0.1:1/mcp", "logout"}, exitFailure,
			[]string{"logging out of http://127.0.0.1:1/mcp failed", "nothing is listening at 127.0.0.1:1"}, true},
		{"output unwritable", []string{"client", "--output", filepath.Join(root, "no", "such", "dir"), "read", aURI, "--", self(t), "serve", "--root", root}, exitFailure,
			[]string{"writing --output " + filepath.Join(root, "no", "such", "dir") + " failed: no such file or directory"}, true},
		{"no command", []string{"client", "tools", "--", "/nonexistent/server"}, exitFailure,
			[]string{`command "/nonexistent/server" not found`}, false},
		{"stdio not json-rpc", []string{"client", "--timeout", "1s", "tools", "--", "sh", "-c", "echo 'listening on :8080'; sleep 5"}, exitFailure,
			[]string{"no answer within --timeout 1s", "not JSON-RPC to its standard output", "standard error"}, true},
		{"no protocol version", []string{"client", "tools", "--", "sh", "-c", "V=; " + versionServer}, exitFailure,
			[]string{"answer to initialize names no protocol version", "is it an MCP server?"}, true},
		{"unknown protocol version", []string{"client", "tools", "--", "sh", "-c", `V='"protocolVersion":"1999-01-01",'; ` + versionServer}, exitFailure,
			[]string{"speaks MCP revision 1999-01-01", "2025-11-25", "upgrade"}, true},
		{"html page", []string{"client", "--no-login", page.URL + "/mcp", "tools"}, exitFailure,
			[]string{`an HTML page titled "Welcome & hello"`, "not MCP", "at path /mcp", "is this the MCP endpoint?"}, true},
		{"get only", []string{"client", "--no-login", page.URL + "/", "tools"}, exitFailure,
			[]string{"at path /", "MCP servers usually serve it at /mcp"}, true},
		{"501 html", []string{"client", "--no-login", getOnly.URL + "/", "tools"}, exitFailure,
			[]string{"does not take MCP's POST requests at path /", `HTTP 501 Not Implemented: an HTML page titled "Error response"`, "/mcp"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, "", tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, tc.code, r.stderr)
			}
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			if tc.only && len(lines) != 1 {
				t.Errorf("standard error holds more than the error line:\n%s", r.stderr)
			}
			if strings.Contains(r.stderr, "msg=") {
				t.Errorf("a log record reached the terminal without -v, besides the error line:\n%s", r.stderr)
			}
			if !strings.HasPrefix(last, "mcpstack client: ") {
				t.Fatalf("last line of stderr is not the error:\n%s", r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(last, w) {
					t.Errorf("error lacks %q:\n%s", w, last)
				}
			}
			for _, prefix := range []string{"mcp: ", "jsonrpc: ", "authclient: ", "(code "} {
				if strings.Contains(last, prefix) {
					t.Errorf("error carries the library prefix %q:\n%s", prefix, last)
				}
			}
			if n := strings.Count(last, "-32"); n > 1 {
				t.Errorf("JSON-RPC code printed %d times:\n%s", n, last)
			}
		})
	}
}

// TestRootMessageDropsLibraryPrefixes checks that an error no case of
// explainCause knows is printed without the prefixes of mcpstack's
// packages, however many it carries.
func TestRootMessageDropsLibraryPrefixes(t *testing.T) {
	for _, tc := range []struct{ err, want string }{
		{"mcp: POST: unexpected Content-Type \"text/plain\"", "POST: unexpected Content-Type \"text/plain\""},
		{"jsonrpc: mcp: closed", "closed"},
		{"authclient:  no\n token", "no token"},
		{"the disk is full", "the disk is full"},
		{"mcpstack: kept", "mcpstack: kept"},
	} {
		err := fmt.Errorf("outer: %w", errors.New(tc.err))
		if got := rootMessage(err); got != tc.want {
			t.Errorf("rootMessage(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestListenErrorSaysWhatToDo checks that serve and authserver say why
// they cannot listen, in a person's words, without net's repetition of
// the address.
func TestListenErrorSaysWhatToDo(t *testing.T) {
	busy, err := listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		addr string
		want []string
	}{
		{busy.Addr().String(), []string{"cannot listen on " + busy.Addr().String() + ": ", "already in use", "another --addr"}},
		{"192.0.2.1:0", []string{"no network interface of this machine has that address", "check --addr"}},
	} {
		ln, err := listen(tc.addr)
		if err == nil {
			ln.Close()
			t.Errorf("%s: listened", tc.addr)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.addr, err, w)
			}
		}
		if strings.Contains(err.Error(), "listen tcp") {
			t.Errorf("%s: %q carries net's wording", tc.addr, err)
		}
	}
}
