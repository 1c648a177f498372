package auth_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/auth"
)

// FuzzMiddleware: any body and Authorization value gives a well-formed
// answer; the handler is reached only with the valid token and then sees
// the body unchanged.
func FuzzMiddleware(f *testing.F) {
	f.Add("Bearer good", toolsCall)
	f.Add("Bearer good", `[{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///s/x"}}]`)
	f.Add("bearer  good", `{"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"}}}`)
	f.Add("Bearer x=", `{`)
	v := auth.VerifierFunc(func(ctx context.Context, tok string) (*auth.Principal, error) {
		if tok != "good" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.Principal{Subject: "s", Scopes: []string{"mcp", "tools"}}, nil
	})
	m, err := auth.NewMiddleware(auth.Options{Resource: resource, Verifier: v, Scopes: []string{"mcp"},
		MethodScopes: map[string][]string{"tools/call": {"tools"}}, ToolScopes: map[string][]string{"delete_repo": {"admin"}},
		ResourceScopes: map[string][]string{"file:///s/*": {"s"}}, PromptScopes: map[string][]string{"p": {"p"}}, MaxBodyBytes: 4096})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, authz, body string) {
		var seen string
		reached := false
		h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reached = true
			b, _ := io.ReadAll(r.Body)
			seen = string(b)
		}))
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		r.Header["Authorization"] = []string{authz}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch w.Code {
		case 200:
			if !reached || seen != body {
				t.Fatalf("reached %v, body %q", reached, seen)
			}
			if !strings.Contains(authz, "good") {
				t.Fatalf("accepted %q", authz)
			}
		case 400, 401, 403, 413:
			if reached {
				t.Fatal("handler reached on refusal")
			}
			if w.Code != 413 && w.Header().Get("WWW-Authenticate") == "" {
				t.Fatal("refusal without challenge")
			}
		default:
			t.Fatalf("status %d", w.Code)
		}
	})
}
