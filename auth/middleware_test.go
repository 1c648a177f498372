package auth_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/internal/oauthtest"
)

const (
	resource = "https://mcp.example.com/mcp"
	prmURL   = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
)

// guarded is a middleware in front of a handler that records what reached
// it.
type guarded struct {
	h       http.Handler
	calls   int
	got     *auth.Principal
	rawSeen bool
	body    string
}

func newGuarded(t *testing.T, as *testAS, edit func(*auth.Options)) *guarded {
	t.Helper()
	v, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer(), Audience: resource})
	if err != nil {
		t.Fatal(err)
	}
	opts := auth.Options{Resource: resource, Verifier: v, Scopes: []string{"mcp"}}
	if edit != nil {
		edit(&opts)
	}
	m, err := auth.NewMiddleware(opts)
	if err != nil {
		t.Fatal(err)
	}
	g := &guarded{}
	g.h = m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.calls++
		g.got, _ = auth.PrincipalFromContext(r.Context())
		_, g.rawSeen = auth.RawTokenFromContext(r.Context())
		b, _ := io.ReadAll(r.Body)
		g.body = string(b)
		w.WriteHeader(http.StatusOK)
	}))
	return g
}

// readCounter records whether anyone read a request body.
type readCounter struct {
	r     io.Reader
	reads int
}

func (c *readCounter) Read(p []byte) (int, error) { c.reads++; return c.r.Read(p) }
func (c *readCounter) Close() error               { return nil }

func (g *guarded) do(method, target, authz, contentType, body string) (*httptest.ResponseRecorder, *readCounter) {
	rc := &readCounter{r: strings.NewReader(body)}
	r := httptest.NewRequest(method, target, nil)
	r.Body = rc
	r.ContentLength = int64(len(body))
	if authz != "" {
		r.Header.Set("Authorization", authz)
	}
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	g.h.ServeHTTP(w, r)
	return w, rc
}

const toolsCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_repo","arguments":{}}}`

// Every refusal: exact status, exact challenge, handler not reached and,
// for 401, the body not read.
func TestRefusals(t *testing.T) {
	as := newTestAS(t)
	valid := func() map[string]any { return as.Claims("alice", resource, "mcp") }
	with := func(k string, v any) string {
		c := valid()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return as.Sign(c)
	}
	now := time.Now()
	other := as.SignWith(oauthtest.SigningKey{KID: as.Current().KID, Priv: mustKey(t)}, "at+jwt", valid())
	unknownKid := as.SignWith(oauthtest.SigningKey{KID: "nope", Priv: mustKey(t)}, "at+jwt", valid())
	const noAuth = `Bearer resource_metadata="` + prmURL + `", scope="mcp"`
	inv := func(desc string) string {
		return `Bearer resource_metadata="` + prmURL + `", scope="mcp", error="invalid_token", error_description="` + desc + `"`
	}
	const badReq = `Bearer resource_metadata="` + prmURL + `", error="invalid_request", error_description="access tokens are accepted in the Authorization header only"`
	tests := []struct {
		name, method, target, authz, ctype, body string
		status                                   int
		challenge                                string
	}{
		{"no token", "POST", "/mcp", "", "application/json", toolsCall, 401, noAuth},
		{"basic scheme", "POST", "/mcp", "Basic YTpi", "application/json", toolsCall, 401, noAuth},
		{"query token", "POST", "/mcp?access_token=" + as.Sign(valid()), "", "application/json", toolsCall, 400, badReq},
		{"query token beside header", "GET", "/mcp?x=1&access_token=abc", "Bearer " + as.Sign(valid()), "", "", 400, badReq},
		{"form token", "POST", "/mcp", "", "application/x-www-form-urlencoded", "access_token=" + as.Sign(valid()), 400, badReq},
		{"malformed bearer", "POST", "/mcp", "Bearer a b", "application/json", toolsCall, 400,
			`Bearer resource_metadata="` + prmURL + `", error="invalid_request", error_description="malformed Bearer credentials"`},
		{"empty bearer", "POST", "/mcp", "Bearer ", "application/json", toolsCall, 400,
			`Bearer resource_metadata="` + prmURL + `", error="invalid_request", error_description="malformed Bearer credentials"`},
		{"garbage", "POST", "/mcp", "Bearer abc.def.ghi", "application/json", toolsCall, 401, inv("malformed token or algorithm not allowed")},
		{"alg none", "POST", "/mcp", "Bearer " + unsigned(as, valid()), "application/json", toolsCall, 401, inv("malformed token or algorithm not allowed")},
		{"HS256 with the public key", "POST", "/mcp", "Bearer " + hmacWithPublicKey(t, as, valid()), "application/json", toolsCall, 401, inv("malformed token or algorithm not allowed")},
		{"wrong iss", "POST", "/mcp", "Bearer " + with("iss", "https://evil.example.com"), "application/json", toolsCall, 401, inv("issuer is not trusted")},
		{"aud of another server", "POST", "/mcp", "Bearer " + with("aud", "https://other.example.com/mcp"), "application/json", toolsCall, 401, inv("token was not issued for this resource")},
		{"no aud", "POST", "/mcp", "Bearer " + with("aud", nil), "application/json", toolsCall, 401, inv("token was not issued for this resource")},
		{"expired", "POST", "/mcp", "Bearer " + with("exp", now.Add(-time.Minute).Unix()), "application/json", toolsCall, 401, inv("token expired")},
		{"no exp", "POST", "/mcp", "Bearer " + with("exp", nil), "application/json", toolsCall, 401, inv("token has no expiry")},
		{"nbf ahead", "POST", "/mcp", "Bearer " + with("nbf", now.Add(time.Minute).Unix()), "application/json", toolsCall, 401, inv("token not valid yet")},
		{"iat ahead", "POST", "/mcp", "Bearer " + with("iat", now.Add(time.Minute).Unix()), "application/json", toolsCall, 401, inv("token issued in the future")},
		{"no sub", "POST", "/mcp", "Bearer " + with("sub", nil), "application/json", toolsCall, 401, inv("token has no sub")},
		{"typ JWT", "POST", "/mcp", "Bearer " + as.SignWith(as.Current(), "JWT", valid()), "application/json", toolsCall, 401, inv("token type is not at+jwt")},
		{"signed by another key", "POST", "/mcp", "Bearer " + other, "application/json", toolsCall, 401, inv("signature does not verify")},
		{"unknown kid", "POST", "/mcp", "Bearer " + unknownKid, "application/json", toolsCall, 401, inv("unknown signing key")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGuarded(t, as, nil)
			w, rc := g.do(tc.method, tc.target, tc.authz, tc.ctype, tc.body)
			if w.Code != tc.status {
				t.Errorf("status %d, want %d", w.Code, tc.status)
			}
			if got := w.Header().Values("WWW-Authenticate"); len(got) != 1 || got[0] != tc.challenge {
				t.Errorf("WWW-Authenticate\n got %q\nwant %q", got, tc.challenge)
			}
			if g.calls != 0 {
				t.Error("the handler was reached")
			}
			if tc.status == 401 && rc.reads != 0 {
				t.Error("the body was read before the token was valid")
			}
			if w.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q", w.Header().Get("Cache-Control"))
			}
		})
	}
}

func TestTwoAuthorizationHeaders(t *testing.T) {
	as := newTestAS(t)
	g := newGuarded(t, as, nil)
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(toolsCall))
	tok := as.Sign(as.Claims("alice", resource, "mcp"))
	r.Header.Add("Authorization", "Bearer "+tok)
	r.Header.Add("Authorization", "Bearer "+tok)
	w := httptest.NewRecorder()
	g.h.ServeHTTP(w, r)
	want := `Bearer resource_metadata="` + prmURL + `", error="invalid_request", error_description="more than one Authorization header"`
	if w.Code != 400 || w.Header().Get("WWW-Authenticate") != want || g.calls != 0 {
		t.Errorf("%d %q calls=%d", w.Code, w.Header().Get("WWW-Authenticate"), g.calls)
	}
}

func TestAccepted(t *testing.T) {
	as := newTestAS(t)
	g := newGuarded(t, as, nil)
	c := as.Claims("alice", "https://MCP.example.com:443/mcp/", "mcp", "files:read")
	c["tenant"] = "acme"
	w, _ := g.do("POST", "/mcp", "bearer "+as.Sign(c), "application/json", toolsCall)
	if w.Code != 200 || g.calls != 1 {
		t.Fatalf("status %d, calls %d", w.Code, g.calls)
	}
	p := g.got
	if p == nil || p.Subject != "alice" || p.ClientID != "client-alice" || p.Issuer != as.Issuer() ||
		!slices.Equal(p.Scopes, []string{"mcp", "files:read"}) || p.Expiry.Unix() != c["exp"].(int64) || p.Claims["tenant"] != "acme" {
		t.Fatalf("principal %+v", p)
	}
	if g.rawSeen {
		t.Error("raw token exposed without ExposeToken")
	}
	if g.body != toolsCall {
		t.Errorf("body %q", g.body)
	}
	if id := p.Identity(); id != as.Issuer()+"\x00alice" {
		t.Errorf("identity %q", id)
	}
}

func TestExposeToken(t *testing.T) {
	as := newTestAS(t)
	g := newGuarded(t, as, func(o *auth.Options) { o.ExposeToken = true })
	if w, _ := g.do("GET", "/mcp", "Bearer "+as.Sign(as.Claims("alice", resource, "mcp")), "", ""); w.Code != 200 || !g.rawSeen {
		t.Fatalf("status %d, raw seen %v", w.Code, g.rawSeen)
	}
}

// Scope requirements per method and per name, and the three strategies.
func TestInsufficientScope(t *testing.T) {
	as := newTestAS(t)
	scopes := func(o *auth.Options) {
		o.MethodScopes = map[string][]string{"tools/call": {"tools"}, "resources/read": {"res"}}
		o.ToolScopes = map[string][]string{"delete_repo": {"repo:admin"}, "echo": nil}
		o.ResourceScopes = map[string][]string{"file:///secret/*": {"secret"}, "file:///a": {"a"}}
		o.PromptScopes = map[string][]string{"review": {"prompts:review"}}
		o.RelatedScopes = map[string][]string{"repo:admin": {"repo:write"}}
	}
	ch := func(scope, missing string) string {
		return `Bearer resource_metadata="` + prmURL + `", scope="` + scope + `", error="insufficient_scope", error_description="the request needs scope ` + missing + `"`
	}
	tests := []struct {
		name     string
		strategy auth.ScopeStrategy
		granted  []string
		body     string
		status   int
		want     string
	}{
		{"minimum", auth.ScopeMinimum, []string{"mcp", "tools", "email"}, toolsCall, 403, ch("mcp tools repo:admin", "repo:admin")},
		{"recommended", auth.ScopeRecommended, []string{"res", "email", "mcp"}, toolsCall, 403, ch("res mcp tools repo:admin", "tools repo:admin")},
		{"extended", auth.ScopeExtended, []string{"res", "email", "mcp"}, toolsCall, 403, ch("res mcp tools repo:admin repo:write", "tools repo:admin")},
		{"base scope missing", auth.ScopeMinimum, []string{"tools", "repo:admin"}, toolsCall, 403, ch("mcp tools repo:admin", "mcp")},
		{"enough", auth.ScopeMinimum, []string{"mcp", "tools", "repo:admin"}, toolsCall, 200, ""},
		{"tool without extra scope", auth.ScopeMinimum, []string{"mcp", "tools"}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, 200, ""},
		{"tools/list needs base only", auth.ScopeMinimum, []string{"mcp"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 200, ""},
		{"resource prefix", auth.ScopeMinimum, []string{"mcp", "res"}, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///secret/x"}}`, 403, ch("mcp res secret", "secret")},
		{"resource exact", auth.ScopeMinimum, []string{"mcp"}, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}`, 403, ch("mcp res a", "res a")},
		{"prompt", auth.ScopeMinimum, []string{"mcp"}, `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"review"}}`, 403, ch("mcp prompts:review", "prompts:review")},
		{"completion on a prompt", auth.ScopeMinimum, []string{"mcp"}, `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"a","value":""}}}`, 403, ch("mcp prompts:review", "prompts:review")},
		{"batch takes the union", auth.ScopeMinimum, []string{"mcp", "tools"}, `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},` + toolsCall + `]`, 403, ch("mcp tools repo:admin", "repo:admin")},
		// Members are matched by exact name, as the strict JSON-RPC codec
		// does: a differently cased duplicate cannot hide the method.
		{"case-folded member", auth.ScopeMinimum, []string{"mcp"}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"ping","params":{"name":"delete_repo"}}`, 403, ch("mcp tools repo:admin", "tools repo:admin")},
		{"escaped member names and values", auth.ScopeMinimum, []string{"mcp", "tools"}, `{"jsonrpc":"2.0","id":1,"m\u0065thod":"tools/call","params":{"n\u0061me":"delete\u005frepo"}}`, 403, ch("mcp tools repo:admin", "repo:admin")},
		{"braces inside strings", auth.ScopeMinimum, []string{"mcp", "tools"}, ` { "params" : { "arguments" : {"x":"}{][\"","y":[{}]} , "name" : "delete_repo" } , "method" : "tools/call" , "id":1,"jsonrpc":"2.0"} `, 403, ch("mcp tools repo:admin", "repo:admin")},
		// A message with a repeated member is not a JSON-RPC message
		// (jsonrpc.Decode, which the middleware reads it with, refuses it):
		// the server answers -32600 without acting on it.
		{"repeated message member goes to the handler", auth.ScopeMinimum, []string{"mcp"}, `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"echo"}}`, 200, ""},
		// A repeated member of params is refused here, as the server
		// refuses it (-32602).
		{"repeated params member", auth.ScopeMinimum, []string{"mcp", "tools"}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"delete_repo"}}`, 400, `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error="invalid_request", error_description="a member of the request appears more than once: name"`},
		{"not JSON goes to the handler", auth.ScopeMinimum, []string{"mcp"}, `{`, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGuarded(t, as, func(o *auth.Options) { scopes(o); o.Strategy = tc.strategy })
			w, _ := g.do("POST", "/mcp", "Bearer "+as.Sign(as.Claims("alice", resource, tc.granted...)), "application/json", tc.body)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d (%q)", w.Code, tc.status, w.Header().Get("WWW-Authenticate"))
			}
			if got := w.Header().Get("WWW-Authenticate"); got != tc.want {
				t.Errorf("WWW-Authenticate\n got %q\nwant %q", got, tc.want)
			}
			if (tc.status == 200) != (g.calls == 1) {
				t.Errorf("handler calls %d", g.calls)
			}
			if tc.status == 200 && g.body != tc.body {
				t.Errorf("body not restored: %q", g.body)
			}
		})
	}
}

func TestBodyLimit(t *testing.T) {
	as := newTestAS(t)
	g := newGuarded(t, as, func(o *auth.Options) {
		o.MaxBodyBytes = 64
		o.ToolScopes = map[string][]string{"x": {"x"}}
	})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"pad":"` + strings.Repeat("a", 100) + `"}}}`
	w, _ := g.do("POST", "/mcp", "Bearer "+as.Sign(as.Claims("alice", resource, "mcp")), "application/json", body)
	if w.Code != http.StatusRequestEntityTooLarge || g.calls != 0 {
		t.Fatalf("status %d calls %d", w.Code, g.calls)
	}
}

// A verifier failure that is not about the token is a 503 without a
// challenge, and the handler is not reached.
func TestVerifierUnavailable(t *testing.T) {
	m, err := auth.NewMiddleware(auth.Options{Resource: resource, Logger: slog.New(slog.DiscardHandler),
		Verifier: auth.VerifierFunc(func(ctx context.Context, tok string) (*auth.Principal, error) {
			return nil, errors.New("authorization server unreachable")
		})})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	h := m.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls++ }))
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(toolsCall))
	r.Header.Set("Authorization", "Bearer abc")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 503 || w.Header().Get("WWW-Authenticate") != "" || calls != 0 {
		t.Fatalf("status %d, challenge %q, calls %d", w.Code, w.Header().Get("WWW-Authenticate"), calls)
	}
}

func TestNewRejects(t *testing.T) {
	v := auth.VerifierFunc(func(context.Context, string) (*auth.Principal, error) { return nil, auth.ErrInvalidToken })
	for name, o := range map[string]auth.Options{
		"no verifier":  {Resource: resource},
		"no resource":  {Verifier: v},
		"fragment":     {Resource: resource + "#x", Verifier: v},
		"bad strategy": {Resource: resource, Verifier: v, Strategy: 7},
	} {
		if _, err := auth.NewMiddleware(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
