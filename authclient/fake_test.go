package authclient

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/oauth"
)

// fakeAS is an authorization server for tests, written by hand: it serves
// its metadata, registers clients, answers authorization requests with an
// immediate redirect and issues tokens. It records what it receives.
type fakeAS struct {
	srv        *httptest.Server
	issuerPath string // e.g. "/tenant1"; "" for a root issuer

	// Behaviour.
	noPKCE       bool
	cimd         bool
	noDCR        bool
	issSupported bool
	issMode      string // "", "correct", "wrong", "omit"
	authMethods  []string
	scopes       []string
	ttl          int
	grants       []string
	clientPrefix string // prefix of registered client ids; "" means "dcr-"
	revocation   bool   // serve a revocation endpoint (RFC 7009)

	mu             sync.Mutex
	n              int
	requests       []string // METHOD URL
	registrations  []oauth.ClientMetadata
	authorizations []url.Values
	tokenForms     []url.Values
	tokenAuth      []string // Authorization headers of token requests
	revocations    []url.Values
	tokens         map[string][]string
	refresh        map[string][]string
}

func newFakeAS(t testing.TB, configure func(*fakeAS)) *fakeAS {
	a := &fakeAS{tokens: map[string][]string{}, refresh: map[string][]string{}, issMode: "correct"}
	if configure != nil {
		configure(a)
	}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAS) issuer() string { return a.srv.URL + a.issuerPath }

func (a *fakeAS) metadata() map[string]any {
	m := map[string]any{
		"issuer":                   a.issuer(),
		"authorization_endpoint":   a.srv.URL + "/authorize",
		"token_endpoint":           a.srv.URL + "/token",
		"response_types_supported": []string{"code"},
	}
	if !a.noPKCE {
		m["code_challenge_methods_supported"] = []string{"S256"}
	}
	if !a.noDCR {
		m["registration_endpoint"] = a.srv.URL + "/register"
	}
	if a.cimd {
		m["client_id_metadata_document_supported"] = true
	}
	if a.issSupported {
		m["authorization_response_iss_parameter_supported"] = true
	}
	if a.authMethods != nil {
		m["token_endpoint_auth_methods_supported"] = a.authMethods
	} else {
		m["token_endpoint_auth_methods_supported"] = []string{"none"}
	}
	if a.scopes != nil {
		m["scopes_supported"] = a.scopes
	}
	if a.grants != nil {
		m["grant_types_supported"] = a.grants
	}
	if a.revocation {
		m["revocation_endpoint"] = a.srv.URL + "/revoke"
	}
	return m
}

func (a *fakeAS) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, r.Method+" "+r.URL.String())
	r.ParseForm()
	switch {
	case r.Method == "GET" && r.URL.Path == oauth.WellKnownAuthorizationServer+a.issuerPath:
		writeJSON(w, 200, a.metadata())
	case r.Method == "POST" && r.URL.Path == "/register" && !a.noDCR:
		var md oauth.ClientMetadata
		if err := json.NewDecoder(r.Body).Decode(&md); err != nil {
			writeJSON(w, 400, map[string]string{"error": "invalid_client_metadata"})
			return
		}
		a.registrations = append(a.registrations, md)
		prefix := a.clientPrefix
		if prefix == "" {
			prefix = "dcr-"
		}
		resp := map[string]any{"client_id": fmt.Sprintf("%s%d", prefix, len(a.registrations)), "redirect_uris": md.RedirectURIs, "token_endpoint_auth_method": md.TokenEndpointAuthMethod}
		if md.TokenEndpointAuthMethod != "none" {
			resp["client_secret"] = "dcr-secret"
		}
		writeJSON(w, 201, resp)
	case r.Method == "GET" && r.URL.Path == "/authorize":
		q := r.URL.Query()
		a.authorizations = append(a.authorizations, q)
		red, err := url.Parse(q.Get("redirect_uri"))
		if err != nil {
			http.Error(w, "bad redirect", 400)
			return
		}
		rq := red.Query()
		rq.Set("code", "code-"+q.Get("scope"))
		rq.Set("state", q.Get("state"))
		switch a.issMode {
		case "correct":
			rq.Set("iss", a.issuer())
		case "wrong":
			rq.Set("iss", "https://evil.example")
		}
		red.RawQuery = rq.Encode()
		http.Redirect(w, r, red.String(), http.StatusFound)
	case r.Method == "POST" && r.URL.Path == "/token":
		a.tokenForms = append(a.tokenForms, r.PostForm)
		a.tokenAuth = append(a.tokenAuth, r.Header.Get("Authorization"))
		var scope []string
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			scope = oauth.ParseScope(strings.TrimPrefix(r.PostForm.Get("code"), "code-"))
		case "refresh_token":
			s, ok := a.refresh[r.PostForm.Get("refresh_token")]
			if !ok {
				writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
				return
			}
			delete(a.refresh, r.PostForm.Get("refresh_token")) // rotation
			scope = s
		default:
			scope = oauth.ParseScope(r.PostForm.Get("scope"))
		}
		a.n++
		at := fmt.Sprintf("at-%s-%d", strings.TrimPrefix(a.srv.URL, "http://127.0.0.1:"), a.n)
		rt := fmt.Sprintf("rt-%d", a.n)
		a.tokens[at] = scope
		a.refresh[rt] = scope
		resp := map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt, "scope": oauth.JoinScope(scope)}
		if a.ttl > 0 {
			resp["expires_in"] = a.ttl
		}
		writeJSON(w, 200, resp)
	case r.Method == "POST" && r.URL.Path == "/revoke" && a.revocation:
		a.revocations = append(a.revocations, r.PostForm)
		delete(a.tokens, r.PostForm.Get("token"))
		delete(a.refresh, r.PostForm.Get("token"))
		w.WriteHeader(http.StatusOK)
	default:
		http.NotFound(w, r)
	}
}

func (a *fakeAS) scopesOf(tok string) ([]string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.tokens[tok]
	return s, ok
}

func (a *fakeAS) count(prefix string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, r := range a.requests {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

// fakeRS is an MCP server stand-in protected by an authorization server:
// /mcp answers 200 to a token the AS issued with the required scope, 401 or
// 403 otherwise.
type fakeRS struct {
	srv *httptest.Server
	as  *fakeAS

	resource     string   // PRM resource; "" means srv.URL + "/mcp"
	inHeader     bool     // name the PRM in the challenge
	challengeScp []string // scope in the 401 challenge
	supported    []string // PRM scopes_supported
	required     func(r *http.Request) []string
	forbid       []string // when set, every valid token gets 403 asking for these

	mu       sync.Mutex
	requests []string // METHOD URL
	authz    []string // Authorization headers on /mcp
}

func newFakeRS(t testing.TB, as *fakeAS, configure func(*fakeRS)) *fakeRS {
	s := &fakeRS{as: as, inHeader: true}
	if configure != nil {
		configure(s)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *fakeRS) url() string { return s.srv.URL + "/mcp" }

func (s *fakeRS) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.String())
	if r.URL.Path == "/mcp" {
		s.authz = append(s.authz, r.Header.Get("Authorization"))
	}
	as := s.as
	s.mu.Unlock()
	prm := oauth.ProtectedResourceMetadataPath("/mcp")
	switch r.URL.Path {
	case prm:
		res := s.resource
		if res == "" {
			res = s.url()
		}
		m := map[string]any{"resource": res, "authorization_servers": []string{as.issuer()}}
		if s.supported != nil {
			m["scopes_supported"] = s.supported
		}
		writeJSON(w, 200, m)
	case "/mcp":
		ch := oauth.BearerChallenge{Scope: s.challengeScp}
		if s.inHeader {
			ch.ResourceMetadata = s.srv.URL + prm
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		granted, valid := as.scopesOf(tok)
		if !ok || !valid {
			w.Header().Set("WWW-Authenticate", ch.String())
			writeJSON(w, 401, map[string]string{"error": "invalid_token"})
			return
		}
		if s.forbid != nil {
			ch.Error = oauth.InsufficientScope
			ch.Scope = s.forbid
			w.Header().Set("WWW-Authenticate", ch.String())
			writeJSON(w, 403, map[string]string{"error": "insufficient_scope"})
			return
		}
		if s.required != nil {
			need := s.required(r)
			if !oauth.HasAllScopes(granted, need) {
				ch.Error = oauth.InsufficientScope
				ch.Scope = need
				w.Header().Set("WWW-Authenticate", ch.String())
				writeJSON(w, 403, map[string]string{"error": "insufficient_scope"})
				return
			}
		}
		writeJSON(w, 200, map[string]any{"ok": true, "scope": granted})
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// follower is the authorizer of most tests.
func follower() *RedirectFollower {
	return &RedirectFollower{Redirect: "http://127.0.0.1:9/callback"}
}

// call POSTs body to url through c and returns the status.
func call(t *testing.T, c *http.Client, u, body string) (int, error) {
	t.Helper()
	resp, err := c.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
