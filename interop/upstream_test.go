package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// freePort returns a loopback port free a moment ago. Our authorization
// server's address must be known before it starts (the upstream provider
// registers its callback URL, and it registers the MCP server's resource
// as the one whose tokens may be exchanged).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// registerUpstreamClient registers our authorization server at the
// upstream provider by Dynamic Client Registration, as its operator would
// register it once at GitHub or Google: a confidential client with the
// callback as its only redirect URI. It returns the client id and secret.
func registerUpstreamClient(t *testing.T, upIssuer, callback string) (string, string) {
	t.Helper()
	var md struct {
		RegistrationEndpoint string `json:"registration_endpoint"`
	}
	getJSON(t, upIssuer+"/.well-known/openid-configuration", &md)
	body, _ := json.Marshal(map[string]any{
		"redirect_uris": []string{callback}, "grant_types": []string{"authorization_code"},
		"response_types": []string{"code"}, "token_endpoint_auth_method": "client_secret_basic",
		"id_token_signed_response_alg": "ES256", "client_name": "mcpstack authserver",
	})
	resp, err := http.Post(md.RegistrationEndpoint, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode != 201 || c.ClientSecret == "" {
		t.Fatalf("registration at the upstream provider: %d %+v %v", resp.StatusCode, c, err)
	}
	return c.ClientID, c.ClientSecret
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
}

func writeSecret(t *testing.T, secret string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(f, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestUpstreamSignIn runs the whole delegated sign-in of issue #23 with
// real processes on loopback: node-oidc-provider (oidc.mjs, the pinned
// npm package) is the third-party OpenID Connect provider, `mcpstack
// authserver --upstream-issuer` registers MCP clients itself and signs
// users in there under one static client id, and `mcpstack serve` is the
// protected MCP server whose whoami_upstream tool obtains the caller's
// upstream access token from the authorization server by RFC 8693 token
// exchange and calls the provider's user-info endpoint with it.
//
// Two MCP clients of the same person, in the same browser (one cookie
// jar): `mcpstack client` (the CLI, logging in through --browser-cmd) and
// the TypeScript SDK 1.32.2 client with its OAuth provider. Each
// registers itself (DCR), is shown our consent page before the browser
// goes upstream (the second one too, although the person is signed in and
// approved the first: consent is per client), signs in at the provider,
// and calls whoami_upstream, which answers with the provider's subject.
// The processes are started once for both.
func TestUpstreamSignIn(t *testing.T) {
	nodeBin := node(t, "oidc-provider", "@modelcontextprotocol/sdk")
	bin := buildMcpstack(t)
	upIssuer := startOIDCProvider(t, nil, "OIDC_USER=upstream-user-7")

	asAddr, rsAddr := freePort(t), freePort(t)
	asIssuer, mcpURL := "http://"+asAddr, "http://"+rsAddr+"/mcp"
	upID, upSecret := registerUpstreamClient(t, upIssuer, asIssuer+"/upstream/callback")
	exchangeSecret := writeSecret(t, "exchange-secret-0123456789abcdef")

	as := exec.Command(bin, "authserver", "--addr", asAddr, "--db", ":memory:", "--scope", "mcp:tools",
		"--upstream-issuer", upIssuer, "--upstream-client-id", upID, "--upstream-client-secret-file", writeSecret(t, upSecret),
		"--upstream-exchange-client-id", "example-server", "--upstream-exchange-secret-file", exchangeSecret,
		"--upstream-exchange-resource", mcpURL)
	if got := startReady(t, as, "mcpstack authserver: issuer "); got != asIssuer {
		t.Fatalf("issuer %s, want %s", got, asIssuer)
	}
	serve := exec.Command(bin, "serve", "--addr", rsAddr, "--issuer", asIssuer, "--scope", "mcp:tools",
		"--upstream-issuer", upIssuer, "--upstream-exchange-client-id", "example-server",
		"--upstream-exchange-secret-file", exchangeSecret)
	if got := startReady(t, serve, "mcpstack serve: MCP at "); got != mcpURL {
		t.Fatalf("MCP at %s, want %s", got, mcpURL)
	}

	dir := t.TempDir()
	jar, browserLog := filepath.Join(dir, "jar.json"), filepath.Join(dir, "browser.log")
	browserEnv := append(os.Environ(), "BROWSER_JAR="+jar, "BROWSER_LOG="+browserLog)
	const wantSub = `"sub":"upstream-user-7"`
	var firstClient string

	t.Run("mcpstack client", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		browser, err := filepath.Abs(filepath.Join(nodeDir, "browser.mjs"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, bin, "client", "--token-store", filepath.Join(dir, "tokens.json"),
			"--browser-cmd", nodeBin+" "+browser, mcpURL, "call", "whoami_upstream")
		cmd.Env = browserEnv
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), wantSub) {
			t.Fatalf("mcpstack client: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
		}
		b, err := os.ReadFile(browserLog)
		if err != nil {
			t.Fatal(err)
		}
		var visit struct {
			Consent  bool   `json:"consent"`
			ClientID string `json:"client_id"`
		}
		if err := json.Unmarshal(bytes.TrimSpace(b), &visit); err != nil || !visit.Consent || visit.ClientID == "" {
			t.Fatalf("browser log %q (%v): want one visit with our consent page", b, err)
		}
		firstClient = visit.ClientID
	})

	t.Run("TypeScript SDK", func(t *testing.T) {
		if firstClient == "" {
			t.Skip("needs the first client's sign-in")
		}
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		run := runTSClient(ctx, nodeBin, append(browserEnv, "TOOL=whoami_upstream", "STEPUP_TOOL="), mcpURL, "http://127.0.0.1:1/callback")
		if run.err != nil {
			t.Fatal(run)
		}
		steps := run.steps
		if c := steps["call"]; c.IsError || !strings.Contains(c.Text, wantSub) {
			t.Fatalf("whoami_upstream: %+v", c)
		}
		done := steps["done"]
		if len(done.Authorizations) != 1 {
			t.Fatalf("authorizations %+v", done.Authorizations)
		}
		a := done.Authorizations[0]
		// Another client of the same person, in the same browser: our
		// consent page again, before any upstream redirect.
		if !a.Consent || a.ClientID == firstClient || a.Iss != asIssuer || a.CodeChallengeMethod != "S256" || a.Resource != mcpURL {
			t.Fatalf("authorization %+v; first client %s", a, firstClient)
		}
		if b, _ := os.ReadFile(jar); !strings.Contains(string(b), asAddr) {
			t.Fatalf("the browser's jar holds no cookie of ours: %s", b)
		}
	})
}
