package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mcpstack/mcpstack/authclient"
	"github.com/mcpstack/mcpstack/oauth"
)

// defaultTokenStore is where the client keeps tokens unless told
// otherwise: mcpstack/tokens.json in the user's config directory.
func defaultTokenStore() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no place for the token store (give --token-store): %w", err)
	}
	return filepath.Join(dir, "mcpstack", "tokens.json"), nil
}

// loginTransport returns the round tripper that logs in when a server
// asks for it: discovery from the 401 challenge, registration (the
// pre-registered client, the Client ID Metadata Document, or dynamic
// registration), the authorization code flow with PKCE in the browser with
// a loopback redirect, step-up on 403 insufficient_scope, refresh; tokens
// and registrations are kept per server in a 0600 file.
//
// If --browser-cmd fails, fail stops the client with the reason.
func loginTransport(cfg *clientConfig, s *stdio, fail context.CancelCauseFunc) (http.RoundTripper, func(), error) {
	var store authclient.Store
	path := cfg.tokenStore
	if path == "" {
		var err error
		if path, err = defaultTokenStore(); err != nil {
			// Tokens then last as long as this run.
			fmt.Fprintf(s.err, "mcpstack client: warning: %v\n", err)
		}
	}
	if path != "" {
		store = &authclient.FileStore{Path: path}
	}
	lo := authclient.LoopbackOptions{Output: s.err}
	switch {
	case cfg.noBrowser:
		lo.Headless = true
	case cfg.browserCmd != "":
		lo.Open = func(u string) error {
			fields := strings.Fields(cfg.browserCmd)
			cmd := exec.Command(fields[0], append(fields[1:], u)...)
			cmd.Stdout, cmd.Stderr = s.err, s.err
			if err := cmd.Start(); err != nil {
				return fmt.Errorf("--browser-cmd: %w", err)
			}
			go func() {
				if err := cmd.Wait(); err != nil {
					fail(fmt.Errorf("login: --browser-cmd %q failed: %w", cfg.browserCmd, err))
				}
			}()
			return nil
		}
	default:
		lo.Open = func(u string) error {
			fmt.Fprintf(s.err, "Opening the browser to log in; if it does not open, visit:\n  %s\n", u)
			return authclient.OpenBrowser(u)
		}
	}
	authorizer, err := authclient.NewLoopbackAuthorizer(lo)
	if err != nil {
		return nil, nil, opErr("starting the login's loopback listener", err)
	}
	ac := authclient.Config{
		Authorizer:               authorizer,
		ClientIDMetadataDocument: cfg.clientMetadataURL,
		ClientMetadata: oauth.ClientMetadata{
			ClientName:      "mcpstack client",
			ClientURI:       "https://github.com/mcpstack/mcpstack",
			SoftwareID:      "mcpstack",
			SoftwareVersion: version,
		},
		Scopes:                cfg.scopes,
		OfflineAccess:         true,
		Store:                 store,
		AllowPrivateAddresses: cfg.allowPrivate,
		// -v shows the login steps (info), -v -v the transport's debug.
		Logger: newLogger(s.err, cfg.verbosity),
	}
	if cfg.clientID != "" {
		reg := authclient.ClientRegistration{ClientID: cfg.clientID, ClientSecret: cfg.clientSecret}
		ac.PreRegistered = func(string) (authclient.ClientRegistration, bool) { return reg, true }
	}
	return authclient.NewTransport(ac), func() { authorizer.Close() }, nil
}

// logout revokes and forgets the tokens kept for cfg.url: the client's
// logout action. It needs no session with the server.
func logout(ctx context.Context, cfg *clientConfig, s *stdio, fail context.CancelCauseFunc) error {
	if cfg.command != nil || cfg.url == "" {
		return usageErrorf("logout needs the server's URL (tokens are kept for HTTP servers only)")
	}
	rt, closeAuth, err := loginTransport(cfg, s, fail)
	if err != nil {
		return err
	}
	defer closeAuth()
	t, ok := rt.(*authclient.Transport)
	if !ok {
		return fmt.Errorf("logout: unexpected transport %T", rt)
	}
	if err := t.Logout(ctx, cfg.url); err != nil {
		return opErr("logging out of "+cfg.url, err)
	}
	fmt.Fprintf(s.out, "logged out of %s\n", cfg.url)
	return nil
}
