package oauth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// ClientMetadata describes an OAuth client: the registration request of
// Dynamic Client Registration (RFC 7591 §2) and the body of a Client ID
// Metadata Document, which also carries client_id.
type ClientMetadata struct {
	// ClientID is set in a Client ID Metadata Document (where it equals
	// the document URL) and in registration responses.
	ClientID                    string          `json:"client_id,omitempty"`
	ClientName                  string          `json:"client_name,omitempty"`
	RedirectURIs                []string        `json:"redirect_uris,omitempty"`
	ClientURI                   string          `json:"client_uri,omitempty"`
	LogoURI                     string          `json:"logo_uri,omitempty"`
	GrantTypes                  []string        `json:"grant_types,omitempty"`
	ResponseTypes               []string        `json:"response_types,omitempty"`
	TokenEndpointAuthMethod     string          `json:"token_endpoint_auth_method,omitempty"`
	Scope                       string          `json:"scope,omitempty"`
	Contacts                    []string        `json:"contacts,omitempty"`
	TOSURI                      string          `json:"tos_uri,omitempty"`
	PolicyURI                   string          `json:"policy_uri,omitempty"`
	JWKSURI                     string          `json:"jwks_uri,omitempty"`
	JWKS                        json.RawMessage `json:"jwks,omitempty"`
	SoftwareID                  string          `json:"software_id,omitempty"`
	SoftwareVersion             string          `json:"software_version,omitempty"`
	TokenEndpointAuthSigningAlg string          `json:"token_endpoint_auth_signing_alg,omitempty"`

	// Extra holds members not listed above, kept verbatim. RFC 7591 lets
	// servers and documents carry further metadata.
	Extra map[string]json.RawMessage `json:"-"`
}

type clientMetadataFields ClientMetadata

// MarshalJSON encodes the metadata with its Extra members.
func (m ClientMetadata) MarshalJSON() ([]byte, error) {
	return marshalWithExtra(clientMetadataFields(m), m.Extra)
}

// UnmarshalJSON decodes the metadata, keeping unknown members in Extra.
func (m *ClientMetadata) UnmarshalJSON(data []byte) error {
	return unmarshalWithExtra(data, (*clientMetadataFields)(m), &m.Extra)
}

// Response types named in this package.
const (
	ResponseTypeCode  = "code"
	ResponseTypeToken = "token"
)

// grantTypes returns grant_types or its RFC 7591 default.
func (m ClientMetadata) grantTypes() []string {
	return orDefault(m.GrantTypes, GrantAuthorizationCode)
}

// responseTypes returns response_types or its RFC 7591 default.
func (m ClientMetadata) responseTypes() []string {
	return orDefault(m.ResponseTypes, ResponseTypeCode)
}

// Validate checks the metadata against RFC 7591 §2 and the MCP redirect
// rule:
//
//   - redirect_uris is present when a grant type that redirects
//     (authorization_code, implicit) is used, which is the default;
//   - each redirect URI passes [ValidateRedirectURI] (https, or http on a
//     loopback host, no fragment);
//   - grant_types and response_types agree (code with authorization_code,
//     token with implicit): a listed value needs its partner, which may come
//     from the other member's default;
//   - jwks and jwks_uri are not both present, and jwks is a JSON object;
//   - jwks_uri uses https; client_uri, logo_uri, tos_uri and policy_uri are
//     absolute http(s) URLs.
//
// The Field of the returned [*ValidationError] tells a registration endpoint
// which error code to send: invalid_redirect_uri for "redirect_uris",
// invalid_client_metadata otherwise.
func (m ClientMetadata) Validate() error {
	grants, responses := m.grantTypes(), m.responseTypes()
	redirects := slices.Contains(grants, GrantAuthorizationCode) || slices.Contains(grants, GrantImplicit)
	if redirects && len(m.RedirectURIs) == 0 {
		return invalid("redirect_uris", "missing")
	}
	for _, r := range m.RedirectURIs {
		if err := ValidateRedirectURI(r); err != nil {
			return invalid("redirect_uris", strings.TrimPrefix(err.Error(), "oauth: "))
		}
	}
	for _, pair := range [...]struct{ grant, response string }{
		{GrantAuthorizationCode, ResponseTypeCode},
		{GrantImplicit, ResponseTypeToken},
	} {
		// Only listed values are held to the rule, so a client_credentials
		// client that omits response_types is not faulted for its default.
		listedGrant := slices.Contains(m.GrantTypes, pair.grant) && !slices.Contains(responses, pair.response)
		listedResponse := slices.Contains(m.ResponseTypes, pair.response) && !slices.Contains(grants, pair.grant)
		if listedGrant || listedResponse {
			return invalid("grant_types", fmt.Sprintf("grant type %q and response type %q must be used together", pair.grant, pair.response))
		}
	}
	if len(m.JWKS) > 0 {
		if m.JWKSURI != "" {
			return invalid("jwks", "jwks and jwks_uri must not both be present")
		}
		if t := bytes.TrimSpace(m.JWKS); len(t) == 0 || t[0] != '{' || !json.Valid(t) {
			return invalid("jwks", "must be a JSON object")
		}
	}
	if err := checkOptionalEndpoint("jwks_uri", m.JWKSURI); err != nil {
		return err
	}
	for _, f := range [...]struct{ name, value string }{
		{"client_uri", m.ClientURI},
		{"logo_uri", m.LogoURI},
		{"tos_uri", m.TOSURI},
		{"policy_uri", m.PolicyURI},
	} {
		if err := checkWebURL(f.name, f.value); err != nil {
			return err
		}
	}
	return nil
}

// ClientInformation is a successful Dynamic Client Registration response
// (RFC 7591 §3.2.1): the issued credentials plus the registered metadata,
// whose ClientID holds client_id.
type ClientInformation struct {
	ClientMetadata

	ClientSecret string
	// ClientIDIssuedAt is the issue time in seconds since the Unix epoch,
	// 0 if not given.
	ClientIDIssuedAt int64
	// ClientSecretExpiresAt is the secret's expiry in seconds since the
	// Unix epoch; 0 means it does not expire. It is always encoded when a
	// ClientSecret is present, as RFC 7591 requires.
	ClientSecretExpiresAt   int64
	RegistrationAccessToken string
	RegistrationClientURI   string
}

// clientInfoFields is the wire form of the members ClientInformation adds.
type clientInfoFields struct {
	ClientSecret            string `json:"client_secret,omitempty"`
	ClientIDIssuedAt        int64  `json:"client_id_issued_at,omitempty"`
	ClientSecretExpiresAt   *int64 `json:"client_secret_expires_at,omitempty"`
	RegistrationAccessToken string `json:"registration_access_token,omitempty"`
	RegistrationClientURI   string `json:"registration_client_uri,omitempty"`
}

// MarshalJSON encodes the credentials and the metadata as one object.
func (c ClientInformation) MarshalJSON() ([]byte, error) {
	f := clientInfoFields{
		ClientSecret:            c.ClientSecret,
		ClientIDIssuedAt:        c.ClientIDIssuedAt,
		RegistrationAccessToken: c.RegistrationAccessToken,
		RegistrationClientURI:   c.RegistrationClientURI,
	}
	if c.ClientSecret != "" || c.ClientSecretExpiresAt != 0 {
		f.ClientSecretExpiresAt = &c.ClientSecretExpiresAt
	}
	own, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	meta := c.ClientMetadata
	if len(meta.Extra) > 0 {
		names := jsonNames(f)
		meta.Extra = make(map[string]json.RawMessage, len(c.Extra))
		for k, v := range c.Extra {
			if !names[k] {
				meta.Extra[k] = v
			}
		}
	}
	data, err := meta.MarshalJSON()
	if err != nil {
		return nil, err
	}
	switch {
	case string(own) == "{}":
		return data, nil
	case string(data) == "{}":
		return own, nil
	}
	return slices.Concat(data[:len(data)-1], []byte{','}, own[1:]), nil
}

// UnmarshalJSON decodes a registration response.
func (c *ClientInformation) UnmarshalJSON(data []byte) error {
	var f clientInfoFields
	if err := strictjson.Unmarshal(data, &f); err != nil {
		return err
	}
	var meta ClientMetadata
	if err := strictjson.Unmarshal(data, &meta); err != nil {
		return err
	}
	for k := range jsonNames(f) {
		delete(meta.Extra, k)
	}
	if len(meta.Extra) == 0 {
		meta.Extra = nil
	}
	*c = ClientInformation{
		ClientMetadata:          meta,
		ClientSecret:            f.ClientSecret,
		ClientIDIssuedAt:        f.ClientIDIssuedAt,
		RegistrationAccessToken: f.RegistrationAccessToken,
		RegistrationClientURI:   f.RegistrationClientURI,
	}
	if f.ClientSecretExpiresAt != nil {
		c.ClientSecretExpiresAt = *f.ClientSecretExpiresAt
	}
	return nil
}

// Validate checks that client_id is present and that the timestamps are not
// negative. It does not re-validate the metadata, which the server may have
// changed from what was requested.
func (c ClientInformation) Validate() error {
	switch {
	case c.ClientID == "":
		return invalid("client_id", "missing")
	case c.ClientIDIssuedAt < 0:
		return invalid("client_id_issued_at", "negative")
	case c.ClientSecretExpiresAt < 0:
		return invalid("client_secret_expires_at", "negative")
	}
	return nil
}

// SecretExpiry returns when the client secret expires, or the zero time if
// it never does (or no secret was issued).
func (c ClientInformation) SecretExpiry() time.Time {
	if c.ClientSecretExpiresAt <= 0 {
		return time.Time{}
	}
	return time.Unix(c.ClientSecretExpiresAt, 0)
}

// IsURLClientID reports whether clientID is a URL client identifier as
// defined by OAuth Client ID Metadata Documents (see [ValidateClientIDURL]).
// An authorization server fetches the metadata of such a client from the
// URL instead of looking it up in its registry.
func IsURLClientID(clientID string) bool { return ValidateClientIDURL(clientID) == nil }

// ValidateClientIDURL checks the client identifier URL rules of
// draft-ietf-oauth-client-id-metadata-document §3: the https scheme, a host,
// a path other than "" or "/", no "." or ".." path segments (also when
// percent-encoded), no fragment and no userinfo. A port is allowed; a query
// is allowed though discouraged. Errors wrap [ErrInvalidURI].
func ValidateClientIDURL(clientID string) error {
	fail := func(reason string) error {
		return fmt.Errorf("%w: client_id %q: %s", ErrInvalidURI, clientID, reason)
	}
	u, err := splitURI(clientID)
	switch {
	case err != nil:
		return fail(err.Error())
	case !strings.EqualFold(u.scheme, "https"):
		return fail("must use https")
	case u.serverProblem() != "":
		return fail(u.serverProblem())
	case u.path == "" || u.path == "/":
		return fail("must contain a path")
	}
	for seg := range strings.SplitSeq(normalizePercent(u.path), "/") {
		if seg == "." || seg == ".." {
			return fail("must not contain dot segments")
		}
	}
	return nil
}

// ValidateClientIDMetadataDocument checks a Client ID Metadata Document m
// fetched from docURL, as an authorization server must before using it
// (draft-ietf-oauth-client-id-metadata-document §4.1, MCP authorization):
//
//   - docURL is a valid client identifier URL ([ValidateClientIDURL]);
//   - client_id equals docURL by simple string comparison;
//   - client_name and redirect_uris are present;
//   - the metadata passes [ClientMetadata.Validate];
//   - no shared secret is involved: token_endpoint_auth_method is absent,
//     "none" or "private_key_jwt" (which then needs jwks or jwks_uri), and
//     the document has no client_secret or client_secret_expires_at member.
//
// A document is public, so it cannot establish a shared secret; the draft
// forbids client_secret_basic, client_secret_post, client_secret_jwt and any
// other secret-based method, and MCP names only none and private_key_jwt.
// Errors are [*ValidationError] values; an authorization server answers them
// with invalid_client or invalid_request.
func ValidateClientIDMetadataDocument(docURL string, m ClientMetadata) error {
	if err := ValidateClientIDURL(docURL); err != nil {
		return invalid("client_id", strings.TrimPrefix(err.Error(), "oauth: "))
	}
	switch {
	case m.ClientID == "":
		return invalid("client_id", "missing")
	case m.ClientID != docURL:
		return invalid("client_id", fmt.Sprintf("%q does not equal the document URL %q", m.ClientID, docURL))
	case m.ClientName == "":
		return invalid("client_name", "missing")
	case len(m.RedirectURIs) == 0:
		return invalid("redirect_uris", "missing")
	}
	if err := m.Validate(); err != nil {
		return err
	}
	switch m.TokenEndpointAuthMethod {
	case "", AuthMethodNone:
	case AuthMethodPrivateKeyJWT:
		if len(m.JWKS) == 0 && m.JWKSURI == "" {
			return invalid("token_endpoint_auth_method", "private_key_jwt needs jwks or jwks_uri")
		}
	case AuthMethodClientSecretBasic, AuthMethodClientSecretPost, AuthMethodClientSecretJWT:
		return invalid("token_endpoint_auth_method", fmt.Sprintf("%q needs a shared secret, which a public document cannot establish", m.TokenEndpointAuthMethod))
	default:
		return invalid("token_endpoint_auth_method", fmt.Sprintf("%q is not allowed; use none or private_key_jwt", m.TokenEndpointAuthMethod))
	}
	for _, k := range [...]string{"client_secret", "client_secret_expires_at"} {
		if _, ok := m.Extra[k]; ok {
			return invalid(k, "must not appear in a client ID metadata document")
		}
	}
	return nil
}
