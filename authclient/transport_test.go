package authclient

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/oauth"
)

func TestFullFlow(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, func(s *fakeRS) { s.challengeScp = []string{"mcp:read"} })
	tr := NewTransport(Config{Authorizer: follower()})
	st, err := call(t, tr.Client(), rs.url(), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if err != nil || st != 200 {
		t.Fatalf("status %d, err %v", st, err)
	}
	if len(as.Registrations) != 1 || as.Registrations[0].TokenEndpointAuthMethod != "none" {
		t.Fatalf("registrations = %+v", as.Registrations)
	}
	q := as.Authorizations[0]
	want := map[string]string{"response_type": "code", "code_challenge_method": "S256", "resource": rs.url(), "scope": "mcp:read", "client_id": "dcr-1"}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("authorization %s = %q, want %q", k, q.Get(k), v)
		}
	}
	f := as.TokenForms[0]
	if f.Get("resource") != rs.url() || f.Get("code_verifier") == "" || oauth.S256Challenge(f.Get("code_verifier")) != q.Get("code_challenge") {
		t.Errorf("token form %v does not carry resource and the matching verifier", f)
	}
	// The second request reuses the token: no new authorization.
	if st, _ := call(t, tr.Client(), rs.url(), `{}`); st != 200 || len(as.Authorizations) != 1 {
		t.Fatalf("second call: status %d, %d authorizations", st, len(as.Authorizations))
	}
}

func TestRefusesWithoutPKCEAdvertised(t *testing.T) {
	for _, allow := range []bool{false, true} {
		as := newFakeAS(t, func(a *fakeAS) { a.NoPKCE = true })
		rs := newFakeRS(t, as, nil)
		tr := NewTransport(Config{Authorizer: follower(), AllowUnadvertisedPKCE: allow})
		_, err := call(t, tr.Client(), rs.url(), `{}`)
		if !allow {
			if !errors.Is(err, ErrPKCENotAdvertised) {
				t.Fatalf("err = %v, want ErrPKCENotAdvertised", err)
			}
			if n := as.Count("GET /authorize") + as.Count("POST /register"); n != 0 {
				t.Fatalf("client went on after the refusal: %v", as.Requests)
			}
			continue
		}
		if err != nil || len(as.Authorizations) != 1 || as.Authorizations[0].Get("code_challenge_method") != "S256" {
			t.Fatalf("with AllowUnadvertisedPKCE: err %v, authorizations %v", err, as.Authorizations)
		}
	}
}

func TestTokenNeverInURL(t *testing.T) {
	as := newFakeAS(t, func(a *fakeAS) { a.TTL = 1 })
	rs := newFakeRS(t, as, nil)
	now := time.Now()
	tr := NewTransport(Config{Authorizer: follower(), Now: func() time.Time { return now }})
	for i := range 3 {
		if st, err := call(t, tr.Client(), rs.url()+"?x=1", `{}`); err != nil || st != 200 {
			t.Fatalf("call %d: %d %v", i, st, err)
		}
		now = now.Add(time.Minute) // force a refresh next time
	}
	var tokens []string
	for tok := range as.Tokens {
		tokens = append(tokens, tok)
	}
	for rt := range as.Refresh {
		tokens = append(tokens, rt)
	}
	if len(as.Tokens) < 2 {
		t.Fatalf("expected refreshes, got tokens %v", as.Tokens)
	}
	for _, u := range append(slices.Clone(as.Requests), rs.requests...) {
		for _, tok := range tokens {
			if strings.Contains(u, tok) {
				t.Errorf("token %s appears in URL %s", tok, u)
			}
		}
	}
	for _, h := range rs.authz[1:] {
		if tok, ok := strings.CutPrefix(h, "Bearer "); h != "" && (!ok || !slices.Contains(tokens, tok)) {
			t.Errorf("Authorization header %q", h)
		}
	}
}

// stateAuthorizer returns what the server sent, with the state replaced.
type stateAuthorizer struct {
	RedirectFollower
	state func(string) (string, bool)
}

func (s *stateAuthorizer) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	v, err := s.RedirectFollower.Authorize(ctx, authURL)
	if err != nil {
		return nil, err
	}
	if st, ok := s.state(v.Get("state")); ok {
		v.Set("state", st)
	} else {
		v.Del("state")
	}
	return v, nil
}

func TestStateMismatchDiscarded(t *testing.T) {
	cases := map[string]func(string) (string, bool){
		"changed": func(s string) (string, bool) { return s + "x", true },
		"missing": func(string) (string, bool) { return "", false },
		"empty":   func(string) (string, bool) { return "", true },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			as := newFakeAS(t, nil)
			rs := newFakeRS(t, as, nil)
			tr := NewTransport(Config{Authorizer: &stateAuthorizer{RedirectFollower: *follower(), state: f}})
			_, err := call(t, tr.Client(), rs.url(), `{}`)
			if !errors.Is(err, ErrStateMismatch) {
				t.Fatalf("err = %v, want ErrStateMismatch", err)
			}
			if len(as.TokenForms) != 0 {
				t.Fatalf("code was redeemed despite the state mismatch")
			}
		})
	}
}

func TestIssParameter(t *testing.T) {
	cases := []struct {
		name      string
		supported bool
		mode      string
		ok        bool
	}{
		{"advertised and correct", true, "correct", true},
		{"not advertised, absent", false, "omit", true},
		{"advertised, absent", true, "omit", false},
		{"wrong", true, "wrong", false},
		{"wrong, not advertised", false, "wrong", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			as := newFakeAS(t, func(a *fakeAS) { a.ISSSupported, a.ISSMode = c.supported, c.mode })
			rs := newFakeRS(t, as, nil)
			_, err := call(t, NewTransport(Config{Authorizer: follower()}).Client(), rs.url(), `{}`)
			if c.ok != (err == nil) {
				t.Fatalf("err = %v, want ok=%v", err, c.ok)
			}
			if !c.ok && (!errors.Is(err, ErrResponseIssuerMismatch) || len(as.TokenForms) != 0) {
				t.Fatalf("err = %v, token requests %d", err, len(as.TokenForms))
			}
		})
	}
}

func TestStepUp(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, func(s *fakeRS) {
		s.challengeScp = []string{"read"}
		s.required = func(r *http.Request) []string {
			if r.URL.Query().Get("op") == "write" {
				return []string{"write"}
			}
			return []string{"read"}
		}
	})
	tr := NewTransport(Config{Authorizer: follower()})
	if st, err := call(t, tr.Client(), rs.url(), `{}`); err != nil || st != 200 {
		t.Fatalf("read: %d %v", st, err)
	}
	if st, err := call(t, tr.Client(), rs.url()+"?op=write", `{}`); err != nil || st != 200 {
		t.Fatalf("write: %d %v", st, err)
	}
	if len(as.Authorizations) != 2 {
		t.Fatalf("%d authorizations, want 2", len(as.Authorizations))
	}
	if got := as.Authorizations[1].Get("scope"); got != "read write" {
		t.Fatalf("step-up scope = %q, want the union \"read write\"", got)
	}
}

func TestStepUpBound(t *testing.T) {
	as := newFakeAS(t, nil)
	n := 0
	rs := newFakeRS(t, as, func(s *fakeRS) {
		// Every answer asks for one more scope, so the client never has
		// what the server wants.
		s.required = func(r *http.Request) []string {
			n++
			return []string{"s" + strings.Repeat("x", n)}
		}
	})
	tr := NewTransport(Config{Authorizer: follower()})
	_, err := call(t, tr.Client(), rs.url(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	var se *StepUpError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *StepUpError", err)
	}
	if se.Attempts != 3 || !strings.Contains(se.Operation, "tools/call") {
		t.Fatalf("StepUpError = %+v", se)
	}
	if len(as.Authorizations) != 1+3 {
		t.Fatalf("%d authorizations, want 4 (one plus three step-ups)", len(as.Authorizations))
	}
	// The bound is per operation: another operation may still step up.
	_, err = call(t, tr.Client(), rs.url(), `{"jsonrpc":"2.0","id":2,"method":"resources/read"}`)
	if !errors.As(err, &se) || !strings.Contains(se.Operation, "resources/read") || len(as.Authorizations) != 4+3 {
		t.Fatalf("second operation: %v, %d authorizations", err, len(as.Authorizations))
	}
}

func TestStepUpGrantedScopeIsPermanent(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, func(s *fakeRS) {
		s.challengeScp = []string{"admin"}
		s.forbid = []string{"admin"} // refused even with admin granted
	})
	_, err := call(t, NewTransport(Config{Authorizer: follower()}).Client(), rs.url(), `{}`)
	var se *StepUpError
	if !errors.As(err, &se) || se.Attempts != 0 || !slices.Equal(se.Granted, []string{"admin"}) {
		t.Fatalf("err = %v", err)
	}
	if len(as.Authorizations) != 1 {
		t.Fatalf("%d authorizations, want 1: asking again for granted scopes is useless", len(as.Authorizations))
	}
}

func TestRefreshCarriesResourceAndRotates(t *testing.T) {
	as := newFakeAS(t, func(a *fakeAS) { a.TTL = 60 })
	rs := newFakeRS(t, as, nil)
	now := time.Now()
	tr := NewTransport(Config{Authorizer: follower(), Now: func() time.Time { return now }})
	c := tr.Client()
	for i := range 3 {
		if st, err := call(t, c, rs.url(), `{}`); err != nil || st != 200 {
			t.Fatalf("call %d: %d %v", i, st, err)
		}
		now = now.Add(2 * time.Minute)
	}
	if len(as.Authorizations) != 1 {
		t.Fatalf("%d authorizations, want 1", len(as.Authorizations))
	}
	var refreshes []url.Values
	for _, f := range as.TokenForms {
		if f.Get("grant_type") == "refresh_token" {
			refreshes = append(refreshes, f)
		}
	}
	if len(refreshes) != 2 {
		t.Fatalf("%d refreshes, want 2", len(refreshes))
	}
	for _, f := range refreshes {
		if f.Get("resource") != rs.url() {
			t.Errorf("refresh without resource: %v", f)
		}
	}
	// Rotation: the second refresh uses the refresh token of the first
	// refresh (the fake invalidates used ones, so a stale one would fail).
	if refreshes[0].Get("refresh_token") == refreshes[1].Get("refresh_token") {
		t.Errorf("refresh token not rotated")
	}
}

func TestRegistrationOrder(t *testing.T) {
	pre := func(string) (ClientRegistration, bool) {
		return ClientRegistration{ClientID: "pre", ClientSecret: "pre-secret"}, true
	}
	prompted := false
	prompt := func(ctx context.Context, issuer string, md oauth.AuthorizationServerMetadata) (ClientRegistration, error) {
		prompted = true
		return ClientRegistration{ClientID: "typed-in"}, nil
	}
	const cimdURL = "https://client.example/meta.json"
	cases := []struct {
		name       string
		cimd, dcr  bool
		pre        bool
		cimdURL    string
		prompt     bool
		wantClient string
		wantErr    error
	}{
		{"pre-registered first", true, true, true, cimdURL, true, "pre", nil},
		{"CIMD before DCR", true, true, false, cimdURL, true, cimdURL, nil},
		{"CIMD not supported: DCR", false, true, false, cimdURL, true, "dcr-1", nil},
		{"CIMD supported but no document: DCR", true, true, false, "", true, "dcr-1", nil},
		{"no DCR: prompt", false, false, false, cimdURL, true, "typed-in", nil},
		{"nothing applies", false, false, false, cimdURL, false, "", ErrNoClient},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prompted = false
			as := newFakeAS(t, func(a *fakeAS) {
				a.CIMD, a.NoDCR = c.cimd, !c.dcr
				a.AuthMethods = []string{"none", "client_secret_basic"}
			})
			rs := newFakeRS(t, as, nil)
			cfg := Config{Authorizer: follower(), ClientIDMetadataDocument: c.cimdURL}
			if c.pre {
				cfg.PreRegistered = pre
			}
			if c.prompt {
				cfg.PromptClient = prompt
			}
			_, err := call(t, NewTransport(cfg).Client(), rs.url(), `{}`)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := as.Authorizations[0].Get("client_id"); got != c.wantClient {
				t.Fatalf("client_id = %q, want %q", got, c.wantClient)
			}
			if (c.wantClient == "dcr-1") != (len(as.Registrations) == 1) {
				t.Fatalf("registrations: %d", len(as.Registrations))
			}
			if prompted != (c.wantClient == "typed-in") {
				t.Fatalf("prompted = %v", prompted)
			}
			if c.pre && as.TokenAuth[0] == "" {
				t.Fatalf("pre-registered secret not sent with Basic")
			}
		})
	}
}

func TestNoTokenToServerOfAnotherAS(t *testing.T) {
	asA := newFakeAS(t, nil)
	asB := newFakeAS(t, nil)
	rsA := newFakeRS(t, asA, nil)
	rsB := newFakeRS(t, asB, nil)
	tr := NewTransport(Config{Authorizer: follower()})
	c := tr.Client()
	for _, u := range []string{rsA.url(), rsB.url(), rsA.url(), rsB.url()} {
		if st, err := call(t, c, u, `{}`); err != nil || st != 200 {
			t.Fatalf("%s: %d %v", u, st, err)
		}
	}
	for _, h := range rsB.authz {
		tok := strings.TrimPrefix(h, "Bearer ")
		if _, ok := asA.ScopesOf(tok); ok && tok != "" {
			t.Fatalf("server B received a token of A's authorization server: %q", h)
		}
	}
	for _, h := range rsA.authz {
		tok := strings.TrimPrefix(h, "Bearer ")
		if _, ok := asB.ScopesOf(tok); ok && tok != "" {
			t.Fatalf("server A received a token of B's authorization server: %q", h)
		}
	}
	if rsB.authz[0] != "" {
		t.Fatalf("first request to B carried %q", rsB.authz[0])
	}
}

func TestResourceMismatchRefused(t *testing.T) {
	for _, res := range []string{"https://evil.example/mcp", "", "http://127.0.0.1:1/mcp"} {
		as := newFakeAS(t, nil)
		rs := newFakeRS(t, as, func(s *fakeRS) { s.resource = res })
		if res == "" {
			rs.resource = rs.srv.URL + "/other"
		}
		_, err := call(t, NewTransport(Config{Authorizer: follower()}).Client(), rs.url(), `{}`)
		if !errors.Is(err, oauth.ErrResourceMismatch) {
			t.Fatalf("resource %q: err = %v", rs.resource, err)
		}
		if len(as.Requests) != 0 {
			t.Fatalf("resource %q: contacted the AS: %v", rs.resource, as.Requests)
		}
	}
}

func TestResourceCovers(t *testing.T) {
	cases := []struct {
		res, server string
		ok          bool
	}{
		{"https://h/mcp", "https://h/mcp", true},
		{"https://H/mcp/", "https://h/mcp", true},
		{"https://h", "https://h/mcp", true},
		{"https://h/a", "https://h/a/mcp", true},
		{"https://h/a", "https://h/ab", false},
		{"https://h/other", "https://h/mcp", false},
		{"https://h:8443/mcp", "https://h/mcp", false},
		{"http://h/mcp", "https://h/mcp", false},
		{"https://evil/mcp", "https://h/mcp", false},
		{"not a uri", "https://h/mcp", false},
	}
	for _, c := range cases {
		if got := resourceCovers(c.res, c.server); got != c.ok {
			t.Errorf("resourceCovers(%q, %q) = %v", c.res, c.server, got)
		}
	}
}

func TestDiscoveryOrder(t *testing.T) {
	// Issuer with a path, metadata only at the third location; PRM not in
	// the challenge and only at the root location.
	as := newFakeAS(t, func(a *fakeAS) { a.IssuerPath = "/tenant1" })
	mux := http.NewServeMux()
	var seen []string
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Path)
		if r.URL.Path == "/tenant1"+oauth.WellKnownOpenIDConfiguration {
			m := as.Metadata()
			writeJSON(w, 200, m)
			return
		}
		if strings.Contains(r.URL.Path, "/.well-known/") {
			http.NotFound(w, r)
			return
		}
		as.ServeHTTP(w, r)
	})
	as.Srv.Config.Handler = mux
	rs := newFakeRS(t, as, func(s *fakeRS) { s.inHeader = false })
	rs.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == oauth.ProtectedResourceMetadataPath("/mcp") {
			http.NotFound(w, r)
			rs.mu.Lock()
			rs.requests = append(rs.requests, "GET "+r.URL.Path)
			rs.mu.Unlock()
			return
		}
		if r.URL.Path == oauth.WellKnownProtectedResource {
			rs.mu.Lock()
			rs.requests = append(rs.requests, "GET "+r.URL.Path)
			rs.mu.Unlock()
			writeJSON(w, 200, map[string]any{"resource": rs.srv.URL, "authorization_servers": []string{as.Issuer()}})
			return
		}
		rs.serve(w, r)
	})
	if _, err := call(t, NewTransport(Config{Authorizer: follower()}).Client(), rs.url(), `{}`); err != nil {
		t.Fatal(err)
	}
	wantAS := []string{
		oauth.WellKnownAuthorizationServer + "/tenant1",
		oauth.WellKnownOpenIDConfiguration + "/tenant1",
		"/tenant1" + oauth.WellKnownOpenIDConfiguration,
	}
	if !slices.Equal(seen[:3], wantAS) {
		t.Fatalf("AS metadata order = %v, want %v", seen[:3], wantAS)
	}
	wantRS := []string{"POST /mcp", "GET " + oauth.ProtectedResourceMetadataPath("/mcp"), "GET " + oauth.WellKnownProtectedResource, "POST /mcp"}
	if !slices.Equal(rs.requests, wantRS) {
		t.Fatalf("PRM order: %v", rs.requests)
	}
	if got := as.Authorizations[0].Get("resource"); got != rs.srv.URL {
		t.Fatalf("resource = %q, want the PRM's %q", got, rs.srv.URL)
	}
}

func TestIssuerMismatchRefused(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, nil)
	as.Srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == oauth.WellKnownAuthorizationServer {
			m := as.Metadata()
			m["issuer"] = "https://attacker.example"
			writeJSON(w, 200, m)
			return
		}
		as.ServeHTTP(w, r)
	})
	_, err := call(t, NewTransport(Config{Authorizer: follower()}).Client(), rs.url(), `{}`)
	if !errors.Is(err, oauth.ErrMetadataIssuerMismatch) || len(as.Registrations)+len(as.Authorizations) != 0 {
		t.Fatalf("err = %v; registrations %d, authorizations %d", err, len(as.Registrations), len(as.Authorizations))
	}
}

func TestScopeSelection(t *testing.T) {
	cases := []struct {
		name      string
		challenge []string
		supported []string
		offline   bool
		asScopes  []string
		want      string
		present   bool
	}{
		{"challenge wins", []string{"a"}, []string{"b", "c"}, false, nil, "a", true},
		{"scopes_supported", nil, []string{"b", "c"}, false, nil, "b c", true},
		{"omitted", nil, nil, false, nil, "", false},
		{"offline_access when offered", []string{"a"}, nil, true, []string{"a", "offline_access"}, "a offline_access", true},
		{"no offline_access when not offered", []string{"a"}, nil, true, []string{"a"}, "a", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			as := newFakeAS(t, func(a *fakeAS) { a.Scopes = c.asScopes })
			rs := newFakeRS(t, as, func(s *fakeRS) { s.challengeScp, s.supported = c.challenge, c.supported })
			if _, err := call(t, NewTransport(Config{Authorizer: follower(), OfflineAccess: c.offline}).Client(), rs.url(), `{}`); err != nil {
				t.Fatal(err)
			}
			q := as.Authorizations[0]
			if q.Has("scope") != c.present || q.Get("scope") != c.want {
				t.Fatalf("scope = %q (present %v), want %q", q.Get("scope"), q.Has("scope"), c.want)
			}
		})
	}
}

func TestTokenEndpointAuthMethods(t *testing.T) {
	for _, m := range []string{"none", "client_secret_basic", "client_secret_post"} {
		t.Run(m, func(t *testing.T) {
			as := newFakeAS(t, func(a *fakeAS) { a.AuthMethods = []string{m} })
			rs := newFakeRS(t, as, nil)
			if _, err := call(t, NewTransport(Config{Authorizer: follower()}).Client(), rs.url(), `{}`); err != nil {
				t.Fatal(err)
			}
			f, h := as.TokenForms[0], as.TokenAuth[0]
			switch m {
			case "none":
				if f.Get("client_id") != "dcr-1" || f.Has("client_secret") || h != "" {
					t.Fatalf("form %v, header %q", f, h)
				}
			case "client_secret_basic":
				r := &http.Request{Header: http.Header{"Authorization": {h}}}
				id, secret, ok := r.BasicAuth()
				if !ok || id != "dcr-1" || secret != "dcr-secret" || f.Has("client_secret") {
					t.Fatalf("basic %q/%q, form %v", id, secret, f)
				}
			case "client_secret_post":
				if f.Get("client_id") != "dcr-1" || f.Get("client_secret") != "dcr-secret" || h != "" {
					t.Fatalf("form %v, header %q", f, h)
				}
			}
		})
	}
}

func TestAuthorizationServerChange(t *testing.T) {
	as1 := newFakeAS(t, func(a *fakeAS) { a.ClientPrefix = "as1-" })
	as2 := newFakeAS(t, func(a *fakeAS) { a.ClientPrefix = "as2-" })
	rs := newFakeRS(t, as1, nil)
	tr := NewTransport(Config{Authorizer: follower()})
	if _, err := call(t, tr.Client(), rs.url(), `{}`); err != nil {
		t.Fatal(err)
	}
	rs.mu.Lock()
	rs.as = as2 // the resource moves to another authorization server
	rs.mu.Unlock()
	if st, err := call(t, tr.Client(), rs.url(), `{}`); err != nil || st != 200 {
		t.Fatalf("after the move: %d %v", st, err)
	}
	if len(as2.Registrations) != 1 {
		t.Fatalf("did not register with the new authorization server")
	}
	for _, q := range as2.Authorizations {
		if q.Get("client_id") != "as2-1" {
			t.Fatalf("client_id at the new server: %q", q.Get("client_id"))
		}
	}
	for _, f := range as2.TokenForms {
		if f.Get("client_id") != "as2-1" {
			t.Fatalf("client_id at the new server's token endpoint: %q", f.Get("client_id"))
		}
	}
}

func TestStaleStoredTokenReplaced(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, nil)
	store := &MemoryStore{}
	ctx := context.Background()
	// An earlier run left a token (and a client) the server no longer
	// accepts, with no refresh token.
	key := Key{Resource: rs.url(), Issuer: as.Issuer()}
	store.Save(ctx, key, &Entry{Client: &ClientRegistration{ClientID: "old"}, Token: &Token{AccessToken: "revoked"}})
	tr := NewTransport(Config{Authorizer: follower(), Store: store})
	if st, err := call(t, tr.Client(), rs.url(), `{}`); err != nil || st != 200 {
		t.Fatalf("%d %v", st, err)
	}
	if len(as.Authorizations) != 1 || rs.authz[1] != "Bearer revoked" {
		t.Fatalf("authorizations %d, headers %q", len(as.Authorizations), rs.authz)
	}
}

func TestAlways401IsBounded(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, nil)
	rs.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			rs.mu.Lock()
			rs.authz = append(rs.authz, r.Header.Get("Authorization"))
			rs.mu.Unlock()
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			w.WriteHeader(401)
			return
		}
		rs.serve(w, r)
	})
	st, err := call(t, NewTransport(Config{Authorizer: follower()}).Client(), rs.url(), `{}`)
	if err != nil || st != 401 {
		t.Fatalf("%d %v", st, err)
	}
	if len(rs.authz) != 4 || len(as.Authorizations) != 1 {
		t.Fatalf("%d requests, %d user authorizations", len(rs.authz), len(as.Authorizations))
	}
}

func TestChooseAuthorizationServer(t *testing.T) {
	as1 := newFakeAS(t, nil)
	as2 := newFakeAS(t, nil)
	rs := newFakeRS(t, as1, nil)
	rs.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == oauth.ProtectedResourceMetadataPath("/mcp") {
			writeJSON(w, 200, map[string]any{"resource": rs.url(), "authorization_servers": []string{as1.Issuer(), as2.Issuer()}})
			return
		}
		rs.serve(w, r)
	})
	var offered []string
	pick := func(_ context.Context, servers []string) (string, error) {
		offered = servers
		return servers[1], nil
	}
	// The fake RS accepts tokens of as1 only, so the request is refused in
	// the end; what matters is where the client went.
	call(t, NewTransport(Config{Authorizer: follower(), ChooseAuthorizationServer: pick}).Client(), rs.url(), `{}`)
	if len(offered) != 2 || len(as2.Authorizations) == 0 || len(as1.Requests) != 0 {
		t.Fatalf("offered %v; as1 requests %d, as2 authorizations %d", offered, len(as1.Requests), len(as2.Authorizations))
	}
	// A choice outside the list is refused.
	bad := func(context.Context, []string) (string, error) { return "https://elsewhere.example", nil }
	if _, err := call(t, NewTransport(Config{Authorizer: follower(), ChooseAuthorizationServer: bad}).Client(), rs.url(), `{}`); err == nil {
		t.Fatal("a server the resource does not list was used")
	}
}
