// Package oauthhttp is the one HTTP client of the OAuth side of this
// module: the resource server (package auth), the client (package
// authclient), the authorization server's client of its upstream provider
// (package authserver) and mcpstack serve's whoami_upstream tool all
// fetch metadata and keys, discover authorization servers and call token
// endpoints through it, so that a rule about what an OAuth peer may
// answer is written, and fixed, once. It imports none of them (archtest).
//
// The rules, for every request made here:
//
//   - URLs are https, or http on a loopback host (127.0.0.1, [::1],
//     localhost) for development and tests, with a host and without
//     userinfo or fragment ([CheckURL]), checked before anything is sent:
//     RFC 6749 §3.1 and §3.2 require TLS at the authorization and token
//     endpoints, RFC 8414 §2 an https issuer.
//   - Redirects are never followed ([ErrRedirect]): an endpoint is where
//     its metadata says it is, and a redirect would carry a form holding
//     client credentials, or a fetch, to a place nobody checked.
//   - An answer is read to its end within [MaxBody] bytes, and refused when
//     the request's context cut it ([httpbody.Read]).
//   - A successful answer is JSON: a Content-Type, when present, must be
//     application/json or a +json type ([ErrNotJSON]; RFC 8414 §3.2,
//     RFC 6749 §5.1), and the body is decoded with exact member names
//     ([strictjson.Unmarshal]).
//   - Any other status is a [*StatusError], which unwraps to the
//     *oauth.ErrorResponse its body holds, if any (RFC 6749 §5.2).
//
// On top of that sit RFC 8414 / OpenID Connect discovery
// ([DiscoverAuthorizationServer], which checks the issuer and validates the
// metadata) and one token-endpoint client for every grant
// ([RetrieveToken]). Nothing here keeps state: every function may be called
// concurrently, and every wait ends with the context of the call.
package oauthhttp
