package auth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/oauth"
)

func TestMetadata(t *testing.T) {
	mux := http.NewServeMux()
	err := auth.RegisterMetadata(mux, oauth.ProtectedResourceMetadata{
		Resource:             "HTTPS://MCP.Example.com:443/mcp/",
		AuthorizationServers: []string{"https://as.example.com"},
		ScopesSupported:      []string{"mcp", "files:read"},
		ResourceName:         "Example",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != 200 {
			t.Fatalf("%s: %d", path, w.Code)
		}
		h := w.Header()
		if h.Get("Content-Type") != "application/json" || h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Cache-Control") != "public, max-age=3600" {
			t.Errorf("%s: headers %v", path, h)
		}
		var got map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"resource":                 "https://mcp.example.com/mcp",
			"authorization_servers":    []any{"https://as.example.com"},
			"scopes_supported":         []any{"mcp", "files:read"},
			"bearer_methods_supported": []any{"header"},
			"resource_name":            "Example",
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Errorf("%s:\n got %s\nwant %s", path, gb, wb)
		}
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest("OPTIONS", "/.well-known/oauth-protected-resource/mcp", nil)
	r.Header.Set("Origin", "https://app.example.com")
	r.Header.Set("Access-Control-Request-Method", "GET")
	mux.ServeHTTP(w, r)
	if w.Code != 204 || w.Header().Get("Access-Control-Allow-Origin") != "*" || w.Header().Get("Access-Control-Allow-Methods") != "GET, HEAD, OPTIONS" {
		t.Errorf("preflight: %d %v", w.Code, w.Header())
	}
	w = httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("POST", "/.well-known/oauth-protected-resource/mcp", nil))
	if w.Code != 405 || w.Header().Get("Allow") != "GET, HEAD, OPTIONS" {
		t.Errorf("POST: %d", w.Code)
	}
	w = httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("HEAD", "/.well-known/oauth-protected-resource/mcp", nil))
	if w.Code != 200 || w.Body.Len() != 0 {
		t.Errorf("HEAD: %d, %d bytes", w.Code, w.Body.Len())
	}
}

func TestMetadataRejects(t *testing.T) {
	for name, md := range map[string]oauth.ProtectedResourceMetadata{
		"no authorization server": {Resource: resource},
		"query bearer method":     {Resource: resource, AuthorizationServers: []string{"https://as"}, BearerMethodsSupported: []string{"header", "query"}},
		"http resource":           {Resource: "http://mcp.example.com/mcp", AuthorizationServers: []string{"https://as"}},
		"fragment":                {Resource: resource + "#x", AuthorizationServers: []string{"https://as"}},
	} {
		if _, err := auth.MetadataHandler(md); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestMetadataPaths(t *testing.T) {
	for in, want := range map[string][]string{
		"https://a.example.com/mcp":   {"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"},
		"https://a.example.com/":      {"/.well-known/oauth-protected-resource"},
		"https://a.example.com/x/mcp": {"/.well-known/oauth-protected-resource/x/mcp", "/.well-known/oauth-protected-resource"},
	} {
		got, err := auth.MetadataPaths(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %q %v", in, got, err)
		}
	}
	if u, err := auth.ResourceMetadataURL("https://A.example.com:443/mcp"); err != nil || u != "https://a.example.com/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("ResourceMetadataURL: %q %v", u, err)
	}
}
