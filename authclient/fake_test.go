package authclient

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/internal/oauthtest"
	"github.com/mcpstack/mcpstack/oauth"
)

// fakeAS is the test authorization server shared with package auth's
// tests (internal/oauthtest).
type fakeAS = oauthtest.Server

// newFakeAS starts one, configured by configure.
func newFakeAS(t testing.TB, configure func(*fakeAS)) *fakeAS { return oauthtest.New(t, configure) }

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
		m := map[string]any{"resource": res, "authorization_servers": []string{as.Issuer()}}
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
		granted, valid := as.ScopesOf(tok)
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

func writeJSON(w http.ResponseWriter, status int, v any) { oauthtest.WriteJSON(w, status, v) }

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
