package authserver_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/mcpstack/mcpstack/oauth"
)

func TestCodeReplayRevokesTokens(t *testing.T) {
	a := newAS(t, trustAll, nil)
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	code := a.code(t, "pub", loopbackRedirect, verifier)
	st, first := a.post(t, "/token", codeForm("pub", code, loopbackRedirect, verifier))
	if st != http.StatusOK || first["access_token"] == nil || first["refresh_token"] == nil {
		t.Fatalf("first exchange: %d %v", st, first)
	}
	st, body := a.post(t, "/token", codeForm("pub", code, loopbackRedirect, verifier))
	wantError(t, st, body, http.StatusBadRequest, oauth.InvalidGrant)
	// What the first exchange got is revoked.
	st, body = a.post(t, "/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {"pub"},
		"refresh_token": {first["refresh_token"].(string)}})
	wantError(t, st, body, http.StatusBadRequest, oauth.InvalidGrant)
	if _, err := a.VerifyAccessToken(t.Context(), first["access_token"].(string)); err == nil {
		t.Fatal("access token from a replayed code still verifies")
	}
}

func TestTokenRequestRefusals(t *testing.T) {
	a := newAS(t, trustAll, nil)
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	a.addClient(t, "other", oauth.AuthMethodNone, "", loopbackRedirect)
	tests := []struct {
		name   string
		change func(url.Values)
		status int
		code   oauth.ErrorCode
	}{
		{"PKCE verifier mismatch", func(f url.Values) { f.Set("code_verifier", verifier[:43]+"x") }, 400, oauth.InvalidGrant},
		{"verifier missing", func(f url.Values) { f.Del("code_verifier") }, 400, oauth.InvalidRequest},
		{"other redirect_uri", func(f url.Values) { f.Set("redirect_uri", "http://127.0.0.1:8765/callback/") }, 400, oauth.InvalidGrant},
		{"other resource", func(f url.Values) { f.Set("resource", "https://evil.example/mcp") }, 400, oauth.InvalidTarget},
		{"other client", func(f url.Values) { f.Set("client_id", "other") }, 400, oauth.InvalidGrant},
		{"unknown client", func(f url.Values) { f.Set("client_id", "nobody") }, 401, oauth.InvalidClient},
		{"unknown code", func(f url.Values) { f.Set("code", "forged") }, 400, oauth.InvalidGrant},
		{"unsupported grant", func(f url.Values) { f.Set("grant_type", "password") }, 400, oauth.UnsupportedGrantType},
		{"secret for a public client", func(f url.Values) { f.Set("client_secret", "x") }, 401, oauth.InvalidClient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code := a.code(t, "pub", loopbackRedirect, verifier)
			f := codeForm("pub", code, loopbackRedirect, verifier)
			tt.change(f)
			st, body := a.post(t, "/token", f)
			wantError(t, st, body, tt.status, tt.code)
			// A refused exchange leaves the code to its rightful owner.
			if st, body := a.post(t, "/token", codeForm("pub", code, loopbackRedirect, verifier)); st != http.StatusOK {
				t.Fatalf("exchange after the refusal: %d %v", st, body)
			}
		})
	}
}

func TestAuthorizationRequestRefusals(t *testing.T) {
	a := newAS(t, trustAll, nil)
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect, "https://app.example.test/cb")
	// Errors sent back to the (verified) redirect URI.
	redirected := []struct {
		name   string
		change func(url.Values)
		code   oauth.ErrorCode
	}{
		{"plain PKCE", func(q url.Values) { q.Set("code_challenge_method", "plain"); q.Set("code_challenge", verifier) }, oauth.InvalidRequest},
		{"PKCE method missing", func(q url.Values) { q.Del("code_challenge_method") }, oauth.InvalidRequest},
		{"PKCE missing", func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }, oauth.InvalidRequest},
		{"resource missing", func(q url.Values) { q.Del("resource") }, oauth.InvalidRequest},
		{"resource unknown", func(q url.Values) { q.Set("resource", "https://other.example/mcp") }, oauth.InvalidTarget},
		{"resource with fragment", func(q url.Values) { q.Set("resource", testResource+"#x") }, oauth.InvalidTarget},
		{"implicit", func(q url.Values) { q.Set("response_type", "token") }, oauth.UnsupportedResponseType},
		{"unknown scope", func(q url.Values) { q.Set("scope", "admin") }, oauth.InvalidScope},
		{"state twice", func(q url.Values) { q.Add("state", "b") }, oauth.InvalidRequest},
	}
	for _, tt := range redirected {
		t.Run(tt.name, func(t *testing.T) {
			q := authParams("pub", loopbackRedirect, verifier)
			tt.change(q)
			got := redirectParams(t, a.authorize(t, q), loopbackRedirect)
			if got.Get("error") != string(tt.code) || got.Get("code") != "" || got.Get("iss") != a.ts.URL {
				t.Fatalf("redirect %v, want error %s", got, tt.code)
			}
		})
	}
	// Errors shown to the user: the redirect URI cannot be trusted.
	shown := []struct {
		name     string
		redirect string
		client   string
		code     oauth.ErrorCode
	}{
		{"redirect not registered", "https://evil.example/cb", "pub", oauth.InvalidRequest},
		{"redirect with trailing slash", "https://app.example.test/cb/", "pub", oauth.InvalidRequest},
		{"redirect differing in case", "https://app.example.test/CB", "pub", oauth.InvalidRequest},
		{"loopback with another path", "http://127.0.0.1:9999/other", "pub", oauth.InvalidRequest},
		{"http non-loopback", "http://app.example.test/cb", "pub", oauth.InvalidRequest},
		{"unknown client", loopbackRedirect, "nobody", oauth.InvalidClient},
	}
	for _, tt := range shown {
		t.Run(tt.name, func(t *testing.T) {
			wantPageError(t, a.authorize(t, authParams(tt.client, tt.redirect, verifier)), http.StatusBadRequest, tt.code)
		})
	}
	t.Run("loopback port may vary", func(t *testing.T) {
		a.code(t, "pub", "http://127.0.0.1:40000/callback", verifier)
	})
}

func TestRefreshReuseRevokesFamily(t *testing.T) {
	a := newAS(t, trustAll, nil)
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	code := a.code(t, "pub", loopbackRedirect, verifier)
	_, tok := a.post(t, "/token", codeForm("pub", code, loopbackRedirect, verifier))
	rt1 := tok["refresh_token"].(string)
	refresh := func(rt string) (int, map[string]any) {
		return a.post(t, "/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {"pub"}, "refresh_token": {rt}})
	}
	st, tok2 := refresh(rt1)
	if st != 200 || tok2["refresh_token"] == rt1 || tok2["refresh_token"] == nil {
		t.Fatalf("rotation: %d %v", st, tok2)
	}
	rt2 := tok2["refresh_token"].(string)
	st, body := refresh(rt1) // the attacker replays the old one
	wantError(t, st, body, http.StatusBadRequest, oauth.InvalidGrant)
	st, body = refresh(rt2) // the whole family is gone
	wantError(t, st, body, http.StatusBadRequest, oauth.InvalidGrant)
	if _, err := a.VerifyAccessToken(t.Context(), tok2["access_token"].(string)); err == nil {
		t.Fatal("access token of a revoked family still verifies")
	}
}
