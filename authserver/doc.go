// Package authserver is an embeddable OAuth 2.1 authorization server for MCP.
//
// It serves, under its issuer URL:
//
//   - metadata (RFC 8414, with the issuer-path variants, and OpenID Connect
//     discovery), advertising S256 PKCE and Client ID Metadata Documents;
//   - the authorization endpoint: response_type=code only, PKCE S256
//     required, the resource parameter (RFC 8707) required, put in
//     canonical form and made the token's audience, redirect URIs matched exactly (loopback ports may
//     vary, RFC 8252), errors that cannot be trusted to a redirect URI shown
//     to the user; a login form (an [Authenticator], passwords hashed with
//     bcrypt) and a consent page answered once, with a CSRF token, a strict
//     Content Security Policy (no script at all, frame-ancestors 'none');
//     any scope the server supports may be asked for, whatever scope a
//     client registered, unless Config.ScopePolicy says otherwise;
//   - the token endpoint: single-use, short-lived codes bound to client,
//     redirect URI, PKCE challenge and resource (a replay revokes what the
//     code issued); access tokens as JWT (RFC 9068, ES256, rotatable keys,
//     JWKS); refresh tokens rotated on every use with reuse detection that
//     revokes the whole family. A code or refresh token is checked before
//     it is spent, so a refused request leaves it usable, and it is spent
//     together with the storing of its successor in one store operation
//     that runs to its end (Config.StoreTimeout) even when the client goes
//     away; client_credentials for confidential
//     clients; client authentication none, client_secret_basic,
//     client_secret_post and private_key_jwt;
//   - Client ID Metadata Documents fetched by a [CIMDFetcher] with an SSRF
//     guard checked at dial time, no redirects, timeouts, a size limit,
//     caching (of failures too), a per-host fetch budget and a domain
//     policy hook; private_key_jwt key sets at a jwks_uri are fetched the
//     same way and cached, and only for assertions whose claims hold;
//   - Dynamic Client Registration (RFC 7591) with size limits, a
//     per-address rate limit, and pruning of clients never used;
//   - introspection (RFC 7662) and revocation (RFC 7009), which refuses a
//     token issued to another client (unauthorized_client).
//
// Browser-based clients (CORS): the metadata and the JWKS are public
// documents, readable from any origin. The token, registration and
// revocation endpoints answer the preflight and carry
// Access-Control-Allow-Origin only for the origins Config.CORSOrigins
// lists (none by default); credentials (cookies) are never allowed
// cross-origin. Introspection, for resource servers, and the authorization
// endpoint, a top-level navigation, have no CORS.
//
// Display strings: client metadata (from registration or a Client ID
// Metadata Document) carrying control, invisible or text-direction
// characters (NUL, U+202E, ...) is refused, since the consent page shows
// it; anything odd that reaches a page anyway is shown escaped (\u202E).
// Per-address limits (registration, login, the authorization endpoint)
// keep a bounded table each, forgetting the least recently seen address
// when full, key IPv6 clients per /64, and answer with a truthful
// Retry-After. Behind a reverse proxy, Config.TrustedProxies names the
// proxies whose forwarding header gives the client address.
//
// State lives behind the [Store] interface: store/memory keeps it in memory,
// store/sqlite in an SQLite file that survives restarts, store/postgres and
// store/redis in a database that several processes share. The keys that
// sign login sessions, CSRF tokens and forms are kept there too (rotatable,
// see [Server.RotateCookieKey]), like the signing keys, so logins survive a
// restart and are honoured by every server on the store.
//
// The package does not depend on MCP: a [Server] is an http.Handler that
// can share a mux with an MCP endpoint or run on its own.
package authserver
