package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// A Transport makes the message stream of one MCP session. Server.Connect
// and Client.Connect call Connect once per session.
type Transport interface {
	Connect(ctx context.Context) (jsonrpc.Stream, error)
}

// StdioTransport is the server side of the stdio transport: messages are
// read from standard input and written to standard output, one per line.
// Nothing else may be written to standard output; log to standard error.
type StdioTransport struct {
	// MaxMessageSize bounds one inbound message; zero means
	// jsonrpc.DefaultMaxMessageSize.
	MaxMessageSize int
}

// Connect returns a stream over os.Stdin and os.Stdout.
func (t *StdioTransport) Connect(context.Context) (jsonrpc.Stream, error) {
	return jsonrpc.NewLineStream(os.Stdin, os.Stdout, nopCloser{}, t.MaxMessageSize), nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// IOTransport carries newline-delimited messages over any reader and
// writer, such as a pipe or a socket. Close closes Closer, if set.
type IOTransport struct {
	Reader         io.Reader
	Writer         io.Writer
	Closer         io.Closer
	MaxMessageSize int
}

// Connect returns a stream over t's reader and writer.
func (t *IOTransport) Connect(context.Context) (jsonrpc.Stream, error) {
	var c io.Closer = nopCloser{}
	if t.Closer != nil {
		c = t.Closer
	}
	return jsonrpc.NewLineStream(t.Reader, t.Writer, c, t.MaxMessageSize), nil
}

// InMemoryTransports returns a connected pair of transports for a client
// and a server in one process. Each can be connected once.
func InMemoryTransports() (client, server Transport) {
	a, b := jsonrpc.NewPipe()
	return &streamTransport{s: a}, &streamTransport{s: b}
}

type streamTransport struct {
	mu   sync.Mutex
	s    jsonrpc.Stream
	used bool
}

func (t *streamTransport) Connect(context.Context) (jsonrpc.Stream, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.used {
		return nil, errors.New("mcp: in-memory transport already connected")
	}
	t.used = true
	return t.s, nil
}

// CommandTransport is the client side of the stdio transport: it starts a
// server as a child process and talks to it over the child's standard input
// and output.
//
// Closing the session shuts the child down as the protocol asks: close its
// standard input, wait up to TerminateTimeout for it to exit, send SIGTERM,
// wait again, then SIGKILL.
type CommandTransport struct {
	// Command is the server to start. Its Stdin and Stdout must be unset;
	// if its Stderr is unset, the child's standard error is forwarded to
	// this process's standard error.
	Command *exec.Cmd
	// TerminateTimeout is how long each shutdown step waits; zero means 5s.
	TerminateTimeout time.Duration
	// MaxMessageSize bounds one inbound message; zero means
	// jsonrpc.DefaultMaxMessageSize.
	MaxMessageSize int
	// OnExit, if set, is called once when the child has exited, with what
	// exec.Cmd.Wait returned: nil for status 0, an *exec.ExitError for
	// another status or a signal. It runs on the goroutine that waits for
	// the child, before the stream's Close returns; it must not block. A
	// command line uses it to say why a server went away: the connection
	// alone only sees its standard output close.
	OnExit func(err error)
}

// Connect starts the command.
func (t *CommandTransport) Connect(ctx context.Context) (jsonrpc.Stream, error) {
	cmd := t.Command
	if cmd == nil {
		return nil, errors.New("mcp: CommandTransport has no Command")
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("mcp: stdin of %s: %w", cmd.Path, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("mcp: stdout of %s: %w", cmd.Path, err)
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("mcp: start %s: %w", cmd.Path, err)
	}
	timeout := t.TerminateTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	pc := &processCloser{cmd: cmd, stdin: stdin, timeout: timeout, exited: make(chan struct{})}
	go func() {
		pc.waitErr = cmd.Wait()
		if t.OnExit != nil {
			t.OnExit(pc.waitErr)
		}
		close(pc.exited)
	}()
	return jsonrpc.NewLineStream(stdout, stdin, pc, t.MaxMessageSize), nil
}

type processCloser struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	timeout time.Duration
	exited  chan struct{}
	waitErr error
}

// Close shuts the child down: stdin closed, then SIGTERM, then SIGKILL.
func (p *processCloser) Close() error {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
		return p.exitError()
	case <-time.After(p.timeout):
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(p.timeout):
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	return nil
}

func (p *processCloser) exitError() error {
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return fmt.Errorf("mcp: server exited: %w", p.waitErr)
	}
	return nil
}
