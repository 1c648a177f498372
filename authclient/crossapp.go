package authclient

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mcpstack/mcpstack/oauth"
)

// Token type identifiers of RFC 8693 and the identity assertion
// authorization grant (ID-JAG) used by enterprise-managed authorization.
const (
	TokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeIDJAG   = "urn:ietf:params:oauth:token-type:id-jag"
)

// CrossAppAccess produces the assertion of the enterprise cross-app access
// flow: the user's identity provider exchanges the ID token it issued for an
// identity assertion authorization grant (ID-JAG) aimed at the MCP server's
// authorization server (RFC 8693 token exchange), which the [Transport] then
// presents with [GrantJWTBearer] (RFC 7523). Set [Config.Assertion] to its
// Assertion method.
type CrossAppAccess struct {
	// TokenEndpoint is the identity provider's token endpoint.
	TokenEndpoint string
	// IDToken is the user's ID token from the identity provider.
	IDToken string
	// ClientID and ClientSecret identify this client at the identity
	// provider; with no secret the client is public (auth method none).
	ClientID     string
	ClientSecret string
	// Scope is requested for the grant, if not empty.
	Scope []string
	// HTTPClient sends the request; nil means a client with a 10 s
	// timeout. Its redirect policy is not used: redirects are refused.
	HTTPClient *http.Client
}

// Assertion performs the token exchange for the authorization server and
// resource in d and returns the ID-JAG.
func (x *CrossAppAccess) Assertion(ctx context.Context, d *Discovery) (string, error) {
	hc := x.HTTPClient
	form := url.Values{}
	form.Set("grant_type", GrantTokenExchange)
	form.Set("subject_token", x.IDToken)
	form.Set("subject_token_type", TokenTypeIDToken)
	form.Set("requested_token_type", TokenTypeIDJAG)
	form.Set("audience", d.Issuer)
	form.Set("resource", d.Resource)
	if len(x.Scope) > 0 {
		form.Set("scope", oauth.JoinScope(x.Scope))
	}
	client := ClientRegistration{ClientID: x.ClientID, ClientSecret: x.ClientSecret}
	var tr oauth.TokenResponse
	_, err := postForm(ctx, hc, x.TokenEndpoint, form, client.clientAuth("", timeNow()).Apply, &tr)
	if err != nil {
		return "", fmt.Errorf("authclient: token exchange at the identity provider: %w", err)
	}
	if tr.IssuedTokenType != TokenTypeIDJAG || tr.AccessToken == "" {
		return "", fmt.Errorf("authclient: token exchange returned %q, not an ID-JAG", tr.IssuedTokenType)
	}
	return tr.AccessToken, nil
}
