package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/authclient"
	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/internal/localca"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/memory"
)

// Scopes of the test: every MCP request needs baseScope; the admin tool
// needs adminScope too.
const (
	baseScope  = "mcp:tools"
	adminScope = "mcp:admin"
	redirect   = "http://127.0.0.1/callback"
)

// testCA is a certificate authority made for one test; only the test's
// clients trust it.
type testCA struct{ *localca.CA }

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	ca, err := localca.New("mcpstack e2e test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{ca}
}

// serverConfig returns a TLS configuration with a leaf certificate for
// 127.0.0.1 signed by the CA.
func (ca *testCA) serverConfig(t *testing.T) *tls.Config {
	t.Helper()
	cfg, err := ca.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// clientConfig returns a TLS configuration that trusts the CA only.
func (ca *testCA) clientConfig() *tls.Config { return ca.ClientConfig() }

// httpsServer is an HTTPS server on a loopback port whose handler is set
// once its URL is known.
type httpsServer struct {
	URL string
	mu  sync.Mutex
	h   http.Handler
}

func (s *httpsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.h
	s.mu.Unlock()
	if h == nil {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	h.ServeHTTP(w, r)
}

func (s *httpsServer) set(h http.Handler) {
	s.mu.Lock()
	s.h = h
	s.mu.Unlock()
}

func startHTTPS(t *testing.T, cfg *tls.Config) *httpsServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &httpsServer{URL: "https://" + ln.Addr().String()}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(tls.NewListener(ln, cfg))
	t.Cleanup(func() { hs.Close() })
	return s
}

// counting counts the requests to one path of a handler.
type counting struct {
	path string
	n    atomic.Int64
	next http.Handler
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == c.path {
		c.n.Add(1)
	}
	c.next.ServeHTTP(w, r)
}

// resourceServer returns the handler of an MCP server at audience, protected
// by the auth middleware with a JWT verifier that discovers issuer's keys.
func resourceServer(t *testing.T, issuer, audience string, hc *http.Client) http.Handler {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "e2e-server", Version: "1.0.0"}, nil)
	for _, name := range []string{"echo", "admin"} {
		if err := srv.AddTool(&mcp.Tool{
			Name:        name,
			InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ok"}}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	verifier, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: issuer, Audience: audience, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := auth.New(auth.Options{
		Resource:   audience,
		Verifier:   verifier,
		Scopes:     []string{baseScope},
		ToolScopes: map[string][]string{"admin": {adminScope}},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	if err := auth.RegisterMetadata(mux, oauth.ProtectedResourceMetadata{
		Resource:               audience,
		AuthorizationServers:   []string{issuer},
		ScopesSupported:        []string{baseScope, adminScope},
		BearerMethodsSupported: []string{"header"},
	}); err != nil {
		t.Fatal(err)
	}
	mux.Handle("/mcp", mw.Wrap(mcphttp.NewHandler(func(*http.Request) *mcp.Server { return srv },
		&mcphttp.Options{Identity: auth.SessionIdentity})))
	return mux
}

// recorder is the client's base transport to MCP servers: it records the
// status codes the MCP endpoint answered and the last bearer token sent.
type recorder struct {
	base http.RoundTripper

	mu       sync.Mutex
	statuses []int
	token    string
	forbid   []oauth.BearerChallenge // the challenges of the 403 answers
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(req.URL.Path, "/mcp") {
		r.mu.Lock()
		r.statuses = append(r.statuses, resp.StatusCode)
		if resp.StatusCode == http.StatusForbidden {
			ch, _ := oauth.ParseBearerChallenge(resp.Header.Values("WWW-Authenticate"))
			r.forbid = append(r.forbid, ch)
		}
		if tok != "" && resp.StatusCode/100 == 2 {
			r.token = tok
		}
		r.mu.Unlock()
	}
	return resp, nil
}

func (r *recorder) count(status int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.statuses {
		if s == status {
			n++
		}
	}
	return n
}

func (r *recorder) forbidden() []oauth.BearerChallenge {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]oauth.BearerChallenge(nil), r.forbid...)
}

func (r *recorder) lastToken() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.token
}

// TestAuthFlow runs our client through the whole authorization flow against
// our authorization server and our resource server, over HTTPS on
// 127.0.0.1, once registering by Client ID Metadata Document and once by
// Dynamic Client Registration.
func TestAuthFlow(t *testing.T) {
	for _, tc := range []struct {
		name string
		cimd bool // the client offers a metadata document
	}{
		{"CIMD", true},
		{"DCR", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()

			ca := newTestCA(t)
			serverTLS := ca.serverConfig(t)
			trusting := &http.Transport{TLSClientConfig: ca.clientConfig(), ForceAttemptHTTP2: true}
			t.Cleanup(trusting.CloseIdleConnections)
			hc := &http.Client{Transport: trusting}

			asSrv := startHTTPS(t, serverTLS)
			rsSrv := startHTTPS(t, serverTLS)
			otherSrv := startHTTPS(t, serverTLS)
			docSrv := startHTTPS(t, serverTLS)
			mcpURL := rsSrv.URL + "/mcp"
			otherURL := otherSrv.URL + "/mcp"
			docURL := docSrv.URL + "/client.json"

			// The authorization server: development user, every client
			// trusted (no consent page), CIMD allowed on loopback with the
			// test CA.
			fetcher := authserver.NewCIMDFetcher()
			fetcher.AllowLoopback = true
			fetcher.TLSConfig = ca.clientConfig()
			as, err := authserver.New(ctx, authserver.Config{
				Issuer:        asSrv.URL,
				Store:         memory.New(),
				DevUser:       "e2e-user",
				TrustedClient: func(authserver.Client) bool { return true },
				Resources:     []string{mcpURL, otherURL},
				Scopes:        []string{baseScope, adminScope},
				CIMD:          fetcher,
			})
			if err != nil {
				t.Fatal(err)
			}
			registrations := &counting{path: "/register", next: as}
			tokens := &counting{path: "/token", next: registrations}
			asSrv.set(tokens)

			rsSrv.set(resourceServer(t, asSrv.URL, mcpURL, hc))
			otherSrv.set(resourceServer(t, asSrv.URL, otherURL, hc))

			// The client's metadata document.
			doc, err := authclient.MetadataDocumentHandler(oauth.ClientMetadata{
				ClientID:                docURL,
				ClientName:              "mcpstack e2e client",
				RedirectURIs:            []string{redirect},
				GrantTypes:              []string{oauth.GrantAuthorizationCode, "refresh_token"},
				ResponseTypes:           []string{oauth.ResponseTypeCode},
				TokenEndpointAuthMethod: "none",
			}, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			docFetches := &counting{path: "/client.json", next: doc}
			docSrv.set(docFetches)

			// The client.
			rec := &recorder{base: trusting}
			store := &authclient.MemoryStore{}
			cfg := authclient.Config{
				Base:           rec,
				Store:          store,
				HTTPClient:     hc,
				Authorizer:     &authclient.RedirectFollower{Redirect: redirect, HTTPClient: hc},
				ClientMetadata: oauth.ClientMetadata{ClientName: "mcpstack e2e client"},
			}
			if tc.cimd {
				cfg.ClientIDMetadataDocument = docURL
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "e2e-client", Version: "1.0.0"}, nil)
			tr := authclient.NewTransport(cfg)
			cs, err := client.Connect(ctx, &mcphttp.ClientTransport{
				Endpoint:   mcpURL,
				HTTPClient: &http.Client{Transport: tr},
			})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			if rec.count(http.StatusUnauthorized) == 0 {
				t.Error("the first request was not challenged with 401")
			}

			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			if len(tools.Tools) != 2 {
				t.Errorf("tools/list: %d tools, want 2", len(tools.Tools))
			}
			if n := rec.count(http.StatusForbidden); n != 0 {
				t.Fatalf("%d 403 answers before the admin call", n)
			}
			small := rec.lastToken()
			if n := tokens.n.Load(); n != 1 {
				t.Errorf("%d token requests before the admin call, want 1", n)
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "admin", Arguments: json.RawMessage(`{}`)})
			if err != nil {
				t.Fatalf("tools/call admin: %v", err)
			}
			if res.IsError != nil && *res.IsError {
				t.Fatalf("tools/call admin: tool error %+v", res.Content)
			}
			if chs := rec.forbidden(); len(chs) != 1 {
				t.Errorf("%d 403 answers, want 1 (the step-up)", len(chs))
			} else if chs[0].Error != oauth.InsufficientScope || !slices.Contains(chs[0].Scope, adminScope) {
				t.Errorf("403 challenge: error %q scope %q, want %q naming %s", chs[0].Error, chs[0].Scope, oauth.InsufficientScope, adminScope)
			}
			if n := tokens.n.Load(); n != 2 {
				t.Errorf("%d token requests after the step-up, want 2", n)
			}
			big := rec.lastToken()
			if big == "" || big == small {
				t.Error("the admin call was not retried with a new token")
			}

			// Which registration path was used.
			if tc.cimd {
				if n := registrations.n.Load(); n != 0 {
					t.Errorf("CIMD: %d requests to the registration endpoint, want 0", n)
				}
				if docFetches.n.Load() == 0 {
					t.Error("CIMD: the authorization server never fetched the metadata document")
				}
			} else {
				if n := registrations.n.Load(); n != 1 {
					t.Errorf("DCR: %d requests to the registration endpoint, want 1", n)
				}
				if n := docFetches.n.Load(); n != 0 {
					t.Errorf("DCR: the metadata document was fetched %d times", n)
				}
			}

			// The token is good at its own resource server, and refused by
			// another one (another audience of the same issuer).
			for _, c := range []struct {
				url        string
				wantStatus int
			}{
				{mcpURL, http.StatusOK},
				{otherURL, http.StatusUnauthorized},
			} {
				status, ch := initialize(t, ctx, hc, c.url, big)
				if status != c.wantStatus {
					t.Errorf("initialize at %s with the token: %d, want %d", c.url, status, c.wantStatus)
				}
				if c.wantStatus == http.StatusUnauthorized && ch.Error != oauth.InvalidToken {
					t.Errorf("initialize at %s: error %q, want %q", c.url, ch.Error, oauth.InvalidToken)
				}
			}

			// Logout revokes the grant at the authorization server: the
			// refresh token the client held is refused afterwards.
			entry, err := store.Load(ctx, authclient.Key{Resource: mcpURL, Issuer: asSrv.URL})
			if err != nil || entry == nil || entry.Token == nil || entry.Token.RefreshToken == "" || entry.Client == nil {
				t.Fatalf("stored entry before logout: %+v, %v", entry, err)
			}
			refresh := entry.Token.RefreshToken
			if err := tr.Logout(ctx, mcpURL); err != nil {
				t.Fatalf("logout: %v", err)
			}
			form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {entry.Client.ClientID}, "resource": {mcpURL}}
			resp, err := hc.PostForm(asSrv.URL+"/token", form)
			if err != nil {
				t.Fatal(err)
			}
			var oe oauth.ErrorResponse
			json.NewDecoder(resp.Body).Decode(&oe)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || oe.Code != "invalid_grant" {
				t.Errorf("refresh after logout: %d %q, want 400 invalid_grant", resp.StatusCode, oe.Code)
			}
		})
	}
}

// initialize posts an initialize request to url with the bearer token and
// returns the status and the Bearer challenge, if any.
func initialize(t *testing.T, ctx context.Context, hc *http.Client, url, token string) (int, oauth.BearerChallenge) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1.0.0"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ch, _ := oauth.ParseBearerChallenge(resp.Header.Values("WWW-Authenticate"))
	return resp.StatusCode, ch
}
