// Command mcpstack is the command line of the mcpstack MCP library.
//
// Usage:
//
//	mcpstack demo [--json]            walk the authorization flow end to end and print each step
//	mcpstack client [flags] TARGET …  talk to an MCP server: info, tools, call, read, prompt, complete, watch, …
//	mcpstack serve [flags]            run the example MCP server (stdio, or HTTP with --addr)
//	mcpstack authserver [flags]       run the embedded OAuth 2.1 authorization server
//	mcpstack version                  print the version and the protocol revisions spoken (also --version)
//	mcpstack help [COMMAND]           print help
//
// Every command takes --help, which shows its flags and examples, and -v,
// which logs debug messages to standard error.
//
// Exit codes: 0 success; 1 failure (one line on standard error says what
// failed and why); 2 usage error; 3 the server answered, but with an error
// (a JSON-RPC error, or a tool result with isError); 130 interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	goredislog "github.com/redis/go-redis/v9/logging"
	"golang.org/x/term"

	"github.com/mcpstack/mcpstack/mcp"
)

const version = "0.1.0-dev"

// Exit codes.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitServerError = 3
	exitInterrupted = 130
)

func main() {
	// go-redis logs each failed dial to standard error itself, several
	// lines before our one-line error; it has no per-client option, so
	// its package-level logger is silenced here, once, for the process
	// (never in a library package: an embedding program keeps its own).
	goredislog.Disable()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	os.Exit(code)
}

// stdio holds a command's standard streams. Tests give buffers; a stream
// is a terminal only when it is an *os.File attached to one.
type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
	// onUsage, when set (by tests only), is called with a command's
	// complete flag set when it prints its usage (--help), so that a
	// test can walk every flag a command defines.
	onUsage func(*flag.FlagSet)
}

// isTerminal reports whether s is an *os.File attached to a terminal.
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// errUsage marks a command line error: exit code 2.
var errUsage = errors.New("usage")

// errServer marks an answer that was an error: exit code 3.
var errServer = errors.New("the server answered with an error")

// usageErrorf returns a usage error with a message.
func usageErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, io *stdio) error
}

func commands() []command {
	return []command{
		{"demo", "walk MCP authorization end to end over HTTPS and print each step", demoCmd},
		{"client", "talk to an MCP server: info, ping, tools, resources, templates, prompts, call, read, prompt, complete, watch, logout", clientCmd},
		{"serve", "run the example MCP server (stdio, or HTTP with --addr)", serveCmd},
		{"authserver", "run the embedded OAuth 2.1 authorization server", authserverCmd},
		{"version", "print the version and the protocol revisions spoken", versionCmd},
		{"help", "print help about a command", helpCmd},
	}
}

func run(ctx context.Context, args []string, s *stdio) int {
	if len(args) == 0 {
		usage(s.err)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	case "-version", "--version":
		name = "version"
	}
	var cmd *command
	for _, c := range commands() {
		if c.name == name {
			cmd = &c
			break
		}
	}
	if cmd == nil {
		fmt.Fprintf(s.err, "mcpstack: unknown command %q (run 'mcpstack help')\n", args[0])
		return exitUsage
	}
	err := cmd.run(ctx, args[1:], s)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsage):
		if msg := strings.TrimPrefix(err.Error(), errUsage.Error()+": "); msg != errUsage.Error() {
			fmt.Fprintf(s.err, "mcpstack %s: %s (run 'mcpstack %s --help')\n", cmd.name, msg, cmd.name)
		}
		return exitUsage
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		fmt.Fprintf(s.err, "mcpstack %s: interrupted\n", cmd.name)
		return exitInterrupted
	case errors.Is(err, errServer):
		fmt.Fprintf(s.err, "mcpstack %s: %s\n", cmd.name, oneLine(err.Error()))
		return exitServerError
	default:
		fmt.Fprintf(s.err, "mcpstack %s: %s\n", cmd.name, oneLine(err.Error()))
		return exitFailure
	}
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func usage(w io.Writer) {
	fmt.Fprint(w, "mcpstack: a toolkit for the Model Context Protocol (revision 2025-11-25).\n\nUsage:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  mcpstack %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Run 'mcpstack COMMAND --help' for a command's flags and examples.

Exit codes:
  0    success
  1    failure; one line on standard error says what failed and why
  2    usage error
  3    the server answered with an error (JSON-RPC error, or a tool result with isError)
  130  interrupted
`)
}

func versionCmd(ctx context.Context, args []string, s *stdio) error {
	fs := newFlagSet("version", s, "mcpstack version", "Prints the version of mcpstack.", "  mcpstack version")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("version takes no arguments")
	}
	fmt.Fprintf(s.out, "mcpstack %s\n", moduleVersion())
	revs := mcp.SupportedProtocolVersions()
	fmt.Fprintf(s.out, "MCP protocol revisions: %s (newest first)\n", strings.Join(revs, ", "))
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(s.out, "built with %s\n", bi.GoVersion)
	}
	return nil
}

// moduleVersion is the version of the module the binary was built from:
// the tag or pseudo-version that `go install …@version` records, or, for a
// build from a checkout (where the module version is "(devel)"), the
// development version with the VCS revision when the build recorded one.
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v := version
	for _, st := range bi.Settings {
		if st.Key == "vcs.revision" && len(st.Value) >= 12 {
			v += "+" + st.Value[:12]
		}
	}
	return v
}

func helpCmd(ctx context.Context, args []string, s *stdio) error {
	if len(args) == 0 {
		usage(s.out)
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] && c.name != "help" {
			// A command's --help prints its usage to its error stream;
			// asked for by help, the usage goes to standard output.
			return c.run(ctx, []string{"--help"}, &stdio{in: s.in, out: s.out, err: s.out})
		}
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(s.out)
		return nil
	}
	return usageErrorf("no command %q", args[0])
}

// newFlagSet returns a flag set whose usage shows the synopsis, the
// description, the flags and the examples.
func newFlagSet(name string, s *stdio, synopsis, description, examples string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() {
		if s.onUsage != nil {
			s.onUsage(fs)
		}
		w := fs.Output()
		fmt.Fprintf(w, "Usage: %s\n\n%s\n", synopsis, strings.TrimSpace(description))
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprint(w, "\nFlags:\n")
			fs.PrintDefaults()
		}
		if examples != "" {
			fmt.Fprintf(w, "\nExamples:\n%s\n", strings.TrimRight(examples, "\n"))
		}
	}
	return fs
}

// newLogger returns a logger to w: warnings and errors by default, info
// with -v, debug with -v -v (or -vv).
func newLogger(w io.Writer, verbosity int) *slog.Logger {
	level := slog.LevelWarn
	switch {
	case verbosity >= 2:
		level = slog.LevelDebug
	case verbosity == 1:
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// verbosity is a flag.Value counting -v flags: -v is 1, -v -v or -vv=true
// is 2.
type verbosity int

func (v *verbosity) String() string   { return fmt.Sprint(int(*v)) }
func (v *verbosity) IsBoolFlag() bool { return true }
func (v *verbosity) Set(s string) error {
	switch s {
	case "true":
		*v++
	case "false":
		*v = 0
	default:
		return errors.New("-v takes no value; repeat it for more detail")
	}
	return nil
}

// addVerbose registers -v on fs.
func addVerbose(fs *flag.FlagSet) *verbosity {
	v := new(verbosity)
	fs.Var(v, "v", "log more to standard error: -v for info, -v -v for debug")
	return v
}

// parseFlags parses args with fs. --help prints the usage; any other
// mistake is a one-line usage error, without the whole usage.
func parseFlags(fs *flag.FlagSet, args []string) error {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		usage()
		return err
	case err != nil:
		return usageErrorf("%v", err)
	}
	return refuseNegative(fs)
}

// refuseNegative returns a usage error naming the first numeric flag set
// to a negative value, unless the flag's usage says what a negative value
// means (as --login-per-minute's "negative: no limit" does): a negative
// count, size or duration is otherwise a mistake, and would silently act
// as zero or as no bound at all.
func refuseNegative(fs *flag.FlagSet) error {
	var bad string
	fs.Visit(func(f *flag.Flag) {
		if bad == "" && isNegative(f.Value) && !strings.Contains(f.Usage, "negative") {
			bad = f.Name
		}
	})
	if bad != "" {
		return usageErrorf("--%s cannot be negative", bad)
	}
	return nil
}

// isNegative reports whether v is a number below zero (the flag package's
// values answer their number through flag.Getter).
func isNegative(v flag.Value) bool {
	g, ok := v.(flag.Getter)
	if !ok {
		return false
	}
	switch n := g.Get().(type) {
	case int:
		return n < 0
	case int64:
		return n < 0
	case time.Duration:
		return n < 0
	case float64:
		return n < 0
	}
	return false
}
