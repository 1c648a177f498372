// Package oauth is the shared OAuth 2.1 vocabulary used by MCP authorization:
// the types, validators and pure helpers that a resource server, a client and
// an authorization server all need to agree on.
//
// It covers:
//
//   - canonical server URIs for the RFC 8707 resource parameter
//     ([CanonicalResource], [SameResource]);
//   - PKCE with S256 (RFC 7636) and random state values ([NewVerifier],
//     [S256Challenge], [VerifyS256], [NewState]);
//   - parsing and writing WWW-Authenticate challenges (RFC 7235, RFC 6750,
//     RFC 9728 §5.1) ([ParseChallenges], [BearerChallenge]);
//   - metadata documents: protected resource metadata (RFC 9728),
//     authorization server metadata (RFC 8414 and OpenID Connect Discovery),
//     client metadata (RFC 7591 and Client ID Metadata Documents), token and
//     error responses (RFC 6749);
//   - discovery URL construction in the order MCP requires
//     ([ProtectedResourceMetadataURLs], [AuthorizationServerMetadataURLs]);
//   - redirect URI rules (RFC 8252 loopback redirects) and scope helpers.
//
// Everything here is a pure function or a plain data type: the package does no
// I/O, holds no state and imports nothing from MCP. URI handling uses a strict
// RFC 3986 reader of its own rather than net/url, which accepts characters
// that are not allowed in a URI.
package oauth
