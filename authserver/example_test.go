package authserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/store/memory"
)

// Example mounts the authorization server in a mux next to another handler
// (an MCP endpoint, say) and reads its metadata.
func Example() {
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "token required", http.StatusUnauthorized)
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()

	hash, err := authserver.HashPassword("correct horse battery staple")
	if err != nil {
		log.Fatal(err)
	}
	as, err := authserver.NewServer(context.Background(), authserver.Config{
		Issuer:    ts.URL,
		Store:     memory.New(), // store/sqlite for a server that keeps its state
		Users:     authserver.PasswordUsers{"alice": hash},
		Resources: []string{ts.URL + "/mcp"},
		Scopes:    []string{"mcp:tools"},
		CIMD:      authserver.NewCIMDFetcher(),
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range as.Paths() {
		mux.Handle(p, as)
	}

	resp, err := http.Get(ts.URL + "/.well-known/oauth-authorization-server")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		Issuer        string   `json:"issuer"`
		PKCE          []string `json:"code_challenge_methods_supported"`
		CIMD          bool     `json:"client_id_metadata_document_supported"`
		TokenEndpoint string   `json:"token_endpoint"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Issuer == ts.URL, m.PKCE, m.CIMD, m.TokenEndpoint == ts.URL+"/token")
	// Output: true [S256] true true
}
