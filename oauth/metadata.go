package oauth

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ProtectedResourceMetadata is the document an MCP server publishes about
// itself (RFC 9728 §2), at the URL given in its 401 challenge or at a
// well-known location (see [ProtectedResourceMetadataURLs]).
type ProtectedResourceMetadata struct {
	// Resource is the server's resource identifier, its canonical URI.
	Resource string `json:"resource"`
	// AuthorizationServers lists issuer identifiers of the authorization
	// servers that issue tokens for this resource. MCP requires at least one.
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	JWKSURI              string   `json:"jwks_uri,omitempty"`
	// ScopesSupported is the minimal scope set for basic functionality.
	ScopesSupported                       []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported                []string `json:"bearer_methods_supported,omitempty"`
	ResourceSigningAlgValuesSupported     []string `json:"resource_signing_alg_values_supported,omitempty"`
	ResourceName                          string   `json:"resource_name,omitempty"`
	ResourceDocumentation                 string   `json:"resource_documentation,omitempty"`
	ResourcePolicyURI                     string   `json:"resource_policy_uri,omitempty"`
	ResourceTOSURI                        string   `json:"resource_tos_uri,omitempty"`
	TLSClientCertificateBoundAccessTokens bool     `json:"tls_client_certificate_bound_access_tokens,omitempty"`
	AuthorizationDetailsTypesSupported    []string `json:"authorization_details_types_supported,omitempty"`
	DPoPSigningAlgValuesSupported         []string `json:"dpop_signing_alg_values_supported,omitempty"`
	DPoPBoundAccessTokensRequired         bool     `json:"dpop_bound_access_tokens_required,omitempty"`

	// Extra holds members not listed above (for example signed_metadata),
	// kept verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

type protectedResourceFields ProtectedResourceMetadata

// MarshalJSON encodes the document with its Extra members.
func (m ProtectedResourceMetadata) MarshalJSON() ([]byte, error) {
	return marshalWithExtra(protectedResourceFields(m), m.Extra)
}

// UnmarshalJSON decodes the document, keeping unknown members in Extra.
func (m *ProtectedResourceMetadata) UnmarshalJSON(data []byte) error {
	return unmarshalWithExtra(data, (*protectedResourceFields)(m), &m.Extra)
}

// Validate checks the document against RFC 9728 §2 and MCP:
//
//   - resource is present, has no fragment and uses https (http only on a
//     loopback host, for development);
//   - authorization_servers has at least one entry, each an issuer URL of
//     the same form with no query;
//   - jwks_uri, if present, is such a URL too; the documentation, policy
//     and terms URLs are absolute http(s) URLs;
//   - bearer_methods_supported holds only "header", "body" and "query".
//
// Errors are [*ValidationError] values.
func (m ProtectedResourceMetadata) Validate() error {
	if m.Resource == "" {
		return invalid("resource", "missing")
	}
	if err := checkEndpoint("resource", m.Resource, true); err != nil {
		return err
	}
	if len(m.AuthorizationServers) == 0 {
		return invalid("authorization_servers", "at least one authorization server is required")
	}
	for _, as := range m.AuthorizationServers {
		if err := checkEndpoint("authorization_servers", as, false); err != nil {
			return err
		}
	}
	if err := checkOptionalEndpoint("jwks_uri", m.JWKSURI); err != nil {
		return err
	}
	for _, bm := range m.BearerMethodsSupported {
		if bm != "header" && bm != "body" && bm != "query" {
			return invalid("bearer_methods_supported", fmt.Sprintf("unknown method %q", bm))
		}
	}
	for _, f := range [...]struct{ name, value string }{
		{"resource_documentation", m.ResourceDocumentation},
		{"resource_policy_uri", m.ResourcePolicyURI},
		{"resource_tos_uri", m.ResourceTOSURI},
	} {
		if err := checkWebURL(f.name, f.value); err != nil {
			return err
		}
	}
	return nil
}

// CheckResource verifies that the document describes the server at
// serverURL: its resource must have the same canonical form (see
// [SameResource]). RFC 9728 §3.3 requires a client to discard metadata that
// fails this check. The error wraps [ErrResourceMismatch].
func (m ProtectedResourceMetadata) CheckResource(serverURL string) error {
	if !SameResource(m.Resource, serverURL) {
		return fmt.Errorf("%w: metadata names %q, server is %q", ErrResourceMismatch, m.Resource, serverURL)
	}
	return nil
}

// AuthorizationServerMetadata is the metadata of an authorization server
// (RFC 8414 §2), including the OpenID Connect Discovery 1.0 members MCP
// clients may meet and the client_id_metadata_document_supported flag of
// Client ID Metadata Documents.
type AuthorizationServerMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint                              string   `json:"token_endpoint,omitempty"`
	JWKSURI                                    string   `json:"jwks_uri,omitempty"`
	RegistrationEndpoint                       string   `json:"registration_endpoint,omitempty"`
	ScopesSupported                            []string `json:"scopes_supported,omitempty"`
	ResponseTypesSupported                     []string `json:"response_types_supported,omitempty"`
	ResponseModesSupported                     []string `json:"response_modes_supported,omitempty"`
	GrantTypesSupported                        []string `json:"grant_types_supported,omitempty"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	TokenEndpointAuthSigningAlgValuesSupported []string `json:"token_endpoint_auth_signing_alg_values_supported,omitempty"`
	RevocationEndpoint                         string   `json:"revocation_endpoint,omitempty"`
	IntrospectionEndpoint                      string   `json:"introspection_endpoint,omitempty"`
	// CodeChallengeMethodsSupported lists PKCE methods. Absence means the
	// server does not support PKCE, and an MCP client must not proceed.
	CodeChallengeMethodsSupported []string `json:"code_challenge_methods_supported,omitempty"`
	// ClientIDMetadataDocumentSupported advertises support for URL client
	// identifiers (Client ID Metadata Documents).
	ClientIDMetadataDocumentSupported bool `json:"client_id_metadata_document_supported,omitempty"`
	// AuthorizationResponseIssParameterSupported says the server adds iss
	// to authorization responses (RFC 9207).
	AuthorizationResponseIssParameterSupported bool `json:"authorization_response_iss_parameter_supported,omitempty"`

	// OpenID Connect Discovery 1.0 members.
	UserinfoEndpoint                 string   `json:"userinfo_endpoint,omitempty"`
	SubjectTypesSupported            []string `json:"subject_types_supported,omitempty"`
	IDTokenSigningAlgValuesSupported []string `json:"id_token_signing_alg_values_supported,omitempty"`

	// Extra holds members not listed above, kept verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

type authorizationServerFields AuthorizationServerMetadata

// MarshalJSON encodes the metadata with its Extra members.
func (m AuthorizationServerMetadata) MarshalJSON() ([]byte, error) {
	return marshalWithExtra(authorizationServerFields(m), m.Extra)
}

// UnmarshalJSON decodes the metadata, keeping unknown members in Extra.
func (m *AuthorizationServerMetadata) UnmarshalJSON(data []byte) error {
	return unmarshalWithExtra(data, (*authorizationServerFields)(m), &m.Extra)
}

// Grant types and client authentication methods named in this package.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantImplicit          = "implicit"
	GrantRefreshToken      = "refresh_token"
	GrantClientCredentials = "client_credentials"
	// GrantTokenExchange is the RFC 8693 token exchange grant.
	GrantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"

	AuthMethodNone              = "none"
	AuthMethodClientSecretBasic = "client_secret_basic"
	AuthMethodClientSecretPost  = "client_secret_post"
	AuthMethodClientSecretJWT   = "client_secret_jwt"
	AuthMethodPrivateKeyJWT     = "private_key_jwt"
)

// Token type identifiers of RFC 8693 §3, for subject_token_type,
// requested_token_type and issued_token_type.
const (
	TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
	TokenTypeJWT         = "urn:ietf:params:oauth:token-type:jwt"
)

// GrantTypes returns grant_types_supported, or its RFC 8414 default
// ["authorization_code", "implicit"] when absent.
func (m AuthorizationServerMetadata) GrantTypes() []string {
	return orDefault(m.GrantTypesSupported, GrantAuthorizationCode, GrantImplicit)
}

// TokenEndpointAuthMethods returns token_endpoint_auth_methods_supported, or
// its RFC 8414 default ["client_secret_basic"] when absent.
func (m AuthorizationServerMetadata) TokenEndpointAuthMethods() []string {
	return orDefault(m.TokenEndpointAuthMethodsSupported, AuthMethodClientSecretBasic)
}

// PKCEAdvertised reports whether the metadata lists any PKCE method. MCP
// clients must refuse to proceed when it does not (absence means no PKCE).
func (m AuthorizationServerMetadata) PKCEAdvertised() bool {
	return len(m.CodeChallengeMethodsSupported) > 0
}

// SupportsS256 reports whether code_challenge_methods_supported includes
// "S256" (method names are case-sensitive).
func (m AuthorizationServerMetadata) SupportsS256() bool {
	return slices.Contains(m.CodeChallengeMethodsSupported, MethodS256)
}

// CheckIssuer verifies that the metadata names expected as its issuer, by
// exact string comparison (RFC 8414 §3.3). A client must not use metadata
// that fails this check. The error wraps [ErrMetadataIssuerMismatch].
func (m AuthorizationServerMetadata) CheckIssuer(expected string) error {
	if m.Issuer != expected {
		return fmt.Errorf("%w: metadata names %q, expected %q", ErrMetadataIssuerMismatch, m.Issuer, expected)
	}
	return nil
}

// Validate checks the metadata against RFC 8414 §2:
//
//   - issuer is present and uses https with no query or fragment;
//   - authorization_endpoint is present unless no supported grant type uses
//     it, and token_endpoint unless only the implicit grant is supported;
//   - response_types_supported is not empty;
//   - every endpoint present uses https and has no fragment;
//   - token_endpoint_auth_signing_alg_values_supported does not list "none".
//
// http is accepted in place of https for loopback hosts (127.0.0.1, [::1],
// localhost) so that local development and tests work. Validate does not
// check PKCE support; see [AuthorizationServerMetadata.PKCEAdvertised].
// Errors are [*ValidationError] values.
func (m AuthorizationServerMetadata) Validate() error {
	if m.Issuer == "" {
		return invalid("issuer", "missing")
	}
	if err := checkEndpoint("issuer", m.Issuer, false); err != nil {
		return err
	}
	grants := m.GrantTypes()
	usesAuthz := slices.Contains(grants, GrantAuthorizationCode) || slices.Contains(grants, GrantImplicit)
	onlyImplicit := !slices.ContainsFunc(grants, func(g string) bool { return g != GrantImplicit })
	if m.AuthorizationEndpoint == "" && usesAuthz {
		return invalid("authorization_endpoint", "missing")
	}
	if m.TokenEndpoint == "" && !onlyImplicit {
		return invalid("token_endpoint", "missing")
	}
	if len(m.ResponseTypesSupported) == 0 {
		return invalid("response_types_supported", "missing")
	}
	for _, f := range [...]struct{ name, value string }{
		{"authorization_endpoint", m.AuthorizationEndpoint},
		{"token_endpoint", m.TokenEndpoint},
		{"jwks_uri", m.JWKSURI},
		{"registration_endpoint", m.RegistrationEndpoint},
		{"revocation_endpoint", m.RevocationEndpoint},
		{"introspection_endpoint", m.IntrospectionEndpoint},
		{"userinfo_endpoint", m.UserinfoEndpoint},
	} {
		if err := checkOptionalEndpoint(f.name, f.value); err != nil {
			return err
		}
	}
	if slices.Contains(m.TokenEndpointAuthSigningAlgValuesSupported, "none") {
		return invalid("token_endpoint_auth_signing_alg_values_supported", `must not include "none"`)
	}
	return nil
}

// checkOptionalEndpoint is checkEndpoint for a member that may be absent.
// Queries are allowed, as RFC 8414 allows them on endpoints.
func checkOptionalEndpoint(field, v string) error {
	if v == "" {
		return nil
	}
	return checkEndpoint(field, v, true)
}

// checkEndpoint checks a URL that a client sends requests or credentials to:
// absolute, https (or http on a loopback host), with a host, no userinfo and
// no fragment, and no query unless allowQuery.
func checkEndpoint(field, v string, allowQuery bool) error {
	u, err := splitURI(v)
	switch {
	case err != nil:
		return invalid(field, fmt.Sprintf("%q: %v", v, err))
	case u.serverProblem() != "":
		return invalid(field, fmt.Sprintf("%q: %s", v, u.serverProblem()))
	case u.hasQuery && !allowQuery:
		return invalid(field, fmt.Sprintf("%q: must not contain a query", v))
	case strings.EqualFold(u.scheme, "https"):
		return nil
	case strings.EqualFold(u.scheme, "http") && loopbackKind(u.host) != notLoopback:
		return nil
	}
	return invalid(field, fmt.Sprintf("%q: must use https (http only for loopback hosts)", v))
}

// checkWebURL checks an informational URL, if present: absolute http or
// https with a host.
func checkWebURL(field, v string) error {
	if v == "" {
		return nil
	}
	u, err := splitURI(v)
	switch {
	case err != nil:
		return invalid(field, fmt.Sprintf("%q: %v", v, err))
	case !strings.EqualFold(u.scheme, "https") && !strings.EqualFold(u.scheme, "http"):
		return invalid(field, fmt.Sprintf("%q: must be an http or https URL", v))
	case !u.hasAuthority || u.host == "":
		return invalid(field, fmt.Sprintf("%q: missing host", v))
	}
	return nil
}
