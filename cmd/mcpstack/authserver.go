package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/internal/cors"
)

const authserverDescription = `
Runs the embedded OAuth 2.1 authorization server for MCP on its own: the
authorization endpoint with its login and consent pages, the token
endpoint (authorization code with PKCE S256, refresh with rotation),
Dynamic Client Registration, Client ID Metadata Documents, introspection,
revocation, metadata and JWKS. Access tokens are JWTs bound to the
resource they were asked for.

Users sign in with a name and password: give them with --user (the
password is hashed at start) or in a --users file, one "name:bcrypt-hash"
a line ('#' starts a comment). For development on one machine, --dev-user
signs every visitor in as that user without a form. Or users sign in at
another provider (--upstream-issuer): an OpenID Connect provider is
discovered from its issuer; a plain OAuth provider such as GitHub needs
--upstream-authorize-url, --upstream-token-url and --upstream-userinfo-url.
Another mcpstack authserver can be that plain OAuth provider: its
user-info endpoint is ISSUER/userinfo, which answers only tokens issued
for it, so give the same URL as --upstream-resource (and --upstream-scope
with a scope it knows, or none).
Register http(s)://ISSUER/upstream/callback as the redirect URI there.
Each MCP client is then shown this server's consent page before the
browser goes to the provider, and users become ISSUER#SUBJECT. The
provider's tokens stay here, encrypted; a resource server named by
--upstream-exchange-client-id may obtain a user's upstream access token
at the token endpoint by RFC 8693 token exchange, presenting an access
token the user's MCP client obtained for it (--upstream-exchange-resource).

The metadata and the JWKS may be read by any web page. With --cors-origin,
browser-based clients on that origin may also call the token, registration
and revocation endpoints from the page; none may by default.

Clients, codes, tokens, signing keys and the keys that sign logins are
kept in an SQLite file (--db; by default mcpstack/authserver.db in the
user's config directory), so they survive a restart and logins stay
valid; --db :memory: keeps them in memory for the run. The file is
created readable by its owner only, and a database the group or others
may read is refused. To run several replicas behind one address, give
each the same --postgres URL or --redis URL instead: they then share
clients, codes, refresh tokens, signing keys, logins and the per-address
rate limits, and act as one server. Give the same --issuer to each: the
address of the load balancer. It binds to 127.0.0.1 by default; without
--tls-cert the issuer is http://ADDR, which clients accept on loopback
only, and a non-loopback --addr is refused unless --allow-plain-http says
a proxy in front terminates TLS.
`

const authserverExamples = `  mcpstack authserver --dev-user me --scope 'mcp:tools mcp:admin'
  mcpstack authserver --addr 127.0.0.1:9000 --user alice:s3cret --resource http://127.0.0.1:8080/mcp
  mcpstack authserver --tls-cert c.pem --tls-key k.pem --addr 0.0.0.0:9443 --issuer https://as.example.com \
      --upstream-issuer https://accounts.google.com --upstream-client-id ID --upstream-client-secret-file secret.txt \
      --upstream-scope openid --upstream-scope email
  mcpstack serve --addr 127.0.0.1:8080 --issuer http://127.0.0.1:9000 --scope mcp:tools --tool-scope fetch=mcp:admin
  mcpstack client http://127.0.0.1:8080/mcp tools     # logs in through the browser`

func authserverCmd(ctx context.Context, args []string, s *stdio) error {
	fs := newFlagSet("authserver", s, "mcpstack authserver [--addr HOST:PORT] (--user NAME:PASSWORD | --users FILE | --dev-user NAME | --upstream-issuer URL --upstream-client-id ID --upstream-client-secret-file FILE) [flags]", authserverDescription, authserverExamples)
	addr := fs.String("addr", "127.0.0.1:9000", "listen on `HOST:PORT` (a port alone binds 127.0.0.1)")
	issuer := fs.String("issuer", "", "the issuer `URL` (default http(s)://ADDR as listened on)")
	certFile := fs.String("tls-cert", "", "serve HTTPS with the certificate in `FILE` (PEM)")
	keyFile := fs.String("tls-key", "", "the private key of --tls-cert, in `FILE` (PEM)")
	usersFile := fs.String("users", "", "read users from `FILE`: name:bcrypt-hash lines")
	devUser := fs.String("dev-user", "", "sign every visitor in as `NAME`, without a form (development only)")
	stf := addASStoreFlags(fs)
	plainHTTP := fs.Bool("allow-plain-http", false, allowPlainHTTPUsage)
	cookieRetention := fs.Duration("cookie-key-retention", 24*time.Hour, "after a cookie key rotation, accept logins signed with the previous key for `DURATION`")
	rotateCookieKey := fs.Bool("rotate-cookie-key", false, "start signing logins and forms with a new key (the stored older keys verify for --cookie-key-retention)")
	storeTimeout := fs.Duration("store-timeout", authserver.DefaultStoreTimeout, "finish a token exchange, revocation or consent in the database within `DURATION`, even when the client has gone away")
	registeredScopes := fs.Bool("registered-scopes-only", false, "let a client that registered a scope ask only for scopes within it (default: any supported scope, so that step-up authorization works)")
	upIssuer := fs.String("upstream-issuer", "", "sign users in at the OAuth/OpenID Connect provider whose issuer is `URL`")
	upClientID := fs.String("upstream-client-id", "", "this server's client `ID` at the upstream provider")
	upSecretFile := fs.String("upstream-client-secret-file", "", "read the upstream client secret from `FILE` (first line)")
	upAuthorize := fs.String("upstream-authorize-url", "", "the upstream authorization endpoint `URL` (default: discovered)")
	upToken := fs.String("upstream-token-url", "", "the upstream token endpoint `URL` (default: discovered)")
	upUserInfo := fs.String("upstream-userinfo-url", "", "learn who signed in from the user-info `URL` (plain OAuth providers; default: the ID token)")
	upResource := fs.String("upstream-resource", "", "send `URL` as the RFC 8707 resource to the upstream provider (another mcpstack authserver: its /userinfo URL)")
	upSubject := fs.String("upstream-subject-claim", "sub", "the user-info or ID token `CLAIM` naming the user (GitHub: id)")
	upStateTTL := fs.Duration("upstream-state-ttl", authserver.DefaultUpstreamStateTTL, "refuse a return from the upstream provider after `DURATION` (at most 10m)")
	upTimeout := fs.Duration("upstream-timeout", authserver.DefaultUpstreamTimeout, "give up a call to the upstream provider after `DURATION`")
	upMaxBytes := fs.Int64("upstream-max-response-bytes", authserver.DefaultUpstreamMaxResponseBytes, "refuse an upstream provider response larger than `N` bytes")
	var upScopes []string
	fs.Func("upstream-scope", "ask the upstream provider for `SCOPE` (repeatable, or space-separated; default: openid)", func(v string) error {
		upScopes = append(upScopes, strings.Fields(v)...)
		return nil
	})
	xf := addASExchangeFlags(fs)
	loopbackCIMD := fs.Bool("allow-loopback-cimd", false, "fetch Client ID Metadata Documents from loopback addresses (development only)")
	users := map[string]string{}
	fs.Func("user", "add the user `NAME:PASSWORD` (repeatable)", func(v string) error {
		name, pw, ok := strings.Cut(v, ":")
		if !ok || name == "" || pw == "" {
			return errors.New("want NAME:PASSWORD")
		}
		users[name] = pw
		return nil
	})
	var resources, scopes, trusted []string
	fs.Func("resource", "issue tokens only for resource `URI` (repeatable; default: any)", func(v string) error {
		resources = append(resources, v)
		return nil
	})
	fs.Func("scope", "the scopes `SCOPE` supported (repeatable, or space-separated; default: any)", func(v string) error {
		scopes = append(scopes, strings.Fields(v)...)
		return nil
	})
	var corsOrigins []string
	fs.Func("cors-origin", "let pages on `ORIGIN` (scheme://host[:port], or * for any) call the token, registration and revocation endpoints from a browser (repeatable)", func(v string) error {
		if v != "*" {
			if _, err := cors.NormalizeOrigin(v); err != nil {
				return errors.New("want scheme://host[:port] with http or https, or *")
			}
		}
		corsOrigins = append(corsOrigins, v)
		return nil
	})
	fs.Func("trust-client", "do not ask consent for client `ID` (repeatable)", func(v string) error {
		trusted = append(trusted, v)
		return nil
	})
	limits := addAuthserverLimitFlags(fs)
	lim := addHTTPLimitFlags(fs)
	maxForm := fs.Int64("max-form-bytes", authserver.DefaultMaxFormBytes, "refuse a form-encoded body longer than `N` bytes at the token, revocation, introspection and authorization endpoints (read before authentication)")
	v := addVerbose(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	if *storeTimeout <= 0 {
		return usageErrorf("--store-timeout must be positive")
	}
	if err := stf.check(); err != nil {
		return err
	}
	if err := lim.check(); err != nil {
		return err
	}
	if (*certFile == "") != (*keyFile == "") {
		return usageErrorf("--tls-cert and --tls-key go together")
	}
	logger := newLogger(s.err, int(*v))

	pwUsers := authserver.PasswordUsers{}
	for name, pw := range users {
		h, err := authserver.HashPassword(pw)
		if err != nil {
			return fmt.Errorf("hashing the password of %s: %w", name, err)
		}
		pwUsers[name] = h
	}
	if *usersFile != "" {
		if err := readUsers(*usersFile, pwUsers); err != nil {
			return err
		}
	}
	up, err := upstreamConfig(*upIssuer, *upClientID, *upSecretFile, *upAuthorize, *upToken, *upUserInfo, *upSubject, *upStateTTL, upScopes)
	if err != nil {
		return err
	}
	if up == nil && *upResource != "" {
		return usageErrorf("--upstream-resource needs --upstream-issuer")
	}
	if up != nil {
		if *upTimeout <= 0 || *upMaxBytes <= 0 {
			return usageErrorf("--upstream-timeout and --upstream-max-response-bytes must be positive")
		}
		up.Timeout, up.MaxResponseBytes, up.Resource = *upTimeout, *upMaxBytes, *upResource
	}
	xc, err := xf.check(up, resources)
	if err != nil {
		return err
	}
	switch {
	case up != nil && (len(pwUsers) > 0 || *devUser != ""):
		return usageErrorf("--upstream-issuer excludes --user, --users and --dev-user")
	case up == nil && len(pwUsers) == 0 && *devUser == "":
		return usageErrorf("give users (--user, --users), a --dev-user or an --upstream-issuer")
	}

	ln, err := listen(*addr)
	if err != nil {
		return err
	}
	scheme := "http"
	var tlsConf *tls.Config // applied above the connection limit (see newHTTPServer)
	if *certFile != "" {
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			ln.Close()
			return fmt.Errorf("--tls-cert: %w", err)
		}
		tlsConf = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
		scheme = "https"
	}
	defer ln.Close()
	if err := checkPlainHTTP(ln, scheme == "https", *plainHTTP, "give --tls-cert and --tls-key"); err != nil {
		return err
	}
	if *issuer == "" {
		*issuer = scheme + "://" + ln.Addr().String()
	}
	store, closeStore, err := stf.open(ctx, *storeTimeout)
	if err != nil {
		return err
	}
	defer closeStore()
	if err := xc.apply(ctx, store, up); err != nil {
		return err
	}
	cimd := authserver.NewCIMDFetcher()
	cimd.AllowLoopback = *loopbackCIMD
	if !*loopbackCIMD {
		logger = slog.New(loopbackCIMDHint{logger.Handler()})
	}
	cfg := authserver.Config{
		Issuer:    *issuer,
		Store:     store,
		DevUser:   *devUser,
		Resources: resources,
		Scopes:    scopes,
		CIMD:      cimd,
		Logger:    logger,

		CORSOrigins:        corsOrigins,
		CookieKeyRetention: *cookieRetention,
		StoreTimeout:       *storeTimeout,
		MaxFormBytes:       *maxForm,
		Upstream:           up,
	}
	if err := limits.apply(&cfg, cimd); err != nil {
		return err
	}
	if len(pwUsers) > 0 {
		cfg.Users = pwUsers
	}
	if *registeredScopes {
		cfg.ScopePolicy = authserver.RegisteredScopesOnly
	}
	if len(trusted) > 0 {
		cfg.TrustedClient = func(c authserver.Client) bool {
			for _, id := range trusted {
				if c.Metadata.ClientID == id {
					return true
				}
			}
			return false
		}
	}
	as, err := authserver.NewServer(ctx, cfg)
	if err != nil {
		return fmt.Errorf("authorization server: %w", err)
	}
	if *rotateCookieKey {
		if err := as.RotateCookieKey(ctx); err != nil {
			return fmt.Errorf("--rotate-cookie-key: %w", err)
		}
	}
	fmt.Fprintf(s.err, "mcpstack authserver: issuer %s\n", as.Issuer())
	if isSet(fs, "issuer") {
		// The issuer names the load balancer in front, say; the address
		// listened on is then worth a line of its own.
		fmt.Fprintf(s.err, "mcpstack authserver: listening on %s\n", ln.Addr())
	}
	return newHTTPServer(ln, tlsConf, as, lim, logger, nil).serve(ctx)
}

// readUsers adds the users of a name:bcrypt-hash file to users.
func readUsers(path string, users authserver.PasswordUsers) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--users: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, hash, ok := strings.Cut(line, ":")
		if !ok || name == "" || !strings.HasPrefix(hash, "$2") {
			return fmt.Errorf("--users %s:%d: want name:bcrypt-hash", path, n)
		}
		users[name] = []byte(hash)
	}
	return sc.Err()
}

// upstreamConfig makes the Config.Upstream of the --upstream-* flags, or
// nil without --upstream-issuer.
func upstreamConfig(issuer, clientID, secretFile, authorizeURL, tokenURL, userInfoURL, subjectClaim string, stateTTL time.Duration, scopes []string) (*authserver.UpstreamConfig, error) {
	if issuer == "" {
		if clientID != "" || secretFile != "" {
			return nil, usageErrorf("--upstream-client-id and --upstream-client-secret-file need --upstream-issuer")
		}
		return nil, nil
	}
	if clientID == "" || secretFile == "" {
		return nil, usageErrorf("--upstream-issuer needs --upstream-client-id and --upstream-client-secret-file")
	}
	b, err := os.ReadFile(secretFile)
	if err != nil {
		return nil, fmt.Errorf("--upstream-client-secret-file: %w", err)
	}
	secret, _, _ := strings.Cut(string(b), "\n")
	secret = strings.TrimSpace(secret)
	if secret == "" {
		return nil, usageErrorf("--upstream-client-secret-file %s is empty", secretFile)
	}
	return &authserver.UpstreamConfig{Issuer: issuer, ClientID: clientID, ClientSecret: secret, Scopes: scopes,
		AuthorizationURL: authorizeURL, TokenURL: tokenURL, UserInfoURL: userInfoURL, SubjectClaim: subjectClaim,
		StateTTL: stateTTL}, nil
}

// loopbackCIMDHint adds to a log record that reports a refused loopback
// address (a Client ID Metadata Document at 127.0.0.1, say) the flag that
// would have let it through, for the developer reading the log.
type loopbackCIMDHint struct{ slog.Handler }

// Handle adds the hint when an error attribute matches
// authserver.ErrLoopbackAddress.
func (h loopbackCIMDHint) Handle(ctx context.Context, r slog.Record) error {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && errors.Is(err, authserver.ErrLoopbackAddress) {
			found = true
		}
		return !found
	})
	if found {
		r = r.Clone()
		r.AddAttrs(slog.String("hint", "the address is loopback: for development, run mcpstack authserver with --allow-loopback-cimd"))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs keeps the hint on the derived handler.
func (h loopbackCIMDHint) WithAttrs(as []slog.Attr) slog.Handler {
	return loopbackCIMDHint{h.Handler.WithAttrs(as)}
}

// WithGroup keeps the hint on the derived handler.
func (h loopbackCIMDHint) WithGroup(name string) slog.Handler {
	return loopbackCIMDHint{h.Handler.WithGroup(name)}
}
