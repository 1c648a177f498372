package authclient_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/mcpstack/mcpstack/authclient"
	"github.com/mcpstack/mcpstack/oauth"
)

// A command-line client: the redirect comes back to a listener on
// 127.0.0.1, the browser is opened for the user (or, headless, the URL is
// printed), and tokens are kept in a file readable only by the user.
func ExampleNewTransport() {
	la, err := authclient.NewLoopbackAuthorizer(authclient.LoopbackOptions{Headless: true, Output: os.Stderr})
	if err != nil {
		log.Fatal(err)
	}
	defer la.Close()
	dir, err := os.UserConfigDir()
	if err != nil {
		log.Fatal(err)
	}
	t := authclient.NewTransport(authclient.Config{
		Authorizer:               la,
		ClientIDMetadataDocument: "https://client.example/oauth/client.json",
		ClientMetadata:           oauth.ClientMetadata{ClientName: "Example CLI"},
		Store:                    &authclient.FileStore{Path: filepath.Join(dir, "example", "tokens.json")},
	})
	// Give this client to the MCP transport, for example
	// mcphttp.ClientTransport{HTTPClient: hc}.
	hc := &http.Client{Transport: t}
	_ = hc
}

// A machine client with a pre-registered identity uses the client
// credentials grant; no user is involved.
func ExampleConfig_clientCredentials() {
	t := authclient.NewTransport(authclient.Config{
		Grant: authclient.GrantClientCredentials,
		PreRegistered: func(issuer string) (authclient.ClientRegistration, bool) {
			if issuer != "https://auth.example.com" {
				return authclient.ClientRegistration{}, false
			}
			return authclient.ClientRegistration{ClientID: "svc", ClientSecret: os.Getenv("SVC_SECRET")}, true
		},
	})
	_ = t.Client()
}

// Serving the client's own Client ID Metadata Document: its client_id is
// the URL it is served at.
func ExampleMetadataDocumentHandler() {
	h, err := authclient.MetadataDocumentHandler(oauth.ClientMetadata{
		ClientID:     "https://client.example/oauth/client.json",
		ClientName:   "Example",
		RedirectURIs: []string{"http://127.0.0.1/callback"},
	}, 0)
	if err != nil {
		log.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "https://client.example/oauth/client.json", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	fmt.Println(rec.Body.String())
	// Output:
	// 200 application/json
	// {"client_id":"https://client.example/oauth/client.json","client_name":"Example","redirect_uris":["http://127.0.0.1/callback"]}
}
