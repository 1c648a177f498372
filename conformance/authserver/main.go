// Command authserver runs mcpstack's authorization server for the official
// conformance suite's "authorization" mode (scripts/conformance.sh
// authserver). It serves on -addr with the issuer http://ADDR, signs every
// visitor in as a development user, and pre-registers one public client
// whose redirect URI is the suite's callback, trusted so that the
// authorization endpoint answers with a code at once (the suite waits for a
// browser to bring the code to its callback; the script plays the browser).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/memory"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	clientID := flag.String("client-id", "conformance-client", "pre-registered public client")
	callback := flag.Int("callback-port", 3000, "the suite's callback port (redirect http://127.0.0.1:PORT/callback)")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	st := memory.New()
	ctx := context.Background()
	err = st.CreateClient(ctx, authserver.Client{Metadata: oauth.ClientMetadata{
		ClientID: *clientID, ClientName: "MCP conformance suite",
		RedirectURIs:            []string{fmt.Sprintf("http://127.0.0.1:%d/callback", *callback)},
		GrantTypes:              []string{oauth.GrantAuthorizationCode, oauth.GrantRefreshToken},
		TokenEndpointAuthMethod: oauth.AuthMethodNone,
	}})
	if err != nil {
		log.Fatal(err)
	}
	s, err := authserver.NewServer(ctx, authserver.Config{
		Issuer:        issuer,
		Store:         st,
		DevUser:       "conformance-user",
		CIMD:          authserver.NewCIMDFetcher(),
		TrustedClient: func(c authserver.Client) bool { return c.ID() == *clientID },
		Logger:        slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("issuer", issuer)
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt, syscall.SIGTERM)
		<-c
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
