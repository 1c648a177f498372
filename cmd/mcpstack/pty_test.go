//go:build linux || darwin

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// terminal runs the command in a pseudo-terminal and records its output.
type terminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	seen int // output before this offset has been matched
	done chan struct{}
}

func startTerminal(t *testing.T, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(self(t), args...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, cmd: cmd, tty: tty, done: make(chan struct{})}
	go func() {
		defer close(term.done)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		tty.Close()
	})
	return term
}

// expect waits until the output after the last match holds s.
func (term *terminal) expect(s string) {
	term.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		term.mu.Lock()
		i := strings.Index(term.out.String()[term.seen:], s)
		if i >= 0 {
			term.seen += i + len(s)
		}
		term.mu.Unlock()
		if i >= 0 {
			return
		}
		select {
		case <-term.done:
			term.mu.Lock()
			defer term.mu.Unlock()
			if strings.Contains(term.out.String()[term.seen:], s) {
				return
			}
			term.t.Fatalf("the command ended without writing %q; it wrote:\n%q", s, term.out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	term.mu.Lock()
	defer term.mu.Unlock()
	term.t.Fatalf("no %q after a minute; output:\n%q", s, term.out.String())
}

// send types a line.
func (term *terminal) send(line string) {
	term.t.Helper()
	if _, err := io.WriteString(term.tty, line+"\r"); err != nil {
		term.t.Fatal(err)
	}
}

// wait waits for the command to exit and returns its exit code.
func (term *terminal) wait() int {
	term.t.Helper()
	err := term.cmd.Wait()
	<-term.done
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		term.t.Fatal(err)
	}
	return 0
}

// TestTerminalElicitation answers the ask tool's form at a terminal: the
// default --elicit auto asks because standard input is a terminal.
func TestTerminalElicitation(t *testing.T) {
	term := startTerminal(t, "client", "call", "ask", "--", self(t), "serve")
	term.expect("The server asks: The example server would like to greet you.")
	term.expect("Your name (required): ")
	term.send("")
	term.expect("This field is required.")
	term.expect("Your name (required): ")
	term.send("Grace Hopper")
	term.expect("Favourite colour [1) red, 2) green, 3) blue] (default blue): ")
	term.send("2")
	term.expect("Send these answers? [Y]es, [n]o (decline), [c]ancel: ")
	term.send("y")
	term.expect("Hello, Grace Hopper! green is a fine colour.")
	if code := term.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestTerminalProgressBar shows progress notifications as a bar redrawn
// in place when standard error is a terminal.
func TestTerminalProgressBar(t *testing.T) {
	term := startTerminal(t, "client", "call", "count", `{"n":4,"interval_ms":20}`, "--", self(t), "serve")
	term.expect("\r\x1b[K[########......................]  25% 1/4 counted 1 of 4")
	term.expect("\r\x1b[K[###############...............]  50% 2/4 counted 2 of 4")
	term.expect("\r\x1b[K[#######################.......]  75% 3/4 counted 3 of 4")
	term.expect("\r\x1b[K[##############################] 100% 4/4 counted 4 of 4")
	term.expect("counted to 4")
	if code := term.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}
