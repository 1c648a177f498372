package authserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/mcpstack/mcpstack/oauth"
)

// Registration limits.
const (
	maxRegistrationBytes = 16 << 10
	maxRedirectURIs      = 10
	maxStringLen         = 2000
	maxClientNameLen     = 200
)

// serveRegister implements Dynamic Client Registration (RFC 7591).
func (s *Server) serveRegister(w http.ResponseWriter, r *http.Request) {
	if s.cfg.RegistrationRate < 0 {
		http.NotFound(w, r)
		return
	}
	if s.limited(w, r, s.registers, "registration") {
		s.writeError(w, r, http.StatusTooManyRequests, oauth.TemporarilyUnavailable, "too many registrations; try later")
		return
	}
	if !hasMediaType(r.Header.Get("Content-Type"), jsonTypes) {
		s.writeError(w, r, http.StatusUnsupportedMediaType, oauth.InvalidClientMetadata, "send application/json")
		return
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRegistrationBytes))
	var m oauth.ClientMetadata
	if err := dec.Decode(&m); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.writeError(w, r, http.StatusRequestEntityTooLarge, oauth.InvalidClientMetadata, "registration too large")
			return
		}
		s.writeError(w, r, 0, oauth.InvalidClientMetadata, "not a JSON object")
		return
	}
	if code, desc := s.checkRegistration(&m); code != "" {
		s.writeError(w, r, 0, code, desc)
		return
	}
	id, err := randomToken(18)
	if err != nil {
		s.writeError(w, r, 0, oauth.ServerError, "no randomness")
		return
	}
	m.ClientID = id
	c := Client{Metadata: m, IssuedAt: s.now().UTC()}
	info := oauth.ClientInformation{ClientMetadata: m, ClientIDIssuedAt: c.IssuedAt.Unix()}
	if confidential(c) && m.TokenEndpointAuthMethod != oauth.AuthMethodPrivateKeyJWT {
		secret, err := randomToken(32)
		if err != nil {
			s.writeError(w, r, 0, oauth.ServerError, "no randomness")
			return
		}
		c.SecretHash = HashSecret(secret)
		info.ClientSecret = secret
	}
	if err := s.store.CreateClient(r.Context(), c); err != nil {
		s.writeError(w, r, 0, oauth.ServerError, "storing the client failed")
		return
	}
	s.log.Info("client registered", "client_id", id, "client_name", m.ClientName, "client", s.clientKey(r))
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, info)
}

// checkRegistration validates and completes registration metadata.
func (s *Server) checkRegistration(m *oauth.ClientMetadata) (oauth.ErrorCode, string) {
	m.ClientID = ""
	for _, k := range []string{"client_secret", "client_id_issued_at", "client_secret_expires_at",
		"registration_access_token", "registration_client_uri"} {
		delete(m.Extra, k)
	}
	if m.TokenEndpointAuthMethod == "" {
		m.TokenEndpointAuthMethod = oauth.AuthMethodClientSecretBasic
	}
	if err := m.Validate(); err != nil {
		var ve *oauth.ValidationError
		if errors.As(err, &ve) && ve.Field == "redirect_uris" {
			return oauth.InvalidRedirectURI, err.Error()
		}
		return oauth.InvalidClientMetadata, err.Error()
	}
	if len(m.RedirectURIs) > maxRedirectURIs {
		return oauth.InvalidRedirectURI, "too many redirect_uris"
	}
	if len(m.ClientName) > maxClientNameLen {
		return oauth.InvalidClientMetadata, "client_name too long"
	}
	strs := append([]string{m.ClientURI, m.LogoURI, m.TOSURI, m.PolicyURI, m.JWKSURI, m.Scope,
		m.SoftwareID, m.SoftwareVersion}, m.RedirectURIs...)
	strs = append(strs, m.Contacts...)
	for _, v := range strs {
		if len(v) > maxStringLen {
			return oauth.InvalidClientMetadata, "a value is too long"
		}
	}
	switch m.TokenEndpointAuthMethod {
	case oauth.AuthMethodNone, oauth.AuthMethodClientSecretBasic, oauth.AuthMethodClientSecretPost:
	case oauth.AuthMethodPrivateKeyJWT:
		if len(m.JWKS) == 0 && m.JWKSURI == "" {
			return oauth.InvalidClientMetadata, "private_key_jwt needs jwks or jwks_uri"
		}
	default:
		return oauth.InvalidClientMetadata, "unsupported token_endpoint_auth_method"
	}
	if len(m.GrantTypes) == 0 {
		m.GrantTypes = []string{oauth.GrantAuthorizationCode}
	}
	for _, g := range m.GrantTypes {
		if !slices.Contains([]string{oauth.GrantAuthorizationCode, oauth.GrantRefreshToken, oauth.GrantClientCredentials}, g) {
			return oauth.InvalidClientMetadata, "unsupported grant type " + g
		}
	}
	if slices.Contains(m.GrantTypes, oauth.GrantClientCredentials) && m.TokenEndpointAuthMethod == oauth.AuthMethodNone {
		return oauth.InvalidClientMetadata, "client_credentials needs an authenticated client"
	}
	for _, rt := range m.ResponseTypes {
		if rt != oauth.ResponseTypeCode {
			return oauth.InvalidClientMetadata, "unsupported response type " + rt
		}
	}
	if slices.Contains(m.GrantTypes, oauth.GrantAuthorizationCode) && len(m.ResponseTypes) == 0 {
		m.ResponseTypes = []string{oauth.ResponseTypeCode}
	}
	if m.Scope != "" && len(s.cfg.Scopes) > 0 && !oauth.HasAllScopes(s.cfg.Scopes, oauth.ParseScope(m.Scope)) {
		return oauth.InvalidClientMetadata, "unknown scope"
	}
	return "", ""
}
