package oauth

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func validPRM() ProtectedResourceMetadata {
	return ProtectedResourceMetadata{
		Resource:               "https://mcp.example.com/mcp",
		AuthorizationServers:   []string{"https://auth.example.com", "https://auth.example.com/tenant1"},
		ScopesSupported:        []string{"files:read"},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Example MCP",
		ResourceDocumentation:  "https://docs.example.com/mcp#auth",
	}
}

func TestProtectedResourceMetadataValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*ProtectedResourceMetadata)
		field string // "" means valid
	}{
		{"valid", func(*ProtectedResourceMetadata) {}, ""},
		{"loopback http", func(m *ProtectedResourceMetadata) {
			m.Resource = "http://127.0.0.1:8080/mcp"
			m.AuthorizationServers = []string{"http://localhost:9000"}
		}, ""},
		{"resource with query", func(m *ProtectedResourceMetadata) { m.Resource = "https://a/mcp?t=1" }, ""},
		{"missing resource", func(m *ProtectedResourceMetadata) { m.Resource = "" }, "resource"},
		{"resource with fragment", func(m *ProtectedResourceMetadata) { m.Resource = "https://a/mcp#x" }, "resource"},
		{"resource http", func(m *ProtectedResourceMetadata) { m.Resource = "http://mcp.example.com/mcp" }, "resource"},
		{"resource relative", func(m *ProtectedResourceMetadata) { m.Resource = "/mcp" }, "resource"},
		{"no authorization servers", func(m *ProtectedResourceMetadata) { m.AuthorizationServers = nil }, "authorization_servers"},
		{"issuer with query", func(m *ProtectedResourceMetadata) { m.AuthorizationServers = []string{"https://a?x"} }, "authorization_servers"},
		{"issuer http", func(m *ProtectedResourceMetadata) { m.AuthorizationServers = []string{"http://auth.example.com"} }, "authorization_servers"},
		{"issuer empty", func(m *ProtectedResourceMetadata) { m.AuthorizationServers = []string{""} }, "authorization_servers"},
		{"jwks_uri http", func(m *ProtectedResourceMetadata) { m.JWKSURI = "http://a/jwks" }, "jwks_uri"},
		{"bearer method", func(m *ProtectedResourceMetadata) { m.BearerMethodsSupported = []string{"header", "cookie"} }, "bearer_methods_supported"},
		{"doc url scheme", func(m *ProtectedResourceMetadata) { m.ResourceDocumentation = "javascript:alert(1)" }, "resource_documentation"},
		{"policy url relative", func(m *ProtectedResourceMetadata) { m.ResourcePolicyURI = "/policy" }, "resource_policy_uri"},
		{"tos url bad", func(m *ProtectedResourceMetadata) { m.ResourceTOSURI = "https://a/ b" }, "resource_tos_uri"},
	}
	for _, tt := range tests {
		m := validPRM()
		tt.edit(&m)
		checkValidation(t, tt.name, m.Validate(), tt.field)
	}
}

// checkValidation asserts that err is nil when field is "", else a
// *ValidationError for field that wraps ErrInvalidMetadata.
func checkValidation(t *testing.T, name string, err error, field string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Errorf("%s: unexpected error: %v", name, err)
		}
		return
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Errorf("%s: error = %v, want *ValidationError for %s", name, err, field)
		return
	}
	if ve.Field != field {
		t.Errorf("%s: error field = %q, want %q (%v)", name, ve.Field, field, err)
	}
	if !errors.Is(err, ErrInvalidMetadata) {
		t.Errorf("%s: error does not wrap ErrInvalidMetadata", name)
	}
	if !strings.Contains(err.Error(), field) {
		t.Errorf("%s: message %q does not name the field", name, err)
	}
}

func TestProtectedResourceMetadataJSON(t *testing.T) {
	in := `{"resource":"https://a/mcp","authorization_servers":["https://auth"],"scopes_supported":["x"],` +
		`"dpop_bound_access_tokens_required":true,"signed_metadata":"eyJ.x.y","custom":{"n":[1,2]}}`
	var m ProtectedResourceMetadata
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	if m.Resource != "https://a/mcp" || !m.DPoPBoundAccessTokensRequired || !reflect.DeepEqual(m.ScopesSupported, []string{"x"}) {
		t.Fatalf("decoded %#v", m)
	}
	if len(m.Extra) != 2 || string(m.Extra["signed_metadata"]) != `"eyJ.x.y"` || string(m.Extra["custom"]) != `{"n":[1,2]}` {
		t.Fatalf("Extra = %v", m.Extra)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"resource":"https://a/mcp","authorization_servers":["https://auth"],"scopes_supported":["x"],` +
		`"dpop_bound_access_tokens_required":true,"custom":{"n":[1,2]},"signed_metadata":"eyJ.x.y"}`
	if string(out) != want {
		t.Fatalf("Marshal =\n%s\nwant\n%s", out, want)
	}
	// Zero values are left out, resource is always present.
	out, _ = json.Marshal(ProtectedResourceMetadata{})
	if string(out) != `{"resource":""}` {
		t.Fatalf("Marshal(zero) = %s", out)
	}
	if err := json.Unmarshal([]byte(`[1]`), &m); err == nil {
		t.Fatal("Unmarshal of an array: want error")
	}
}

func TestMarshalExtraRules(t *testing.T) {
	// Extra cannot override a known member, and invalid raw JSON fails.
	m := ProtectedResourceMetadata{Resource: "r", Extra: map[string]json.RawMessage{"resource": json.RawMessage(`"evil"`), "a\"b": json.RawMessage(" [ 1 , 2 ] ")}}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"resource":"r","a\"b":[1,2]}` {
		t.Fatalf("Marshal = %s", out)
	}
	m.Extra = map[string]json.RawMessage{"resource": json.RawMessage(`"evil"`)}
	if out, err := json.Marshal(m); err != nil || string(out) != `{"resource":"r"}` {
		t.Fatalf("Marshal with only a shadowed Extra member = %s, %v", out, err)
	}
	m.Extra = map[string]json.RawMessage{"x": json.RawMessage(`{`)}
	if _, err := json.Marshal(m); err == nil {
		t.Fatal("Marshal with invalid Extra: want error")
	}
	m.Extra = map[string]json.RawMessage{"x": nil}
	if _, err := json.Marshal(m); err == nil {
		t.Fatal("Marshal with empty Extra value: want error")
	}
	// An object with no other members.
	c := ClientMetadata{Extra: map[string]json.RawMessage{"k": json.RawMessage(`true`)}}
	out, err = json.Marshal(c)
	if err != nil || string(out) != `{"k":true}` {
		t.Fatalf("Marshal = %s, %v", out, err)
	}
}

func validASM() AuthorizationServerMetadata {
	return AuthorizationServerMetadata{
		Issuer:                            "https://auth.example.com",
		AuthorizationEndpoint:             "https://auth.example.com/authorize",
		TokenEndpoint:                     "https://auth.example.com/token",
		RegistrationEndpoint:              "https://auth.example.com/register",
		ResponseTypesSupported:            []string{"code"},
		GrantTypesSupported:               []string{"authorization_code", "refresh_token"},
		CodeChallengeMethodsSupported:     []string{"S256"},
		ClientIDMetadataDocumentSupported: true,
	}
}

func TestAuthorizationServerMetadataValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*AuthorizationServerMetadata)
		field string
	}{
		{"valid", func(*AuthorizationServerMetadata) {}, ""},
		{"issuer with path", func(m *AuthorizationServerMetadata) { m.Issuer = "https://auth.example.com/t1" }, ""},
		{"loopback", func(m *AuthorizationServerMetadata) {
			m.Issuer = "http://127.0.0.1:9000"
			m.AuthorizationEndpoint = "http://127.0.0.1:9000/authorize"
			m.TokenEndpoint = "http://[::1]:9000/token"
		}, ""},
		{"endpoint with query", func(m *AuthorizationServerMetadata) { m.AuthorizationEndpoint = "https://a/authorize?tenant=1" }, ""},
		{"client credentials only", func(m *AuthorizationServerMetadata) {
			m.GrantTypesSupported = []string{"client_credentials"}
			m.AuthorizationEndpoint = ""
		}, ""},
		{"implicit only", func(m *AuthorizationServerMetadata) {
			m.GrantTypesSupported = []string{"implicit"}
			m.TokenEndpoint = ""
		}, ""},
		{"missing issuer", func(m *AuthorizationServerMetadata) { m.Issuer = "" }, "issuer"},
		{"issuer http", func(m *AuthorizationServerMetadata) { m.Issuer = "http://auth.example.com" }, "issuer"},
		{"issuer query", func(m *AuthorizationServerMetadata) { m.Issuer = "https://auth.example.com?x=1" }, "issuer"},
		{"issuer fragment", func(m *AuthorizationServerMetadata) { m.Issuer = "https://auth.example.com#x" }, "issuer"},
		{"issuer userinfo", func(m *AuthorizationServerMetadata) { m.Issuer = "https://u@auth.example.com" }, "issuer"},
		{"missing authorization endpoint", func(m *AuthorizationServerMetadata) { m.AuthorizationEndpoint = "" }, "authorization_endpoint"},
		{"missing authorization endpoint, default grants", func(m *AuthorizationServerMetadata) {
			m.GrantTypesSupported = nil
			m.AuthorizationEndpoint = ""
		}, "authorization_endpoint"},
		{"missing token endpoint", func(m *AuthorizationServerMetadata) { m.TokenEndpoint = "" }, "token_endpoint"},
		{"missing token endpoint, default grants", func(m *AuthorizationServerMetadata) {
			m.GrantTypesSupported = nil
			m.TokenEndpoint = ""
		}, "token_endpoint"},
		{"missing response types", func(m *AuthorizationServerMetadata) { m.ResponseTypesSupported = nil }, "response_types_supported"},
		{"token endpoint http", func(m *AuthorizationServerMetadata) { m.TokenEndpoint = "http://auth.example.com/token" }, "token_endpoint"},
		{"authorization endpoint fragment", func(m *AuthorizationServerMetadata) { m.AuthorizationEndpoint = "https://a/authorize#x" }, "authorization_endpoint"},
		{"registration endpoint relative", func(m *AuthorizationServerMetadata) { m.RegistrationEndpoint = "/register" }, "registration_endpoint"},
		{"jwks_uri scheme", func(m *AuthorizationServerMetadata) { m.JWKSURI = "ftp://a/jwks" }, "jwks_uri"},
		{"revocation", func(m *AuthorizationServerMetadata) { m.RevocationEndpoint = "http://a/revoke" }, "revocation_endpoint"},
		{"introspection", func(m *AuthorizationServerMetadata) { m.IntrospectionEndpoint = "https://" }, "introspection_endpoint"},
		{"userinfo", func(m *AuthorizationServerMetadata) { m.UserinfoEndpoint = "https://a/ui#" }, "userinfo_endpoint"},
		{"alg none", func(m *AuthorizationServerMetadata) {
			m.TokenEndpointAuthSigningAlgValuesSupported = []string{"RS256", "none"}
		}, "token_endpoint_auth_signing_alg_values_supported"},
	}
	for _, tt := range tests {
		m := validASM()
		tt.edit(&m)
		checkValidation(t, tt.name, m.Validate(), tt.field)
	}
}

func TestAuthorizationServerMetadataPKCE(t *testing.T) {
	tests := []struct {
		methods          []string
		advertised, s256 bool
	}{
		{nil, false, false},
		{[]string{}, false, false},
		{[]string{"plain"}, true, false},
		{[]string{"s256"}, true, false},
		{[]string{"plain", "S256"}, true, true},
		{[]string{"S256"}, true, true},
	}
	for _, tt := range tests {
		m := AuthorizationServerMetadata{CodeChallengeMethodsSupported: tt.methods}
		if got := m.PKCEAdvertised(); got != tt.advertised {
			t.Errorf("%v: PKCEAdvertised = %v, want %v", tt.methods, got, tt.advertised)
		}
		if got := m.SupportsS256(); got != tt.s256 {
			t.Errorf("%v: SupportsS256 = %v, want %v", tt.methods, got, tt.s256)
		}
	}
}

func TestAuthorizationServerMetadataDefaults(t *testing.T) {
	var m AuthorizationServerMetadata
	if got := m.GrantTypes(); !reflect.DeepEqual(got, []string{"authorization_code", "implicit"}) {
		t.Errorf("default GrantTypes = %v", got)
	}
	if got := m.TokenEndpointAuthMethods(); !reflect.DeepEqual(got, []string{"client_secret_basic"}) {
		t.Errorf("default TokenEndpointAuthMethods = %v", got)
	}
	m.GrantTypesSupported = []string{"client_credentials"}
	m.TokenEndpointAuthMethodsSupported = []string{"none", "private_key_jwt"}
	if got := m.GrantTypes(); !reflect.DeepEqual(got, []string{"client_credentials"}) {
		t.Errorf("GrantTypes = %v", got)
	}
	if got := m.TokenEndpointAuthMethods(); !reflect.DeepEqual(got, []string{"none", "private_key_jwt"}) {
		t.Errorf("TokenEndpointAuthMethods = %v", got)
	}
}

func TestCheckIssuer(t *testing.T) {
	m := AuthorizationServerMetadata{Issuer: "https://auth.example.com/t1"}
	if err := m.CheckIssuer("https://auth.example.com/t1"); err != nil {
		t.Errorf("CheckIssuer(same) = %v", err)
	}
	for _, other := range []string{"https://auth.example.com/t1/", "https://AUTH.example.com/t1", "https://auth.example.com", ""} {
		if err := m.CheckIssuer(other); !errors.Is(err, ErrMetadataIssuerMismatch) {
			t.Errorf("CheckIssuer(%q) = %v, want ErrMetadataIssuerMismatch", other, err)
		}
	}
}

func TestCheckResource(t *testing.T) {
	m := ProtectedResourceMetadata{Resource: "https://mcp.example.com/mcp"}
	for _, same := range []string{"https://mcp.example.com/mcp", "https://MCP.example.com:443/mcp/"} {
		if err := m.CheckResource(same); err != nil {
			t.Errorf("CheckResource(%q) = %v", same, err)
		}
	}
	for _, other := range []string{"https://mcp.example.com", "https://mcp.example.com/mcp2", "https://evil.example.com/mcp", "not a url"} {
		if err := m.CheckResource(other); !errors.Is(err, ErrResourceMismatch) {
			t.Errorf("CheckResource(%q) = %v, want ErrResourceMismatch", other, err)
		}
	}
}

func TestAuthorizationServerMetadataJSON(t *testing.T) {
	in := `{
		"issuer": "https://auth.example.com",
		"authorization_endpoint": "https://auth.example.com/authorize",
		"token_endpoint": "https://auth.example.com/token",
		"response_types_supported": ["code"],
		"code_challenge_methods_supported": ["S256"],
		"client_id_metadata_document_supported": true,
		"authorization_response_iss_parameter_supported": true,
		"subject_types_supported": ["public"],
		"id_token_signing_alg_values_supported": ["RS256"],
		"claims_supported": ["sub","iss"],
		"service_documentation": "https://docs"
	}`
	var m AuthorizationServerMetadata
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	if !m.ClientIDMetadataDocumentSupported || !m.AuthorizationResponseIssParameterSupported || !m.SupportsS256() ||
		!reflect.DeepEqual(m.SubjectTypesSupported, []string{"public"}) {
		t.Fatalf("decoded %#v", m)
	}
	if len(m.Extra) != 2 || m.Extra["claims_supported"] == nil || m.Extra["service_documentation"] == nil {
		t.Fatalf("Extra = %v", m.Extra)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back AuthorizationServerMetadata
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", back, m)
	}
	if err := json.Unmarshal([]byte(`{"issuer": 1}`), &m); err == nil {
		t.Fatal("wrong member type: want error")
	}
}
