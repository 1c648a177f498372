package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/authclient"
	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/internal/localca"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/memory"
)

// Scopes of the demo: the basic one every request needs, and the larger
// one that the admin_report tool needs.
const (
	demoScope      = "mcp:tools"
	demoAdminScope = "mcp:admin"
	demoUser       = "dev-user"
)

// authDemo is one run of the authorized demo: the servers it started, the
// events its observers saw, and where to report them.
type authDemo struct {
	rep    *reporter
	logger *slog.Logger

	issuer, mcpURL, cimdURL string
	as                      *authserver.Server

	mu     sync.Mutex
	events []string // the step names seen, in order
}

// saw records and prints a step that an observer saw happen.
func (d *authDemo) saw(step, format string, args ...any) {
	d.mu.Lock()
	d.events = append(d.events, step)
	d.mu.Unlock()
	d.rep.step(step, format, args...)
}

// count returns how many times step was seen.
func (d *authDemo) count(step string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, e := range d.events {
		if e == step {
			n++
		}
	}
	return n
}

// listenTLS listens on a new loopback port with TLS.
func listenTLS(cfg *tls.Config) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return tls.NewListener(ln, cfg), nil
}

// runAuthDemo starts, on 127.0.0.1 over HTTPS with an ephemeral CA, the
// embedded authorization server, an MCP server it protects, and a client
// that serves its Client ID Metadata Document; the client then walks the
// whole authorization flow, step-up included. Each step is printed as an
// observer sees the real request go by.
func runAuthDemo(ctx context.Context, rep *reporter, logger *slog.Logger, useBrowser bool) (err error) {
	ctx, cancel := context.WithTimeoutCause(ctx, time.Minute, errors.New("the demo took more than a minute"))
	defer cancel()
	d := &authDemo{rep: rep, logger: logger}

	ca, err := localca.New("mcpstack demo CA (ephemeral)", time.Hour)
	if err != nil {
		return &stepError{"tls", err}
	}
	serverTLS, err := ca.ServerConfig()
	if err != nil {
		return &stepError{"tls", err}
	}
	var lns [3]net.Listener
	for i := range lns {
		if lns[i], err = listenTLS(serverTLS); err != nil {
			return &stepError{"start", err}
		}
		defer lns[i].Close()
	}
	d.issuer = "https://" + lns[0].Addr().String()
	d.mcpURL = "https://" + lns[1].Addr().String() + "/mcp"
	d.cimdURL = "https://" + lns[2].Addr().String() + "/client.json"
	rep.step("tls", "ephemeral CA %q made for this run; only the demo's clients trust it", ca.Name())
	trusting := &http.Transport{TLSClientConfig: ca.ClientConfig(), ForceAttemptHTTP2: true}
	defer trusting.CloseIdleConnections()

	// The authorization server.
	cimd := authserver.NewCIMDFetcher()
	cimd.AllowLoopback = true
	cimd.TLSConfig = ca.ClientConfig()
	d.as, err = authserver.NewServer(ctx, authserver.Config{
		Issuer:    d.issuer,
		Store:     memory.New(),
		DevUser:   demoUser,
		Resources: []string{d.mcpURL},
		Scopes:    []string{demoScope, demoAdminScope},
		CIMD:      cimd,
		Logger:    logger,
	})
	if err != nil {
		return &stepError{"start", fmt.Errorf("authorization server: %w", err)}
	}
	// The timeouts of serve and authserver; no connection limit, on
	// loopback for one client.
	lim := &httpLimits{idle: defaultIdleTimeout, read: defaultReadTimeout, write: defaultWriteTimeout}
	serve := func(ln net.Listener, h http.Handler) {
		s := newHTTPServer(ln, nil, h, lim, slog.New(slog.DiscardHandler), nil)
		s.hs.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelDebug)
		go s.hs.Serve(s.ln)
		go func() { <-ctx.Done(); s.hs.Close() }()
	}
	serve(lns[0], d.as)
	rep.step("start", "authorization server %s (development user %q signs in automatically)", d.issuer, demoUser)

	// The MCP server, protected by it.
	srv, err := exampleServer(ctx, serveOptions{logger: logger})
	if err != nil {
		return &stepError{"start", err}
	}
	if err := srv.AddTool(&mcp.Tool{
		Name:        "admin_report",
		Description: "Reports the server's state; needs the " + demoAdminScope + " scope.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		version := ss.ProtocolVersion() // a 2025-11-25 session's
		if m := mcp.RequestMetaFromContext(ctx); m != nil {
			version = m.ProtocolVersion // a 2026-07-28 request's own
		}
		return textResult(fmt.Sprintf("all systems nominal; protocol %s", version)), nil
	}); err != nil {
		return &stepError{"start", err}
	}
	h, _, err := protectedHandler(srv, protection{
		issuer:     d.issuer,
		audience:   d.mcpURL,
		scopes:     []string{demoScope},
		toolScopes: map[string][]string{"admin_report": {demoAdminScope}},
	}, &http.Client{Transport: trusting}, mcphttp.Options{Logger: logger})
	if err != nil {
		return &stepError{"start", err}
	}
	serve(lns[1], h)
	rep.step("start", "MCP server %s (every request needs %s; the tool admin_report needs %s too)", d.mcpURL, demoScope, demoAdminScope)

	// The client: its redirect listener, its metadata document, its
	// authorizing transport.
	browserErr := make(chan error, 1)
	lo := authclient.LoopbackOptions{}
	if useBrowser {
		lo.Open = func(u string) error {
			rep.step("browser", "opening your browser at the authorization server; it will warn about the demo's certificate, which nothing else trusts")
			return authclient.OpenBrowser(u)
		}
	} else {
		lo.Open = func(u string) error {
			go func() {
				// A browser stopped by the run's end (the user's Ctrl-C, the
				// minute's bound) is not the reason the run ended: the step
				// in progress names it. The browser's last round trip may
				// still be open when the client already has its token.
				if err := d.consent(ctx, trusting, u); err != nil && ctx.Err() == nil {
					browserErr <- err
					cancel()
				}
			}()
			return nil
		}
	}
	authorizer, err := authclient.NewLoopbackAuthorizer(lo)
	if err != nil {
		return &stepError{"start", err}
	}
	defer authorizer.Close()
	doc, err := authclient.MetadataDocumentHandler(oauth.ClientMetadata{
		ClientID:                d.cimdURL,
		ClientName:              "mcpstack demo client",
		ClientURI:               "https://github.com/mcpstack/mcpstack",
		RedirectURIs:            []string{authorizer.RedirectURI()},
		GrantTypes:              []string{oauth.GrantAuthorizationCode, "refresh_token"},
		ResponseTypes:           []string{oauth.ResponseTypeCode},
		TokenEndpointAuthMethod: "none",
	}, time.Minute)
	if err != nil {
		return &stepError{"start", fmt.Errorf("client metadata document: %w", err)}
	}
	serve(lns[2], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.saw("cimd", "the authorization server fetched the client's metadata document %s (client_name %q, redirect %s)", d.cimdURL, "mcpstack demo client", authorizer.RedirectURI())
		doc.ServeHTTP(w, r)
	}))
	rep.step("start", "client, identified by its metadata document %s", d.cimdURL)

	observed := &observer{d: d, base: trusting}
	at := authclient.NewTransport(authclient.Config{
		Base:                     observed,
		HTTPClient:               &http.Client{Transport: observed},
		Authorizer:               authorizer,
		ClientIDMetadataDocument: d.cimdURL,
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpstack-demo-client", Version: version}, &mcp.ClientOptions{Logger: logger})

	// fail names the step; a failure of the scripted browser is the reason
	// when it is what stopped the flow.
	fail := func(step string, err error) error {
		select {
		case berr := <-browserErr:
			return &stepError{"authorize", berr}
		default:
		}
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil && !errors.Is(cause, context.Canceled) {
			err = cause
		}
		return &stepError{step, err}
	}

	cs, err := client.Connect(ctx, &mcphttp.ClientTransport{Endpoint: d.mcpURL, HTTPClient: &http.Client{Transport: at}})
	if err != nil {
		return fail("initialize", err)
	}
	defer cs.Close()
	init := cs.InitializeResult()
	rep.step("initialize", "authorized session with %s %s, protocol %s", init.ServerInfo.Name, init.ServerInfo.Version, init.ProtocolVersion)

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fail("tools/list", err)
	}
	names := make([]string, 0, len(tools.Tools))
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	rep.step("tools/list", "%d tools: %s", len(names), strings.Join(names, ", "))

	res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "time", Arguments: json.RawMessage(`{"timezone":"UTC"}`)})
	if err != nil {
		return fail("tools/call", err)
	}
	if res.IsError != nil && *res.IsError {
		return fail("tools/call", fmt.Errorf("time reported an error: %v", contentText(res)))
	}
	rep.step("tools/call", "time -> %s", contentText(res))

	before := d.count("token")
	res, err = cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "admin_report", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		return fail("step-up", err)
	}
	if d.count("403") == 0 || d.count("token") <= before {
		return &stepError{"step-up", errors.New("admin_report succeeded without a 403 and a new token: the scope check did not happen")}
	}
	rep.step("tools/call", "admin_report (retried with the larger token) -> %s", contentText(res))

	for _, want := range []string{"401", "prm", "as-metadata", "cimd", "authorize", "consent", "token", "403"} {
		if useBrowser && want == "consent" {
			continue // the person's browser is not observed
		}
		if d.count(want) == 0 {
			return &stepError{want, errors.New("this step never happened")}
		}
	}
	if err := cs.Close(); err != nil {
		return &stepError{"shutdown", err}
	}
	rep.step("done", "every step worked: login by CIMD with PKCE, an audience-bound token, a 403 insufficient_scope and the step-up")
	return nil
}

// contentText joins the text blocks of a result.
func contentText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}

var (
	formRE   = regexp.MustCompile(`<form method="post" action="([^"]*)">`)
	hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)

// consent plays the development user's browser: it opens the
// authorization URL (the server signs the development user in), reads the
// consent page, and presses Allow; the redirect then reaches the client's
// loopback listener.
func (d *authDemo) consent(ctx context.Context, base http.RoundTripper, authURL string) error {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return err
	}
	browser := &http.Client{Jar: jar, Transport: &observer{d: d, base: base, browser: true}, Timeout: 30 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := browser.Do(req)
	if err != nil {
		return err
	}
	page, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.Request.URL.Host != req.URL.Host {
		return nil // no consent page: already redirected to the client
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the authorization server answered %s", resp.Status)
	}
	m := formRE.FindSubmatch(page)
	if m == nil {
		return errors.New("the authorization page has no consent form")
	}
	action, err := resp.Request.URL.Parse(html.UnescapeString(string(m[1])))
	if err != nil {
		return err
	}
	form := url.Values{"action": {"allow"}}
	for _, h := range hiddenRE.FindAllSubmatch(page, -1) {
		form.Set(html.UnescapeString(string(h[1])), html.UnescapeString(string(h[2])))
	}
	post, err := http.NewRequestWithContext(ctx, http.MethodPost, action.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	post.Header.Set("Origin", d.issuer)
	resp, err = browser.Do(post)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the redirect back to the client got %s", resp.Status)
	}
	return nil
}

// observer is an http.RoundTripper that reports the steps of the flow as
// the requests that make them go by.
type observer struct {
	d       *authDemo
	base    http.RoundTripper
	browser bool // the scripted browser's requests
}

func (o *observer) RoundTrip(req *http.Request) (*http.Response, error) {
	if o.browser && req.URL.Query().Has("code") && !strings.HasPrefix(req.URL.String(), o.d.issuer) {
		// Reported as it is sent: the client's loopback handler hands the
		// code over before it answers the browser, so the token request
		// may go by before this round trip returns.
		u := req.URL
		o.d.saw("redirect", "the browser came back to the client's loopback redirect %s with a code", u.Scheme+"://"+u.Host+u.Path)
	}
	resp, err := o.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	o.report(req, resp)
	return resp, nil
}

// peek reads a response body of a metadata or token answer and puts it
// back.
func peek(resp *http.Response) []byte {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return b
}

func (o *observer) report(req *http.Request, resp *http.Response) {
	d := o.d
	md := d.as.Metadata()
	u := req.URL
	endpoint := u.Scheme + "://" + u.Host + u.Path
	switch {
	case o.browser && endpoint == md.AuthorizationEndpoint && req.Method == http.MethodGet:
		q := u.Query()
		d.saw("authorize", "the browser opens the authorization endpoint: client_id %s, scope %q, resource %s, code_challenge_method %s",
			q.Get("client_id"), q.Get("scope"), q.Get("resource"), q.Get("code_challenge_method"))
	case o.browser && endpoint == md.AuthorizationEndpoint && req.Method == http.MethodPost:
		d.saw("consent", "the development user %q pressed Allow on the consent page -> %s", demoUser, resp.Status)
	case o.browser: // the redirect back is reported by RoundTrip
	case strings.Contains(u.Path, oauth.WellKnownProtectedResource):
		var prm oauth.ProtectedResourceMetadata
		_ = json.Unmarshal(peek(resp), &prm)
		d.saw("prm", "GET %s -> %d: resource %s, authorization servers %v, scopes %v", u, resp.StatusCode, prm.Resource, prm.AuthorizationServers, prm.ScopesSupported)
	case strings.Contains(u.Path, "/.well-known/oauth-authorization-server") || strings.Contains(u.Path, "/.well-known/openid-configuration"):
		var asm oauth.AuthorizationServerMetadata
		_ = json.Unmarshal(peek(resp), &asm)
		d.saw("as-metadata", "GET %s -> %d: issuer %s, PKCE %v, client_id_metadata_document_supported %v", u, resp.StatusCode, asm.Issuer, asm.CodeChallengeMethodsSupported, asm.ClientIDMetadataDocumentSupported)
	case endpoint == md.RegistrationEndpoint:
		d.saw("register", "POST %s -> %d: dynamic client registration", u, resp.StatusCode)
	case endpoint == md.TokenEndpoint:
		var tr struct {
			TokenType    string `json:"token_type"`
			Scope        string `json:"scope"`
			ExpiresIn    int    `json:"expires_in"`
			RefreshToken string `json:"refresh_token"`
			Error        string `json:"error"`
		}
		_ = json.Unmarshal(peek(resp), &tr)
		if tr.Error != "" {
			d.saw("token-error", "POST %s -> %d: %s", u, resp.StatusCode, tr.Error)
			return
		}
		d.saw("token", "POST %s -> %d: %s token, scope %q, expires in %ds, refresh token %v (code exchanged with the PKCE verifier)", u, resp.StatusCode, tr.TokenType, tr.Scope, tr.ExpiresIn, tr.RefreshToken != "")
	case endpoint == d.mcpURL && resp.StatusCode == http.StatusUnauthorized:
		d.saw("401", "%s %s (%s) without a token -> 401; WWW-Authenticate: %s", req.Method, u, rpcMethod(req), resp.Header.Get("WWW-Authenticate"))
	case endpoint == d.mcpURL && resp.StatusCode == http.StatusForbidden:
		d.saw("403", "%s %s (%s) -> 403; WWW-Authenticate: %s", req.Method, u, rpcMethod(req), resp.Header.Get("WWW-Authenticate"))
	}
}

// rpcMethod returns the JSON-RPC method of a POST body, if it can be read
// again.
func rpcMethod(req *http.Request) string {
	if req.GetBody == nil {
		return req.Method
	}
	body, err := req.GetBody()
	if err != nil {
		return req.Method
	}
	defer body.Close()
	var m struct {
		Method string `json:"method"`
	}
	if json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(&m) != nil || m.Method == "" {
		return req.Method
	}
	if m.Method == "tools/call" {
		return m.Method + " " + toolName(req)
	}
	return m.Method
}

func toolName(req *http.Request) string {
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	var m struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(&m)
	return m.Params.Name
}
