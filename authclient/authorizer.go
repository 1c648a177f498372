package authclient

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/internal/oauthhttp"
)

// An Authorizer takes the user agent through the authorization endpoint and
// brings back the parameters of the redirect: code, state, iss, or error.
type Authorizer interface {
	// RedirectURI is the redirect URI registered for and sent with every
	// authorization request.
	RedirectURI() string
	// Authorize sends the user agent to authURL and returns the query
	// parameters of the redirect to RedirectURI.
	Authorize(ctx context.Context, authURL string) (url.Values, error)
}

// RedirectFollower is an [Authorizer] for authorization servers that answer
// the authorization request at once with a redirect (test servers, and
// servers that already know the user): it GETs the authorization URL without
// following redirects and reads the parameters from the Location header.
type RedirectFollower struct {
	// Redirect is the redirect URI; nothing needs to listen there.
	Redirect string
	// HTTPClient sends the request; nil means http.DefaultClient. Its
	// redirect policy is not used.
	HTTPClient *http.Client
}

// RedirectURI implements [Authorizer].
func (f *RedirectFollower) RedirectURI() string { return f.Redirect }

// Authorize implements [Authorizer].
func (f *RedirectFollower) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	hc := http.DefaultClient
	if f.HTTPClient != nil {
		hc = f.HTTPClient
	}
	noFollow := *hc
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		return nil, fmt.Errorf("authclient: authorization request: %w", err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, oauthhttp.MaxBody))
	resp.Body.Close()
	if resp.StatusCode/100 != 3 {
		return nil, &HTTPError{URL: "authorization endpoint", StatusCode: resp.StatusCode, Body: "expected a redirect"}
	}
	loc, err := resp.Location()
	if err != nil {
		return nil, fmt.Errorf("authclient: authorization response: %w", err)
	}
	want, err := url.Parse(f.Redirect)
	if err != nil {
		return nil, err
	}
	if loc.Scheme != want.Scheme || loc.Host != want.Host || loc.Path != want.Path {
		return nil, fmt.Errorf("authclient: authorization server redirected to %s, not to the redirect URI", loc.Redacted())
	}
	return loc.Query(), nil
}

// LoopbackAuthorizer is an [Authorizer] for command-line programs (RFC 8252
// §7.3): it listens on 127.0.0.1 at a port chosen by the system, opens the
// authorization URL in the user's browser (or prints it), and waits for the
// redirect. Close it when done.
//
// Any local process can send a request to the listener. Only a redirect
// carrying the state of the authorization in progress (the state parameter
// of the authorization URL, which only the browser and the authorization
// server see) is taken; any other request, an error response included, gets
// an error page and is ignored, and the listener goes on waiting for the
// real one until the context of Authorize ends (RFC 6749 §10.12, RFC 9700
// §4.7).
type LoopbackAuthorizer struct {
	ln       net.Listener
	srv      *http.Server
	redirect string
	open     func(string) error

	mu      sync.Mutex
	waiting *pending
}

// pending is the authorization a LoopbackAuthorizer waits for.
type pending struct {
	state string
	ch    chan url.Values // buffered: one value
}

// LoopbackOptions configures [NewLoopbackAuthorizer].
type LoopbackOptions struct {
	// Path is the redirect path; empty means "/callback".
	Path string
	// Headless prints the authorization URL to Output instead of opening a
	// browser.
	Headless bool
	// Output receives the URL in headless mode; nil means no output.
	Output io.Writer
	// Open opens a URL in a browser; nil means [OpenBrowser].
	Open func(url string) error
}

// NewLoopbackAuthorizer starts the redirect listener on 127.0.0.1.
func NewLoopbackAuthorizer(opts LoopbackOptions) (*LoopbackAuthorizer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("authclient: loopback listener: %w", err)
	}
	path := opts.Path
	if path == "" {
		path = "/callback"
	}
	a := &LoopbackAuthorizer{ln: ln, redirect: "http://" + ln.Addr().String() + path}
	switch {
	case opts.Headless:
		out := opts.Output
		a.open = func(u string) error {
			if out != nil {
				_, err := fmt.Fprintf(out, "Open this URL in a browser to authorize:\n\n  %s\n\n", u)
				return err
			}
			return nil
		}
	case opts.Open != nil:
		a.open = opts.Open
	default:
		a.open = OpenBrowser
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+path, a.callback)
	// The listener serves one redirect of a few hundred bytes: a slow
	// local client must not hold it.
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	go a.srv.Serve(ln)
	return a, nil
}

// callback takes the redirect of the authorization in progress, and
// refuses, without ending the wait, any request that does not carry its
// state.
func (a *LoopbackAuthorizer) callback(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	q := r.URL.Query()
	a.mu.Lock()
	p := a.waiting
	match := p != nil && stateMatches(q, p.state)
	if match {
		a.waiting = nil
	}
	a.mu.Unlock()
	switch {
	case p == nil:
		http.Error(w, "No authorization is in progress.", http.StatusBadRequest)
		return
	case !match:
		http.Error(w, "This response does not belong to the authorization in progress (wrong or missing state); it was ignored.", http.StatusBadRequest)
		return
	}
	p.ch <- q
	io.WriteString(w, "Authorization received. You may close this window.\n")
}

// stateMatches reports whether q carries exactly one state parameter,
// equal to want.
func stateMatches(q url.Values, want string) bool {
	got := q["state"]
	return len(got) == 1 && subtle.ConstantTimeCompare([]byte(got[0]), []byte(want)) == 1
}

// RedirectURI implements [Authorizer].
func (a *LoopbackAuthorizer) RedirectURI() string { return a.redirect }

// Authorize implements [Authorizer]. One authorization runs at a time.
// authURL must carry a state parameter (ErrNoState otherwise): the
// listener takes only the redirect that carries it back. Authorize returns
// when that redirect comes or when ctx ends.
func (a *LoopbackAuthorizer) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	if err := checkURL(authURL); err != nil {
		return nil, err
	}
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("authclient: authorization URL: %w", err)
	}
	state := u.Query().Get("state")
	if state == "" {
		return nil, ErrNoState
	}
	p := &pending{state: state, ch: make(chan url.Values, 1)}
	a.mu.Lock()
	if a.waiting != nil {
		a.mu.Unlock()
		return nil, errors.New("authclient: an authorization is already in progress")
	}
	a.waiting = p
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		if a.waiting == p {
			a.waiting = nil
		}
		a.mu.Unlock()
	}()
	if err := a.open(authURL); err != nil {
		return nil, fmt.Errorf("authclient: opening the browser: %w", err)
	}
	select {
	case v := <-p.ch:
		return v, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops the listener.
func (a *LoopbackAuthorizer) Close() error { return a.srv.Close() }

// OpenBrowser opens an https URL (or http to a loopback host) in the user's
// browser, running the platform's opener directly with the URL as its one
// argument, never through a shell.
func OpenBrowser(u string) error {
	if err := checkURL(u); err != nil {
		return err
	}
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
