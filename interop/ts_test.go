package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/oauth"
)

// buildMcpstack builds the mcpstack command from the repository root into
// the test's temporary directory.
func buildMcpstack(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpstack")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/mcpstack")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/mcpstack: %v\n%s", err, out)
	}
	return bin
}

// tsStep is one line printed by interop/node/ts-client.mjs.
type tsStep struct {
	Step           string `json:"step"`
	Server         string `json:"server"`
	Tool           string `json:"tool"`
	IsError        bool   `json:"isError"`
	Text           string `json:"text"`
	ClientID       string `json:"client_id"`
	Registrations  int    `json:"registrations"`
	Scope          string `json:"scope"`
	Error          string `json:"error"`
	RefreshToken   bool   `json:"refresh_token"`
	Authorizations []struct {
		Scope               string `json:"scope"`
		Resource            string `json:"resource"`
		ClientID            string `json:"client_id"`
		CodeChallengeMethod string `json:"code_challenge_method"`
		Iss                 string `json:"iss"`
		Consent             bool   `json:"consent"`
		Error               string `json:"error"`
	} `json:"authorizations"`
}

// TestTypeScriptSDKOAuth runs the TypeScript MCP SDK's client
// (@modelcontextprotocol/sdk, pinned in interop/node/package-lock.json)
// with its OAuthClientProvider against `mcpstack serve --issuer`, protected
// by `mcpstack authserver --dev-user`: the 401 challenge, protected resource
// and authorization server discovery, client registration, the
// authorization code flow with PKCE S256 and RFC 8707 resource, consent
// (the form posted by the script's stand-in browser, or skipped for a
// --trust-client), finishAuth, a tools/call, then a tool needing a wider
// scope: 403 insufficient_scope and step-up.
//
// By CIMD (our document served over TLS, fetched by the authorization
// server) and by DCR the whole flow passes, step-up included: the SDK
// registers the client with the first challenge's scope (RFC 7591 scope),
// and our authorization server still lets the user consent to a wider
// scope the server supports (issue #17 item 4). One known SDK failure is
// pinned, so that a change on either side shows: with a refresh token the
// SDK refreshes instead of re-authorizing, which cannot widen the scope
// (RFC 6749 §6), and gives up ("403 after trying upscoping",
// modelcontextprotocol/typescript-sdk#2255, fixed after 1.32.2).
func TestTypeScriptSDKOAuth(t *testing.T) {
	nodeBin := node(t, "@modelcontextprotocol/sdk")
	bin := buildMcpstack(t)
	const redirect = "http://127.0.0.1:1/callback"

	// The Client ID Metadata Document, on https with a certificate the
	// authorization server trusts through SSL_CERT_FILE.
	clientID, caFile, docFetches := serveClientDocument(t, oauth.ClientMetadata{
		ClientName: "TypeScript SDK interop (CIMD)", RedirectURIs: []string{redirect},
		GrantTypes: []string{oauth.GrantAuthorizationCode}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: oauth.AuthMethodNone,
	})

	// Both bind port 0 and print where they listen. The authorization
	// server issues tokens for any resource (it cannot know the MCP
	// server's port in advance); the MCP server checks that the audience is
	// its own URL.
	as := exec.Command(bin, "authserver", "--addr", "127.0.0.1:0", "--dev-user", "alice", "--db", ":memory:",
		"--scope", "mcp:tools mcp:admin", "--allow-loopback-cimd", "--trust-client", clientID)
	as.Env = append(os.Environ(), "SSL_CERT_FILE="+caFile)
	issuer := startReady(t, as, "mcpstack authserver: issuer ")
	serve := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--issuer", issuer,
		"--scope", "mcp:tools", "--tool-scope", "time=mcp:admin")
	mcpURL := startReady(t, serve, "mcpstack serve: MCP at ")

	// authz describes one authorization request the script's browser saw:
	// its scope, whether the consent page was shown (not for a trusted
	// client) and the error it ended with, if any; newClient says it was
	// made by a client registered after the first one.
	type authz struct {
		scope     string
		consent   bool
		err       string
		newClient bool
	}
	const both = "mcp:admin mcp:tools" // our 403 challenge: granted and needed
	for _, tc := range []struct {
		name       string
		args       []string
		env        []string
		registered int // DCR registrations
		// stepUpError is the error the step-up ends with; empty means it
		// succeeds.
		stepUpError string
		authz       []authz
	}{
		{name: "CIMD", args: []string{clientID},
			authz: []authz{{scope: "mcp:tools"}, {scope: both}}},
		{name: "DCR", env: []string{"GRANT_TYPES=authorization_code"}, registered: 1,
			authz: []authz{{scope: "mcp:tools", consent: true}, {scope: both, consent: true}}},
		{name: "DCR refresh token", env: []string{"GRANT_TYPES=authorization_code refresh_token"}, registered: 1,
			stepUpError: "Server returned 403 after trying upscoping",
			authz:       []authz{{scope: "mcp:tools", consent: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fetchesBefore := docFetches.Load()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			run := runTSClient(ctx, nodeBin, append(append(os.Environ(), "TOOL=echo", "STEPUP_TOOL=time"), tc.env...),
				append([]string{mcpURL, redirect}, tc.args...)...)
			if len(run.junk) > 0 {
				t.Fatalf("ts-client.mjs printed %q, which is not a step", run.junk)
			}
			if (run.err != nil) != (tc.stepUpError != "") {
				t.Fatal(run)
			}
			steps := run.steps

			conn := steps["connected"]
			if conn.Server != "mcpstack-example" {
				t.Fatalf("connected step %+v", conn)
			}
			if tc.name == "CIMD" {
				if conn.ClientID != clientID || conn.Registrations != 0 || docFetches.Load() == fetchesBefore {
					t.Fatalf("client_id %q, %d registrations, document fetched %d times: CIMD not used", conn.ClientID, conn.Registrations, docFetches.Load()-fetchesBefore)
				}
			} else if conn.ClientID == "" || conn.ClientID == clientID || conn.Registrations != 1 || docFetches.Load() != fetchesBefore {
				t.Fatalf("client_id %q, %d registrations after DCR", conn.ClientID, conn.Registrations)
			}
			if c := steps["call"]; c.IsError || c.Text != "hello from TypeScript" {
				t.Fatalf("echo: %+v", c)
			}

			final := steps["done"]
			if tc.stepUpError != "" {
				final = steps["error"]
				if !strings.Contains(final.Error, tc.stepUpError) {
					t.Fatalf("step-up ended with %q, want %q", final.Error, tc.stepUpError)
				}
				if _, ok := steps["stepup"]; ok {
					t.Fatal("the step-up call succeeded")
				}
			} else if s := steps["stepup"]; s.IsError || !strings.Contains(s.Text, "T") {
				t.Fatalf("time after step-up: %+v", s)
			}

			// The authorization requests: PKCE S256, the resource, RFC
			// 9207 iss, the scope, consent, and the client.
			if len(final.Authorizations) != len(tc.authz) {
				t.Fatalf("%d authorizations, want %d: %+v", len(final.Authorizations), len(tc.authz), final.Authorizations)
			}
			for i, a := range final.Authorizations {
				w := tc.authz[i]
				if !slices.Equal(sortedFields(a.Scope), strings.Fields(w.scope)) || a.Resource != mcpURL || a.CodeChallengeMethod != "S256" ||
					(a.Iss != issuer) || a.Consent != w.consent || a.Error != w.err || (a.ClientID != conn.ClientID) != w.newClient {
					t.Errorf("authorization %d: %+v, want %+v, resource %s, S256, iss %s, first client %s", i, a, w, mcpURL, issuer, conn.ClientID)
				}
			}
			if final.Registrations != tc.registered {
				t.Errorf("%d registrations, want %d", final.Registrations, tc.registered)
			}
			if tc.name == "DCR refresh token" && !final.RefreshToken {
				t.Error("no refresh token was issued")
			}
		})
	}
}
