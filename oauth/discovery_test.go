package oauth

import (
	"errors"
	"reflect"
	"testing"
)

func TestProtectedResourceMetadataURLs(t *testing.T) {
	const wk = "/.well-known/oauth-protected-resource"
	tests := []struct {
		server string
		want   []string
	}{
		{"https://mcp.example.com", []string{"https://mcp.example.com" + wk}},
		{"https://mcp.example.com/", []string{"https://mcp.example.com" + wk}},
		{"https://mcp.example.com/mcp", []string{"https://mcp.example.com" + wk + "/mcp", "https://mcp.example.com" + wk}},
		{"https://mcp.example.com/mcp/", []string{"https://mcp.example.com" + wk + "/mcp", "https://mcp.example.com" + wk}},
		{"https://MCP.Example.com:443/a/b/mcp", []string{"https://mcp.example.com" + wk + "/a/b/mcp", "https://mcp.example.com" + wk}},
		{"http://127.0.0.1:8080/mcp", []string{"http://127.0.0.1:8080" + wk + "/mcp", "http://127.0.0.1:8080" + wk}},
		{"https://mcp.example.com/mcp?tenant=1", []string{"https://mcp.example.com" + wk + "/mcp?tenant=1", "https://mcp.example.com" + wk}},
		{"https://mcp.example.com/?tenant=1", []string{"https://mcp.example.com" + wk + "?tenant=1", "https://mcp.example.com" + wk}},
	}
	for _, tt := range tests {
		got, err := ProtectedResourceMetadataURLs(tt.server)
		if err != nil {
			t.Errorf("ProtectedResourceMetadataURLs(%q): %v", tt.server, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ProtectedResourceMetadataURLs(%q) =\n%q\nwant\n%q", tt.server, got, tt.want)
		}
	}
	for _, bad := range []string{"", "mcp.example.com/mcp", "https://mcp.example.com/mcp#x", "ftp://a/b", "https://u@a/b"} {
		if got, err := ProtectedResourceMetadataURLs(bad); !errors.Is(err, ErrInvalidURI) {
			t.Errorf("ProtectedResourceMetadataURLs(%q) = %q, %v; want ErrInvalidURI", bad, got, err)
		}
	}
}

func TestAuthorizationServerMetadataURLs(t *testing.T) {
	tests := []struct {
		issuer string
		want   []string
	}{
		{"https://auth.example.com", []string{
			"https://auth.example.com/.well-known/oauth-authorization-server",
			"https://auth.example.com/.well-known/openid-configuration",
		}},
		{"https://auth.example.com/", []string{
			"https://auth.example.com/.well-known/oauth-authorization-server",
			"https://auth.example.com/.well-known/openid-configuration",
		}},
		{"https://auth.example.com/t1", []string{
			"https://auth.example.com/.well-known/oauth-authorization-server/t1",
			"https://auth.example.com/.well-known/openid-configuration/t1",
			"https://auth.example.com/t1/.well-known/openid-configuration",
		}},
		{"https://auth.example.com/t1/", []string{
			"https://auth.example.com/.well-known/oauth-authorization-server/t1",
			"https://auth.example.com/.well-known/openid-configuration/t1",
			"https://auth.example.com/t1/.well-known/openid-configuration",
		}},
		{"https://login.example.com/tenants/abc/v2.0", []string{
			"https://login.example.com/.well-known/oauth-authorization-server/tenants/abc/v2.0",
			"https://login.example.com/.well-known/openid-configuration/tenants/abc/v2.0",
			"https://login.example.com/tenants/abc/v2.0/.well-known/openid-configuration",
		}},
		{"HTTP://LOCALHOST:9000", []string{
			"http://localhost:9000/.well-known/oauth-authorization-server",
			"http://localhost:9000/.well-known/openid-configuration",
		}},
	}
	for _, tt := range tests {
		got, err := AuthorizationServerMetadataURLs(tt.issuer)
		if err != nil {
			t.Errorf("AuthorizationServerMetadataURLs(%q): %v", tt.issuer, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("AuthorizationServerMetadataURLs(%q) =\n%q\nwant\n%q", tt.issuer, got, tt.want)
		}
	}
	for _, bad := range []string{"", "auth.example.com", "https://auth.example.com?x=1", "https://auth.example.com/t1?", "https://auth.example.com#f", "urn:x"} {
		if got, err := AuthorizationServerMetadataURLs(bad); !errors.Is(err, ErrInvalidURI) {
			t.Errorf("AuthorizationServerMetadataURLs(%q) = %q, %v; want ErrInvalidURI", bad, got, err)
		}
	}
}

func TestProtectedResourceMetadataPath(t *testing.T) {
	tests := map[string]string{
		"":        "/.well-known/oauth-protected-resource",
		"/":       "/.well-known/oauth-protected-resource",
		"//":      "/.well-known/oauth-protected-resource",
		"/mcp":    "/.well-known/oauth-protected-resource/mcp",
		"/mcp/":   "/.well-known/oauth-protected-resource/mcp",
		"mcp":     "/.well-known/oauth-protected-resource/mcp",
		"/a/b/c/": "/.well-known/oauth-protected-resource/a/b/c",
	}
	for in, want := range tests {
		if got := ProtectedResourceMetadataPath(in); got != want {
			t.Errorf("ProtectedResourceMetadataPath(%q) = %q, want %q", in, got, want)
		}
	}
	// The path agrees with the URL builder.
	urls, err := ProtectedResourceMetadataURLs("https://a.example/x/mcp/")
	if err != nil {
		t.Fatal(err)
	}
	if want := "https://a.example" + ProtectedResourceMetadataPath("/x/mcp/"); urls[0] != want {
		t.Errorf("URL %q and path %q disagree", urls[0], want)
	}
}
