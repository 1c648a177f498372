// Package auth makes an MCP server over HTTP an OAuth 2.1 resource server,
// as the MCP authorization specification (revision 2025-11-25) requires.
//
// It provides:
//
//   - [MetadataHandler] and [RegisterMetadata], which publish the protected
//     resource metadata (RFC 9728) at the path-specific well-known location
//     and at the root, with caching and CORS headers;
//   - [Middleware], which guards any [net/http.Handler]: it takes the access
//     token from the Authorization header only, verifies it before anything
//     of the request is processed, checks the scopes the request needs (per
//     JSON-RPC method and per tool, resource or prompt) and answers 400, 401
//     and 403 with the Bearer challenges of RFC 6750 and RFC 9728 §5.1;
//   - the [Verifier] interface and three implementations: [JWTVerifier] for
//     JWT access tokens (RFC 9068) checked against the authorization
//     server's JWKS, [IntrospectionVerifier] for token introspection (RFC
//     7662), and [Cache], which remembers verified tokens by their hash;
//   - the verified [Principal] in the request context
//     ([PrincipalFromContext]), and [SessionIdentity] to bind Streamable
//     HTTP sessions to it;
//   - [TokenExchange] and [ClientCredentials], the only sanctioned ways to
//     call an upstream API: with a token of its own, never the one the
//     client sent (no token passthrough).
//
// Browser-based clients: the metadata is a public document, readable from
// any origin (Access-Control-Allow-Origin: *, preflight answered). The
// [Middleware] answers a CORS preflight, which carries no token, like any
// other request without one: 401. A server that lets pages on other
// origins in therefore puts its CORS layer in front of the middleware, so
// that preflights are answered before it and its 401 and 403 challenges
// carry the CORS headers that make WWW-Authenticate readable: for an MCP
// endpoint, the CORS function of package mcp/mcphttp with the handler's
// own CORSOptions, around [Middleware.Wrap].
//
// The audience of every token is checked against the server's canonical
// URI (see [oauth.CanonicalResource]) unless explicitly disabled. The raw
// access token is never handed to handlers.
//
// The package imports no part of MCP: it reads the JSON-RPC method and tool,
// resource or prompt name from the POST body itself, within a bound, and
// restores the body for the next handler.
package auth
