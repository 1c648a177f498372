package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mcpstack/mcpstack/authclient"
	"github.com/mcpstack/mcpstack/mcp"
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
	logger := loggerFrom(ctx)
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpstack-conformance-client", Version: "0.1.0"}, &mcp.ClientOptions{
		Logger:               logger,
		CreateMessageHandler: answerSampling,
		ElicitationHandler:   acceptElicitation,
		DisableRoots:         true,
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:              serverURL,
		HTTPClient:            &http.Client{Transport: rt},
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
