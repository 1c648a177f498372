package oauth_test

import (
	"fmt"

	"github.com/mcpstack/mcpstack/oauth"
)

func ExampleCanonicalResource() {
	for _, s := range []string{
		"HTTPS://MCP.Example.com:443/mcp/",
		"http://127.0.0.1:8080/",
		"https://mcp.example.com/%7Euser/./tools",
		"https://mcp.example.com/mcp#section",
	} {
		c, err := oauth.CanonicalResource(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(c)
	}
	// Output:
	// https://mcp.example.com/mcp
	// http://127.0.0.1:8080
	// https://mcp.example.com/~user/tools
	// error: oauth: invalid URI: "https://mcp.example.com/mcp#section": must not contain a fragment
}

func ExampleSameResource() {
	fmt.Println(oauth.SameResource("https://mcp.example.com/mcp", "HTTPS://mcp.example.com:443/mcp/"))
	fmt.Println(oauth.SameResource("https://mcp.example.com/mcp", "https://mcp.example.com/other"))
	// Output:
	// true
	// false
}

func ExampleBearerChallenge_String() {
	c := oauth.BearerChallenge{
		ResourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
		Scope:            []string{"files:read", "files:write"},
		Error:            oauth.InsufficientScope,
		ErrorDescription: `needs "files:write"`,
	}
	fmt.Println(c.String())
	// Output:
	// Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read files:write", error="insufficient_scope", error_description="needs \"files:write\""
}

func ExampleParseBearerChallenge() {
	header := []string{`Basic realm="legacy", Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"`}
	c, ok := oauth.ParseBearerChallenge(header)
	fmt.Println(ok)
	fmt.Println(c.ResourceMetadata)
	fmt.Println(c.Scope)
	// Output:
	// true
	// https://mcp.example.com/.well-known/oauth-protected-resource
	// [files:read]
}

func ExampleParseChallenges() {
	cs, err := oauth.ParseChallenges([]string{
		`Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`,
		`Negotiate YIIB9wYGKwYBBQUCoIIB7TCCAek=`,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cs {
		fmt.Printf("%s realm=%q title=%q token68=%q\n", c.Scheme, c.Param("realm"), c.Param("Title"), c.Token68)
	}
	// Output:
	// Newauth realm="apps" title="Login to \"apps\"" token68=""
	// Basic realm="simple" title="" token68=""
	// Negotiate realm="" title="" token68="YIIB9wYGKwYBBQUCoIIB7TCCAek="
}

func ExampleProtectedResourceMetadataURLs() {
	urls, err := oauth.ProtectedResourceMetadataURLs("https://mcp.example.com/tenant1/mcp/")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, u := range urls {
		fmt.Println(u)
	}
	// Output:
	// https://mcp.example.com/.well-known/oauth-protected-resource/tenant1/mcp
	// https://mcp.example.com/.well-known/oauth-protected-resource
}

func ExampleAuthorizationServerMetadataURLs() {
	for _, issuer := range []string{"https://auth.example.com/t1", "https://auth.example.com"} {
		urls, err := oauth.AuthorizationServerMetadataURLs(issuer)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, u := range urls {
			fmt.Println(u)
		}
	}
	// Output:
	// https://auth.example.com/.well-known/oauth-authorization-server/t1
	// https://auth.example.com/.well-known/openid-configuration/t1
	// https://auth.example.com/t1/.well-known/openid-configuration
	// https://auth.example.com/.well-known/oauth-authorization-server
	// https://auth.example.com/.well-known/openid-configuration
}

func ExampleProtectedResourceMetadataPath() {
	fmt.Println(oauth.ProtectedResourceMetadataPath("/mcp/"))
	fmt.Println(oauth.ProtectedResourceMetadataPath("/"))
	// Output:
	// /.well-known/oauth-protected-resource/mcp
	// /.well-known/oauth-protected-resource
}

func ExampleS256Challenge() {
	// The test vector of RFC 7636 Appendix B.
	verifier := "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	challenge := oauth.S256Challenge(verifier)
	fmt.Println(challenge)
	fmt.Println(oauth.VerifyS256(verifier, challenge))
	// Output:
	// E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM
	// true
}

func ExampleNewVerifier() {
	verifier, err := oauth.NewVerifier()
	if err != nil {
		fmt.Println(err)
		return
	}
	// Send the challenge with the authorization request and keep the
	// verifier for the token request.
	challenge := oauth.S256Challenge(verifier)
	fmt.Println(len(verifier), oauth.ValidVerifier(verifier), oauth.VerifyS256(verifier, challenge))
	// Output:
	// 43 true true
}

func ExampleRedirectURIMatches() {
	fmt.Println(oauth.RedirectURIMatches("http://127.0.0.1/callback", "http://127.0.0.1:49152/callback"))
	fmt.Println(oauth.RedirectURIMatches("https://app.example.com/callback", "https://app.example.com/callback/"))
	fmt.Println(oauth.RedirectURIMatches("http://localhost/callback", "http://localhost:49152/callback"))
	// Output:
	// true
	// false
	// false
}

func ExampleMergeScopes() {
	granted := oauth.ParseScope("files:read profile")
	challenged := []string{"files:read", "files:write"}
	fmt.Println(oauth.JoinScope(oauth.MergeScopes(granted, challenged)))
	fmt.Println(oauth.HasAllScopes(granted, challenged))
	// Output:
	// files:read profile files:write
	// false
}

func ExampleAuthorizationServerMetadata_PKCEAdvertised() {
	m := oauth.AuthorizationServerMetadata{Issuer: "https://auth.example.com"}
	// No code_challenge_methods_supported: an MCP client must stop here.
	fmt.Println(m.PKCEAdvertised(), m.SupportsS256())
	m.CodeChallengeMethodsSupported = []string{"S256"}
	fmt.Println(m.PKCEAdvertised(), m.SupportsS256())
	// Output:
	// false false
	// true true
}

func ExampleValidateClientIDMetadataDocument() {
	doc := oauth.ClientMetadata{
		ClientID:                "https://app.example.com/oauth/client.json",
		ClientName:              "Example App",
		RedirectURIs:            []string{"http://127.0.0.1/callback"},
		TokenEndpointAuthMethod: "client_secret_basic",
	}
	err := oauth.ValidateClientIDMetadataDocument("https://app.example.com/oauth/client.json", doc)
	fmt.Println(err)
	// Output:
	// oauth: invalid metadata: token_endpoint_auth_method: "client_secret_basic" needs a shared secret, which a public document cannot establish
}
