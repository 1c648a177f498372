package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
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
	// malformed is set when the server sent something that is not a
	// JSON-RPC message (noticed in the connection's log, see connLog).
	malformed atomic.Bool
	// samplingFailed holds the first error of --sampling-cmd answering
	// the server's sampling request.
	samplingFailed atomic.Pointer[error]
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
	if facts != nil {
		if failed := facts.samplingFailed.Load(); failed != nil {
			why += "; the server asked for a model's answer (sampling), and " + trimLibraryPrefixes(oneLine((*failed).Error()))
		}
	}
	if facts != nil && facts.malformed.Load() {
		if cfg.command != nil {
			why += "; the server wrote something that is not JSON-RPC to its standard output, where a stdio server must write only JSON-RPC messages (its logs go to standard error)"
		} else {
			why += "; the server sent something that is not a JSON-RPC message"
		}
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
		version   *mcp.UnsupportedVersionError
		notMCP    *notMCPError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded) && cfg.timeout > 0:
		return fmt.Sprintf("no answer within --timeout %s; give a longer --timeout", cfg.timeout)
	case errors.As(err, &urlElicit):
		return urlElicitationText(urlElicit)
	case errors.As(err, &rpcErr):
		return fmt.Sprintf("the server answered JSON-RPC error %d: %s%s", rpcErr.Code, rpcErr.Message, rpcHint(rpcErr))
	case errors.Is(err, mcphttp.ErrSessionExpired):
		return "the server ended the session (HTTP 404 to its session id); run the command again for a new session"
	case errors.As(err, &status):
		return statusText(status, cfg)
	case errors.As(err, &notMCP):
		return notMCP.explain(cfg)
	case errors.As(err, &version) && version.Offered == "":
		return "the server's answer to initialize names no protocol version; is it an MCP server?"
	case errors.As(err, &version):
		return fmt.Sprintf("the server speaks MCP revision %s, which this mcpstack does not (it speaks %s); upgrade the older of the two",
			version.Offered, strings.Join(version.Supported, ", "))
	case errors.As(err, &stepUp):
		return fmt.Sprintf("the server still refuses for want of scope %q after %d step-up login(s) (granted %q); the authorization server may not grant that scope to this user",
			strings.Join(stepUp.Scope, " "), stepUp.Attempts, strings.Join(stepUp.Granted, " "))
	case errors.Is(err, authclient.ErrUnsafeURL) && !cfg.allowPrivate:
		return rootMessage(err) + "; for a development setup on private addresses give --allow-private-addresses"
	case errors.Is(err, authclient.ErrNoClient):
		return "the authorization server offers no way to register this client (no dynamic registration, no Client ID Metadata Documents); give --client-id (and --client-secret) of a registered client"
	case errors.As(err, &authHTTP):
		return fmt.Sprintf("%s answered HTTP %d %s during login", authHTTP.URL, authHTTP.StatusCode, http.StatusText(authHTTP.StatusCode))
	case errors.Is(err, exec.ErrNotFound), cfg.command != nil && commandMissing(err):
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

// commandMissing reports the failure to start a stdio server whose
// program does not exist: a path given after -- that names no file. Other
// missing files (an --output directory) are not the command's.
func commandMissing(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Op == "fork/exec" && errors.Is(pe.Err, fs.ErrNotExist)
}

// pipeGone reports an error that means the stdio server's end of a pipe
// is gone: its output closed (the connection ended) or a write found no
// reader (the server exited before reading, EPIPE).
func pipeGone(err error) bool {
	return errors.Is(err, jsonrpc.ErrClosed) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.EOF)
}

// rpcHint is the advice that goes with a JSON-RPC error.
func rpcHint(e *jsonrpc.Error) string {
	if resourceNotFound(e) {
		return " (no such resource; 'resources' and 'templates' list what the server has)"
	}
	switch e.Code {
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
		s += ": " + bodyText(e.Message)
	}
	switch {
	case e.StatusCode == http.StatusNotFound:
		return fmt.Sprintf("the server has no MCP endpoint at path %s (%s); %s", endpointPath(cfg), s, endpointHint(cfg))
	case e.StatusCode == http.StatusMethodNotAllowed, e.StatusCode == http.StatusNotImplemented:
		// A web server that serves pages, not MCP, refuses the POST.
		return fmt.Sprintf("the server does not take MCP's POST requests at path %s (%s); is this the MCP endpoint? %s", endpointPath(cfg), s, endpointHint(cfg))
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

// endpointPath is the path of the URL the client was given.
func endpointPath(cfg *clientConfig) string {
	if u, err := url.Parse(cfg.url); err == nil && u.Path != "" {
		return u.Path
	}
	return "/"
}

// endpointHint is the advice for a URL that is not an MCP endpoint.
func endpointHint(cfg *clientConfig) string {
	if endpointPath(cfg) == "/mcp" {
		return "check the host and port"
	}
	return "MCP servers usually serve it at /mcp"
}

// htmlTitle finds an HTML page's title.
var htmlTitle = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

// bodyText is an answer's body as one line: an HTML page is named by its
// title rather than printed as markup.
func bodyText(body string) string {
	trimmed := strings.ToLower(strings.TrimSpace(body))
	if !strings.HasPrefix(trimmed, "<!doctype html") && !strings.HasPrefix(trimmed, "<html") {
		return oneLine(body)
	}
	if m := htmlTitle.FindStringSubmatch(body); m != nil && oneLine(m[1]) != "" {
		return fmt.Sprintf("an HTML page titled %q", oneLine(html.UnescapeString(m[1])))
	}
	return "an HTML page"
}

// notMCPError is a 200 answer to a POST whose Content-Type is neither of
// the two an MCP endpoint answers with (application/json,
// text/event-stream): a web page or another API at the URL.
type notMCPError struct {
	contentType string
	body        string // the start of the body
}

func (e *notMCPError) Error() string {
	return fmt.Sprintf("the answer's Content-Type is %q, not application/json or text/event-stream", e.contentType)
}

func (e *notMCPError) explain(cfg *clientConfig) string {
	what := fmt.Sprintf("an answer of type %q", e.contentType)
	if b := bodyText(e.body); strings.HasPrefix(b, "an HTML page") {
		what = b
	}
	return fmt.Sprintf("the server answered with %s, not MCP (application/json or text/event-stream) at path %s; is this the MCP endpoint? %s",
		what, endpointPath(cfg), endpointHint(cfg))
}

// mcpAnswers is an http.RoundTripper that refuses, with a notMCPError, a
// successful answer to a POST that no MCP endpoint would give, so that
// the client can say the URL is not an MCP endpoint.
type mcpAnswers struct{ base http.RoundTripper }

// maxNotMCPBody bounds what is read of such an answer to name it.
const maxNotMCPBody = 4096

func (t mcpAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if ct == "" || mt == "application/json" || mt == "text/event-stream" {
		return resp, nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxNotMCPBody))
	resp.Body.Close()
	return nil, &notMCPError{contentType: ct, body: string(b)}
}

// connLog is the slog.Handler of the client's connection. It notes in
// facts what the error line will say: a message from the server that is
// not JSON-RPC (code -32700), and keeps those reports, and that of the
// failure of --sampling-cmd, off the terminal below -v, since the error
// line says them.
type connLog struct {
	slog.Handler
	facts   *sessionFacts
	verbose bool
}

func (h *connLog) Handle(ctx context.Context, r slog.Record) error {
	noted := false
	r.Attrs(func(a slog.Attr) bool {
		switch {
		case a.Key == "code" && a.Value.Kind() == slog.KindInt64 && a.Value.Int64() == jsonrpc.CodeParseError:
			h.facts.malformed.Store(true)
			noted = true
		case a.Key == "method" && a.Value.String() == "sampling/createMessage" && h.facts.samplingFailed.Load() != nil:
			noted = true
		}
		return !noted
	})
	if noted && !h.verbose {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *connLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &connLog{Handler: h.Handler.WithAttrs(attrs), facts: h.facts, verbose: h.verbose}
}

func (h *connLog) WithGroup(name string) slog.Handler {
	return &connLog{Handler: h.Handler.WithGroup(name), facts: h.facts, verbose: h.verbose}
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
// went through. A node that wraps several errors ends the walk. A
// package's prefix that the innermost message itself carries ("mcp: ",
// "jsonrpc: ") is dropped too: the person at the terminal did not call
// those packages.
func rootMessage(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return trimLibraryPrefixes(oneLine(err.Error()))
		}
		err = next
	}
}

// libraryPrefixes are the prefixes mcpstack's packages put on their
// errors.
var libraryPrefixes = []string{"mcp: ", "jsonrpc: ", "authclient: ", "oauth: ", "auth: ", "netguard: ", "jsonschema: "}

// trimLibraryPrefixes drops the library prefixes that begin msg.
func trimLibraryPrefixes(msg string) string {
	for {
		trimmed := msg
		for _, p := range libraryPrefixes {
			trimmed = strings.TrimPrefix(trimmed, p)
		}
		if trimmed == msg {
			return msg
		}
		msg = trimmed
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

// resourceNotFound reports whether e says that resources/read found no
// resource: -32002 before revision 2026-07-28, -32602 with the uri in the
// error data since (server/resources, "Error Handling", which asks
// clients to accept both).
func resourceNotFound(e *jsonrpc.Error) bool {
	switch e.Code {
	case mcp.CodeResourceNotFound:
		return true
	case jsonrpc.CodeInvalidParams:
		var data struct {
			URI *string `json:"uri"`
		}
		return json.Unmarshal(e.Data, &data) == nil && data.URI != nil
	}
	return false
}
