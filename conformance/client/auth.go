package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/mcpstack/mcpstack/authclient"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/oauth"
)

// cimdClientID is the Client ID Metadata Document URL the suite expects a
// client to use where the authorization server supports such documents.
const cimdClientID = "https://conformance-test.local/client-metadata.json"

// authContext is MCP_CONFORMANCE_CONTEXT for the auth scenarios that hand
// over credentials.
type authContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	Issuer           string `json:"issuer"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	ValidJWT         string `json:"valid_jwt"`
	IdPIssuer        string `json:"idp_issuer"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
	IdPClientSecret  string `json:"idp_client_secret"`
}

// runAuthScenario runs one of the suite's auth/ scenarios against serverURL:
// connect (authorizing when challenged), tools/list, tools/call test-tool.
// The authorization server of the suite answers the authorization request
// with an immediate redirect, which the client reads itself.
func runAuthScenario(ctx context.Context, scenario, serverURL string, conformanceContext json.RawMessage) error {
	var actx authContext
	if len(conformanceContext) > 0 {
		if err := json.Unmarshal(conformanceContext, &actx); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	cfg := authclient.Config{
		Authorizer:               &authclient.RedirectFollower{Redirect: "http://localhost:3000/callback"},
		ClientIDMetadataDocument: cimdClientID,
		ClientMetadata:           oauth.ClientMetadata{ClientName: "mcpstack-conformance-client"},
		OfflineAccess:            true,
		DPoP:                     true,
		LegacyDiscovery:          true,
	}
	if actx.ClientID != "" {
		reg := authclient.ClientRegistration{ClientID: actx.ClientID, ClientSecret: actx.ClientSecret}
		if actx.PrivateKeyPEM != "" {
			key, err := authclient.ParsePrivateKeyPEM([]byte(actx.PrivateKeyPEM), actx.SigningAlgorithm)
			if err != nil {
				return err
			}
			reg.Key = key
			reg.AuthMethod = oauth.AuthMethodPrivateKeyJWT
		}
		cfg.PreRegistered = func(issuer string) (authclient.ClientRegistration, bool) {
			if actx.Issuer != "" && issuer != actx.Issuer {
				return authclient.ClientRegistration{}, false
			}
			return reg, true
		}
	}
	switch {
	case actx.ValidJWT != "":
		// Workload identity federation: the workload's own JWT is the
		// assertion of the JWT bearer grant.
		cfg.Grant = authclient.GrantJWTBearer
		cfg.Assertion = func(context.Context, *authclient.Discovery) (string, error) { return actx.ValidJWT, nil }
	case actx.IdPIDToken != "":
		x := &authclient.CrossAppAccess{
			TokenEndpoint: actx.IdPTokenEndpoint,
			IDToken:       actx.IdPIDToken,
			ClientID:      actx.IdPClientID,
			ClientSecret:  actx.IdPClientSecret,
		}
		cfg.Grant = authclient.GrantJWTBearer
		cfg.Assertion = x.Assertion
	case scenario == "auth/client-credentials-jwt" || scenario == "auth/client-credentials-basic":
		cfg.Grant = authclient.GrantClientCredentials
	}
	rt := authclient.NewTransport(cfg)
	hc := &http.Client{Transport: rt}
	if os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION") == statelessVersion {
		return statelessToolsCall(ctx, hc, serverURL)
	}
	err := sessionToolsCall(ctx, hc, serverURL)
	var se *mcphttp.StatusError
	if errors.As(err, &se) && se.StatusCode == http.StatusBadRequest && strings.Contains(se.Message, "MCP-Protocol-Version") {
		// The alpha suite runs its newer scenarios with a stateless
		// 2026-07-28 mock even when the version it announces is older.
		return statelessToolsCall(ctx, hc, serverURL)
	}
	return err
}

// sessionToolsCall connects at 2025-11-25, lists the tools and calls
// test-tool.
func sessionToolsCall(ctx context.Context, hc *http.Client, serverURL string) error {
	logger := loggerFrom(ctx)
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpstack-conformance-client", Version: "0.1.0"}, &mcp.ClientOptions{
		Logger:               logger,
		CreateMessageHandler: answerSampling,
		ElicitationHandler:   acceptElicitation,
		DisableRoots:         true,
	})
	cs, err := c.Connect(ctx, &mcphttp.ClientTransport{
		Endpoint:              serverURL,
		HTTPClient:            hc,
		DisableLegacyFallback: true,
		DisableStandaloneSSE:  true,
		Logger:                logger,
	})
	if err != nil {
		return fmt.Errorf("connect to %s: %w", serverURL, err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	if _, err := callTool(ctx, cs, "test-tool", map[string]any{}); err != nil {
		return err
	}
	return nil
}

// statelessVersion is the protocol revision of the alpha suite's newer auth
// scenarios: no initialize, and every request names the version in a header
// and in _meta.
const statelessVersion = "2026-07-28"

// statelessToolsCall sends tools/list and tools/call test-tool as
// self-contained 2026-07-28 requests.
func statelessToolsCall(ctx context.Context, hc *http.Client, serverURL string) error {
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    statelessVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "mcpstack-conformance-client", "version": "0.1.0"},
	}
	calls := []struct {
		method string
		params map[string]any
	}{
		{"tools/list", map[string]any{"_meta": meta}},
		{"tools/call", map[string]any{"_meta": meta, "name": "test-tool", "arguments": map[string]any{}}},
	}
	for i, c := range calls {
		body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": c.method, "params": c.params})
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", statelessVersion)
		resp, err := hc.Do(req)
		if err != nil {
			return fmt.Errorf("%s: %w", c.method, err)
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", c.method, err)
		}
		var msg struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &msg) != nil || msg.Error != nil {
			return fmt.Errorf("%s: HTTP %d: %s", c.method, resp.StatusCode, data)
		}
	}
	return nil
}
