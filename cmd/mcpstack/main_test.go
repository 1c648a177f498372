package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// The test binary doubles as the mcpstack command: when asMainEnv is set
// it runs main. TestMain sets it, so that the commands that start
// themselves (demo, and client -- SELF serve) work under test.
const asMainEnv = "MCPSTACK_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(browserEnv) != "" {
		os.Exit(testBrowser(os.Args[len(os.Args)-1]))
	}
	if os.Getenv(asMainEnv) == "1" && !testFlags(os.Args[1:]) {
		main()
		return
	}
	os.Setenv(asMainEnv, "1")
	os.Exit(m.Run())
}

// testFlags reports whether args hold the testing package's flags, as
// when the fuzzing engine starts this binary as a worker.
func testFlags(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-test.") {
			return true
		}
	}
	return false
}

// self is the path of the test binary, which runs as mcpstack.
func self(t testing.TB) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startSelf runs this test binary as mcpstack with args and reads the
// first line it writes to standard error, which must start with prefix.
// It returns the command, the rest of that line, and standard error after
// it, which the caller must drain (or the process may block writing to
// it). When the test ends the process is interrupted and waited for (a
// test that waited for it already loses nothing).
func startSelf(t *testing.T, prefix string, args ...string) (*exec.Cmd, string, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(self(t), args...)
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	br := bufio.NewReader(stderr)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, prefix) {
		t.Fatalf("%s said %q (%v)", args[0], line, err)
	}
	return cmd, strings.TrimSpace(strings.TrimPrefix(line, prefix)), br
}

// result is what one in-process run of the command did.
type result struct {
	code   int
	stdout string
	stderr string
}

// runCmd runs the command in process with stdin as its input.
func runCmd(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, args, &stdio{in: strings.NewReader(stdin), out: &out, err: &errb})
	return result{code, out.String(), errb.String()}
}

// buildConformanceServer builds conformance/server once per test binary.
var conformanceServer = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "mcpstack-conf")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "server")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/mcpstack/mcpstack/conformance/server")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{string(out), err}
	}
	return bin, nil
})

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string {
	return "go build conformance/server: " + e.err.Error() + "\n" + e.out
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{nil, exitUsage, "", "Usage:"},
		{[]string{"help"}, exitOK, "mcpstack client", ""},
		{[]string{"--help"}, exitOK, "Exit codes:", ""},
		{[]string{"help", "client"}, exitOK, "Examples:", ""},
		{[]string{"help", "nope"}, exitUsage, "", `no command "nope"`},
		{[]string{"help", "--help"}, exitOK, "Exit codes:", ""},
		{[]string{"help", "authserver"}, exitOK, "--dev-user NAME", ""},
		{[]string{"authserver"}, exitUsage, "", "give users (--user, --users), a --dev-user or an --upstream-issuer"},
		{[]string{"authserver", "--dev-user", "me", "--tls-cert", "x"}, exitUsage, "", "--tls-cert and --tls-key go together"},
		{[]string{"authserver", "--dev-user", "me", "--store-timeout", "0"}, exitUsage, "", "--store-timeout must be positive"},
		{[]string{"serve", "--scope", "x"}, exitUsage, "", "need --issuer"},
		{[]string{"serve", "--issuer", "http://127.0.0.1:1"}, exitUsage, "", "give --addr too"},
		{[]string{"serve", "--max-argument-depth", "0"}, exitUsage, "", "--max-argument-depth must be at least 1"},
		{[]string{"serve", "--max-validation-work", "0"}, exitUsage, "", "--max-validation-work must be at least 1"},
		{[]string{"client", "--client-secret", "s", "http://127.0.0.1:1/mcp"}, exitUsage, "", "--client-secret needs --client-id"},
		{[]string{"nope"}, exitUsage, "", `unknown command "nope"`},
		{[]string{"version"}, exitOK, "mcpstack " + version, ""},
		{[]string{"--version"}, exitOK, "MCP protocol revisions: 2025-11-25,", ""},
		{[]string{"-version"}, exitOK, "mcpstack " + version, ""},
		{[]string{"version", "x"}, exitUsage, "", "takes no arguments"},
		{[]string{"demo", "--help"}, exitOK, "", "Examples:"},
		{[]string{"serve", "--help"}, exitOK, "", "--root DIR"},
		{[]string{"serve", "--help"}, exitOK, "", "-idle-timeout DURATION\n    \tclose a keep-alive connection idle for DURATION (0: never) (default 2m0s)"},
		{[]string{"serve", "--help"}, exitOK, "", "(default 30s)\n  -redis URL"},        // --read-timeout
		{[]string{"serve", "--help"}, exitOK, "", "(default 2s)\n  -request-state-ttl"}, // --redis-timeout
		{[]string{"help", "authserver"}, exitOK, "-redis-prefix PREFIX", ""},
		{[]string{"serve", "--help"}, exitOK, "", "(default 1024)\n  -max-form-bytes"},        // --max-connections
		{[]string{"serve", "--help"}, exitOK, "", "(default 10000)\n  -max-subscription-uri"}, // --max-sessions
		{[]string{"serve", "--help"}, exitOK, "", "(default 10s)\n  -state-key-file"},         // --shutdown-timeout
		{[]string{"serve", "--help"}, exitOK, "", "(default 25s)\n  -listen-queue"},           // --listen-keepalive
		{[]string{"serve", "--help"}, exitOK, "", "(default 64)\n  -max-active-tasks"},        // --listen-queue
		{[]string{"serve", "--listen-queue", "0"}, exitUsage, "", "--listen-queue must be positive"},
		{[]string{"serve", "--help"}, exitOK, "", "(default 268435456)\n  -max-connections"}, // --max-buffered-bytes
		{[]string{"help", "authserver"}, exitOK, "-write-timeout DURATION", ""},
		{[]string{"serve", "--stdio", "--addr", ":0"}, exitUsage, "", "exclude each other"},
		{[]string{"serve", "--root", "/nonexistent/dir"}, exitUsage, "", "is not a directory"},
		{[]string{"client", "--help"}, exitOK, "", "complete prompt NAME ARG VALUE"},
		{[]string{"client"}, exitUsage, "", "give a server URL"},
		{[]string{"client", "tools"}, exitUsage, "", `"tools" is not an http or https URL`},
		{[]string{"client", "ftp://x/mcp"}, exitUsage, "", "not an http or https URL"},
		{[]string{"client", "http://127.0.0.1:1/mcp", "frobnicate"}, exitUsage, "", `unknown action "frobnicate"`},
		{[]string{"client", "http://127.0.0.1:1/mcp", "call"}, exitUsage, "", "wrong arguments for call"},
		{[]string{"client", "http://127.0.0.1:1/mcp", "complete", "tool", "a", "b", "c"}, exitUsage, "", "wrong arguments for complete"},
		{[]string{"client", "--elicit", "maybe", "http://127.0.0.1:1/mcp"}, exitUsage, "", "--elicit"},
		{[]string{"client", "tools", "--"}, exitUsage, "", "no command after --"},
		{[]string{"client", "--header", "nocolon", "http://127.0.0.1:1/mcp"}, exitUsage, "", "Name: value"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runCmd(t, "", tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stdout, tt.inStdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.inStdout, r.stdout)
			}
			if !strings.Contains(r.stderr, tt.inStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.inStderr, r.stderr)
			}
		})
	}
}

func TestUsageErrorsAreOneLine(t *testing.T) {
	r := runCmd(t, "", "client", "http://127.0.0.1:1/mcp", "call")
	if n := strings.Count(strings.TrimRight(r.stderr, "\n"), "\n"); n != 0 {
		t.Errorf("usage error spans %d lines:\n%s", n+1, r.stderr)
	}
}

func TestConnectFailureExit1(t *testing.T) {
	r := runCmd(t, "", "client", "http://127.0.0.1:1/mcp", "tools")
	if r.code != exitFailure {
		t.Fatalf("exit %d, want 1; stderr %s", r.code, r.stderr)
	}
	if !strings.HasPrefix(r.stderr, "mcpstack client: connecting to http://127.0.0.1:1/mcp failed: ") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr is not one line naming the target:\n%s", r.stderr)
	}
}

// demoSteps runs the demo with args and --json, and returns its steps.
func demoSteps(t *testing.T, args ...string) []string {
	t.Helper()
	r := runCmd(t, "", append([]string{"demo", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var steps []string
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var ev struct{ Event, Step, Detail string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		if ev.Event != "step" || ev.Detail == "" {
			t.Errorf("event %s", sc.Text())
		}
		steps = append(steps, ev.Step)
	}
	return steps
}

func TestDemoStdio(t *testing.T) {
	steps := demoSteps(t, "--stdio")
	want := []string{"start", "initialize", "instructions", "ping", "tools/list", "tools/call", "progress", "progress", "progress", "tools/call", "cancel", "shutdown", "done"}
	if strings.Join(steps, " ") != strings.Join(want, " ") {
		t.Errorf("steps %v, want %v", steps, want)
	}
}

// TestDemoAuthorized checks that the authorized demo shows every step of
// the flow, in order, as its observers saw the requests.
func TestDemoAuthorized(t *testing.T) {
	steps := demoSteps(t)
	want := []string{
		"tls", "start", "start", "start",
		"401", "prm", "as-metadata", "cimd", "authorize", "consent", "redirect", "token",
		"initialize", "tools/list", "tools/call",
		"403", "prm", "as-metadata", "authorize", "consent", "redirect", "token",
		"tools/call", "done",
	}
	if strings.Join(steps, " ") != strings.Join(want, " ") {
		t.Errorf("steps\n %v\nwant\n %v", steps, want)
	}
}

// TestDemoFailureNamesTheStep stops the demo part way (its context ends
// when a step of the first login is reported) and checks that the error
// names the step that could not finish, and why.
func TestDemoFailureNamesTheStep(t *testing.T) {
	// Each case cancels the run when the demo reports the step named; the
	// client is then inside Connect, whatever else is in flight (the
	// scripted browser's redirect, the token exchange), so the failure is
	// initialize's and its reason the cancellation. Cancelling at
	// "redirect" stops the browser's own round trip too: the demo once
	// blamed the browser ("authorize") for the cancellation, depending on
	// which goroutine got there first.
	for _, at := range []string{"redirect", "token"} {
		t.Run(at, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out bytes.Buffer
			rep := &reporter{w: &cancelAfter{w: &out, step: at, cancel: cancel}}
			err := runAuthDemo(ctx, rep, newLogger(io.Discard, 0), false)
			var se *stepError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want a *stepError; output:\n%s", err, err, out.String())
			}
			if se.step != "initialize" || !strings.HasPrefix(err.Error(), `demo failed at step "initialize": `) || !errors.Is(err, context.Canceled) {
				t.Errorf("error %q; output:\n%s", err, out.String())
			}
		})
	}
}

// cancelAfter cancels when a line for step is written.
type cancelAfter struct {
	w      io.Writer
	step   string
	cancel func()
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	if strings.HasPrefix(string(p), c.step+" ") {
		c.cancel()
	}
	return c.w.Write(p)
}

// TestHelpNamesExactlyTheClientActions checks that the top-level help's
// summary of `client` names every action the client accepts and nothing it
// refuses (it once named a "get" action that did not exist).
func TestHelpNamesExactlyTheClientActions(t *testing.T) {
	var summary string
	for _, c := range commands() {
		if c.name == "client" {
			summary = c.summary
		}
	}
	_, list, ok := strings.Cut(summary, ": ")
	if !ok {
		t.Fatalf("client summary %q does not list its actions after a colon", summary)
	}
	named := map[string]bool{}
	for _, a := range strings.Split(list, ", ") {
		named[a] = true
		if err := checkAction(a, nil); err != nil && strings.Contains(err.Error(), "unknown action") {
			t.Errorf("help names action %q, which the client refuses: %v", a, err)
		}
	}
	for _, a := range []string{"info", "ping", "tools", "resources", "templates", "prompts", "call", "read", "prompt", "complete", "watch", "logout"} {
		if !named[a] {
			t.Errorf("help does not name the client action %q", a)
		}
	}
}

// TestHelpProseFitsTheTerminal checks that the paragraphs of each
// command's help, above its flags, are wrapped to 80 columns: a line run
// on past the others reads as a mistake. Usage lines and indented tables
// (actions, examples) are left as they are.
func TestHelpProseFitsTheTerminal(t *testing.T) {
	for _, c := range commands() {
		r := runCmd(t, "", c.name, "--help")
		text := r.stdout + r.stderr
		prose, _, _ := strings.Cut(text, "\nFlags:\n")
		for i, line := range strings.Split(prose, "\n") {
			if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "Usage:") {
				continue
			}
			if n := utf8.RuneCountInString(line); n > 80 {
				t.Errorf("%s --help, line %d has %d columns:\n%s", c.name, i+1, n, line)
			}
		}
	}
}

// commandFlags returns every flag cmd defines, read from the flag set its
// --help walks.
func commandFlags(t *testing.T, cmd string) []*flag.Flag {
	t.Helper()
	var flags []*flag.Flag
	var out, errb bytes.Buffer
	s := &stdio{in: strings.NewReader(""), out: &out, err: &errb, onUsage: func(fs *flag.FlagSet) {
		fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f) })
	}}
	if code := run(context.Background(), []string{cmd, "--help"}, s); code != exitOK || len(flags) == 0 {
		t.Fatalf("%s --help: exit %d, %d flags seen; stderr:\n%s", cmd, code, len(flags), errb.String())
	}
	return flags
}

// TestNumericFlagsRefuseNegative: every count, size, rate and duration
// flag of every command refuses a negative value with a one-line usage
// error naming the flag, unless its usage says what a negative value
// means. The flags are walked, not listed, so a flag added later is
// checked too.
func TestNumericFlagsRefuseNegative(t *testing.T) {
	// The flags where a negative value has a meaning, documented in their
	// usage; any other flag must refuse one.
	negativeMeans := map[string]bool{
		"authserver --registration-per-hour": true,
		"authserver --login-per-minute":      true,
		"authserver --authorize-per-second":  true,
	}
	// Flags that must be among those walked, so that the walk cannot
	// silently find nothing.
	mustSee := map[string]bool{
		"client --timeout": false, "serve --read-timeout": false, "serve --max-sessions": false,
		"serve --redis-max-batch-bytes": false, "serve --max-task-ttl": false,
		"authserver --store-timeout": false, "authserver --write-timeout": false,
	}
	for _, cmd := range []string{"serve", "authserver", "client", "demo"} {
		for _, f := range commandFlags(t, cmd) {
			g, ok := f.Value.(flag.Getter)
			if !ok {
				continue
			}
			var neg string
			switch g.Get().(type) {
			case time.Duration:
				neg = "-1s"
			case int, int64, float64:
				neg = "-1"
			case uint, uint64:
				neg = "-1" // refused by the flag package's parser
			default:
				continue
			}
			key := cmd + " --" + f.Name
			if _, ok := mustSee[key]; ok {
				mustSee[key] = true
			}
			if negativeMeans[key] {
				if !strings.Contains(f.Usage, "negative") {
					t.Errorf("%s: usage does not say what a negative value means: %q", key, f.Usage)
				}
				continue
			}
			t.Run(key, func(t *testing.T) {
				r := runCmd(t, "", cmd, "--"+f.Name+"="+neg)
				if r.code != exitUsage {
					t.Fatalf("%s=%s: exit %d, want %d; stderr %q", key, neg, r.code, exitUsage, r.stderr)
				}
				if !strings.Contains(r.stderr, "-"+f.Name) || strings.Count(r.stderr, "\n") != 1 {
					t.Errorf("%s=%s: stderr is not one line naming the flag: %q", key, neg, r.stderr)
				}
			})
		}
	}
	for key, seen := range mustSee {
		if !seen {
			t.Errorf("%s was not walked as a numeric flag", key)
		}
	}
}
