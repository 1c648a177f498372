// Command mcpstack is the command line of the mcpstack MCP library.
//
// Usage:
//
//	mcpstack demo [--json]     walk an MCP session end to end and print each step
//	mcpstack serve [--stdio]   run the example MCP server over stdio
//	mcpstack version           print the version
//
// Exit codes: 0 success, 1 failure (the message names the step), 2 usage.
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
	"syscall"
)

const version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// errUsage marks a command line error: exit code 2.
var errUsage = errors.New("usage")

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "demo":
		err = demoCmd(ctx, args[1:], stdout, stderr)
	case "serve":
		err = serveCmd(ctx, args[1:], stderr)
	case "version":
		fmt.Fprintln(stdout, "mcpstack", version)
	case "help", "-h", "--help":
		usage(stdout)
	default:
		fmt.Fprintf(stderr, "mcpstack: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage), errors.Is(err, flag.ErrHelp):
		return 2
	default:
		fmt.Fprintln(stderr, "mcpstack:", err)
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `mcpstack: an MCP (Model Context Protocol 2025-11-25) toolkit.

Usage:
  mcpstack demo [--json]     walk an MCP session end to end and print each step
  mcpstack serve [--stdio]   run the example MCP server over stdio
  mcpstack version           print the version

Run 'mcpstack COMMAND --help' for a command's flags.
Exit codes: 0 success, 1 failure, 2 usage error.
`)
}

// newLogger returns a logger to stderr at the level -v asks for.
func newLogger(stderr io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}
