package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/oauth"
)

// serviceURL returns the URL of a test service (MCPSTACK_POSTGRES_URL,
// MCPSTACK_REDIS_URL, exported by scripts/services.sh), or skips the
// test without one unless MCPSTACK_REQUIRE_SERVICES=1.
func serviceURL(t *testing.T, env string) string {
	t.Helper()
	u := os.Getenv(env)
	if u == "" {
		if os.Getenv("MCPSTACK_REQUIRE_SERVICES") == "1" {
			t.Fatalf("%s is unset and MCPSTACK_REQUIRE_SERVICES=1", env)
		}
		t.Skipf("%s is unset (scripts/services.sh starts a server)", env)
	}
	return u
}

// freshPostgres returns a connection URL whose search_path is a new
// schema, dropped when the test ends.
func freshPostgres(t *testing.T) string {
	t.Helper()
	base := serviceURL(t, "MCPSTACK_POSTGRES_URL")
	conn, err := pgx.Connect(t.Context(), base)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer conn.Close(context.Background())
	name := "replicas_" + strings.ToLower(rand.Text()[:16])
	if _, err := conn.Exec(t.Context(), "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, base); err == nil {
			conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{name}.Sanitize()+" CASCADE")
			conn.Close(ctx)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// freshRedisPrefix returns the Redis URL and a key prefix no other test
// uses; the keys under it are deleted when the test ends.
func freshRedisPrefix(t *testing.T) (string, string) {
	t.Helper()
	u := serviceURL(t, "MCPSTACK_REDIS_URL")
	prefix := "test:" + strings.ToLower(rand.Text()[:12]) + ":"
	t.Cleanup(func() {
		opt, err := goredis.ParseURL(u)
		if err != nil {
			return
		}
		rdb := goredis.NewClient(opt)
		defer rdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
	})
	return u, prefix
}

// rrProxy is a round-robin reverse proxy: request n goes to backend
// n mod len(backends), as a plain load balancer without stickiness sends
// it. Each response says in X-Test-Replica which backend served it.
type rrProxy struct {
	URL string
	mu  sync.Mutex
	rps []*httputil.ReverseProxy
	n   int
}

// startRRProxy listens on a loopback port; backends are added with set
// once they know the proxy's URL (their issuer).
func startRRProxy(t *testing.T) *rrProxy {
	t.Helper()
	p := &rrProxy{}
	p.URL = serveProxy(t, p)
	return p
}

func (p *rrProxy) set(backends ...string) {
	rps := make([]*httputil.ReverseProxy, len(backends))
	for i, b := range backends {
		rps[i] = newReplicaProxy(b, i, nil)
	}
	p.mu.Lock()
	p.rps = rps
	p.mu.Unlock()
}

// serveProxy serves h, a test load balancer, on a loopback port until the
// test ends and returns its URL.
func serveProxy(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String()
}

// newReplicaProxy returns the reverse proxy of a test load balancer to
// replica i at backend (a URL of ours: a bad one panics). Each response
// says in X-Test-Replica which replica served it, and is shown to note
// (if not nil) first.
func newReplicaProxy(backend string, i int, note func(*http.Response)) *httputil.ReverseProxy {
	u, err := url.Parse(backend)
	if err != nil {
		panic(err)
	}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host
		},
		FlushInterval: -1, // event streams pass through at once
		ModifyResponse: func(r *http.Response) error {
			r.Header.Set("X-Test-Replica", strconv.Itoa(i))
			if note != nil {
				note(r)
			}
			return nil
		},
	}
}

func (p *rrProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if len(p.rps) == 0 {
		p.mu.Unlock()
		http.Error(w, "no backend yet", http.StatusServiceUnavailable)
		return
	}
	rp := p.rps[p.n%len(p.rps)]
	p.n++
	p.mu.Unlock()
	if bufferBody(w, r) {
		rp.ServeHTTP(w, r)
	}
}

// bufferBody reads the body of r whole before a test proxy forwards it,
// as many load balancers do; it answers 400 itself and reports false if
// it cannot. Streamed, the proxy's own HTTP/1 server closes the body when
// the proxy starts writing the answer (an SSE stream, whose headers come
// at once), and the transport's last read of it (to check that it is no
// longer than declared) then fails and tears down the connection to the
// backend: the answer was cut after its first event, "use of closed
// network connection" (golang/go#40747).
func bufferBody(w http.ResponseWriter, r *http.Request) bool {
	if r.Body == nil {
		return true
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return true
}

// startASReplicas runs n `mcpstack authserver` processes (this test
// binary) with args, all started before any is waited for, so that they
// come up at the same moment, and returns the base URLs they listen on.
func startASReplicas(t *testing.T, n int, args ...string) []string {
	t.Helper()
	readers := make([]*bufio.Reader, n)
	for i := range n {
		cmd := exec.Command(self(t), append([]string{"authserver", "--addr", "127.0.0.1:0"}, args...)...)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
		readers[i] = bufio.NewReader(stderr)
	}
	urls := make([]string, n)
	for i, br := range readers {
		for urls[i] == "" {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("authserver %d exited before listening: %v", i, err)
			}
			if addr, ok := strings.CutPrefix(line, "mcpstack authserver: listening on "); ok {
				go io.Copy(io.Discard, br)
				urls[i] = "http://" + strings.TrimSpace(addr)
			}
		}
	}
	return urls
}

var (
	csrfInput    = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	requestInput = regexp.MustCompile(`name="request" value="([^"]+)"`)
)

// asBrowser drives the authorization server through the proxy as a
// browser and a client would, and records which replica served each step.
type asBrowser struct {
	t      *testing.T
	issuer string
	hc     *http.Client
}

// do sends req and returns the status, body and serving replica.
func (b asBrowser) do(req *http.Request) (*http.Response, string, int) {
	b.t.Helper()
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	replica, err := strconv.Atoi(resp.Header.Get("X-Test-Replica"))
	if err != nil {
		b.t.Fatalf("%s %s: no X-Test-Replica", req.Method, req.URL)
	}
	return resp, string(body), replica
}

func (b asBrowser) postForm(path string, form url.Values, basic ...string) (*http.Response, string, int) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.issuer+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if len(basic) == 2 {
		req.SetBasicAuth(basic[0], basic[1])
	}
	return b.do(req)
}

// formOf returns a page's hidden csrf and request fields with extra.
func (b asBrowser) formOf(page string, extra url.Values) url.Values {
	b.t.Helper()
	csrf, request := csrfInput.FindStringSubmatch(page), requestInput.FindStringSubmatch(page)
	if csrf == nil || request == nil {
		b.t.Fatalf("no form in:\n%s", page)
	}
	extra.Set("csrf", csrf[1])
	extra.Set("request", request[1])
	return extra
}

func (b asBrowser) register(meta string) oauth.ClientInformation {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.issuer+"/register", strings.NewReader(meta))
	req.Header.Set("Content-Type", "application/json")
	resp, body, _ := b.do(req)
	var ci oauth.ClientInformation
	if resp.StatusCode != http.StatusCreated || json.Unmarshal([]byte(body), &ci) != nil {
		b.t.Fatalf("register: %d %s", resp.StatusCode, body)
	}
	return ci
}

// TestAuthserverReplicas runs two `mcpstack authserver` processes on one
// store behind a round-robin proxy, started at the same moment on an
// empty store (both may create the first signing and cookie keys): a
// client registered at one is known to the other; the login form one
// replica served is accepted by the other, and so are its session and
// consent form; the code is redeemed at the replica that did not issue
// it; the refresh token rotates at the first; the rotated-out token is
// refused as reused at the other, which revokes the family on both; an
// access token is introspected as active by each replica whichever
// signed it, and both serve the key that signed it in their JWKS.
func TestAuthserverReplicas(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) []string
	}{
		{"postgres", func(t *testing.T) []string { return []string{"--postgres", freshPostgres(t)} }},
		{"redis", func(t *testing.T) []string {
			u, prefix := freshRedisPrefix(t)
			return []string{"--redis", u, "--redis-prefix", prefix}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := tc.store(t)
			proxy := startRRProxy(t)
			args := append([]string{"--issuer", proxy.URL, "--user", "alice:pw", "--resource", "http://127.0.0.1:1/mcp",
				"--login-burst", "3", "--login-per-minute", "0.01"}, store...)
			proxy.set(startASReplicas(t, 2, args...)...)
			runASReplicaFlow(t, proxy.URL)
		})
	}
}

func runASReplicaFlow(t *testing.T, issuer string) {
	hc := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	hc.Jar, _ = cookiejar.New(nil)
	b := asBrowser{t: t, issuer: issuer, hc: hc}
	const redirect = "http://127.0.0.1/cb"
	const resource = "http://127.0.0.1:1/mcp"

	app := b.register(`{"client_name":"app","redirect_uris":["` + redirect + `"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"]}`)
	rs := b.register(`{"client_name":"rs","grant_types":["client_credentials"],"token_endpoint_auth_method":"client_secret_basic"}`)

	verifier, _ := oauth.NewVerifier()
	q := url.Values{"response_type": {"code"}, "client_id": {app.ClientID}, "redirect_uri": {redirect},
		"code_challenge": {oauth.S256Challenge(verifier)}, "code_challenge_method": {"S256"}, "resource": {resource}}
	req, _ := http.NewRequest(http.MethodGet, issuer+"/authorize?"+q.Encode(), nil)
	resp, page, formAt := b.do(req)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `name="password"`) {
		t.Fatalf("login page: %d %s", resp.StatusCode, page)
	}
	resp, page, loginAt := b.postForm("/authorize", b.formOf(page, url.Values{"action": {"login"}, "username": {"alice"}, "password": {"pw"}}))
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `value="allow"`) {
		t.Fatalf("login posted to replica %d (form from %d): %d %s", loginAt, formAt, resp.StatusCode, page)
	}
	resp, page, codeAt := b.postForm("/authorize", b.formOf(page, url.Values{"action": {"allow"}}))
	loc, _ := url.Parse(resp.Header.Get("Location"))
	code := ""
	if loc != nil {
		code = loc.Query().Get("code")
	}
	if resp.StatusCode != http.StatusSeeOther || code == "" {
		t.Fatalf("consent posted to replica %d (login at %d): %d %s %s", codeAt, loginAt, resp.StatusCode, resp.Header.Get("Location"), page)
	}
	if formAt == loginAt || loginAt == codeAt {
		t.Fatalf("the login steps ran at replicas %d, %d, %d: the proxy does not alternate", formAt, loginAt, codeAt)
	}

	token := func(form url.Values, wantStatus, wantReplica int) (oauth.TokenResponse, string) {
		t.Helper()
		resp, body, at := b.postForm("/token", form)
		if wantReplica >= 0 && at != wantReplica {
			t.Fatalf("the token request reached replica %d, want %d: the proxy does not alternate", at, wantReplica)
		}
		if resp.StatusCode != wantStatus {
			t.Fatalf("token at replica %d: %d %s, want %d", at, resp.StatusCode, body, wantStatus)
		}
		var tr oauth.TokenResponse
		if wantStatus == http.StatusOK {
			if err := tr.UnmarshalJSON([]byte(body)); err != nil || tr.AccessToken == "" || tr.RefreshToken == "" {
				t.Fatalf("token at replica %d: %v %s", at, err, body)
			}
		}
		return tr, body
	}
	other := 1 - codeAt
	first, _ := token(url.Values{"grant_type": {"authorization_code"}, "client_id": {app.ClientID}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {resource}}, http.StatusOK, other)
	second, _ := token(url.Values{"grant_type": {"refresh_token"}, "client_id": {app.ClientID}, "refresh_token": {first.RefreshToken}}, http.StatusOK, codeAt)

	// Each replica finds each access token active, and serves the key
	// that signed it.
	introspect := func(tok string) map[int]bool {
		got := map[int]bool{}
		for range 2 {
			resp, body, at := b.postForm("/introspect", url.Values{"token": {tok}}, rs.ClientID, rs.ClientSecret)
			var in struct {
				Active bool `json:"active"`
			}
			if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &in) != nil {
				t.Fatalf("introspect at %d: %d %s", at, resp.StatusCode, body)
			}
			got[at] = in.Active
		}
		return got
	}
	for _, tok := range []string{first.AccessToken, second.AccessToken} {
		if got := introspect(tok); !got[0] || !got[1] {
			t.Fatalf("introspection by replica: %v, want both active", got)
		}
	}
	jwks := map[int]string{}
	for range 2 {
		req, _ := http.NewRequest(http.MethodGet, issuer+"/jwks.json", nil)
		_, body, at := b.do(req)
		jwks[at] = body
	}
	for _, tok := range []string{first.AccessToken, second.AccessToken} {
		kid := tokenKid(t, tok)
		for at, body := range jwks {
			if !strings.Contains(body, `"kid":"`+kid+`"`) {
				t.Errorf("replica %d's JWKS lacks the key %s: %s", at, kid, body)
			}
		}
	}

	// The rotated-out token, replayed at the other replica, is reuse:
	// refused, and the family is revoked on both.
	if _, body := token(url.Values{"grant_type": {"refresh_token"}, "client_id": {app.ClientID}, "refresh_token": {first.RefreshToken}}, http.StatusBadRequest, -1); !strings.Contains(body, "invalid_grant") {
		t.Fatalf("reuse: %s", body)
	}
	token(url.Values{"grant_type": {"refresh_token"}, "client_id": {app.ClientID}, "refresh_token": {second.RefreshToken}}, http.StatusBadRequest, -1)
	if got := introspect(second.AccessToken); got[0] || got[1] {
		t.Fatalf("after the reuse, introspection by replica: %v, want neither active", got)
	}

	// The login limit (a burst of 3, one spent above) holds for the two
	// replicas together: two more attempts, then "too many", wherever
	// they land. Each replica counting alone would allow 3 each.
	loginsAt := map[int]int{loginAt: 1}
	for i := range 3 {
		authorize := func() string {
			req, _ := http.NewRequest(http.MethodGet, issuer+"/authorize?"+q.Encode(), nil)
			_, page, _ := b.do(req)
			return page
		}
		page := authorize()
		if strings.Contains(page, `value="allow"`) {
			// Still signed in: sign in again through a fresh browser.
			hc.Jar, _ = cookiejar.New(nil)
			page = authorize()
		}
		// Steer the attempt to the replica that had the previous one
		// least: the proxy alternates, so a request served by the other
		// one makes this one next.
		target := 0
		if loginsAt[1] < loginsAt[0] {
			target = 1
		}
		for {
			req, _ := http.NewRequest(http.MethodGet, issuer+"/.well-known/oauth-authorization-server", nil)
			if _, _, served := b.do(req); served != target {
				break
			}
		}
		_, page, at := b.postForm("/authorize", b.formOf(page, url.Values{"action": {"login"}, "username": {"alice"}, "password": {"wrong"}}))
		if got := strings.Contains(page, "Too many attempts"); got != (i == 2) {
			t.Fatalf("wrong password %d at replica %d: too many %v, want %v", i+1, at, got, i == 2)
		}
		loginsAt[at]++
	}
	if loginsAt[0] != 2 || loginsAt[1] != 2 {
		t.Fatalf("login attempts per replica: %v: the limit is not shown shared", loginsAt)
	}
}

// tokenKid returns the kid of a JWT's header.
func tokenKid(t *testing.T, jwt string) string {
	t.Helper()
	head, _, _ := strings.Cut(jwt, ".")
	raw, err := base64.RawURLEncoding.DecodeString(head)
	var h struct {
		Kid string `json:"kid"`
	}
	if err != nil || json.Unmarshal(raw, &h) != nil || h.Kid == "" {
		t.Fatalf("JWT header %q", head)
	}
	return h.Kid
}

// TestAuthserverStoreFlags: --db, --postgres and --redis exclude each
// other, each names its store, and a store that does not answer fails
// the start within --store-timeout instead of hanging it.
func TestAuthserverStoreFlags(t *testing.T) {
	closed := closedPort(t)
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"db and postgres", []string{"--db", ":memory:", "--postgres", "postgres://x/y"}, exitUsage, "exclude each other"},
		{"db and redis", []string{"--db", ":memory:", "--redis", "redis://x:1/0"}, exitUsage, "exclude each other"},
		{"postgres and redis", []string{"--postgres", "postgres://x/y", "--redis", "redis://x:1/0"}, exitUsage, "exclude each other"},
		{"empty postgres", []string{"--postgres", ""}, exitUsage, "need a URL"},
		{"prefix without redis", []string{"--redis-prefix", "p:"}, exitUsage, "--redis-prefix needs --redis"},
		{"not a redis URL", []string{"--redis", "http://secret@x/"}, exitUsage, "--redis"},
		{"redis does not answer", []string{"--redis", "redis://" + closed + "/0", "--store-timeout", "5s"}, exitFailure, "the store does not answer"},
		{"postgres does not answer", []string{"--postgres", "postgres://u:secretpw@" + closed + "/db?sslmode=disable", "--store-timeout", "5s"}, exitFailure, "--postgres"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := runCmd(t, "", append([]string{"authserver", "--dev-user", "me", "--addr", "127.0.0.1:0"}, tc.args...)...)
			if r.code != tc.wantCode || !strings.Contains(r.stderr, tc.wantErr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.wantCode, tc.wantErr)
			}
			if strings.Contains(r.stderr, "secret") {
				t.Errorf("the error repeats a password: %q", r.stderr)
			}
			if d := time.Since(start); d > 60*time.Second {
				t.Errorf("took %v with --store-timeout 5s", d)
			}
		})
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
