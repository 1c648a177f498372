package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// RunReplicas runs two authorization servers on two stores that share
// their state, behind one address that sends each request to the other
// replica, as a round-robin load balancer would. A code issued by one is
// redeemed at the other, a refresh token rotated at one is refused as reused
// at the other, and that reuse revokes the family on both.
func RunReplicas(t *testing.T, stores [2]authserver.Store) {
	ctx := t.Context()
	const redirect = "http://127.0.0.1:9/cb"
	const resource = "https://rs.test/mcp"
	var replicas [2]*authserver.Server
	var next atomic.Uint32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		replicas[next.Add(1)%2].ServeHTTP(w, r)
	}))
	defer ts.Close()
	hc := ts.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for i, st := range stores {
		s, err := authserver.NewServer(context.Background(), authserver.Config{Issuer: ts.URL, Store: st, DevUser: "alice",
			TrustedClient: func(authserver.Client) bool { return true },
			Logger:        slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		replicas[i] = s
	}
	if err := stores[0].CreateClient(ctx, authserver.Client{Metadata: oauth.ClientMetadata{ClientID: "app",
		RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none",
		GrantTypes: []string{"authorization_code", "refresh_token"}}}); err != nil {
		t.Fatal(err)
	}
	post := func(form url.Values) (int, oauth.TokenResponse, string) {
		t.Helper()
		resp, err := hc.PostForm(ts.URL+"/token", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var tr oauth.TokenResponse
		if resp.StatusCode == http.StatusOK {
			if err := tr.UnmarshalJSON(b); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode, tr, string(b)
	}

	verifier, _ := oauth.NewVerifier()
	q := url.Values{"response_type": {"code"}, "client_id": {"app"}, "redirect_uri": {redirect},
		"code_challenge": {oauth.S256Challenge(verifier)}, "code_challenge_method": {"S256"}, "resource": {resource}}
	resp, err := hc.Get(ts.URL + "/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("authorize: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	status, tr, body := post(url.Values{"grant_type": {"authorization_code"}, "client_id": {"app"}, "code": {loc.Query().Get("code")},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {resource}})
	if status != http.StatusOK || tr.RefreshToken == "" {
		t.Fatalf("code redeemed at the other replica: %d %s", status, body)
	}
	for i, s := range replicas {
		if _, err := s.VerifyAccessToken(ctx, tr.AccessToken); err != nil {
			t.Fatalf("replica %d refuses the access token: %v", i, err)
		}
	}
	status, tr2, body := post(url.Values{"grant_type": {"refresh_token"}, "client_id": {"app"}, "refresh_token": {tr.RefreshToken}})
	if status != http.StatusOK || tr2.RefreshToken == "" || tr2.RefreshToken == tr.RefreshToken {
		t.Fatalf("refresh: %d %s", status, body)
	}
	if status, _, body := post(url.Values{"grant_type": {"refresh_token"}, "client_id": {"app"}, "refresh_token": {tr.RefreshToken}}); status != http.StatusBadRequest || !strings.Contains(body, `"invalid_grant"`) {
		t.Fatalf("old refresh token at the other replica: %d %s", status, body)
	}
	if status, _, body := post(url.Values{"grant_type": {"refresh_token"}, "client_id": {"app"}, "refresh_token": {tr2.RefreshToken}}); status != http.StatusBadRequest {
		t.Fatalf("new refresh token after the reuse revoked its family: %d %s", status, body)
	}
	for i, s := range replicas {
		if _, err := s.VerifyAccessToken(ctx, tr2.AccessToken); err == nil {
			t.Fatalf("replica %d accepts an access token of a revoked family", i)
		}
	}
}

// RunRace makes many goroutines, spread over stores (which share their
// state, as the stores of several processes on one database do), race to
// take one code, use one refresh token and record one nonce, round after
// round: exactly one must win each race.
func RunRace(t *testing.T, stores []authserver.Store) {
	t.Helper()
	ctx := t.Context()
	var wg sync.WaitGroup
	const rounds, racers = 10, 24
	exp := time.Now().Add(time.Hour)
	for r := range rounds {
		code := authserver.Code{Hash: fmt.Sprintf("code%d", r), FamilyID: fmt.Sprintf("f%d", r), Subject: "alice", ExpiresAt: exp}
		rt := authserver.RefreshToken{Hash: fmt.Sprintf("rt%d", r), FamilyID: fmt.Sprintf("f%d", r), Subject: "alice", ExpiresAt: exp}
		if err := stores[r%len(stores)].SaveCode(ctx, code); err != nil {
			t.Fatal(err)
		}
		if err := stores[(r+1)%len(stores)].SaveRefreshToken(ctx, rt); err != nil {
			t.Fatal(err)
		}
		var codeWins, rtWins, nonceWins atomic.Int32
		start := make(chan struct{})
		for i := range racers {
			s := stores[i%len(stores)]
			wg.Go(func() {
				<-start
				switch c, err := s.TakeCode(ctx, code.Hash); {
				case err == nil:
					codeWins.Add(1)
				case !errors.Is(err, authserver.ErrAlreadyUsed) || c.FamilyID != code.FamilyID:
					t.Errorf("TakeCode: %+v, %v", c, err)
				}
				switch got, err := s.UseRefreshToken(ctx, rt.Hash); {
				case err == nil:
					rtWins.Add(1)
				case !errors.Is(err, authserver.ErrAlreadyUsed) || got.FamilyID != rt.FamilyID:
					t.Errorf("UseRefreshToken: %+v, %v", got, err)
				}
				switch err := s.UseNonce(ctx, fmt.Sprintf("jti%d", r), exp); {
				case err == nil:
					nonceWins.Add(1)
				case !errors.Is(err, authserver.ErrAlreadyUsed):
					t.Errorf("UseNonce: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		if codeWins.Load() != 1 || rtWins.Load() != 1 || nonceWins.Load() != 1 {
			t.Fatalf("round %d: %d took the code, %d used the refresh token, %d recorded the nonce; want 1 each",
				r, codeWins.Load(), rtWins.Load(), nonceWins.Load())
		}
	}
}
