package oauth

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestClientMetadataValidate(t *testing.T) {
	base := func() ClientMetadata {
		return ClientMetadata{
			ClientName:   "Example",
			RedirectURIs: []string{"https://app.example.com/cb", "http://127.0.0.1/cb"},
		}
	}
	tests := []struct {
		name  string
		edit  func(*ClientMetadata)
		field string
	}{
		{"valid", func(*ClientMetadata) {}, ""},
		{"localhost redirect", func(m *ClientMetadata) { m.RedirectURIs = []string{"http://localhost:3000/callback"} }, ""},
		{"ipv6 loopback", func(m *ClientMetadata) { m.RedirectURIs = []string{"http://[::1]:3000/callback"} }, ""},
		{"explicit code grant", func(m *ClientMetadata) {
			m.GrantTypes = []string{"authorization_code", "refresh_token"}
			m.ResponseTypes = []string{"code"}
		}, ""},
		{"client credentials without redirects", func(m *ClientMetadata) {
			m.GrantTypes = []string{"client_credentials"}
			m.ResponseTypes = []string{}
			m.RedirectURIs = nil
		}, ""},
		{"code response with default grant", func(m *ClientMetadata) { m.ResponseTypes = []string{"code"} }, ""},
		{"implicit with token", func(m *ClientMetadata) {
			m.GrantTypes = []string{"authorization_code", "implicit"}
			m.ResponseTypes = []string{"code", "token"}
		}, ""},
		{"jwks object", func(m *ClientMetadata) { m.JWKS = json.RawMessage(` {"keys":[]}`) }, ""},
		{"urls", func(m *ClientMetadata) {
			m.ClientURI, m.LogoURI, m.TOSURI, m.PolicyURI, m.JWKSURI = "https://a", "https://a/l.png", "http://a/tos", "https://a/p", "https://a/jwks"
		}, ""},
		{"missing redirects", func(m *ClientMetadata) { m.RedirectURIs = nil }, "redirect_uris"},
		{"redirect with fragment", func(m *ClientMetadata) { m.RedirectURIs = []string{"https://a/cb#x"} }, "redirect_uris"},
		{"redirect http non-loopback", func(m *ClientMetadata) { m.RedirectURIs = []string{"http://app.example.com/cb"} }, "redirect_uris"},
		{"redirect custom scheme", func(m *ClientMetadata) { m.RedirectURIs = []string{"com.example.app:/cb"} }, "redirect_uris"},
		{"redirect relative", func(m *ClientMetadata) { m.RedirectURIs = []string{"/cb"} }, "redirect_uris"},
		{"redirect javascript", func(m *ClientMetadata) { m.RedirectURIs = []string{"javascript:alert(1)"} }, "redirect_uris"},
		{"code without grant", func(m *ClientMetadata) {
			m.GrantTypes = []string{"refresh_token"}
			m.ResponseTypes = []string{"code"}
		}, "grant_types"},
		{"grant without code", func(m *ClientMetadata) {
			m.GrantTypes = []string{"authorization_code"}
			m.ResponseTypes = []string{"token"}
		}, "grant_types"},
		{"implicit without token", func(m *ClientMetadata) { m.GrantTypes = []string{"authorization_code", "implicit"} }, "grant_types"},
		{"jwks and jwks_uri", func(m *ClientMetadata) {
			m.JWKS = json.RawMessage(`{"keys":[]}`)
			m.JWKSURI = "https://a/jwks"
		}, "jwks"},
		{"jwks not object", func(m *ClientMetadata) { m.JWKS = json.RawMessage(`[]`) }, "jwks"},
		{"jwks invalid", func(m *ClientMetadata) { m.JWKS = json.RawMessage(`{`) }, "jwks"},
		{"jwks_uri http", func(m *ClientMetadata) { m.JWKSURI = "http://a/jwks" }, "jwks_uri"},
		{"client_uri scheme", func(m *ClientMetadata) { m.ClientURI = "javascript:x" }, "client_uri"},
		{"logo_uri data", func(m *ClientMetadata) { m.LogoURI = "data:image/png;base64,AAAA" }, "logo_uri"},
		{"tos_uri", func(m *ClientMetadata) { m.TOSURI = "tos" }, "tos_uri"},
		{"policy_uri", func(m *ClientMetadata) { m.PolicyURI = "https:///p" }, "policy_uri"},
	}
	for _, tt := range tests {
		m := base()
		tt.edit(&m)
		checkValidation(t, tt.name, m.Validate(), tt.field)
	}
}

func TestClientMetadataJSON(t *testing.T) {
	in := `{"client_id":"https://app.example.com/client.json","client_name":"App","redirect_uris":["http://127.0.0.1:3000/cb"],` +
		`"token_endpoint_auth_method":"none","jwks":{"keys":[]},"software_statement":"eyJ"}`
	var m ClientMetadata
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	if m.ClientID != "https://app.example.com/client.json" || string(m.JWKS) != `{"keys":[]}` || string(m.Extra["software_statement"]) != `"eyJ"` || len(m.Extra) != 1 {
		t.Fatalf("decoded %#v", m)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Fatalf("Marshal =\n%s\nwant\n%s", out, in)
	}
	if err := json.Unmarshal([]byte(`{"redirect_uris":"x"}`), &m); err == nil {
		t.Fatal("wrong member type: want error")
	}
}

func TestClientInformationJSON(t *testing.T) {
	in := `{"client_id":"s6BhdRkqt3","client_secret":"cf136dc3c1fc93f31185e5885805d",` +
		`"client_id_issued_at":2893256800,"client_secret_expires_at":0,` +
		`"registration_access_token":"this.is.an.access.token.value.ffx83",` +
		`"registration_client_uri":"https://server.example.com/connect/register?client_id=s6BhdRkqt3",` +
		`"token_endpoint_auth_method":"client_secret_basic","redirect_uris":["https://client.example.org/callback"],` +
		`"client_name":"My Example","logo_uri":"https://client.example.org/logo.png","example_extension_parameter":"example_value"}`
	var c ClientInformation
	if err := json.Unmarshal([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	want := ClientInformation{
		ClientMetadata: ClientMetadata{
			ClientID:                "s6BhdRkqt3",
			ClientName:              "My Example",
			RedirectURIs:            []string{"https://client.example.org/callback"},
			LogoURI:                 "https://client.example.org/logo.png",
			TokenEndpointAuthMethod: "client_secret_basic",
			Extra:                   map[string]json.RawMessage{"example_extension_parameter": json.RawMessage(`"example_value"`)},
		},
		ClientSecret:            "cf136dc3c1fc93f31185e5885805d",
		ClientIDIssuedAt:        2893256800,
		RegistrationAccessToken: "this.is.an.access.token.value.ffx83",
		RegistrationClientURI:   "https://server.example.com/connect/register?client_id=s6BhdRkqt3",
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("decoded\n%#v\nwant\n%#v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back ClientInformation
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("round trip through %s:\n got %#v\nwant %#v", out, back, c)
	}
	var raw map[string]any
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	if v, ok := raw["client_secret_expires_at"]; !ok || v != 0.0 {
		t.Fatalf("client_secret_expires_at = %v, %v; want 0 present with a secret", v, ok)
	}
}

func TestClientInformationMarshalEdges(t *testing.T) {
	tests := []struct {
		c    ClientInformation
		want string
	}{
		{ClientInformation{}, `{}`},
		{ClientInformation{ClientMetadata: ClientMetadata{ClientID: "a"}}, `{"client_id":"a"}`},
		{ClientInformation{ClientSecretExpiresAt: 5}, `{"client_secret_expires_at":5}`},
		{ClientInformation{ClientMetadata: ClientMetadata{ClientID: "a"}, ClientSecret: "s"}, `{"client_id":"a","client_secret":"s","client_secret_expires_at":0}`},
		// Extra must not duplicate members that ClientInformation owns.
		{ClientInformation{
			ClientMetadata: ClientMetadata{ClientID: "a", Extra: map[string]json.RawMessage{"client_secret": json.RawMessage(`"x"`), "z": json.RawMessage(`1`)}},
			ClientSecret:   "s",
		}, `{"client_id":"a","z":1,"client_secret":"s","client_secret_expires_at":0}`},
	}
	for _, tt := range tests {
		out, err := json.Marshal(tt.c)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != tt.want {
			t.Errorf("Marshal = %s, want %s", out, tt.want)
		}
	}
	bad := ClientInformation{ClientMetadata: ClientMetadata{Extra: map[string]json.RawMessage{"x": json.RawMessage(`{`)}}}
	if _, err := json.Marshal(bad); err == nil {
		t.Error("Marshal with invalid Extra: want error")
	}
	var c ClientInformation
	for _, in := range []string{`{"client_secret":1}`, `{"client_name":1}`, `nope`} {
		if err := json.Unmarshal([]byte(in), &c); err == nil {
			t.Errorf("Unmarshal(%s): want error", in)
		}
	}
}

func TestClientInformationValidateAndExpiry(t *testing.T) {
	checkValidation(t, "missing id", ClientInformation{}.Validate(), "client_id")
	ok := ClientInformation{ClientMetadata: ClientMetadata{ClientID: "a"}}
	checkValidation(t, "ok", ok.Validate(), "")
	neg := ok
	neg.ClientIDIssuedAt = -1
	checkValidation(t, "negative issued", neg.Validate(), "client_id_issued_at")
	neg = ok
	neg.ClientSecretExpiresAt = -1
	checkValidation(t, "negative expiry", neg.Validate(), "client_secret_expires_at")

	if got := ok.SecretExpiry(); !got.IsZero() {
		t.Errorf("SecretExpiry with 0 = %v, want zero", got)
	}
	ok.ClientSecretExpiresAt = 1700000000
	if got := ok.SecretExpiry(); !got.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("SecretExpiry = %v", got)
	}
}

func TestValidateClientIDURL(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"https://app.example.com/client.json", true},
		{"https://app.example.com/oauth/client-metadata", true},
		{"https://app.example.com:8443/c", true},
		{"HTTPS://app.example.com/c", true},
		{"https://app.example.com/c?v=2", true},
		{"https://app.example.com/a..b", true},
		{"https://app.example.com", false},
		{"https://app.example.com/", false},
		{"https://app.example.com?x=1", false},
		{"http://app.example.com/client.json", false},
		{"http://127.0.0.1/client.json", false},
		{"https://app.example.com/client.json#x", false},
		{"https://user@app.example.com/c", false},
		{"https://app.example.com/a/../c", false},
		{"https://app.example.com/./c", false},
		{"https://app.example.com/a/%2e%2E/c", false},
		{"https://app.example.com/a/.", false},
		{"https:///c", false},
		{"s6BhdRkqt3", false},
		{"", false},
		{"urn:example:client", false},
		{"https://app.example.com/a b", false},
	}
	for _, tt := range tests {
		err := ValidateClientIDURL(tt.id)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateClientIDURL(%q) = %v, want ok=%v", tt.id, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidURI) {
			t.Errorf("ValidateClientIDURL(%q) error %v does not wrap ErrInvalidURI", tt.id, err)
		}
		if got := IsURLClientID(tt.id); got != tt.ok {
			t.Errorf("IsURLClientID(%q) = %v, want %v", tt.id, got, tt.ok)
		}
	}
}

func TestValidateClientIDMetadataDocument(t *testing.T) {
	const docURL = "https://app.example.com/oauth/client.json"
	base := func() ClientMetadata {
		return ClientMetadata{
			ClientID:     docURL,
			ClientName:   "Example App",
			ClientURI:    "https://app.example.com",
			RedirectURIs: []string{"http://127.0.0.1:3000/callback", "https://app.example.com/callback"},
			GrantTypes:   []string{"authorization_code", "refresh_token"},
		}
	}
	tests := []struct {
		name   string
		docURL string
		edit   func(*ClientMetadata)
		field  string
	}{
		{"valid", docURL, func(*ClientMetadata) {}, ""},
		{"none", docURL, func(m *ClientMetadata) { m.TokenEndpointAuthMethod = "none" }, ""},
		{"private_key_jwt with jwks_uri", docURL, func(m *ClientMetadata) {
			m.TokenEndpointAuthMethod = "private_key_jwt"
			m.JWKSURI = "https://app.example.com/jwks.json"
		}, ""},
		{"private_key_jwt with jwks", docURL, func(m *ClientMetadata) {
			m.TokenEndpointAuthMethod = "private_key_jwt"
			m.JWKS = json.RawMessage(`{"keys":[{"kty":"EC"}]}`)
		}, ""},
		{"localhost redirect", docURL, func(m *ClientMetadata) { m.RedirectURIs = []string{"http://localhost:8080/cb"} }, ""},
		{"bad doc url", "http://app.example.com/oauth/client.json", func(m *ClientMetadata) { m.ClientID = "http://app.example.com/oauth/client.json" }, "client_id"},
		{"doc url without path", "https://app.example.com", func(m *ClientMetadata) { m.ClientID = "https://app.example.com" }, "client_id"},
		{"missing client_id", docURL, func(m *ClientMetadata) { m.ClientID = "" }, "client_id"},
		{"client_id differs", docURL, func(m *ClientMetadata) { m.ClientID = "https://evil.example.com/oauth/client.json" }, "client_id"},
		{"client_id trailing slash", docURL, func(m *ClientMetadata) { m.ClientID = docURL + "/" }, "client_id"},
		{"client_id case", docURL, func(m *ClientMetadata) { m.ClientID = "https://APP.example.com/oauth/client.json" }, "client_id"},
		{"missing client_name", docURL, func(m *ClientMetadata) { m.ClientName = "" }, "client_name"},
		{"missing redirect_uris", docURL, func(m *ClientMetadata) { m.RedirectURIs = nil }, "redirect_uris"},
		{"missing redirect_uris for client credentials", docURL, func(m *ClientMetadata) {
			m.RedirectURIs = nil
			m.GrantTypes = []string{"client_credentials"}
		}, "redirect_uris"},
		{"redirect fragment", docURL, func(m *ClientMetadata) { m.RedirectURIs = []string{"https://app.example.com/cb#f"} }, "redirect_uris"},
		{"redirect http remote", docURL, func(m *ClientMetadata) { m.RedirectURIs = []string{"http://app.example.com/cb"} }, "redirect_uris"},
		{"client_secret_basic", docURL, func(m *ClientMetadata) { m.TokenEndpointAuthMethod = "client_secret_basic" }, "token_endpoint_auth_method"},
		{"client_secret_post", docURL, func(m *ClientMetadata) { m.TokenEndpointAuthMethod = "client_secret_post" }, "token_endpoint_auth_method"},
		{"client_secret_jwt", docURL, func(m *ClientMetadata) { m.TokenEndpointAuthMethod = "client_secret_jwt" }, "token_endpoint_auth_method"},
		{"unknown method", docURL, func(m *ClientMetadata) { m.TokenEndpointAuthMethod = "magic" }, "token_endpoint_auth_method"},
		{"private_key_jwt without keys", docURL, func(m *ClientMetadata) { m.TokenEndpointAuthMethod = "private_key_jwt" }, "token_endpoint_auth_method"},
		{"client_secret member", docURL, func(m *ClientMetadata) {
			m.Extra = map[string]json.RawMessage{"client_secret": json.RawMessage(`"s"`)}
		}, "client_secret"},
		{"client_secret_expires_at member", docURL, func(m *ClientMetadata) {
			m.Extra = map[string]json.RawMessage{"client_secret_expires_at": json.RawMessage(`0`)}
		}, "client_secret_expires_at"},
		{"generic metadata rule", docURL, func(m *ClientMetadata) { m.LogoURI = "javascript:x" }, "logo_uri"},
	}
	for _, tt := range tests {
		m := base()
		tt.edit(&m)
		checkValidation(t, tt.name, ValidateClientIDMetadataDocument(tt.docURL, m), tt.field)
	}
}

func TestValidateClientIDMetadataDocumentFromJSON(t *testing.T) {
	doc := `{"client_id":"https://app.example.com/c.json","client_name":"A","redirect_uris":["http://127.0.0.1/cb"],"client_secret":"leaked"}`
	var m ClientMetadata
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	checkValidation(t, "secret in document", ValidateClientIDMetadataDocument("https://app.example.com/c.json", m), "client_secret")
}
