package interop

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestPlainOAuthUpstream runs the plain OAuth variant of issue #23's
// delegated sign-in with real processes on loopback, `mcpstack authserver`
// itself as the third-party provider: A (--dev-user) has no ID tokens to
// give B, only its user-info endpoint. B (--upstream-issuer A, with A's
// authorize, token and user-info URLs, the user-info URL as resource, a
// scope that is not openid) registers MCP clients itself and protects
// `mcpstack serve`. B is registered at A as a confidential client by
// Dynamic Client Registration, as an operator would register it once.
//
// `mcpstack client` logs in through B: B's consent page, then A's consent
// page for B (A does not trust B), A's development user signed in, back
// to B, which learns the user from A's user-info and names them
// A#dev-user. The client then calls whoami_upstream, whose handler
// obtains the user's A token from B by token exchange and calls A's
// user-info with it: A answers for dev-user with the scope B asked.
func TestPlainOAuthUpstream(t *testing.T) {
	nodeBin := node(t)
	bin := buildMcpstack(t)

	aAddr, bAddr, rsAddr := freePort(t), freePort(t), freePort(t)
	aIssuer, bIssuer, mcpURL := "http://"+aAddr, "http://"+bAddr, "http://"+rsAddr+"/mcp"
	a := exec.Command(bin, "authserver", "--addr", aAddr, "--db", ":memory:", "--dev-user", "dev-user")
	if got := startReady(t, a, "mcpstack authserver: issuer "); got != aIssuer {
		t.Fatalf("A's issuer %s, want %s", got, aIssuer)
	}
	var md struct {
		UserInfo string `json:"userinfo_endpoint"`
	}
	getJSON(t, aIssuer+"/.well-known/oauth-authorization-server", &md)
	if md.UserInfo != aIssuer+"/userinfo" {
		t.Fatalf("A's userinfo_endpoint %q", md.UserInfo)
	}
	upID, upSecret := registerUpstreamClient(t, aIssuer, bIssuer+"/upstream/callback")
	exchangeSecret := writeSecret(t, "exchange-secret-0123456789abcdef")

	b := exec.Command(bin, "authserver", "--addr", bAddr, "--db", ":memory:", "--scope", "mcp:tools",
		"--upstream-issuer", aIssuer, "--upstream-client-id", upID, "--upstream-client-secret-file", writeSecret(t, upSecret),
		"--upstream-authorize-url", aIssuer+"/authorize", "--upstream-token-url", aIssuer+"/token",
		"--upstream-userinfo-url", md.UserInfo, "--upstream-resource", md.UserInfo, "--upstream-scope", "profile",
		"--upstream-exchange-client-id", "example-server", "--upstream-exchange-secret-file", exchangeSecret,
		"--upstream-exchange-resource", mcpURL)
	if got := startReady(t, b, "mcpstack authserver: issuer "); got != bIssuer {
		t.Fatalf("B's issuer %s, want %s", got, bIssuer)
	}
	serve := exec.Command(bin, "serve", "--addr", rsAddr, "--issuer", bIssuer, "--scope", "mcp:tools",
		"--upstream-issuer", aIssuer, "--upstream-userinfo-url", md.UserInfo,
		"--upstream-exchange-client-id", "example-server", "--upstream-exchange-secret-file", exchangeSecret)
	if got := startReady(t, serve, "mcpstack serve: MCP at "); got != mcpURL {
		t.Fatalf("MCP at %s, want %s", got, mcpURL)
	}

	dir := t.TempDir()
	browserLog, tokens := filepath.Join(dir, "browser.log"), filepath.Join(dir, "tokens.json")
	browser, err := filepath.Abs(filepath.Join(nodeDir, "browser.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "client", "--token-store", tokens,
		"--browser-cmd", nodeBin+" "+browser, mcpURL, "call", "whoami_upstream")
	cmd.Env = append(os.Environ(), "BROWSER_JAR="+filepath.Join(dir, "jar.json"), "BROWSER_LOG="+browserLog)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// A's user-info, called with the A token B keeps for the user.
	if err != nil || !strings.Contains(string(out), `"sub":"dev-user"`) || !strings.Contains(string(out), `"scope":"profile"`) {
		t.Fatalf("mcpstack client: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	var visit struct {
		Consent      bool     `json:"consent"`
		ConsentHosts []string `json:"consent_hosts"`
	}
	lb, err := os.ReadFile(browserLog)
	if err != nil {
		t.Fatal(err)
	}
	// B's consent first (before any redirect to A), then A's for B.
	if err := json.Unmarshal(bytes.TrimSpace(lb), &visit); err != nil || !visit.Consent ||
		len(visit.ConsentHosts) != 2 || visit.ConsentHosts[0] != bAddr || visit.ConsentHosts[1] != aAddr {
		t.Fatalf("browser log %q (%v): want B's consent page, then A's", lb, err)
	}
	// The user at B, as B's access token names them.
	if sub := tokenSubject(t, tokens); sub != aIssuer+"#dev-user" {
		t.Fatalf("B's access token is for %q, want %q", sub, aIssuer+"#dev-user")
	}
}

// tokenSubject returns the sub claim of the JWT access token in the
// client's token store (read as text: the test only needs the claim).
func tokenSubject(t *testing.T, store string) string {
	t.Helper()
	b, err := os.ReadFile(store)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`eyJ[\w-]+\.([\w-]+)\.[\w-]+`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no JWT in the token store: %.300s", b)
	}
	payload, err := base64.RawURLEncoding.DecodeString(string(m[1]))
	var c struct {
		Sub string `json:"sub"`
	}
	if err != nil || json.Unmarshal(payload, &c) != nil {
		t.Fatalf("token payload %q: %v", m[1], err)
	}
	return c.Sub
}
