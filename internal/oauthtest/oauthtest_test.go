package oauthtest

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/mcpstack/mcpstack/internal/oauthhttp"
	"github.com/mcpstack/mcpstack/oauth"
)

// TestDiscoverable: what the server publishes passes the module's
// discovery rules, with and without an issuer path, and its token
// endpoint answers a client credentials grant with a token it knows.
func TestDiscoverable(t *testing.T) {
	for _, path := range []string{"", "/tenant1"} {
		s := New(t, func(s *Server) { s.IssuerPath = path; s.ClientID, s.ClientSecret = "c", "s" })
		m, err := oauthhttp.DiscoverAuthorizationServer(context.Background(), s.Srv.Client(), s.Issuer(), oauthhttp.DiscoverOptions{})
		if err != nil {
			t.Fatalf("issuer path %q: %v", path, err)
		}
		tr, _, err := oauthhttp.RetrieveToken(context.Background(), s.Srv.Client(), oauthhttp.TokenRequest{
			Endpoint: m.TokenEndpoint, Form: url.Values{"grant_type": {oauth.GrantClientCredentials}, "scope": {"a b"}},
			Auth: oauthhttp.ClientAuth{ID: "c", Secret: "s", Method: oauth.AuthMethodClientSecretBasic},
		})
		if err != nil {
			t.Fatal(err)
		}
		if sc, ok := s.ScopesOf(tr.AccessToken); !ok || oauth.JoinScope(sc) != "a b" {
			t.Fatalf("scope of the issued token: %v %v", sc, ok)
		}
		_, _, err = oauthhttp.RetrieveToken(context.Background(), s.Srv.Client(), oauthhttp.TokenRequest{
			Endpoint: m.TokenEndpoint, Form: url.Values{"grant_type": {oauth.GrantClientCredentials}},
			Auth: oauthhttp.ClientAuth{ID: "c", Secret: "wrong", Method: oauth.AuthMethodClientSecretBasic},
		})
		if !errorsIsCode(err, oauth.InvalidClient) {
			t.Fatalf("wrong secret: %v", err)
		}
	}
}

func errorsIsCode(err error, code oauth.ErrorCode) bool {
	return errors.Is(err, &oauth.ErrorResponse{Code: code})
}
