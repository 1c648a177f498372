package main

import (
	"flag"
	"io"
	"net/netip"
	"slices"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpstack/mcpstack/authserver"
)

func TestAuthserverLimitFlags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, cfg authserver.Config, f *authserver.CIMDFetcher)
		bad   bool
	}{
		{"unset flags leave the library defaults", nil, func(t *testing.T, cfg authserver.Config, f *authserver.CIMDFetcher) {
			if cfg.RegistrationRate != 0 || cfg.RegistrationBurst != 0 || cfg.LoginRate != 0 || cfg.AuthorizeRate != 0 {
				t.Errorf("rates set without flags: %+v", cfg)
			}
			if cfg.RateLimitKeys != 10000 || cfg.UnusedClientTTL != authserver.DefaultUnusedClientTTL || f.HostRate != 1 || f.HostBurst != 20 {
				t.Errorf("defaults: %+v %+v", cfg, f)
			}
		}, false},
		{"rates", []string{"--registration-per-hour", "36", "--registration-burst", "7", "--login-per-minute", "-1", "--authorize-per-second", "2"},
			func(t *testing.T, cfg authserver.Config, _ *authserver.CIMDFetcher) {
				if cfg.RegistrationRate != rate.Limit(0.01) || cfg.RegistrationBurst != 7 || cfg.LoginRate >= 0 || cfg.AuthorizeRate != 2 {
					t.Errorf("%v %v %v %v", cfg.RegistrationRate, cfg.RegistrationBurst, cfg.LoginRate, cfg.AuthorizeRate)
				}
			}, false},
		{"registration off", []string{"--registration-per-hour", "0"}, func(t *testing.T, cfg authserver.Config, _ *authserver.CIMDFetcher) {
			if cfg.RegistrationRate >= 0 {
				t.Errorf("registration rate %v", cfg.RegistrationRate)
			}
		}, false},
		{"proxies", []string{"--trusted-proxy", "10.0.0.0/8", "--trusted-proxy", "::1", "--forwarded-header", "Forwarded"},
			func(t *testing.T, cfg authserver.Config, _ *authserver.CIMDFetcher) {
				want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
				if !slices.Equal(cfg.TrustedProxies, want) || cfg.ForwardedHeader != "Forwarded" {
					t.Errorf("%v %q", cfg.TrustedProxies, cfg.ForwardedHeader)
				}
			}, false},
		{"pruning off", []string{"--prune-unused-clients", "0", "--fetch-failure-cache", "5s"}, func(t *testing.T, cfg authserver.Config, f *authserver.CIMDFetcher) {
			if cfg.UnusedClientTTL >= 0 || f.FailureCache != 5*time.Second {
				t.Errorf("%v %v", cfg.UnusedClientTTL, f.FailureCache)
			}
		}, false},
		{"bad proxy", []string{"--trusted-proxy", "proxy.example"}, nil, true},
		{"bad address count", []string{"--rate-limit-addresses", "0"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("authserver", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			l := addAuthserverLimitFlags(fs)
			err := fs.Parse(tc.args)
			var cfg authserver.Config
			f := authserver.NewCIMDFetcher()
			if err == nil {
				err = l.apply(&cfg, f)
			}
			if (err != nil) != tc.bad {
				t.Fatalf("err %v, want error %v", err, tc.bad)
			}
			if tc.check != nil {
				tc.check(t, cfg, f)
			}
		})
	}
}
