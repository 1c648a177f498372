package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/internal/oauthhttp"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/oauth"
)

// readSecretFile returns the first line of a secret file, trimmed.
func readSecretFile(flagName, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--%s: %w", flagName, err)
	}
	secret, _, _ := strings.Cut(string(b), "\n")
	if secret = strings.TrimSpace(secret); secret == "" {
		return "", usageErrorf("--%s %s is empty", flagName, path)
	}
	return secret, nil
}

// asExchangeFlags are mcpstack authserver's flags for the resource server
// that may exchange its users' access tokens for their upstream tokens.
type asExchangeFlags struct {
	clientID, secretFile, resource *string
}

func addASExchangeFlags(fs *flag.FlagSet) asExchangeFlags {
	return asExchangeFlags{
		clientID:   fs.String("upstream-exchange-client-id", "", "let the resource server with client `ID` (a confidential client, created in --db with the secret of --upstream-exchange-secret-file) exchange its users' access tokens for their upstream tokens (RFC 8693)"),
		secretFile: fs.String("upstream-exchange-secret-file", "", "read the secret of --upstream-exchange-client-id from `FILE` (first line)"),
		resource:   fs.String("upstream-exchange-resource", "", "the resource `URI` of --upstream-exchange-client-id: only access tokens issued for it are exchanged (default: the only --resource)"),
	}
}

// exchangeClient is the exchange client of the flags, read and checked
// before anything is opened.
type exchangeClient struct {
	id, secret, resource string
}

// check reads the flags into an exchangeClient, or nil without
// --upstream-exchange-client-id.
func (f asExchangeFlags) check(up *authserver.UpstreamConfig, resources []string) (*exchangeClient, error) {
	if *f.clientID == "" {
		if *f.secretFile != "" || *f.resource != "" {
			return nil, usageErrorf("--upstream-exchange-secret-file and --upstream-exchange-resource need --upstream-exchange-client-id")
		}
		return nil, nil
	}
	if up == nil {
		return nil, usageErrorf("--upstream-exchange-client-id needs --upstream-issuer")
	}
	if *f.secretFile == "" {
		return nil, usageErrorf("--upstream-exchange-client-id needs --upstream-exchange-secret-file")
	}
	res := *f.resource
	if res == "" {
		if len(resources) != 1 {
			return nil, usageErrorf("--upstream-exchange-client-id needs --upstream-exchange-resource (or exactly one --resource)")
		}
		res = resources[0]
	}
	if _, err := oauth.CanonicalResource(res); err != nil {
		return nil, usageErrorf("--upstream-exchange-resource %q: %v", res, err)
	}
	secret, err := readSecretFile("upstream-exchange-secret-file", *f.secretFile)
	if err != nil {
		return nil, err
	}
	return &exchangeClient{id: *f.clientID, secret: secret, resource: res}, nil
}

// apply creates or checks the exchange client in st and lists it in up.
func (x *exchangeClient) apply(ctx context.Context, st authserver.Store, up *authserver.UpstreamConfig) error {
	if x == nil {
		return nil
	}
	if err := ensureConfidentialClient(ctx, st, x.id, x.secret); err != nil {
		return fmt.Errorf("--upstream-exchange-client-id: %w", err)
	}
	up.ExchangeClients = append(up.ExchangeClients, authserver.ExchangeClient{ClientID: x.id, Resource: x.resource})
	return nil
}

// ensureConfidentialClient creates a client authenticating with secret
// (client_secret_basic), or checks that the one stored under id does. A
// stored client is never changed: a secret that differs is refused rather
// than silently replacing the credentials another process may rely on.
func ensureConfidentialClient(ctx context.Context, st authserver.Store, id, secret string) error {
	c, err := st.Client(ctx, id)
	if errors.Is(err, authserver.ErrNotFound) {
		return st.CreateClient(ctx, authserver.Client{
			Metadata: oauth.ClientMetadata{ClientID: id, ClientName: "resource server " + id,
				GrantTypes: []string{oauth.GrantTokenExchange}, TokenEndpointAuthMethod: oauth.AuthMethodClientSecretBasic},
			SecretHash: authserver.HashSecret(secret), IssuedAt: time.Now(),
		})
	}
	if err != nil {
		return err
	}
	if c.AuthMethod() != oauth.AuthMethodClientSecretBasic || string(c.SecretHash) != string(authserver.HashSecret(secret)) {
		return fmt.Errorf("client %q is already in the database with other credentials; choose another id", id)
	}
	return nil
}

// rsExchangeFlags are mcpstack serve's flags for reading the user's
// upstream token through the authorization server (whoami_upstream).
type rsExchangeFlags struct {
	issuer, userInfo, clientID, secretFile *string
}

func addRSExchangeFlags(fs *flag.FlagSet) rsExchangeFlags {
	return rsExchangeFlags{
		issuer:     fs.String("upstream-issuer", "", "with --issuer and --upstream-exchange-client-id, offer whoami_upstream: the user's identity at the provider whose issuer is `URL`, where the authorization server signed them in"),
		userInfo:   fs.String("upstream-userinfo-url", "", "the user-info `URL` whoami_upstream calls (default: the userinfo_endpoint of --upstream-issuer's OpenID Connect metadata)"),
		clientID:   fs.String("upstream-exchange-client-id", "", "this server's client `ID` at --issuer, allowed there to exchange access tokens for upstream tokens (RFC 8693)"),
		secretFile: fs.String("upstream-exchange-secret-file", "", "read the secret of --upstream-exchange-client-id from `FILE` (first line)"),
	}
}

// upstreamTool is what whoami_upstream needs: the token source and the
// user-info endpoint.
type upstreamTool struct {
	src      auth.TokenSource
	issuer   string
	userInfo string // empty: discovered at the first call
	http     *http.Client
}

// build returns the upstreamTool of the flags, or nil without them.
func (f rsExchangeFlags) build(issuer string) (*upstreamTool, error) {
	if *f.issuer == "" && *f.clientID == "" && *f.secretFile == "" && *f.userInfo == "" {
		return nil, nil
	}
	switch {
	case issuer == "":
		return nil, usageErrorf("--upstream-issuer and --upstream-exchange-client-id need --issuer")
	case *f.issuer == "" || *f.clientID == "" || *f.secretFile == "":
		return nil, usageErrorf("--upstream-issuer, --upstream-exchange-client-id and --upstream-exchange-secret-file go together")
	}
	if (*f.userInfo != "" && !httpsOrLoopback(*f.userInfo)) || !httpsOrLoopback(*f.issuer) {
		return nil, usageErrorf("--upstream-issuer and --upstream-userinfo-url must be https (or http on loopback): the upstream token is sent there")
	}
	secret, err := readSecretFile("upstream-exchange-secret-file", *f.secretFile)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: auth.DefaultHTTPTimeout}
	x := &auth.TokenExchange{Issuer: issuer, ClientID: *f.clientID, ClientSecret: secret, Audience: *f.issuer, HTTPClient: hc}
	return &upstreamTool{src: x, issuer: *f.issuer, userInfo: *f.userInfo, http: hc}, nil
}

// maxUserInfoBytes bounds the user-info answer whoami_upstream returns.
const maxUserInfoBytes = 64 << 10

var whoamiUpstreamTool = &mcp.Tool{
	Name:        "whoami_upstream",
	Description: "Tells who you are at the identity provider you signed in with, from its user-info endpoint.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(true)},
}

// call asks the provider's user-info endpoint who the caller is, with the
// caller's upstream token obtained by token exchange: the MCP client's
// token goes to the authorization server only, the upstream token to the
// provider only, and neither into the result.
func (u *upstreamTool) call(ctx context.Context, _ *mcp.ServerSession, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	target, err := u.userInfoURL(ctx)
	if err != nil {
		return toolError("no user-info endpoint: %v", err), nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := auth.UpstreamClient(u.src, u.http.Transport).Do(req)
	if err != nil {
		return toolError("the upstream token could not be obtained or used: %v", err), nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxUserInfoBytes+1))
	switch {
	case err != nil:
		return toolError("reading the user info: %v", err), nil
	case len(body) > maxUserInfoBytes:
		return toolError("the user info is larger than %d bytes", maxUserInfoBytes), nil
	case resp.StatusCode != http.StatusOK:
		return toolError("the user-info endpoint answered %d", resp.StatusCode), nil
	}
	return textResult(string(body)), nil
}

// userInfoURL returns the configured user-info endpoint, or the one of the
// provider's metadata, found and checked by the module's one OAuth HTTP
// client (internal/oauthhttp: RFC 8414 and OpenID Connect Discovery
// locations, exact issuer, validated metadata, no redirects).
func (u *upstreamTool) userInfoURL(ctx context.Context) (string, error) {
	if u.userInfo != "" {
		return u.userInfo, nil
	}
	m, err := oauthhttp.DiscoverAuthorizationServer(ctx, u.http, u.issuer, oauthhttp.DiscoverOptions{})
	if err != nil {
		return "", fmt.Errorf("metadata of %s: %w", u.issuer, err)
	}
	if m.UserinfoEndpoint == "" {
		return "", fmt.Errorf("the metadata of %s has no userinfo_endpoint", u.issuer)
	}
	return m.UserinfoEndpoint, nil
}

// httpsOrLoopback reports whether a bearer token may be sent to raw: over
// TLS, or to this machine (oauthhttp.CheckURL, the module's one rule).
func httpsOrLoopback(raw string) bool { return oauthhttp.CheckURL(raw) == nil }
