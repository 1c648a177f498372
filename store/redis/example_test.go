package redis_test

import (
	"context"
	"log"
	"net/http"
	"os"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/store/redis"
)

// Example runs one replica of an authorization server whose state lives in
// Redis; every replica started the same way, with the same prefix, shares
// the clients, codes, tokens and signing keys. It needs a server, so it is
// compiled, not run.
func Example() {
	ctx := context.Background()
	// For example redis://redis.internal:6379/0
	opt, err := goredis.ParseURL(os.Getenv("AUTH_REDIS_URL"))
	if err != nil {
		log.Fatal(err)
	}
	rdb := goredis.NewClient(opt)
	defer rdb.Close()

	as, err := authserver.NewServer(ctx, authserver.Config{
		Issuer: "https://auth.example.com",
		Store:  redis.New(rdb, "auth:"),
		// The keys that sign tokens and login sessions live in the store
		// too: every replica signs and verifies with the same ones.
		Users: authserver.PasswordUsers{},
	})
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe(":8080", as))
}
