package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/internal/cors"
	"github.com/mcpstack/mcpstack/jsonschema"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/oauth"
)

const serveDescription = `
Runs the example MCP server. Its tools:

  echo        repeats the text it is given
  count       counts slowly, reporting progress; stops when cancelled
  time        the current time, in a time zone of your choice
  fetch       fetches an http(s) URL: 1 MiB and 15 seconds at most, public
              addresses only unless --fetch-private
  ask         asks the user questions through elicitation
  list_files  lists a directory under --root (only with --root)
  read_file   reads a file under --root (only with --root); paths cannot
              leave the root, through ".." or through symbolic links
  whoami_upstream
              who the caller is at the identity provider the authorization
              server signed them in with (only with --upstream-issuer): the
              server obtains the caller's upstream token from --issuer by
              token exchange and calls the provider's user-info endpoint

With --root, the files under it are also resources (the first 100 listed,
any of them through the template file://ROOT/{+path}); subscribers are
told when a listed file changes. Prompts: haiku (topic, season), and
summarize_file (path, style) with --root; their arguments and the
template's path complete.

With --cors-origin, pages on that origin may use the HTTP server from a
browser, as a browser-based MCP client (an inspector in a web page) does:
the preflight is answered, and the answers, 401 challenges included, carry
the CORS headers. No origin is allowed by default.

With --issuer, the HTTP server accepts only requests with a valid access
token (a JWT from that issuer whose audience is --audience), publishes its
protected resource metadata, and answers 401 or 403 with the challenge that
lets clients log in or step up their scopes. The server speaks plain HTTP,
so with --issuer a non-loopback --addr is refused unless
--allow-plain-http says a proxy in front terminates TLS.

Over stdio (the default), protocol messages use standard input and output
and logs go to standard error. With --addr, the server speaks Streamable
HTTP at http://ADDR/mcp; it binds to 127.0.0.1 unless told otherwise.

The HTTP server bounds what a client can hold: connections (--max-connections;
at the limit an idle keep-alive connection is closed to make room, and with
none idle the new connection gets 503), the time a connection may stay idle,
a request body may take to arrive and each write may take (one answer, or
one event of a stream: streams themselves may last), the sessions open
(--max-sessions: 503 past it) and the requests of a session waiting for a
handler (--max-queued-requests: a JSON-RPC error -32010 past it).

On SIGINT or SIGTERM it stops taking new sessions and requests (503 with
Retry-After), lets the calls in flight finish within --shutdown-timeout,
then ends the streams cleanly after their last event and exits: 0 when all
work finished, 1 when some had to be cut.
`

const serveExamples = `  mcpstack serve                                # stdio
  mcpstack serve --root ~/notes                 # stdio, with file tools
  mcpstack serve --addr 127.0.0.1:8080          # Streamable HTTP at /mcp
  mcpstack serve --addr 127.0.0.1:8080 --issuer http://127.0.0.1:9000 \
      --scope mcp:tools --tool-scope fetch=mcp:admin   # with: mcpstack authserver --dev-user me --scope 'mcp:tools mcp:admin'
  mcpstack serve --addr 127.0.0.1:8080 --cors-origin http://localhost:6274
  mcpstack client http://127.0.0.1:8080/mcp tools
  mcpstack client tools -- mcpstack serve --root .`

// serveOptions configure the example server.
type serveOptions struct {
	root         string
	fetchPrivate bool
	logger       *slog.Logger
	maxQueued    int // ServerOptions.MaxQueuedRequests
	// maxArgumentDepth bounds the nesting of tools/call arguments
	// (jsonschema.Limits.MaxInstanceDepth); zero means its default.
	maxArgumentDepth int
	// maxValidationWork bounds the estimated cost of validating tools/call
	// arguments (jsonschema.Limits.MaxValidationWork); zero means its
	// default.
	maxValidationWork int
	limits            *streamLimits // nil means the library's defaults
	state             *stateFlags   // nil means the library's defaults
	// upstream, if set, offers whoami_upstream.
	upstream *upstreamTool
	// announce, if set, decides whether this process announces a change
	// of a file under root (see fileResources.watch).
	announce func(ctx context.Context, uri, version string) bool
	// taskStore keeps the tasks; nil means in memory (with --redis, the
	// store the replicas share).
	taskStore mcp.TaskStore
}

func serveCmd(ctx context.Context, args []string, s *stdio) error {
	fs := newFlagSet("serve", s, "mcpstack serve [--stdio | --addr HOST:PORT] [--root DIR] [flags]", serveDescription, serveExamples)
	_ = fs.Bool("stdio", false, "serve over standard input and output (the default without --addr)")
	addr := fs.String("addr", "", "serve Streamable HTTP at http://`HOST:PORT`/mcp (a port alone binds 127.0.0.1)")
	root := fs.String("root", "", "offer list_files and read_file for the files under `DIR`")
	plainHTTP := fs.Bool("allow-plain-http", false, allowPlainHTTPUsage+" (with --issuer)")
	fetchPrivate := fs.Bool("fetch-private", false, "let the fetch tool reach loopback and private addresses")
	maxArgDepth := fs.Int("max-argument-depth", jsonschema.DefaultMaxInstanceDepth, "refuse tool arguments whose arrays and objects nest deeper than `N` levels, before validating them")
	maxWork := fs.Int("max-validation-work", jsonschema.DefaultMaxValidationWork, "refuse tool arguments whose validation is estimated to cost more than `N` units (a unit is about one subschema applied to one value, half a microsecond), before validating them")
	var prot protection
	fs.StringVar(&prot.issuer, "issuer", "", "accept only access tokens (JWT) from the authorization server `URL` (with --addr)")
	fs.StringVar(&prot.audience, "audience", "", "this server's resource `URI`, the tokens' audience (default http://ADDR/mcp)")
	fs.Int64Var(&prot.maxForm, "max-form-bytes", auth.DefaultMaxFormBytes, "with --issuer, refuse a form-encoded body longer than `N` bytes before the token is checked")
	fs.Func("scope", "require `SCOPE` for every request (repeatable, or space-separated)", func(v string) error {
		prot.scopes = append(prot.scopes, strings.Fields(v)...)
		return nil
	})
	fs.Func("tool-scope", "require `TOOL=SCOPE` to call TOOL (repeatable)", func(v string) error {
		tool, scope, ok := strings.Cut(v, "=")
		if !ok || tool == "" || scope == "" {
			return errors.New("want TOOL=SCOPE")
		}
		if prot.toolScopes == nil {
			prot.toolScopes = map[string][]string{}
		}
		prot.toolScopes[tool] = append(prot.toolScopes[tool], strings.Fields(scope)...)
		return nil
	})
	fs.Func("cors-origin", "let pages on `ORIGIN` (scheme://host[:port]) use the HTTP server from a browser (repeatable)", func(v string) error {
		if v == "*" {
			return errors.New(`list the origins: "*" is not allowed`)
		}
		if _, err := cors.NormalizeOrigin(v); err != nil {
			return errors.New("want scheme://host[:port] with http or https")
		}
		prot.corsOrigins = append(prot.corsOrigins, v)
		return nil
	})
	rx := addRSExchangeFlags(fs)
	lim := addHTTPLimitFlags(fs)
	maxSessions := fs.Int("max-sessions", mcphttp.DefaultMaxSessions, "keep at most `N` sessions open; past them, a new one gets 503 (0: no limit)")
	maxQueued := fs.Int("max-queued-requests", mcp.DefaultMaxQueuedRequests, "let at most `N` requests of a session wait for one of its 64 handler slots; past them, a request gets a JSON-RPC error (-32010)")
	slim := addStreamLimitFlags(fs)
	state := addStateFlags(fs)
	rf := addServeRedisFlags(fs)
	tf := addTaskFlags(fs) // see serve_tasks.go
	v := addVerbose(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	if err := lim.check(); err != nil {
		return err
	}
	if err := slim.check(); err != nil {
		return err
	}
	if err := tf.check(); err != nil {
		return err
	}
	if err := state.load(); err != nil {
		return err
	}
	if *maxSessions < 0 || *maxQueued < 1 {
		return usageErrorf("--max-sessions cannot be negative, and --max-queued-requests must be positive")
	}
	if prot.corsOrigins != nil && *addr == "" {
		return usageErrorf("--cors-origin is for the HTTP server: give --addr too")
	}
	stdioSet := false
	fs.Visit(func(f *flag.Flag) { stdioSet = stdioSet || f.Name == "stdio" })
	if stdioSet && *addr != "" {
		return usageErrorf("--stdio and --addr exclude each other")
	}
	if prot.issuer == "" && (prot.audience != "" || prot.scopes != nil || prot.toolScopes != nil) {
		return usageErrorf("--audience, --scope and --tool-scope need --issuer")
	}
	if prot.issuer != "" && *addr == "" {
		return usageErrorf("--issuer protects the HTTP server: give --addr too")
	}
	if err := rf.check(*addr); err != nil {
		return err
	}
	logger := newLogger(s.err, int(*v))
	if *maxArgDepth < 1 {
		return usageErrorf("--max-argument-depth must be at least 1")
	}
	if *maxWork < 1 {
		return usageErrorf("--max-validation-work must be at least 1")
	}
	opts := serveOptions{fetchPrivate: *fetchPrivate, logger: logger, maxQueued: *maxQueued, maxArgumentDepth: *maxArgDepth, maxValidationWork: *maxWork, limits: slim, state: state}
	ut, err := rx.build(prot.issuer)
	if err != nil {
		return err
	}
	opts.upstream = ut
	if *root != "" {
		abs, err := filepath.Abs(*root)
		if err != nil {
			return fmt.Errorf("--root: %w", err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return usageErrorf("--root %s is not a directory", *root)
		}
		opts.root = abs
	}
	shared, err := rf.open(ctx, tf) // see serve_redis.go
	if err != nil {
		return err
	}
	defer shared.close()
	if shared != nil {
		opts.announce = shared.announce
	}
	opts.taskStore = tf.store(shared)
	if err := state.fromRedis(ctx, shared); err != nil {
		return err
	}
	srv, err := exampleServer(ctx, opts)
	if err != nil {
		return err
	}
	if shared != nil {
		stop, err := srv.ShareChanges(ctx, shared.bus)
		if err != nil {
			return fmt.Errorf("--redis: %w", err)
		}
		defer stop()
	}
	if *addr == "" {
		if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
			return fmt.Errorf("serving over stdio: %w", err)
		}
		return nil
	}
	ln, err := listen(*addr)
	if err != nil {
		return err
	}
	endpoint := fmt.Sprintf("http://%s/mcp", ln.Addr())
	mo := mcphttp.Options{
		Logger:       logger,
		CORS:         prot.cors(),
		ReadTimeout:  mcpTimeout(lim.read),
		WriteTimeout: mcpTimeout(lim.write),
		MaxSessions:  noBound(*maxSessions),
	}
	slim.handler(&mo)
	if shared != nil {
		// Sessions work on every replica: the store is also the
		// directory and the carrier between replicas.
		mo.EventStore, mo.Replicas = shared.events, shared.events
		mo.ReplicaRecheck = rf.replicaRecheck()
		// A request with a made-up session id gets 404 before any Redis
		// read: the replicas share these secrets.
		mo.SessionIDKeys = state.secrets
	}
	var h http.Handler
	var mh *mcphttp.Handler
	if prot.issuer == "" {
		h, mh = httpHandler(srv, mo)
	} else {
		if err := checkPlainHTTP(ln, false, *plainHTTP, "serve it behind a TLS-terminating proxy"); err != nil {
			ln.Close()
			return err
		}
		if prot.audience == "" {
			prot.audience = endpoint
		}
		h, mh, err = protectedHandler(srv, prot, nil, mo)
		if err != nil {
			ln.Close()
			return err
		}
	}
	fmt.Fprintf(s.err, "mcpstack serve: MCP at %s\n", endpoint)
	return newHTTPServer(ln, nil, h, lim, logger, mh.Shutdown).serve(ctx)
}

// protection is how the HTTP server checks access tokens, and which
// origins may call it from a browser.
type protection struct {
	issuer      string
	audience    string
	scopes      []string
	toolScopes  map[string][]string
	corsOrigins []string
	maxForm     int64 // auth.Options.MaxFormBytes
}

// cors returns the CORS options of p's origins, or nil for none.
func (p protection) cors() *mcphttp.CORSOptions {
	if len(p.corsOrigins) == 0 {
		return nil
	}
	return &mcphttp.CORSOptions{AllowedOrigins: p.corsOrigins}
}

// protectedHandler serves srv at /mcp behind the resource-server
// middleware, and the protected resource metadata at its well-known
// paths. Tokens are JWTs from p.issuer for p.audience, checked with the
// keys the issuer's metadata names; hc fetches them (nil means
// http.DefaultClient). mo are the MCP handler's options (their Identity
// and CORS are set here); the MCP handler is returned too, for its
// Shutdown.
func protectedHandler(srv *mcp.Server, p protection, hc *http.Client, mo mcphttp.Options) (http.Handler, *mcphttp.Handler, error) {
	logger := mo.Logger
	audience, err := oauth.CanonicalResource(p.audience)
	if err != nil {
		return nil, nil, usageErrorf("--audience %q: %v", p.audience, err)
	}
	verifier, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: p.issuer, Audience: audience, HTTPClient: hc})
	if err != nil {
		return nil, nil, fmt.Errorf("token verifier: %w", err)
	}
	supported := p.scopes
	for _, s := range p.toolScopes {
		supported = oauth.MergeScopes(supported, s)
	}
	mw, err := auth.NewMiddleware(auth.Options{
		Resource:     audience,
		Verifier:     auth.NewCache(verifier, auth.CacheOptions{}),
		Scopes:       p.scopes,
		ToolScopes:   p.toolScopes,
		MaxFormBytes: p.maxForm,
		Logger:       logger,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("authorization: %w", err)
	}
	mux := http.NewServeMux()
	if err := auth.RegisterMetadata(mux, oauth.ProtectedResourceMetadata{
		Resource:               audience,
		AuthorizationServers:   []string{p.issuer},
		ScopesSupported:        supported,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "mcpstack example server",
	}); err != nil {
		return nil, nil, fmt.Errorf("protected resource metadata: %w", err)
	}
	u, err := url.Parse(audience)
	if err != nil {
		return nil, nil, err
	}
	path := u.Path
	if path == "" {
		path = "/"
	}
	// CORS stands in front of the middleware, so that its 401 and 403
	// challenges are readable from the page.
	co := p.cors()
	mo.Identity, mo.CORS = auth.SessionIdentity, co
	mh := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return srv }, &mo)
	mux.Handle(path, mcphttp.CORS(mw.Wrap(mh), co))
	return mux, mh, nil
}

// listen listens on addr; a port alone (":8080" or "8080") means
// 127.0.0.1.
func listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = "", addr
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, &listenError{addr: addr, err: err}
	}
	return ln, nil
}

// listenError is a failure to listen, said with what to do rather than
// in net's words ("listen tcp ADDR: bind: …", which repeats the address).
type listenError struct {
	addr string
	err  error
}

func (e *listenError) Unwrap() error { return e.err }

func (e *listenError) Error() string {
	why := rootMessage(e.err)
	switch {
	case errors.Is(e.err, syscall.EADDRINUSE):
		why = "the address is already in use (another server listens there); stop it or give another --addr"
	case errors.Is(e.err, syscall.EACCES):
		why = "permission denied (ports below 1024 need privileges); give a port above 1024 in --addr"
	case errors.Is(e.err, syscall.EADDRNOTAVAIL):
		why = "no network interface of this machine has that address; check --addr"
	}
	return fmt.Sprintf("cannot listen on %s: %s", e.addr, why)
}

// httpHandler serves srv's Streamable HTTP endpoint at /mcp with the
// options mo; the MCP handler is returned too, for its Shutdown.
func httpHandler(srv *mcp.Server, mo mcphttp.Options) (http.Handler, *mcphttp.Handler) {
	mux := http.NewServeMux()
	mh := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return srv }, &mo)
	mux.Handle("/mcp", mh)
	return mux, mh
}
