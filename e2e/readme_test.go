package e2e

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"go/format"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/memory"
)

// quickstartBlock matches a program of README's library quick start: an
// HTML comment naming it, then a fenced Go block.
var quickstartBlock = regexp.MustCompile("(?s)<!-- quickstart: ([a-z]+) -->\n```go\n(.*?)```")

// TestREADMEQuickStart builds every program of README's "Library quick
// start" in a fresh module (the repository replacing the published
// module, as a user's go.mod would require it) and runs each: the stdio
// client calls the stdio server; the protected server accepts a token for
// its audience and scope only; the login client logs in against our
// authorization server through a stand-in browser. README's code is
// therefore code that compiles and works.
func TestREADMEQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four programs")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	progs := map[string]string{}
	for _, m := range quickstartBlock.FindAllStringSubmatch(string(readme), -1) {
		progs[m[1]] = m[2]
	}
	for _, name := range []string{"greeter", "hello", "protected", "login"} {
		if progs[name] == "" {
			t.Fatalf("README has no quick-start program %q", name)
		}
	}

	// The protected server listens where README says; the test moves it to
	// a free port, the only change made to README's code.
	addr := freeAddr(t)
	progs["protected"] = strings.ReplaceAll(progs["protected"], "127.0.0.1:8080", addr)
	// A stand-in for the system browser: the login client's loopback
	// authorizer runs xdg-open, which this program replaces on PATH. It
	// follows the authorization request's redirects, as a browser would
	// when the user is signed in and the client needs no consent.
	progs["xdg-open"] = fakeBrowser

	dir := t.TempDir()
	gomod := fmt.Sprintf("module quickstart\n\ngo 1.25.0\n\nrequire github.com/mcpstack/mcpstack v0.0.0\n\nreplace github.com/mcpstack/mcpstack => %s\n", root)
	writeFile(t, filepath.Join(dir, "go.mod"), gomod)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "go.sum"), string(sum))
	bin := filepath.Join(dir, "bin")
	for name, src := range progs {
		if formatted, err := format.Source([]byte(src)); err != nil || string(formatted) != src {
			t.Errorf("README's %s is not gofmt-formatted (%v)", name, err)
		}
	}
	for name, src := range progs {
		writeFile(t, filepath.Join(dir, name, "main.go"), src)
		build := exec.Command(goBin, "build", "-o", filepath.Join(bin, name), "./"+name)
		build.Dir = dir
		build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("README's %s does not build: %v\n%s", name, err, out)
		}
	}

	t.Run("stdio client calls the stdio server", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "hello"))
		cmd.Dir = bin // the client starts ./greeter
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("hello: %v\n%s", err, out)
		}
		if got, want := strings.TrimSpace(string(out)), `{"greeting":"Hello, Ada!"}`; got != want {
			t.Fatalf("hello printed %q, want %q", got, want)
		}
	})

	as := startQuickstartAS(t)
	startProgram(t, exec.Command(filepath.Join(bin, "protected")), "ISSUER="+as.issuer)
	waitListening(t, addr)

	t.Run("protected server", func(t *testing.T) {
		resource := "http://" + addr + "/mcp"

		// Discovery: the 401 challenge points to the protected resource
		// metadata, which names the issuer.
		st, hdr, _ := mcpPost(t, resource, "", initializeBody)
		if st != http.StatusUnauthorized || !strings.Contains(hdr.Get("WWW-Authenticate"), "resource_metadata=") {
			t.Fatalf("no token: %d %q, want 401 with resource_metadata", st, hdr.Get("WWW-Authenticate"))
		}
		resp, err := http.Get("http://" + addr + "/.well-known/oauth-protected-resource/mcp")
		if err != nil {
			t.Fatal(err)
		}
		var prm oauth.ProtectedResourceMetadata
		err = json.NewDecoder(resp.Body).Decode(&prm)
		resp.Body.Close()
		if err != nil || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != as.issuer {
			t.Fatalf("metadata %+v %v, want the issuer %s", prm, err, as.issuer)
		}

		read := as.token(t, resource, "notes:read")
		st, hdr, body := mcpPost(t, resource, read, initializeBody)
		if st != http.StatusOK {
			t.Fatalf("initialize with a token for the resource: %d %s", st, body)
		}
		session := hdr.Get("Mcp-Session-Id")
		call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_all","arguments":{}}}`
		st, hdr, _ = mcpPostSession(t, resource, read, session, call)
		if st != http.StatusForbidden || !strings.Contains(hdr.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
			t.Fatalf("delete_all with notes:read: %d %q, want 403 insufficient_scope", st, hdr.Get("WWW-Authenticate"))
		}
		other := as.token(t, "https://elsewhere.example/mcp", "notes:read")
		if st, _, _ := mcpPost(t, resource, other, initializeBody); st != http.StatusUnauthorized {
			t.Fatalf("token for another audience: %d, want 401", st)
		}
		admin := as.token(t, resource, "notes:read notes:admin")
		st, _, body = mcpPost(t, resource, admin, initializeBody)
		if st != http.StatusOK {
			t.Fatalf("initialize with the admin token: %d %s", st, body)
		}
	})

	t.Run("login client", func(t *testing.T) {
		resource := "http://" + addr + "/mcp"
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "login"), resource)
		cmd.Dir = t.TempDir() // tokens.json goes here
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("login: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "delete_all") {
			t.Fatalf("login client printed %q, want the tool delete_all", out)
		}
		if fi, err := os.Stat(filepath.Join(cmd.Dir, "tokens.json")); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("tokens.json: %v %v, want a 0600 file", fi, err)
		}
	})
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"readme-test","version":"1"}}}`

// fakeBrowser is the stand-in for xdg-open: it fetches the URL it is
// given and follows redirects, ending at the client's loopback redirect.
const fakeBrowser = `package main

import (
	"io"
	"net/http"
	"os"
)

func main() {
	resp, err := http.Get(os.Args[1])
	if err != nil {
		os.Exit(1)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
`

// quickstartAS is our authorization server standing in for an external
// issuer: it registers clients dynamically, signs the development user in
// and trusts every client (no consent page), and issues tokens to a
// confidential client by client credentials for the test's own requests.
type quickstartAS struct {
	issuer string
}

const quickstartSecret = "readme-secret"

func startQuickstartAS(t *testing.T) *quickstartAS {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	st := memory.New()
	as, err := authserver.NewServer(t.Context(), authserver.Config{
		Issuer:        issuer,
		Store:         st,
		DevUser:       "ada",
		Scopes:        []string{"notes:read", "notes:admin"},
		TrustedClient: func(authserver.Client) bool { return true },
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.CreateClient(t.Context(), authserver.Client{
		Metadata: oauth.ClientMetadata{
			ClientID:                "readme-test",
			GrantTypes:              []string{oauth.GrantClientCredentials},
			TokenEndpointAuthMethod: oauth.AuthMethodClientSecretBasic,
		},
		SecretHash: authserver.HashSecret(quickstartSecret),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: as, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &quickstartAS{issuer: issuer}
}

// token gets an access token for resource and scope by client credentials.
func (a *quickstartAS) token(t *testing.T, resource, scope string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {resource}, "scope": {scope}}
	req, _ := http.NewRequest(http.MethodPost, a.issuer+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("readme-test:"+quickstartSecret)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		t.Fatalf("token for %s %q: %d %v", resource, scope, resp.StatusCode, err)
	}
	return tok.AccessToken
}

func mcpPost(t *testing.T, endpoint, token, body string) (int, http.Header, string) {
	return mcpPostSession(t, endpoint, token, "", body)
}

func mcpPostSession(t *testing.T, endpoint, token, session, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// An SSE answer is read up to its first event: the answer.
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "data: {") {
			break
		}
	}
	return resp.StatusCode, resp.Header, b.String()
}

// startProgram starts a built program with extra environment variables and
// kills it when the test ends.
func startProgram(t *testing.T, cmd *exec.Cmd, env ...string) {
	t.Helper()
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s's standard error:\n%s", filepath.Base(cmd.Path), stderr.String())
		}
	})
}

// waitListening waits until something accepts connections on addr.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
