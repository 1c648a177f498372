package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpstack/mcpstack/authclient"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// opError names the step of the client that failed ("tools/call NAME",
// "connecting to URL"): the "what" of the one-line message that
// describeError builds. The library's own prefixes are not repeated.
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string { return e.op + ": " + e.err.Error() }
func (e *opError) Unwrap() error { return e.err }

// opErr wraps err, if not nil, with the step that failed.
func opErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return &opError{op: op, err: err}
}

// describedError is an error rendered for the person at the terminal: its
// Error is the one line main prints; Unwrap keeps the chain, so that the
// exit code (errServer, interruption) is still decided by errors.Is.
type describedError struct {
	msg string
	err error
}

func (e *describedError) Error() string { return e.msg }
func (e *describedError) Unwrap() error { return e.err }

// sessionFacts are what the client saw happen besides the error: they turn
// an opaque end of the connection into a reason.
type sessionFacts struct {
	// exited receives the stdio server's Wait error once it has exited.
	exited chan error
	// stderr keeps the last line the stdio server wrote to its standard
	// error.
	stderr *lastLine
	// samplingRefused is set when the server sent sampling/createMessage
	// and no --sampling-cmd was given to answer it.
	samplingRefused atomic.Bool
}

// exitWait bounds how long describeError waits for a stdio server whose
// output closed to be reaped: the reason is worth a short wait, not a hang.
const exitWait = 2 * time.Second

// describeError renders err as one line that says what failed and what to
// do. It inspects the chain with errors.Is and errors.As only: the
// libraries' messages are never cut apart. A nil err gives nil.
func describeError(err error, cfg *clientConfig, facts *sessionFacts) error {
	if err == nil {
		return nil
	}
	var op *opError
	if !errors.As(err, &op) {
		// The client's own errors (usage, --browser-cmd, …) are already
		// written for the person.
		return err
	}
	why := explainCause(op.err, cfg, facts)
	if facts != nil && facts.samplingRefused.Load() {
		why += "; the server asked for a model's answer (sampling), which is refused without --sampling-cmd COMMAND"
	}
	return &describedError{msg: op.op + " failed: " + why, err: err}
}

// explainCause says why err happened and, when there is one, what to do.
func explainCause(err error, cfg *clientConfig, facts *sessionFacts) string {
	var (
		rpcErr    *jsonrpc.Error
		urlElicit *mcp.URLElicitationRequiredError
		status    *mcphttp.StatusError
		stepUp    *authclient.StepUpError
		authHTTP  *authclient.HTTPError
		dnsErr    *net.DNSError
		netOp     *net.OpError
		certErr   *tls.CertificateVerificationError
		unknownCA x509.UnknownAuthorityError
		exitErr   *exec.ExitError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded) && cfg.timeout > 0:
		return fmt.Sprintf("no answer within --timeout %s; give a longer --timeout", cfg.timeout)
	case errors.As(err, &urlElicit):
		return urlElicitationText(urlElicit)
	case errors.As(err, &rpcErr):
		return fmt.Sprintf("the server answered JSON-RPC error %d: %s%s", rpcErr.Code, rpcErr.Message, rpcHint(rpcErr.Code))
	case errors.Is(err, mcphttp.ErrSessionExpired):
		return "the server ended the session (HTTP 404 to its session id); run the command again for a new session"
	case errors.As(err, &status):
		return statusText(status, cfg)
	case errors.As(err, &stepUp):
		return fmt.Sprintf("the server still refuses for want of scope %q after %d step-up login(s) (granted %q); the authorization server may not grant that scope to this user",
			strings.Join(stepUp.Scope, " "), stepUp.Attempts, strings.Join(stepUp.Granted, " "))
	case errors.Is(err, authclient.ErrUnsafeURL) && !cfg.allowPrivate:
		return rootMessage(err) + "; for a development setup on private addresses give --allow-private-addresses"
	case errors.Is(err, authclient.ErrNoClient):
		return "the authorization server offers no way to register this client (no dynamic registration, no Client ID Metadata Documents); give --client-id (and --client-secret) of a registered client"
	case errors.As(err, &authHTTP):
		return fmt.Sprintf("%s answered HTTP %d %s during login", authHTTP.URL, authHTTP.StatusCode, http.StatusText(authHTTP.StatusCode))
	case errors.Is(err, exec.ErrNotFound), cfg.command != nil && errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("command %q not found; check the command after --", firstWord(cfg))
	case errors.As(err, &exitErr):
		return exitText(exitErr, facts)
	case cfg.command != nil && pipeGone(err):
		return stdioEndText(facts)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("nothing is listening at %s (connection refused); is the server running at this address?", dialTarget(err, cfg))
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("cannot resolve host %q (%s); check the URL", dnsErr.Name, dnsErr.Err)
	case errors.As(err, &certErr), errors.As(err, &unknownCA):
		return "the server's TLS certificate is not trusted: " + rootMessage(err)
	case errors.As(err, &netOp):
		return fmt.Sprintf("network error talking to %s: %v", dialTarget(err, cfg), netOp.Err)
	case errors.Is(err, jsonrpc.ErrClosed):
		return "the server closed the connection"
	}
	return rootMessage(err)
}

// pipeGone reports an error that means the stdio server's end of a pipe
// is gone: its output closed (the connection ended) or a write found no
// reader (the server exited before reading, EPIPE).
func pipeGone(err error) bool {
	return errors.Is(err, jsonrpc.ErrClosed) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.EOF)
}

// rpcHint is the advice that goes with a JSON-RPC error code.
func rpcHint(code int64) string {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return " (the server does not offer this; 'info' lists its capabilities)"
	case jsonrpc.CodeInvalidParams:
		return " (check the name and the arguments; 'tools', 'prompts' and 'templates' list them)"
	}
	return ""
}

// statusText explains an HTTP answer the MCP transport could not use.
func statusText(e *mcphttp.StatusError, cfg *clientConfig) string {
	s := fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + oneLine(e.Message)
	}
	switch {
	case e.StatusCode == http.StatusNotFound:
		path := "/"
		if u, err := url.Parse(cfg.url); err == nil && u.Path != "" {
			path = u.Path
		}
		hint := "MCP servers usually serve it at /mcp"
		if path == "/mcp" {
			hint = "check the host and port"
		}
		return fmt.Sprintf("the server has no MCP endpoint at path %s (%s); %s", path, s, hint)
	case e.StatusCode == http.StatusUnauthorized && cfg.noLogin:
		return s + "; the server wants a login: drop --no-login, or give --header 'Authorization: Bearer TOKEN'"
	case e.StatusCode == http.StatusUnauthorized:
		return s + "; the login did not give a token the server accepts"
	case e.StatusCode == http.StatusForbidden:
		return s + "; the token lacks the rights this needs"
	case e.StatusCode >= 500:
		return "the server failed with " + s + "; see the server's log"
	}
	return "the server answered " + s
}

// stdioEndText explains a stdio server whose output closed: its exit
// status and the last line it wrote to standard error, when known.
func stdioEndText(facts *sessionFacts) string {
	if facts == nil || facts.exited == nil {
		return "the server closed its standard output"
	}
	select {
	case err := <-facts.exited:
		facts.exited <- err // keep it for another look
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return exitText(ee, facts)
		}
		return "the server exited with status 0 before answering" + lastWords(facts)
	case <-time.After(exitWait):
		return "the server closed its standard output but is still running" + lastWords(facts)
	}
}

// exitText describes a server process's exit.
func exitText(ee *exec.ExitError, facts *sessionFacts) string {
	how := fmt.Sprintf("exited with status %d", ee.ExitCode())
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		how = "was killed by signal " + ws.Signal().String()
	}
	return "the server " + how + lastWords(facts)
}

// lastWords is the last standard error line of the stdio server, if any.
func lastWords(facts *sessionFacts) string {
	if facts == nil || facts.stderr == nil {
		return ""
	}
	if l := facts.stderr.get(); l != "" {
		return fmt.Sprintf("; its last line on standard error: %q", l)
	}
	return ""
}

// dialTarget is the address a network error names, else the URL's host.
func dialTarget(err error, cfg *clientConfig) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Addr != nil {
		return op.Addr.String()
	}
	if u, perr := url.Parse(cfg.url); perr == nil {
		return u.Host
	}
	return cfg.target()
}

func firstWord(cfg *clientConfig) string {
	if len(cfg.command) > 0 {
		return cfg.command[0]
	}
	return ""
}

// rootMessage is the message of the innermost error of err's chain: the
// one that says what went wrong, without the prefixes of each layer it
// went through. A node that wraps several errors ends the walk.
func rootMessage(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return oneLine(err.Error())
		}
		err = next
	}
}

// urlElicitationText explains a request refused until the user visits
// pages.
func urlElicitationText(e *mcp.URLElicitationRequiredError) string {
	var urls []string
	for _, el := range e.Data.Elicitations {
		urls = append(urls, el.URL)
	}
	return fmt.Sprintf("the server needs you to visit %s first (%s); then run the command again", strings.Join(urls, " and "), oneLine(e.Message))
}

// lastLine is an io.Writer that passes everything to w and keeps the last
// non-empty line written, for the report of a server that died.
type lastLine struct {
	mu      sync.Mutex
	w       interface{ Write([]byte) (int, error) }
	partial []byte
	last    string
}

// maxLastLine bounds the line kept: a server may write megabytes without
// a newline.
const maxLastLine = 512

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range bytes.SplitAfter(p, []byte("\n")) {
		if len(l.partial) < maxLastLine {
			l.partial = append(l.partial, b[:min(len(b), maxLastLine-len(l.partial))]...)
		}
		if bytes.HasSuffix(b, []byte("\n")) {
			if s := strings.TrimSpace(string(l.partial)); s != "" {
				l.last = s
			}
			l.partial = l.partial[:0]
		}
	}
	return l.w.Write(p)
}

// get returns the last line, or the unfinished one if it is all there is.
func (l *lastLine) get() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := strings.TrimSpace(string(l.partial)); s != "" {
		return s
	}
	return l.last
}
