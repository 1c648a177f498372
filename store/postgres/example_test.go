package postgres_test

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/store/postgres"
)

// Example runs one replica of an authorization server whose state lives in
// PostgreSQL; every replica started the same way shares the clients, codes,
// tokens and signing keys. It needs a server, so it is compiled, not run.
func Example() {
	ctx := context.Background()
	// For example postgres://as@db.internal:5432/auth?search_path=authserver
	st, err := postgres.Open(ctx, os.Getenv("AUTH_DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	as, err := authserver.NewServer(ctx, authserver.Config{
		Issuer: "https://auth.example.com",
		Store:  st,
		// The keys that sign tokens and login sessions live in the store
		// too: every replica signs and verifies with the same ones.
		Users: authserver.PasswordUsers{},
	})
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe(":8080", as))
}
