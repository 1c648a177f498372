package interop

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/authclient"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/oauth"
)

// startOIDCProvider runs node-oidc-provider (interop/node/oidc.mjs) on a
// free loopback port (it binds port 0 and prints its issuer), issuing tokens for resources only, and returns its
// issuer. env adds variables for the child.
func startOIDCProvider(t *testing.T, resources []string, env ...string) string {
	t.Helper()
	bin := node(t, "oidc-provider")
	cmd := exec.Command(bin, "oidc.mjs")
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(),
		"OIDC_RESOURCES="+strings.Join(resources, " "),
		"OIDC_SCOPES=mcp admin",
	)
	cmd.Env = append(cmd.Env, env...)
	return startReady(t, cmd, "ready ")
}

// protectedServers serves two MCP endpoints on ln, /mcp and /other, each
// its own protected resource whose tokens come from issuer: a JWT
// verifier with the issuer's JWKS (discovered from its metadata) checks
// that the audience is that endpoint. Both have a whoami tool (scope mcp)
// and an admin tool (scope admin too) answering "subject scopes".
func protectedServers(t *testing.T, ln net.Listener, issuer string) {
	t.Helper()
	base := "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	for _, path := range []string{"/mcp", "/other"} {
		resource := base + path
		s := mcp.NewServer(&mcp.Implementation{Name: "guarded" + path, Version: "1"}, nil)
		whoami := func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams, in struct{}) (*mcp.CallToolResult, any, error) {
			pr, _ := auth.PrincipalFromContext(ctx)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: pr.Subject + " " + strings.Join(pr.Scopes, ",")}}}, nil, nil
		}
		mcp.AddTool(s, &mcp.Tool{Name: "whoami"}, whoami)
		mcp.AddTool(s, &mcp.Tool{Name: "admin"}, whoami)
		v, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: issuer, Audience: resource})
		if err != nil {
			t.Fatal(err)
		}
		bearer, err := auth.New(auth.Options{Resource: resource, Verifier: v, Scopes: []string{"mcp"},
			ToolScopes: map[string][]string{"admin": {"admin"}}})
		if err != nil {
			t.Fatal(err)
		}
		// Two resources on one host: each its path-specific metadata only
		// (the root well-known path could name just one of them).
		md, err := auth.MetadataHandler(oauth.ProtectedResourceMetadata{
			Resource: resource, AuthorizationServers: []string{issuer}, ScopesSupported: []string{"mcp", "admin"},
		})
		if err != nil {
			t.Fatal(err)
		}
		paths, err := auth.MetadataPaths(resource)
		if err != nil {
			t.Fatal(err)
		}
		mux.Handle(paths[0], md)
		mux.Handle(path, bearer.Wrap(mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s },
			&mcphttp.Options{Identity: auth.SessionIdentity})))
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// jwtClaims decodes the payload of a JWT without verifying it (the
// resource server did that), to show what the test is about.
func jwtClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("access token is not a JWT: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOIDCProvider runs our OAuth client and our resource server against a
// third-party authorization server, node-oidc-provider (version pinned in
// interop/node/package-lock.json), configured with Dynamic Client
// Registration, RFC 8707 resource indicators with JWT access tokens whose
// audience is the resource, RFC 9207 iss, PKCE S256 and its experimental
// Client ID Metadata Documents. For each way of obtaining a client (DCR,
// then CIMD with our document served over TLS), authclient logs in through
// a stand-in browser, the MCP client and server exchange tools/call on
// two resources, a call needing a wider scope steps up, and a token issued
// for one resource is refused (401 invalid_token) by the other.
func TestOIDCProvider(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	resA, resB := base+"/mcp", base+"/other"

	// Our Client ID Metadata Document, on https (oidc-provider fetches only
	// https client_ids), with a certificate the provider trusts through
	// NODE_EXTRA_CA_CERTS.
	const redirect = "http://127.0.0.1:1/callback"
	var docFetches atomic.Int32
	doc := httptest.NewUnstartedServer(nil)
	doc.StartTLS()
	t.Cleanup(doc.Close)
	clientID := doc.URL + "/client.json"
	docHandler, err := authclient.MetadataDocumentHandler(oauth.ClientMetadata{
		ClientID: clientID, ClientName: "mcpstack interop", RedirectURIs: []string{redirect},
		GrantTypes: []string{oauth.GrantAuthorizationCode, oauth.GrantRefreshToken}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: oauth.AuthMethodNone,
	}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	doc.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		docFetches.Add(1)
		docHandler.ServeHTTP(w, r)
	})
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: doc.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	issuer := startOIDCProvider(t, []string{resA, resB}, "NODE_EXTRA_CA_CERTS="+caFile, "OIDC_CIMD_TRUST_LOOPBACK=1")
	protectedServers(t, ln, issuer)

	for _, tc := range []struct {
		name string
		cimd string // Config.ClientIDMetadataDocument; empty means DCR
	}{
		{name: "DCR"},
		{name: "CIMD", cimd: clientID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			fetchesBefore := docFetches.Load()
			br := newBrowser(t, redirect)
			store := &authclient.MemoryStore{}
			tr := authclient.NewTransport(authclient.Config{
				Authorizer:               br,
				ClientIDMetadataDocument: tc.cimd,
				ClientMetadata:           oauth.ClientMetadata{ClientName: "mcpstack interop (DCR)"},
				Store:                    store,
			})
			connect := func(endpoint string) *mcp.ClientSession {
				t.Helper()
				c := mcp.NewClient(&mcp.Implementation{Name: "mcpstack-client", Version: "1"}, nil)
				cs, err := c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: endpoint, HTTPClient: tr.Client(), DisableStandaloneSSE: true})
				if err != nil {
					t.Fatalf("connect %s: %v", endpoint, err)
				}
				t.Cleanup(func() { cs.Close() })
				return cs
			}
			call := func(cs *mcp.ClientSession, tool string) string {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: tool, Arguments: json.RawMessage(`{}`)})
				if err != nil {
					t.Fatalf("tools/call %s: %v", tool, err)
				}
				if res.IsError != nil && *res.IsError {
					t.Fatalf("tools/call %s: tool error %+v", tool, res.Content)
				}
				return res.Content[0].(*mcp.TextContent).Text
			}

			a := connect(resA)
			if got := call(a, "whoami"); got != "user-1 mcp" {
				t.Fatalf("whoami on %s: %q", resA, got)
			}
			// Step-up: admin needs the admin scope; the 403 challenge asks
			// for it, the client authorizes again with the union.
			if got := call(a, "admin"); got != "user-1 mcp,admin" && got != "user-1 admin,mcp" {
				t.Fatalf("admin after step-up: %q", got)
			}
			b := connect(resB)
			if got := call(b, "whoami"); got != "user-1 mcp" {
				t.Fatalf("whoami on %s: %q", resB, got)
			}
			asked := br.scopesAsked()
			if len(asked) != 3 || asked[0] != "mcp" || !slices.Equal(sortedFields(asked[1]), []string{"admin", "mcp"}) || asked[2] != "mcp" {
				t.Fatalf("authorization requests asked for scopes %q", asked)
			}

			// How the client was identified.
			ea, err := store.Load(ctx, authclient.Key{Resource: resA, Issuer: issuer})
			if err != nil || ea == nil || ea.Client == nil || ea.Token == nil {
				t.Fatalf("store entry for %s: %+v, %v", resA, ea, err)
			}
			if tc.cimd != "" {
				if ea.Client.ClientID != clientID || docFetches.Load() == fetchesBefore {
					t.Fatalf("client_id %q, document fetched %d times: CIMD not used", ea.Client.ClientID, docFetches.Load()-fetchesBefore)
				}
			} else if ea.Client.ClientID == "" || strings.HasPrefix(ea.Client.ClientID, "https://") || docFetches.Load() != fetchesBefore {
				t.Fatalf("client_id %q after DCR, document fetched %d times", ea.Client.ClientID, docFetches.Load()-fetchesBefore)
			}
			eb, err := store.Load(ctx, authclient.Key{Resource: resB, Issuer: issuer})
			if err != nil || eb == nil || eb.Token == nil {
				t.Fatalf("store entry for %s: %+v, %v", resB, eb, err)
			}
			tokA, tokB := ea.Token.AccessToken, eb.Token.AccessToken
			for _, x := range []struct {
				e   *authclient.Entry
				aud string
			}{{ea, resA}, {eb, resB}} {
				c := jwtClaims(t, x.e.Token.AccessToken)
				if c["iss"] != issuer || c["aud"] != x.aud || c["client_id"] != x.e.Client.ClientID {
					t.Fatalf("token claims %v, want iss %s aud %s client_id %s", c, issuer, x.aud, x.e.Client.ClientID)
				}
			}

			// Audience: each token works at its own resource only.
			for _, x := range []struct {
				endpoint, token string
				want            int
			}{
				{resA, tokA, http.StatusOK},
				{resB, tokB, http.StatusOK},
				{resA, tokB, http.StatusUnauthorized},
				{resB, tokA, http.StatusUnauthorized},
			} {
				status, challenge := rawInitialize(t, x.endpoint, x.token)
				if status != x.want {
					t.Errorf("token for %s at %s: %d %q, want %d", map[string]string{tokA: resA, tokB: resB}[x.token], x.endpoint, status, challenge, x.want)
				}
				if x.want == http.StatusUnauthorized && !strings.Contains(challenge, `error="invalid_token"`) {
					t.Errorf("challenge %q, want invalid_token", challenge)
				}
			}
		})
	}
}

// sortedFields splits a scope string and sorts it.
func sortedFields(s string) []string {
	f := strings.Fields(s)
	slices.Sort(f)
	return f
}

// rawInitialize POSTs an initialize request with token to endpoint and
// returns the status and the WWW-Authenticate header.
func rawInitialize(t *testing.T, endpoint, token string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}
