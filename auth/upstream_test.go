package auth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/oauth"
)

// upstreamAPI records the Authorization header it receives.
func upstreamAPI(t *testing.T) (*httptest.Server, *[]string) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

// The upstream call carries a token obtained by exchange, never the
// client's: the client's token goes only to the token endpoint, as
// subject_token.
func TestTokenExchange(t *testing.T) {
	as := newTestAS(t)
	api, seen := upstreamAPI(t)
	g := newGuarded(t, as, nil)
	clientToken := as.Sign(as.Claims("alice", resource, "mcp"))
	x := &auth.TokenExchange{TokenURL: as.Issuer() + "/token", ClientID: as.ClientID, ClientSecret: as.ClientSecret,
		Resource: api.URL, Scopes: []string{"read"}}
	bad := &auth.TokenExchange{TokenURL: x.TokenURL, ClientID: as.ClientID, ClientSecret: "wrong", Resource: api.URL}
	// With Issuer alone, the token endpoint comes from the metadata.
	byIssuer := &auth.TokenExchange{Issuer: as.Issuer(), ClientID: as.ClientID, ClientSecret: as.ClientSecret, Audience: api.URL}
	var upstreamErr, badErr, issuerErr error
	g.h = wrapAgain(t, as, func(w http.ResponseWriter, r *http.Request) {
		_, badErr = bad.Token(r.Context())
		_, issuerErr = byIssuer.Token(r.Context())
		req, _ := http.NewRequestWithContext(r.Context(), "GET", api.URL, nil)
		req.Header.Set("Authorization", "Bearer "+clientToken) // replaced
		resp, err := auth.UpstreamClient(x, nil).Do(req)
		if err != nil {
			upstreamErr = err
			return
		}
		resp.Body.Close()
	})
	if w, _ := g.do("GET", "/mcp", "Bearer "+clientToken, "", ""); w.Code != 200 || upstreamErr != nil {
		t.Fatalf("%d %v", w.Code, upstreamErr)
	}
	if len(*seen) != 1 || (*seen)[0] == "Bearer "+clientToken || len((*seen)[0]) < 20 {
		t.Fatalf("upstream saw %q", *seen)
	}
	if issuerErr != nil {
		t.Fatalf("exchange at the discovered endpoint: %v", issuerErr)
	}
	if f := as.TokenForms[len(as.TokenForms)-2]; f.Get("audience") != api.URL || f.Get("requested_token_type") != auth.TokenTypeAccessToken {
		t.Fatalf("exchange by issuer %v", f)
	}
	form := as.TokenForms[len(as.TokenForms)-1]
	if form.Get("grant_type") != auth.GrantTokenExchange || form.Get("subject_token") != clientToken ||
		form.Get("subject_token_type") != auth.TokenTypeAccessToken || form.Get("resource") != api.URL || form.Get("scope") != "read" {
		t.Fatalf("exchange request %v", form)
	}
	// Outside a verified request there is nothing to exchange.
	if _, err := x.Token(context.Background()); !errors.Is(err, auth.ErrNoPrincipal) {
		t.Fatalf("no principal: %v", err)
	}
	// The endpoint's refusal comes back as an OAuth error.
	if !errors.Is(badErr, &oauth.ErrorResponse{Code: oauth.InvalidClient}) {
		t.Fatalf("bad client: %v", badErr)
	}
}

// wrapAgain guards h with a fresh middleware over the test AS.
func wrapAgain(t *testing.T, as *testAS, h http.HandlerFunc) http.Handler {
	v, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer(), Audience: resource})
	if err != nil {
		t.Fatal(err)
	}
	m, err := auth.NewMiddleware(auth.Options{Resource: resource, Verifier: v})
	if err != nil {
		t.Fatal(err)
	}
	return m.Wrap(h)
}

func TestClientCredentials(t *testing.T) {
	as := newTestAS(t)
	api, seen := upstreamAPI(t)
	cc := &auth.ClientCredentials{TokenURL: as.Issuer() + "/token", ClientID: as.ClientID, ClientSecret: as.ClientSecret,
		Resource: api.URL, Scopes: []string{"a", "b"}}
	client := auth.UpstreamClient(cc, nil)
	for range 3 {
		resp, err := client.Get(api.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(as.TokenForms) != 1 {
		t.Fatalf("%d token requests, want 1 (cached)", len(as.TokenForms))
	}
	if f := as.TokenForms[0]; f.Get("grant_type") != "client_credentials" || f.Get("scope") != "a b" || f.Get("resource") != api.URL {
		t.Fatalf("request %v", f)
	}
	if len(*seen) != 3 || (*seen)[0] != (*seen)[2] || (*seen)[0] == "" {
		t.Fatalf("upstream saw %q", *seen)
	}
	insecure := &auth.ClientCredentials{TokenURL: "http://as.example.com/token", ClientID: "c"}
	if _, err := insecure.Token(context.Background()); err == nil {
		t.Fatal("http token endpoint accepted")
	}
}

type subjectTokensFunc func(ctx context.Context, subject string) (string, error)

func (f subjectTokensFunc) UpstreamAccessToken(ctx context.Context, subject string) (string, error) {
	return f(ctx, subject)
}

// PrincipalUpstream asks by the verified subject and sends the upstream
// token, never the client's, upstream.
func TestPrincipalUpstream(t *testing.T) {
	var gotAuth string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { gotAuth = r.Header.Get("Authorization") }))
	defer api.Close()
	src := auth.PrincipalUpstream(subjectTokensFunc(func(_ context.Context, sub string) (string, error) {
		if sub != "https://idp.example#42" {
			return "", errors.New("unknown user")
		}
		return "upstream-token", nil
	}))
	if _, err := src.Token(context.Background()); !errors.Is(err, auth.ErrNoPrincipal) {
		t.Fatalf("no principal: %v", err)
	}
	ctx := auth.ContextWithPrincipal(context.Background(), &auth.Principal{Subject: "https://idp.example#42"})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api.URL, nil)
	req.Header.Set("Authorization", "Bearer client-token")
	resp, err := auth.UpstreamClient(src, nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if gotAuth != "Bearer upstream-token" {
		t.Fatalf("upstream got %q", gotAuth)
	}
}

// TestUpstreamClientRedirects: the upstream token follows a redirect on
// the API's own origin, and never one to another origin (the transport
// adds it to every request it sends, so the client must not send the
// redirected one): the redirect comes back to the caller instead.
func TestUpstreamClientRedirects(t *testing.T) {
	var elsewhereAuth []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhereAuth = append(elsewhereAuth, r.Header.Get("Authorization"))
	}))
	defer elsewhere.Close()
	var apiAuth []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apiAuth = append(apiAuth, r.Header.Get("Authorization"))
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusFound)
		case "/away":
			http.Redirect(w, r, elsewhere.URL+"/steal", http.StatusFound)
		}
	}))
	defer api.Close()
	src := tokenSourceFunc(func(context.Context) (string, error) { return "upstream-token", nil })
	tests := []struct {
		path       string
		wantStatus int
		wantAPI    int // requests the API sees, each with the token
	}{
		{"/moved", http.StatusOK, 2},
		{"/away", http.StatusFound, 1},
	}
	for _, tc := range tests {
		apiAuth, elsewhereAuth = nil, nil
		resp, err := auth.UpstreamClient(src, nil).Get(api.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.wantStatus || len(apiAuth) != tc.wantAPI || len(elsewhereAuth) != 0 {
			t.Fatalf("%s: status %d, API saw %q, elsewhere saw %q", tc.path, resp.StatusCode, apiAuth, elsewhereAuth)
		}
		for _, a := range apiAuth {
			if a != "Bearer upstream-token" {
				t.Fatalf("%s: API saw %q", tc.path, a)
			}
		}
	}
}

type tokenSourceFunc func(context.Context) (string, error)

func (f tokenSourceFunc) Token(ctx context.Context) (string, error) { return f(ctx) }
