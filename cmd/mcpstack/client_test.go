package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/netguard"
)

// decode decodes r's stdout as one JSON document.
func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout is not JSON (%v):\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON document:\n%s", r.stdout)
	}
	return v
}

type toolList struct {
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
}

type callResult struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		MIMEType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// TestClientConformanceServerStdio drives the client against the
// conformance suite's server over stdio and checks its --json output.
func TestClientConformanceServerStdio(t *testing.T) {
	bin, err := conformanceServer()
	if err != nil {
		t.Fatal(err)
	}
	server := []string{"--", bin, "-stdio"}

	r := runCmd(t, "", append([]string{"client", "--json", "tools"}, server...)...)
	if r.code != 0 {
		t.Fatalf("tools: exit %d: %s", r.code, r.stderr)
	}
	tl := decode[toolList](t, r)
	names := map[string]bool{}
	for _, tool := range tl.Tools {
		names[tool.Name] = true
	}
	for _, want := range []string{"test_simple_text", "test_image_content", "test_error_handling", "test_tool_with_progress"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}

	r = runCmd(t, "", append([]string{"client", "--json", "info"}, server...)...)
	info := decode[struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct{ Name string }
	}](t, r)
	if info.ProtocolVersion != "2025-11-25" || info.ServerInfo.Name != "mcpstack-conformance-server" {
		t.Errorf("info: %+v", info)
	}

	tests := []struct {
		tool  string
		code  int
		check func(t *testing.T, c callResult)
	}{
		{"test_simple_text", 0, func(t *testing.T, c callResult) {
			if len(c.Content) != 1 || c.Content[0].Type != "text" || c.Content[0].Text != "This is a simple text response for testing." {
				t.Errorf("content %+v", c.Content)
			}
		}},
		{"test_image_content", 0, func(t *testing.T, c callResult) {
			if len(c.Content) != 1 || c.Content[0].Type != "image" || c.Content[0].MIMEType != "image/png" || c.Content[0].Data == "" {
				t.Errorf("content %+v", c.Content)
			}
		}},
		{"test_error_handling", exitServerError, func(t *testing.T, c callResult) {
			if !c.IsError {
				t.Errorf("isError not set: %+v", c)
			}
		}},
		{"test_tool_with_progress", 0, func(t *testing.T, c callResult) {
			if c.IsError || len(c.Content) == 0 {
				t.Errorf("result %+v", c)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			r := runCmd(t, "", append([]string{"client", "--json", "call", tt.tool}, server...)...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tt.code, r.stderr)
			}
			tt.check(t, decode[callResult](t, r))
		})
	}

	r = runCmd(t, "", append([]string{"client", "call", "no_such_tool"}, server...)...)
	if r.code != exitServerError {
		t.Errorf("unknown tool: exit %d, want 3: %s", r.code, r.stderr)
	}
}

// startServe runs `mcpstack serve --addr 127.0.0.1:0` (this test binary,
// as mcpstack) and returns its endpoint.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	return startDaemon(t, "mcpstack serve: MCP at ", append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
}

// TestClientServeHTTP drives the client against `mcpstack serve --addr`
// over Streamable HTTP.
func TestClientServeHTTP(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from the root\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url := startServe(t, "--root", root)

	// The 2025-11-25 leg lists tools in the order they were added; the
	// 2026-07-28 one by name, so that replicas agree and clients can
	// cache (changelog, minor change 3).
	for _, tt := range []struct{ era, want string }{
		{"legacy", "echo,count,sleep,time,fetch,ask,list_files,read_file"},
		{"modern", "ask,count,echo,fetch,list_files,read_file,sleep,time"},
	} {
		r := runCmd(t, "", "client", "--era", tt.era, "--json", url, "tools")
		if r.code != 0 {
			t.Fatalf("tools (%s): exit %d: %s", tt.era, r.code, r.stderr)
		}
		var names []string
		for _, tool := range decode[toolList](t, r).Tools {
			names = append(names, tool.Name)
		}
		if got := strings.Join(names, ","); got != tt.want {
			t.Errorf("tools (%s) %s, want %s", tt.era, got, tt.want)
		}
	}
	var r result

	r = runCmd(t, "", "client", "--json", url, "call", "time", `{"timezone":"Asia/Tokyo"}`)
	c := decode[callResult](t, r)
	var tm struct {
		Time, Timezone string
		Unix           int64
	}
	if err := json.Unmarshal(c.StructuredContent, &tm); err != nil || tm.Timezone != "Asia/Tokyo" || !strings.HasSuffix(tm.Time, "+09:00") {
		t.Errorf("time: %s (%v)", c.StructuredContent, err)
	}

	r = runCmd(t, "", "client", url, "call", "read_file", `{"path":"hello.txt"}`)
	if r.code != 0 || !strings.Contains(r.stdout, "hello from the root") {
		t.Errorf("read_file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCmd(t, "", "client", url, "call", "list_files")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "hello.txt" {
		t.Errorf("list_files: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = runCmd(t, "", "client", url, "call", "echo", `{"text":`)
	if r.code != exitUsage || !strings.Contains(r.stderr, "want a JSON object") {
		t.Errorf("bad JSON arguments: exit %d: %s", r.code, r.stderr)
	}

	r = runCmd(t, "", "client", url, "ping")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "pong in ") {
		t.Errorf("ping: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}

	// A header given with --header reaches the server: a foreign Origin
	// is refused with 403 by the DNS-rebinding defence.
	r = runCmd(t, "", "client", "--header", "Origin: http://evil.example", url, "tools")
	if r.code != exitFailure || !strings.Contains(r.stderr, "403") {
		t.Errorf("--header Origin: exit %d: %s", r.code, r.stderr)
	}
}

// TestClientElicitationFromStdin answers the ask tool's form from
// standard input with --elicit prompt.
func TestClientElicitationFromStdin(t *testing.T) {
	tests := []struct {
		name   string
		stdin  string
		code   int
		stdout string
		stderr string
	}{
		{"default kept", "Ada\n\ny\n", 0, "Hello, Ada! blue is a fine colour.", "Favourite colour [1) red, 2) green, 3) blue] (default blue): "},
		{"choice by number", "Ada\n1\n\n", 0, "Hello, Ada! red is a fine colour.", "Your name (required): "},
		{"required field re-asked", "\nBo\ngreen\nyes\n", 0, "Hello, Bo! green is a fine colour.", "This field is required."},
		{"bad choice re-asked", "Cy\npurple\n3\ny\n", 0, "Hello, Cy! blue is a fine colour.", "choose one of red, green, blue"},
		{"declined at the end", "Ada\n\nn\n", 0, "The user chose to decline.", "Declined."},
		{"declined in a field", "!decline\n", 0, "The user chose to decline.", "Declined."},
		{"cancelled", "Ada\n!cancel\n", 0, "The user chose to cancel.", "Cancelled."},
		{"end of input cancels", "Ada\n", 0, "The user chose to cancel.", "Cancelled."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, tt.stdin, "client", "--elicit", "prompt", "call", "ask", "--", self(t), "serve")
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tt.code, r.stderr)
			}
			if strings.TrimSpace(r.stdout) != tt.stdout {
				t.Errorf("stdout %q, want %q", r.stdout, tt.stdout)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, r.stderr)
			}
		})
	}
	// Without a terminal, auto declines and says why.
	r := runCmd(t, "Ada\n", "client", "call", "ask", "--", self(t), "serve")
	if strings.TrimSpace(r.stdout) != "The user chose to decline." || !strings.Contains(r.stderr, "standard input is not a terminal") {
		t.Errorf("auto without a terminal: %q / %q", r.stdout, r.stderr)
	}
}

// TestClientAskEras checks serve's ask tool, which elicits, in both eras
// over HTTP and stdio: on the 2026-07-28 leg the client's capabilities are
// those of the request's _meta and the elicitation is a multi round-trip
// request, so a tool that reads initialize's would refuse the client.
func TestClientAskEras(t *testing.T) {
	url := startServe(t, "--root", t.TempDir())
	const want = "Hello, Ada! blue is a fine colour."
	for _, era := range []string{"legacy", "modern"} {
		for _, over := range []struct {
			name string
			args []string
		}{
			{"http", []string{url, "call", "ask"}},
			{"stdio", []string{"call", "ask", "--", self(t), "serve"}},
		} {
			t.Run(era+"/"+over.name, func(t *testing.T) {
				args := append([]string{"client", "--era", era, "--elicit", "prompt"}, over.args...)
				r := runCmd(t, "Ada\n\ny\n", args...)
				if r.code != 0 || strings.TrimSpace(r.stdout) != want {
					t.Errorf("exit %d: %q, want %q\n%s", r.code, r.stdout, want, r.stderr)
				}
			})
		}
	}
}

// TestClientProgressVerbose shows progress as lines when standard error is
// not a terminal and -v is given.
func TestClientProgressVerbose(t *testing.T) {
	r := runCmd(t, "", "client", "-v", "call", "count", `{"n":4}`, "--", self(t), "serve")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for i := 1; i <= 4; i++ {
		full := (i*barWidth*2 + 4) / 8 // i/4 of the bar, rounded
		if !strings.Contains(r.stderr, fmt.Sprintf("progress: [%s%s] %3d%% %d/4 counted %d of 4\n", strings.Repeat("#", full), strings.Repeat(".", barWidth-full), i*25, i, i)) {
			t.Errorf("no bar for step %d:\n%s", i, r.stderr)
		}
	}
	if strings.TrimSpace(r.stdout) != "counted to 4" {
		t.Errorf("stdout %q", r.stdout)
	}
}

func TestFetchTool(t *testing.T) {
	big := strings.Repeat("x", maxFileBytes+10)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "plain text")
		case "/big":
			io.WriteString(w, big)
		case "/redirect-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/missing":
			http.NotFound(w, r)
		}
	}))
	defer ts.Close()
	ctx := context.Background()
	f := newFetcher(maxFileBytes, 5*time.Second, true)
	r, err := f.fetch(ctx, ts.URL+"/text")
	if err != nil || string(r.Body) != "plain text" || r.Status != 200 {
		t.Errorf("text: %+v %v", r, err)
	}
	r, err = f.fetch(ctx, ts.URL+"/big")
	if err != nil || !r.Truncated || len(r.Body) != maxFileBytes {
		t.Errorf("big: truncated=%v len=%d %v", r != nil && r.Truncated, len(r.Body), err)
	}
	if _, err := f.fetch(ctx, ts.URL+"/redirect-file"); err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Errorf("redirect to file: %v", err)
	}
	for _, u := range []string{"file:///etc/passwd", "gopher://x/", "http://user:pw@127.0.0.1/"} {
		if _, err := f.fetch(ctx, u); err == nil {
			t.Errorf("%s fetched", u)
		}
	}
	// Without --fetch-private, loopback is refused at dial time.
	pub := newFetcher(maxFileBytes, 5*time.Second, false)
	if _, err := pub.fetch(ctx, ts.URL+"/text"); !errors.Is(err, netguard.ErrForbidden) || !strings.Contains(err.Error(), "--fetch-private") {
		t.Errorf("loopback without --fetch-private: %v", err)
	}
	// The module's one list (#16.5): the fetch tool used to have its own,
	// which let CGNAT, NAT64, 6to4 and documentation ranges through.
	for _, addr := range []string{"10.1.2.3:80", "192.168.0.1:443", "169.254.169.254:80", "[::1]:80", "[fe80::1]:80", "0.0.0.0:80", "[::ffff:127.0.0.1]:80",
		"100.64.0.1:80", "[64:ff9b::a00:1]:80", "[2002:a00:1::1]:80", "192.0.2.1:80", "198.18.0.1:80", "[fc00::1]:80"} {
		if err := pub.checkDial("tcp", addr, nil); !errors.Is(err, netguard.ErrForbidden) {
			t.Errorf("dial to %s: %v, want refused", addr, err)
		}
	}
	for _, addr := range []string{"93.184.216.34:443", "[2606:4700::1111]:443"} {
		if err := pub.checkDial("tcp", addr, nil); err != nil {
			t.Errorf("dial to %s refused: %v", addr, err)
		}
	}
}

// TestClientResourcesPromptsCompletion lists, reads, gets and completes
// against `mcpstack serve --root` over Streamable HTTP.
func TestClientResourcesPromptsCompletion(t *testing.T) {
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "notes.md"), []byte("# Notes\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "nums.txt"), []byte("1 2 3\n"), 0o644))
	url := startServe(t, "--root", root)
	prefix := "file://" + filepath.ToSlash(root) + "/"

	r := runCmd(t, "", "client", "--json", url, "resources")
	rl := decode[struct {
		Resources []struct{ URI, Name string }
	}](t, r)
	if len(rl.Resources) != 2 || rl.Resources[0].URI != prefix+"notes.md" || rl.Resources[1].Name != "nums.txt" {
		t.Errorf("resources: %+v", rl)
	}

	r = runCmd(t, "", "client", "--json", url, "templates")
	tl := decode[struct {
		ResourceTemplates []struct{ URITemplate string }
	}](t, r)
	if len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate != prefix+"{+path}" {
		t.Errorf("templates: %+v", tl)
	}

	r = runCmd(t, "", "client", "--json", url, "read", prefix+"nums.txt")
	rr := decode[struct {
		Contents []struct{ URI, Text string }
	}](t, r)
	if len(rr.Contents) != 1 || rr.Contents[0].Text != "1 2 3\n" {
		t.Errorf("read: %+v", rr)
	}
	// Not found is -32002 before revision 2026-07-28 and -32602 since
	// (changelog, minor change 6); either way the CLI says so.
	for _, era := range []struct{ name, code string }{{"legacy", "-32002"}, {"modern", "-32602"}} {
		for _, uri := range []string{prefix + "missing.txt", prefix + "../x", "file:///etc/passwd"} {
			r = runCmd(t, "", "client", "--era", era.name, url, "read", uri)
			if r.code != exitServerError || !strings.Contains(r.stderr, era.code+": Resource not found (no such resource;") {
				t.Errorf("read %s (%s): exit %d: %s", uri, era.name, r.code, r.stderr)
			}
		}
	}

	r = runCmd(t, "", "client", "--json", url, "prompts")
	pl := decode[struct{ Prompts []struct{ Name string } }](t, r)
	if len(pl.Prompts) != 2 {
		t.Errorf("prompts: %+v", pl)
	}
	r = runCmd(t, "", "client", url, "prompt", "haiku", `{"topic":"rain","season":"autumn"}`)
	if r.code != 0 || !strings.Contains(r.stdout, "user: Write a haiku about rain, set in autumn.") {
		t.Errorf("prompt haiku: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	r = runCmd(t, "", "client", url, "prompt", "haiku")
	if r.code != exitServerError {
		t.Errorf("prompt without its required argument: exit %d: %s", r.code, r.stderr)
	}

	tests := []struct {
		args []string
		want string
	}{
		{[]string{"prompt", "haiku", "season", "s"}, "spring,summer"},
		{[]string{"prompt", "haiku", "season", "x"}, ""},
		{[]string{"prompt", "summarize_file", "path", "n"}, "notes.md,nums.txt"},
		{[]string{"prompt", "summarize_file", "path", "nu"}, "nums.txt"},
		{[]string{"resource", prefix + "{+path}", "path", "no"}, "notes.md"},
	}
	for _, tt := range tests {
		r := runCmd(t, "", append([]string{"client", "--json", url, "complete"}, tt.args...)...)
		c := decode[struct{ Completion struct{ Values []string } }](t, r)
		if got := strings.Join(c.Completion.Values, ","); got != tt.want {
			t.Errorf("complete %v = %q, want %q", tt.args, got, tt.want)
		}
	}
}

// TestClientWatchResourceUpdated subscribes to a file with watch, changes
// the file, and sees notifications/resources/updated as a JSON line; an
// interrupt then ends the watch with exit code 130.
func TestClientWatchResourceUpdated(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "watched.txt")
	must(t, os.WriteFile(file, []byte("one"), 0o644))
	uri := "file://" + filepath.ToSlash(root) + "/watched.txt"
	cmd := exec.Command(self(t), "client", "--json", "watch", uri, "--", self(t), "serve", "--root", root)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "watching ") {
		t.Fatalf("watch said %q (%v)", line, err)
	}
	go io.Copy(io.Discard, stderr)
	// The server may take its first look at the file after "watching" was
	// printed (a loaded machine): change the file until the notification
	// comes, and give up after a minute rather than hang.
	got := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			os.WriteFile(file, []byte(fmt.Sprintf("change %d, longer", i)), 0o644)
			select {
			case <-got:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	giveUp := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer giveUp.Stop()
	sc := bufio.NewScanner(stdout)
	ok := sc.Scan()
	close(got)
	if !ok {
		t.Fatalf("no notification within a minute: %v", sc.Err())
	}
	var n struct {
		Method string
		Params struct{ URI string }
	}
	if err := json.Unmarshal(sc.Bytes(), &n); err != nil || n.Method != "notifications/resources/updated" || n.Params.URI != uri {
		t.Errorf("notification %s (%v)", sc.Bytes(), err)
	}
	must(t, cmd.Process.Signal(os.Interrupt))
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("after an interrupt: %v, want exit %d", err, exitInterrupted)
	}
}

// TestClientConformanceServerHTTP drives the client against the
// conformance suite's server over Streamable HTTP, sampling included.
func TestClientConformanceServerHTTP(t *testing.T) {
	bin, err := conformanceServer()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-v", "-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	var url string
	sc := bufio.NewScanner(stderr)
	for url == "" && sc.Scan() {
		if _, u, ok := strings.Cut(sc.Text(), "url="); ok {
			url = strings.Fields(u)[0]
		}
	}
	if url == "" {
		t.Fatalf("the conformance server did not say where it listens: %v", sc.Err())
	}
	go io.Copy(io.Discard, stderr)

	// The same checks in both eras: on the 2026-07-28 leg the tool reads
	// the capabilities the request's _meta declares (--sampling-cmd
	// declares sampling) and asks with a multi round-trip request.
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			r := runCmd(t, "", "client", "--era", era, "--json", url, "tools")
			tl := decode[toolList](t, r)
			if len(tl.Tools) < 5 {
				t.Errorf("tools/list over HTTP: %d tools", len(tl.Tools))
			}
			r = runCmd(t, "", "client", "--era", era, "--json", url, "call", "test_simple_text")
			if c := decode[callResult](t, r); len(c.Content) != 1 || c.Content[0].Text != "This is a simple text response for testing." {
				t.Errorf("test_simple_text over HTTP: %+v", c)
			}

			// Sampling is refused unless --sampling-cmd is given.
			r = runCmd(t, "", "client", "--era", era, url, "call", "test_sampling", `{"prompt":"Say hello"}`)
			if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "does not support sampling") {
				t.Errorf("sampling without --sampling-cmd: exit %d %s%s", r.code, r.stdout, r.stderr)
			}
			// The command reads the request's params on its standard input.
			r = runCmd(t, "", "client", "--era", era, "--json", "--sampling-cmd", `grep -o "Say hel*o"`, url, "call", "test_sampling", `{"prompt":"Say hello"}`)
			c := decode[callResult](t, r)
			if r.code != 0 || len(c.Content) != 1 || !strings.Contains(c.Content[0].Text, "LLM response: Say hello") {
				t.Errorf("sampling with --sampling-cmd: exit %d %+v %s", r.code, c, r.stderr)
			}
		})
	}
}

// TestClientLogLevel asks the server for its log messages with
// --log-level and shows them on standard error; without it the server
// stays silent.
func TestClientLogLevel(t *testing.T) {
	r := runCmd(t, "", "client", "--log-level", "debug", "call", "count", `{"n":2}`, "--", self(t), "serve")
	if r.code != 0 || !strings.Contains(r.stderr, "server debug [count]: counted 1\n") || !strings.Contains(r.stderr, "server debug [count]: counted 2\n") {
		t.Errorf("--log-level debug: exit %d: %q", r.code, r.stderr)
	}
	r = runCmd(t, "", "client", "--log-level", "info", "call", "count", `{"n":2}`, "--", self(t), "serve")
	if r.code != 0 || strings.Contains(r.stderr, "server debug") {
		t.Errorf("--log-level info let debug through: %q", r.stderr)
	}
	r = runCmd(t, "", "client", "call", "count", `{"n":1}`, "--", self(t), "serve")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("no --log-level: %q", r.stderr)
	}
}

// TestClientWithoutConfigDir still works when there is no config
// directory for the token store, with a warning.
func TestClientWithoutConfigDir(t *testing.T) {
	url := startServe(t)
	t.Setenv("HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	r := runCmd(t, "", "client", url, "ping")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: no place for the token store") {
		t.Errorf("exit %d: %q", r.code, r.stderr)
	}
}
