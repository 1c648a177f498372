package main

import (
	"flag"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/internal/clientip"
	"github.com/mcpstack/mcpstack/internal/ratelimit"
)

// authserverLimits holds the flags of `mcpstack authserver` that set its
// bounds. A flag left unset leaves the Config field zero, so that the
// library's default applies (which is larger under --dev-user).
type authserverLimits struct {
	fs *flag.FlagSet

	regPerHour, regBurst         *float64
	loginPerMinute, loginBurst   *float64
	authzPerSecond, authzBurst   *float64
	rateLimitAddresses           *int
	trustedProxies               []string
	forwardedHeader              *string
	fetchPerMinute, fetchBurst   *float64
	fetchFailureCache            *time.Duration
	maxClientMetadata            *int
	maxRedirectURIs              *int
	pruneUnusedAfter, pruneEvery *time.Duration
}

func addAuthserverLimitFlags(fs *flag.FlagSet) *authserverLimits {
	l := &authserverLimits{fs: fs}
	l.regPerHour = fs.Float64("registration-per-hour", 10, "allow `N` client registrations an hour per client address (3600 with --dev-user; 0 or negative disables registration)")
	l.regBurst = fs.Float64("registration-burst", 5, "allow `N` registrations at once per client address (100 with --dev-user)")
	l.loginPerMinute = fs.Float64("login-per-minute", 10, "allow `N` password attempts a minute per client address (negative: no limit)")
	l.loginBurst = fs.Float64("login-burst", 10, "allow `N` password attempts at once per client address")
	l.authzPerSecond = fs.Float64("authorize-per-second", 1, "allow `N` authorization-endpoint requests a second per client address (10 with --dev-user; negative: no limit)")
	l.authzBurst = fs.Float64("authorize-burst", 30, "allow `N` authorization-endpoint requests at once per client address (300 with --dev-user)")
	l.rateLimitAddresses = fs.Int("rate-limit-addresses", ratelimit.DefaultKeys, "remember `N` client addresses per limit (IPv6 per /64); beyond, the least recently seen is forgotten")
	fs.Func("trusted-proxy", "believe the forwarding header of reverse proxies in `CIDR` (repeatable; default: none)", func(v string) error {
		if _, err := clientip.ParsePrefix(v); err != nil {
			return err
		}
		l.trustedProxies = append(l.trustedProxies, v)
		return nil
	})
	l.forwardedHeader = fs.String("forwarded-header", clientip.XForwardedFor, "the `HEADER` trusted proxies set: X-Forwarded-For or Forwarded")
	l.fetchPerMinute = fs.Float64("fetch-per-minute", 60, "fetch client metadata documents and client key sets at most `N` times a minute per host")
	l.fetchBurst = fs.Float64("fetch-burst", 20, "fetch at most `N` documents at once per host")
	l.fetchFailureCache = fs.Duration("fetch-failure-cache", 30*time.Second, "remember a failed document fetch for `DURATION` before trying again")
	l.maxClientMetadata = fs.Int("max-client-metadata", authserver.DefaultMaxClientMetadataBytes, "refuse client registrations over `BYTES` of metadata")
	l.maxRedirectURIs = fs.Int("max-redirect-uris", authserver.DefaultMaxRedirectURIs, "refuse client registrations with more than `N` redirect URIs")
	l.pruneUnusedAfter = fs.Duration("prune-unused-clients", authserver.DefaultUnusedClientTTL, "delete registered clients never used within `DURATION` of registering (0: keep them)")
	l.pruneEvery = fs.Duration("prune-interval", authserver.DefaultPruneInterval, "look for unused clients to delete every `DURATION`")
	return l
}

// set reports whether the named flag was given.
func (l *authserverLimits) set(name string) bool {
	found := false
	l.fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// apply copies the flags given into cfg and the CIMD fetcher.
func (l *authserverLimits) apply(cfg *authserver.Config, cimd *authserver.CIMDFetcher) error {
	perSecond := func(n float64, per time.Duration) rate.Limit {
		if n < 0 {
			return -1
		}
		return rate.Limit(n / per.Seconds())
	}
	if l.set("registration-per-hour") {
		cfg.RegistrationRate = perSecond(*l.regPerHour, time.Hour)
		if *l.regPerHour == 0 {
			cfg.RegistrationRate = -1
		}
	}
	if l.set("registration-burst") {
		cfg.RegistrationBurst = int(*l.regBurst)
	}
	if l.set("login-per-minute") {
		cfg.LoginRate = perSecond(*l.loginPerMinute, time.Minute)
	}
	if l.set("login-burst") {
		cfg.LoginBurst = int(*l.loginBurst)
	}
	if l.set("authorize-per-second") {
		cfg.AuthorizeRate = perSecond(*l.authzPerSecond, time.Second)
	}
	if l.set("authorize-burst") {
		cfg.AuthorizeBurst = int(*l.authzBurst)
	}
	if *l.rateLimitAddresses <= 0 {
		return usageErrorf("--rate-limit-addresses must be positive")
	}
	cfg.RateLimitKeys = *l.rateLimitAddresses
	proxies, err := clientip.ParsePrefixes(l.trustedProxies)
	if err != nil {
		return usageErrorf("--trusted-proxy: %v", err)
	}
	cfg.TrustedProxies = proxies
	cfg.ForwardedHeader = *l.forwardedHeader
	cimd.HostRate = perSecond(*l.fetchPerMinute, time.Minute)
	cimd.HostBurst = int(*l.fetchBurst)
	cimd.FailureCache = *l.fetchFailureCache
	cfg.MaxClientMetadataBytes = *l.maxClientMetadata
	cfg.MaxRedirectURIs = *l.maxRedirectURIs
	cfg.UnusedClientTTL = *l.pruneUnusedAfter
	if cfg.UnusedClientTTL == 0 {
		cfg.UnusedClientTTL = -1
	}
	cfg.PruneInterval = *l.pruneEvery
	return nil
}
