package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/mcpstack/mcpstack/oauth"
)

// Registration limits on single members; Config.MaxClientMetadataBytes
// and Config.MaxRedirectURIs bound the whole and the redirect URIs.
const (
	maxStringLen     = 2000
	maxClientNameLen = 200
	maxContacts      = 10
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
	// The whole body is one JSON object: json.Unmarshal, unlike a
	// Decoder, refuses anything after it (RFC 7591 §3.1: the body is a
	// JSON document).
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(s.cfg.MaxClientMetadataBytes)))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.writeError(w, r, http.StatusRequestEntityTooLarge, oauth.InvalidClientMetadata, "registration too large")
			return
		}
		s.writeError(w, r, http.StatusBadRequest, oauth.InvalidClientMetadata, "unreadable body")
		return
	}
	var m oauth.ClientMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		s.writeError(w, r, 0, oauth.InvalidClientMetadata, "not a single JSON object")
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
	if s.cfg.UnusedClientTTL > 0 {
		c.UnusedExpiresAt = c.IssuedAt.Add(s.cfg.UnusedClientTTL)
	}
	if b, err := json.Marshal(m); err != nil || len(b) > s.cfg.MaxClientMetadataBytes {
		// Escaping can make the stored form longer than the request.
		s.writeError(w, r, http.StatusRequestEntityTooLarge, oauth.InvalidClientMetadata, "registration too large")
		return
	}
	s.maybePruneClients(r.Context())
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
	// Display strings are checked before unknown members are dropped: a
	// registration carrying a disguised string anywhere (client_name#fr
	// included) is refused whole, with the member named, rather than
	// accepted in part.
	err := checkMetadataStrings(*m)
	// RFC 7591 §2: metadata the server does not understand is ignored;
	// not storing it keeps a client's record small.
	m.Extra = nil
	if m.TokenEndpointAuthMethod == "" {
		m.TokenEndpointAuthMethod = oauth.AuthMethodClientSecretBasic
	}
	if err == nil {
		err = m.Validate()
	}
	if err != nil {
		var ve *oauth.ValidationError
		if errors.As(err, &ve) && ve.Field == "redirect_uris" {
			return oauth.InvalidRedirectURI, err.Error()
		}
		return oauth.InvalidClientMetadata, err.Error()
	}
	if len(m.RedirectURIs) > s.cfg.MaxRedirectURIs {
		return oauth.InvalidRedirectURI, "too many redirect_uris"
	}
	if len(m.Contacts) > maxContacts {
		return oauth.InvalidClientMetadata, "too many contacts"
	}
	for _, list := range [][]string{m.RedirectURIs, m.GrantTypes, m.ResponseTypes, m.Contacts} {
		if hasDuplicates(list) {
			return oauth.InvalidClientMetadata, "a list repeats a value"
		}
	}
	if len(m.ClientName) > maxClientNameLen {
		return oauth.InvalidClientMetadata, "client_name too long"
	}
	strs := append([]string{m.ClientURI, m.LogoURI, m.TOSURI, m.PolicyURI, m.JWKSURI, m.Scope,
		m.SoftwareID, m.SoftwareVersion, m.TokenEndpointAuthSigningAlg}, m.RedirectURIs...)
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

func hasDuplicates(list []string) bool {
	for i, v := range list {
		if slices.Contains(list[i+1:], v) {
			return true
		}
	}
	return false
}

// PruneClients deletes the clients registered by Dynamic Client
// Registration and never used within Config.UnusedClientTTL, and returns
// how many. The server runs it itself, at most once per
// Config.PruneInterval, when a client registers (the only way clients pile
// up); call it from a timer of your own to prune on a schedule too. It may
// run concurrently with requests.
func (s *Server) PruneClients(ctx context.Context) (int, error) {
	now := s.now()
	s.lastPrune.Store(now.UnixNano())
	n, err := s.store.PruneClients(ctx, now)
	if err != nil {
		return n, fmt.Errorf("authserver: pruning unused clients: %w", err)
	}
	if n > 0 {
		s.log.Info("unused clients pruned", "count", n)
	}
	return n, nil
}

// maybePruneClients runs PruneClients if PruneInterval has passed since
// the last run; of concurrent callers, one runs it. It does not stop
// when the registering client goes away.
func (s *Server) maybePruneClients(ctx context.Context) {
	if s.cfg.UnusedClientTTL < 0 {
		return
	}
	last, now := s.lastPrune.Load(), s.now().UnixNano()
	if now-last < int64(s.cfg.PruneInterval) || !s.lastPrune.CompareAndSwap(last, now) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := s.PruneClients(ctx); err != nil {
		s.log.Warn("pruning unused clients failed", "err", err)
	}
}

// markClientUsed records a client's first use, so that pruning keeps it.
// Only clients that may be pruned are written, once.
func (s *Server) markClientUsed(ctx context.Context, c Client) {
	if c.UnusedExpiresAt.IsZero() {
		return
	}
	if err := s.store.MarkClientUsed(context.WithoutCancel(ctx), c.ID()); err != nil {
		s.log.Warn("marking a client used failed", "client_id", c.ID(), "err", err)
	}
}
