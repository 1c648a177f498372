package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/authclient"
	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/memory"
)

// oidcProvider is a minimal upstream OpenID Connect provider with an API:
// it signs the user in at once (a remembered consent for our static client
// id), issues ES256 ID tokens with the nonce, and its /api answers the
// upstream access tokens it issued, naming their user.
type oidcProvider struct {
	url string
	key *ecdsa.PrivateKey

	mu         sync.Mutex
	codes      map[string]url.Values
	tokens     map[string]string // access token -> sub
	authorizes int
}

const (
	e2eUpClient = "mcp-proxy-e2e"
	e2eUpSecret = "upstream-secret-e2e-0123456789"
)

func (p *oidcProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	reply := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		reply(200, map[string]any{"issuer": p.url, "authorization_endpoint": p.url + "/authorize",
			"token_endpoint": p.url + "/token", "jwks_uri": p.url + "/jwks", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}})
	case "/authorize":
		p.authorizes++
		q := r.URL.Query()
		code := fmt.Sprintf("code-%d", p.authorizes)
		p.codes[code] = q
		u, _ := url.Parse(q.Get("redirect_uri"))
		u.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {p.url}}.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	case "/token":
		id, secret, _ := r.BasicAuth()
		r.ParseForm()
		q, ok := p.codes[r.PostForm.Get("code")]
		delete(p.codes, r.PostForm.Get("code"))
		if id != e2eUpClient || secret != e2eUpSecret || !ok || !oauth.VerifyS256(r.PostForm.Get("code_verifier"), q.Get("code_challenge")) {
			reply(400, map[string]string{"error": "invalid_grant"})
			return
		}
		at := fmt.Sprintf("upstream-at-%d", len(p.tokens))
		p.tokens[at] = "octo"
		sig, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: p.key, KeyID: "k"}}, nil)
		now := time.Now()
		idt, _ := jwt.Signed(sig).Claims(map[string]any{"iss": p.url, "aud": e2eUpClient, "sub": "octo",
			"nonce": q.Get("nonce"), "iat": now.Unix(), "exp": now.Add(time.Minute).Unix()}).Serialize()
		reply(200, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600, "id_token": idt})
	case "/jwks":
		reply(200, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: "k", Algorithm: "ES256", Use: "sig"}}})
	case "/api":
		sub, ok := p.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if !ok {
			w.WriteHeader(401)
			return
		}
		fmt.Fprintf(w, "upstream API says hello to %s", sub)
	default:
		http.NotFound(w, r)
	}
}

// consentingBrowser is an authclient.Authorizer standing in for a person's
// browser: it keeps cookies, allows our consent page when it appears
// (posting the form from the page's origin) and follows redirects through
// the provider back to the redirect URI.
type consentingBrowser struct {
	redirect string
	hc       *http.Client

	mu       sync.Mutex
	consents int // consent pages seen
}

var (
	e2eCSRF    = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	e2eRequest = regexp.MustCompile(`name="request" value="([^"]+)"`)
)

func (b *consentingBrowser) RedirectURI() string { return b.redirect }

func (b *consentingBrowser) consentPages() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.consents
}

func (p *oidcProvider) signIns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.authorizes
}

func (b *consentingBrowser) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	for range 10 {
		resp, err := b.hc.Do(req)
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode/100 == 3:
			next, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
			if err != nil {
				return nil, err
			}
			if strings.HasPrefix(next.String(), b.redirect+"?") {
				return next.Query(), nil
			}
			req, _ = http.NewRequestWithContext(ctx, http.MethodGet, next.String(), nil)
		case resp.StatusCode == 200 && strings.Contains(string(body), `id="redirect-uri"`):
			b.mu.Lock()
			b.consents++
			b.mu.Unlock()
			cs, rq := e2eCSRF.FindSubmatch(body), e2eRequest.FindSubmatch(body)
			if cs == nil || rq == nil {
				return nil, errors.New("consent page without its form")
			}
			un := strings.NewReplacer("&#43;", "+", "&#61;", "=", "&amp;", "&")
			form := url.Values{"csrf": {un.Replace(string(cs[1]))}, "request": {un.Replace(string(rq[1]))}, "action": {"allow"}}
			origin := resp.Request.URL.Scheme + "://" + resp.Request.URL.Host
			req, _ = http.NewRequestWithContext(ctx, http.MethodPost, origin+resp.Request.URL.Path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", origin)
		default:
			return nil, fmt.Errorf("browser stopped at %d: %s", resp.StatusCode, body)
		}
	}
	return nil, errors.New("too many redirects")
}

// TestUpstreamSignInEndToEnd: an MCP client logs in through our
// authorization server, which shows its consent page and then delegates
// sign-in to an upstream OpenID Connect provider, and calls a tool that
// reads the upstream API with the user's upstream token (never seen by
// the client). A second client of the same user, registered anew, is asked
// for consent again before the provider is visited.
func TestUpstreamSignInEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	ca := newTestCA(t)
	serverTLS := ca.serverConfig(t)
	trusting := &http.Transport{TLSClientConfig: ca.clientConfig(), ForceAttemptHTTP2: true}
	t.Cleanup(trusting.CloseIdleConnections)
	hc := &http.Client{Transport: trusting}

	upSrv, asSrv, rsSrv := startHTTPS(t, serverTLS), startHTTPS(t, serverTLS), startHTTPS(t, serverTLS)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	prov := &oidcProvider{url: upSrv.URL, key: key, codes: map[string]url.Values{}, tokens: map[string]string{}}
	upSrv.set(prov)
	mcpURL := rsSrv.URL + "/mcp"

	as, err := authserver.New(ctx, authserver.Config{
		Issuer: asSrv.URL, Store: memory.New(), Resources: []string{mcpURL}, Scopes: []string{baseScope, adminScope},
		Upstream: &authserver.UpstreamConfig{Issuer: upSrv.URL, ClientID: e2eUpClient, ClientSecret: e2eUpSecret, HTTPClient: hc},
	})
	if err != nil {
		t.Fatal(err)
	}
	asSrv.set(as)

	// The resource server's tool calls the upstream API as the user.
	srv := mcp.NewServer(&mcp.Implementation{Name: "e2e-upstream", Version: "1.0.0"}, nil)
	upstreamAPI := auth.UpstreamClient(auth.PrincipalUpstream(as), trusting)
	if err := srv.AddTool(&mcp.Tool{Name: "upstream-hello", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, upSrv.URL+"/api", nil)
			resp, err := upstreamAPI.Do(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		}); err != nil {
		t.Fatal(err)
	}
	verifier, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: asSrv.URL, Audience: mcpURL, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := auth.New(auth.Options{Resource: mcpURL, Verifier: verifier, Scopes: []string{baseScope}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	if err := auth.RegisterMetadata(mux, oauth.ProtectedResourceMetadata{Resource: mcpURL, AuthorizationServers: []string{asSrv.URL},
		ScopesSupported: []string{baseScope}, BearerMethodsSupported: []string{"header"}}); err != nil {
		t.Fatal(err)
	}
	mux.Handle("/mcp", mw.Wrap(mcphttp.NewHandler(func(*http.Request) *mcp.Server { return srv },
		&mcphttp.Options{Identity: auth.SessionIdentity})))
	rsSrv.set(mux)

	jar, _ := cookiejar.New(nil)
	browserHC := &http.Client{Transport: trusting, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	connect := func(name string) (*mcp.ClientSession, *consentingBrowser, *recorder) {
		b := &consentingBrowser{redirect: "http://127.0.0.1:7777/callback", hc: browserHC}
		rec := &recorder{base: trusting}
		tr := authclient.NewTransport(authclient.Config{Base: rec, Store: &authclient.MemoryStore{}, HTTPClient: hc,
			Authorizer: b, ClientMetadata: oauth.ClientMetadata{ClientName: name}})
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil).Connect(ctx,
			&mcphttp.ClientTransport{Endpoint: mcpURL, HTTPClient: &http.Client{Transport: tr}})
		if err != nil {
			t.Fatalf("%s: connect: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs, b, rec
	}

	cs, b1, rec := connect("first client")
	if b1.consentPages() != 1 || prov.signIns() != 1 {
		t.Fatalf("first client: %d consent pages, %d upstream sign-ins; want 1 and 1", b1.consentPages(), prov.signIns())
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "upstream-hello", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; txt != "upstream API says hello to octo" {
		t.Fatalf("tool answered %q", txt)
	}
	if tok := rec.lastToken(); tok == "" || strings.Contains(tok, "upstream-at-") {
		t.Fatalf("the MCP client holds %q", tok)
	}

	// A second client (a new registration) of the same user, in the same
	// browser: our consent page again, before the provider is visited.
	_, b2, _ := connect("second client")
	if b2.consentPages() != 1 || prov.signIns() != 2 {
		t.Fatalf("second client: %d consent pages, %d upstream sign-ins in all; want 1 and 2", b2.consentPages(), prov.signIns())
	}
}
