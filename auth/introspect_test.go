package auth_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/auth"
)

func TestIntrospection(t *testing.T) {
	as := newTestAS(t)
	clk := &clock{t: time.Now()}
	now := clk.Now()
	good := map[string]any{"active": true, "sub": "bob", "client_id": "c1", "scope": "mcp files:read",
		"aud": resource, "iss": as.Issuer(), "exp": now.Add(time.Hour).Unix(), "username": "Bob"}
	edit := func(k string, v any) map[string]any {
		m := map[string]any{}
		for k, v := range good {
			m[k] = v
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	answers := map[string]map[string]any{
		"good":      good,
		"aud-array": edit("aud", []string{"https://x", resource}),
		"inactive":  edit("active", false),
		"other-aud": edit("aud", "https://other.example.com/mcp"),
		"no-aud":    edit("aud", nil),
		"expired":   edit("exp", now.Add(-time.Second).Unix()),
		"no-exp":    edit("exp", nil),
		"wrong-iss": edit("iss", "https://evil.example.com"),
		"refresh":   edit("token_type", "refresh_token"),
		"nbf-ahead": edit("nbf", now.Add(time.Minute).Unix()),
	}
	for tok, ans := range answers {
		as.SetIntrospection(tok, ans)
	}
	v, err := auth.NewIntrospectionVerifier(auth.IntrospectionOptions{
		Issuer: as.Issuer(), ClientID: as.ClientID, ClientSecret: as.ClientSecret,
		Audience: resource, Now: clk.Now, CacheTTL: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"good": "", "aud-array": "", "inactive": "token is not active", "unknown": "token is not active",
		"other-aud": "token was not issued for this resource", "no-aud": "token was not issued for this resource",
		"expired": "token expired", "no-exp": "token has no expiry", "wrong-iss": "issuer is not trusted",
		"refresh": "not an access token", "nbf-ahead": "token not valid yet",
	}
	for tok, w := range want {
		p, err := v.Verify(context.Background(), tok)
		if reason(err) != w {
			t.Errorf("%s: got %q, want %q", tok, reason(err), w)
		}
		if tok == "good" && (p.Subject != "bob" || p.ClientID != "c1" || len(p.Scopes) != 2 || p.Claims["username"] != "Bob" || p.Expiry.Unix() != now.Add(time.Hour).Unix()) {
			t.Errorf("principal %+v", p)
		}
	}
	if n := as.IntrospectionCalls.Load(); n != int32(len(want)) {
		t.Errorf("%d calls for %d verifications without cache", n, len(want))
	}

	// client_secret_post works too.
	post, _ := auth.NewIntrospectionVerifier(auth.IntrospectionOptions{Endpoint: as.Issuer() + "/introspect", ClientID: as.ClientID, ClientSecret: as.ClientSecret,
		AuthMethod: "client_secret_post", Audience: resource, Now: clk.Now})
	if p, err := post.Verify(context.Background(), "good"); err != nil || p.Subject != "bob" {
		t.Errorf("client_secret_post: %v", err)
	}
	// Wrong client credentials: the endpoint refuses us, which is not
	// the token's fault.
	bad, _ := auth.NewIntrospectionVerifier(auth.IntrospectionOptions{Endpoint: as.Issuer() + "/introspect", ClientID: as.ClientID, ClientSecret: "wrong", Audience: resource})
	if _, err := bad.Verify(context.Background(), "good"); err == nil || errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("bad client auth: %v", err)
	}
}

// Answers are cached within the TTL bound and never past the expiry.
func TestIntrospectionCache(t *testing.T) {
	as := newTestAS(t)
	clk := &clock{t: time.Now()}
	as.SetIntrospection("long", map[string]any{"active": true, "sub": "a", "aud": resource, "exp": clk.Now().Add(time.Hour).Unix()})
	as.SetIntrospection("short", map[string]any{"active": true, "sub": "a", "aud": resource, "exp": clk.Now().Add(10 * time.Second).Unix()})
	v, err := auth.NewIntrospectionVerifier(auth.IntrospectionOptions{
		Endpoint: as.Issuer() + "/introspect", ClientID: as.ClientID, ClientSecret: as.ClientSecret,
		Audience: resource, Now: clk.Now, CacheTTL: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	verify := func(tok string, wantCalls int32) {
		t.Helper()
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Fatalf("%s: %v", tok, err)
		}
		if n := as.IntrospectionCalls.Load(); n != wantCalls {
			t.Fatalf("%s: %d calls, want %d", tok, n, wantCalls)
		}
	}
	verify("long", 1)
	verify("long", 1)
	verify("short", 2)
	clk.Add(11 * time.Second)
	verify("long", 2)
	if _, err := v.Verify(ctx, "short"); reason(err) != "token expired" || as.IntrospectionCalls.Load() != 3 {
		t.Fatalf("short after expiry: %v", err)
	}
	clk.Add(20 * time.Second) // past the 30s bound
	verify("long", 4)
	// A revoked token is seen once the bound has passed.
	as.SetIntrospection("long", map[string]any{"active": false})
	clk.Add(31 * time.Second)
	if _, err := v.Verify(ctx, "long"); reason(err) != "token is not active" {
		t.Fatalf("revoked: %v", err)
	}
}

func TestIntrospectionOptions(t *testing.T) {
	for name, o := range map[string]auth.IntrospectionOptions{
		"no endpoint":   {ClientID: "c", Audience: resource},
		"http endpoint": {Endpoint: "http://as.example.com/i", ClientID: "c", Audience: resource},
		"no client":     {Endpoint: "https://as.example.com/i", Audience: resource},
		"no audience":   {Endpoint: "https://as.example.com/i", ClientID: "c"},
		"auth method":   {Endpoint: "https://as.example.com/i", ClientID: "c", Audience: resource, AuthMethod: "private_key_jwt"},
	} {
		if _, err := auth.NewIntrospectionVerifier(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
