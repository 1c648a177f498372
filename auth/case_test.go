package auth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// caseServer is a real MCP server behind the real middleware, where one tool,
// one prompt and one resource need a scope the test token lacks. Every
// handler records the name or URI it was called for.
type caseServer struct {
	h    http.Handler
	mu   sync.Mutex
	seen []string // "tool:fetch", "prompt:secret", "resource:file:///secret", "complete:..."
}

func (g *caseServer) record(s string) {
	g.mu.Lock()
	g.seen = append(g.seen, s)
	g.mu.Unlock()
}

func (g *caseServer) take() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.seen
	g.seen = nil
	return s
}

const (
	secretTool     = "fetch"
	secretPrompt   = "secret"
	secretResource = "file:///secret"
)

func newCaseServer(t testing.TB) *caseServer {
	g := &caseServer{}
	s := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, _ *mcp.ServerSession, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
			switch r := p.Ref.(type) {
			case *mcp.PromptReference:
				g.record("complete:prompt:" + r.Name)
			case *mcp.ResourceTemplateReference:
				g.record("complete:resource:" + r.URI)
			}
			return &mcp.CompleteResult{}, nil
		},
	})
	for _, name := range []string{"echo", secretTool} {
		err := s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(_ context.Context, _ *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				g.record("tool:" + p.Name)
				return &mcp.CallToolResult{}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"open", secretPrompt} {
		err := s.AddPrompt(&mcp.Prompt{Name: name}, func(_ context.Context, _ *mcp.ServerSession, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
			g.record("prompt:" + p.Name)
			return &mcp.GetPromptResult{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, uri := range []string{"file:///public", secretResource} {
		err := s.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(_ context.Context, _ *mcp.ServerSession, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
			g.record("resource:" + p.URI)
			return &mcp.ReadResourceResult{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	v := auth.VerifierFunc(func(context.Context, string) (*auth.Principal, error) {
		return &auth.Principal{Subject: "s", Scopes: []string{"mcp"}}, nil
	})
	m, err := auth.New(auth.Options{Resource: resource, Verifier: v, Scopes: []string{"mcp"},
		ToolScopes:     map[string][]string{secretTool: {"tool:" + secretTool}},
		PromptScopes:   map[string][]string{secretPrompt: {"prompt:" + secretPrompt}},
		ResourceScopes: map[string][]string{secretResource: {"resource:secret"}}})
	if err != nil {
		t.Fatal(err)
	}
	g.h = m.Wrap(mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s },
		&mcphttp.Options{Stateless: true, JSONResponse: true}))
	return g
}

// do posts body with a token holding only "mcp" and returns the status and
// the handlers that ran.
func (g *caseServer) do(body string) (int, string, []string) {
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer t")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	w := httptest.NewRecorder()
	g.h.ServeHTTP(w, r)
	return w.Code, w.Body.String(), g.take()
}

// TestScopeCaseSpellings sends, for every method whose params the
// middleware reads to decide scopes, the protected name or URI under every
// spelling of its member (case variants, repeats, a null then a case
// variant, escapes), and checks that the middleware and the server agree:
// either the request is refused (403 for the protected target, 400 for a
// repeated member) or the handler that runs is one the token may run
// (issue #16 item 1).
func TestScopeCaseSpellings(t *testing.T) {
	g := newCaseServer(t)
	type method struct {
		name   string
		params string // %s: the members naming the target
		key    string // the member's name
		public string
		secret string
	}
	bigArgs := `"arguments":{"pad":"` + strings.Repeat("x", 2048) + `"},`
	methods := []method{
		{"tools/call", `{%s}`, "name", "echo", secretTool},
		{"tools/call", `{"arguments":{},%s}`, "name", "echo", secretTool},
		{"tools/call", `{` + bigArgs + `%s}`, "name", "echo", secretTool},
		{"prompts/get", `{%s}`, "name", "open", secretPrompt},
		{"resources/read", `{%s}`, "uri", "file:///public", secretResource},
		// No handler shows what a subscription was for: the statuses say
		// that the middleware and the server read the same member.
		{"resources/subscribe", `{%s}`, "uri", "file:///public", secretResource},
		{"resources/unsubscribe", `{%s}`, "uri", "file:///public", secretResource},
		{"completion/complete", `{"argument":{"name":"a","value":""},"ref":{"type":"ref/prompt",%s}}`, "name", "open", secretPrompt},
		{"completion/complete", `{"argument":{"name":"a","value":""},"ref":{"type":"ref/resource",%s}}`, "uri", "file:///public", secretResource},
		// The member above the target, and the ref's type, spelled in other cases.
		{"completion/complete", `{"argument":{"name":"a","value":""},%s}`, "ref", `{"type":"ref/prompt","name":"open"}`, `{"type":"ref/prompt","name":"` + secretPrompt + `"}`},
		{"completion/complete", `{"argument":{"name":"a","value":""},"ref":{%s,"name":"` + secretPrompt + `"}}`, "type", `"ref/other"`, `"ref/prompt"`},
	}
	q := func(s string) string {
		if strings.HasPrefix(s, "{") || strings.HasPrefix(s, `"`) {
			return s
		}
		return `"` + s + `"`
	}
	type spelling struct {
		name    string
		members func(key, pub, sec string) string
		want    int // 0: 200 and no protected handler; else the status
	}
	upper, title := strings.ToUpper, func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
	mixed := func(s string) string { return s[:1] + strings.ToUpper(s[1:2]) + s[2:] }
	spellings := []spelling{
		{"exact", func(k, p, s string) string { return fmt.Sprintf(`"%s":%s`, k, s) }, 403},
		{"escaped exact", func(k, p, s string) string { return fmt.Sprintf(`"\u%04x%s":%s`, k[0], k[1:], s) }, 403},
		{"Title", func(k, p, s string) string { return fmt.Sprintf(`"%s":%s`, title(k), s) }, 0},
		{"UPPER", func(k, p, s string) string { return fmt.Sprintf(`"%s":%s`, upper(k), s) }, 0},
		{"mIxed", func(k, p, s string) string { return fmt.Sprintf(`"%s":%s`, mixed(k), s) }, 0},
		{"escaped Title", func(k, p, s string) string { return fmt.Sprintf(`"\u%04x%s":%s`, upper(k)[0], k[1:], s) }, 0},
		{"exact then UPPER", func(k, p, s string) string { return fmt.Sprintf(`"%s":%s,"%s":%s`, k, p, upper(k), s) }, 0},
		{"UPPER then exact", func(k, p, s string) string { return fmt.Sprintf(`"%s":%s,"%s":%s`, upper(k), s, k, p) }, 0},
		{"null then Title", func(k, p, s string) string { return fmt.Sprintf(`"%s":null,"%s":%s`, k, title(k), s) }, 0},
		{"repeated", func(k, p, s string) string { return fmt.Sprintf(`"%s":%s,"%s":%s`, k, p, k, s) }, 400},
		{"repeated, escaped", func(k, p, s string) string { return fmt.Sprintf(`"%s":%s,"\u%04x%s":%s`, k, p, k[0], k[1:], s) }, 400},
		{"repeated secret first", func(k, p, s string) string { return fmt.Sprintf(`"%s":%s,"%s":%s`, k, s, k, p) }, 400},
	}
	protected := func(seen string) bool {
		return strings.HasSuffix(seen, ":"+secretTool) || strings.HasSuffix(seen, ":"+secretPrompt) || strings.HasSuffix(seen, ":"+secretResource)
	}
	for _, m := range methods {
		for _, sp := range spellings {
			params := fmt.Sprintf(m.params, sp.members(m.key, q(m.public), q(m.secret)))
			body := `{"jsonrpc":"2.0","id":1,"method":"` + m.name + `","params":` + params + `}`
			name := m.name + " " + m.key + " " + sp.name
			for _, batch := range []bool{false, true} {
				b := body
				if batch {
					b = "[" + body + "]"
				}
				code, resp, seen := g.do(b)
				for _, s := range seen {
					if protected(s) {
						t.Errorf("%s (batch %v): the handler ran for %s with a token without its scope (HTTP %d)", name, batch, s, code)
					}
				}
				if batch && code == 400 && sp.want == 0 {
					continue // a batch is for 2025-03-26 sessions only
				}
				if batch {
					continue
				}
				switch {
				case sp.want == 0 && code != 200:
					t.Errorf("%s: HTTP %d %s, want 200", name, code, resp)
				case sp.want != 0 && code != sp.want:
					t.Errorf("%s: HTTP %d %s, want %d", name, code, resp, sp.want)
				}
			}
		}
	}
	// The controls: the public targets run.
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"open"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///public"}}`,
	} {
		if code, resp, seen := g.do(body); code != 200 || len(seen) != 1 {
			t.Errorf("%s: HTTP %d %s, handlers %v", body, code, resp, seen)
		}
	}
}
