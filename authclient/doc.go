// Package authclient is the client side of MCP authorization: an
// [http.RoundTripper] that obtains, attaches, refreshes and upgrades OAuth 2.1
// access tokens for the MCP servers it talks to.
//
// Plug a [Transport] into any HTTP-based MCP transport through its
// http.Client. When a server answers 401, the transport:
//
//  1. reads the Bearer challenge (RFC 7235, RFC 6750) and fetches the
//     protected resource metadata from its resource_metadata URL, or else
//     from the path-specific then the root well-known location (RFC 9728),
//     and refuses metadata whose resource does not name the server;
//  2. picks an authorization server ([Config.ChooseAuthorizationServer]) and
//     fetches its metadata in the order MCP requires (RFC 8414, then OpenID
//     Connect Discovery), checking the issuer and refusing to proceed when
//     code_challenge_methods_supported is absent (unless
//     [Config.AllowUnadvertisedPKCE] says otherwise);
//  3. finds client credentials in the order of the specification:
//     pre-registered ([Config.PreRegistered]), a Client ID Metadata Document
//     ([Config.ClientIDMetadataDocument]) when the server supports it,
//     Dynamic Client Registration (RFC 7591), else [Config.PromptClient];
//  4. chooses the scope (the challenge's, else the metadata's
//     scopes_supported, else none), runs the authorization code flow with
//     PKCE S256, state and the RFC 9207 iss check through an [Authorizer],
//     and redeems the code with the RFC 8707 resource parameter;
//  5. retries the request with the token in the Authorization header.
//
// A 403 insufficient_scope leads to step-up: the challenged scopes are merged
// with those granted, the user is asked again and the request retried, at
// most [Config.MaxStepUps] times per resource and operation; then the
// request fails with a [*StepUpError]. Tokens are refreshed with the resource
// parameter and rotated refresh tokens replace the old ones. A token is only
// ever sent in the Authorization header, and only to the server whose
// authorization server issued it.
//
// With [Config.DPoP], tokens are DPoP-bound (RFC 9449) wherever the
// authorization server offers it: every token request and every request to
// the server carries a fresh proof, and nonces the servers demand are
// honoured.
//
// Machine clients use [GrantClientCredentials]; the enterprise cross-app
// access flow uses [GrantJWTBearer] with a [CrossAppAccess] assertion source
// (RFC 8693 token exchange at the identity provider, then the RFC 7523 JWT
// bearer grant); workload identity federation uses [GrantJWTBearer] with the
// workload's own JWT as the assertion. Tokens and registrations are kept in a [Store]:
// [MemoryStore], or [FileStore] for command-line programs.
//
// For command-line use, [NewLoopbackAuthorizer] receives the redirect on
// 127.0.0.1 (RFC 8252) and opens the browser, or prints the URL in headless
// mode. [MetadataDocumentHandler] serves the client's own Client ID Metadata
// Document.
package authclient
