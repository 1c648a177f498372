package oauthhttp

import (
	"testing"

	"github.com/mcpstack/mcpstack/oauth"
)

// FuzzCheckURL: a URL CheckURL accepts as an endpoint is accepted by the
// metadata validation of package oauth too (one https rule, not two that
// disagree), and CheckURL never panics.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://as.example/token", "http://127.0.0.1:8080/t", "http://[::1]/t", "http://localhost/t",
		"http://127.0.0.2/t", "http://[::ffff:127.0.0.1]/t", "https://u@as.example/", "https://as.example/#",
		"https://as.example/a?b=c", "HTTP://LOCALHOST/", "https://[fe80::1%25eth0]/", "https://as.example:99999/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		if CheckURL(u) != nil {
			return
		}
		m := oauth.AuthorizationServerMetadata{
			Issuer:                 "https://as.example",
			AuthorizationEndpoint:  u,
			TokenEndpoint:          "https://as.example/token",
			ResponseTypesSupported: []string{"code"},
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("CheckURL accepts %q, metadata validation refuses it: %v", u, err)
		}
	})
}
