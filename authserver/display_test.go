package authserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/time/rate"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// unlimitedRegistration lets a test register as often as it likes.
func unlimitedRegistration(c *authserver.Config) { c.RegistrationRate = rate.Inf }

// register posts a registration body and decodes the answer.
func (a *testAS) register(t *testing.T, body string) (int, map[string]any) {
	t.Helper()
	resp, err := a.http.Post(a.ts.URL+"/register", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return resp.StatusCode, m
}

// TestRegistrationDisplayStrings checks #17.12: a string that would hide or
// disguise what the consent page shows is refused in every member, with
// invalid_client_metadata (invalid_redirect_uri for redirect_uris) and a
// description naming the member and the character; ordinary text in any
// script is accepted.
func TestRegistrationDisplayStrings(t *testing.T) {
	a := newAS(t, unlimitedRegistration, nil)
	const base = `"redirect_uris":["https://a.test/cb"]`
	tests := []struct {
		name, body string
		code       oauth.ErrorCode // "" for accepted
		inDesc     string
	}{
		{"RLO in client_name", `{"client_name":"Good\u202Egpj.exe",` + base + `}`, oauth.InvalidClientMetadata, "client_name: contains U+202E"},
		{"NUL in client_name", `{"client_name":"Good\u0000Evil",` + base + `}`, oauth.InvalidClientMetadata, "U+0000"},
		{"newline in client_name", `{"client_name":"Good\nEvil",` + base + `}`, oauth.InvalidClientMetadata, "U+000A"},
		{"tab in client_name", `{"client_name":"Good\tEvil",` + base + `}`, oauth.InvalidClientMetadata, "U+0009"},
		{"C1 control", `{"client_name":"Good\u0085",` + base + `}`, oauth.InvalidClientMetadata, "U+0085"},
		{"DEL", `{"client_name":"Good\u007f",` + base + `}`, oauth.InvalidClientMetadata, "U+007F"},
		{"LRE", `{"client_name":"\u202AGood",` + base + `}`, oauth.InvalidClientMetadata, "U+202A"},
		{"RLI isolate", `{"client_name":"\u2067Good\u2069",` + base + `}`, oauth.InvalidClientMetadata, "U+2067"},
		{"RLM", `{"client_name":"Good\u200F",` + base + `}`, oauth.InvalidClientMetadata, "U+200F"},
		{"ALM", `{"client_name":"Good\u061C",` + base + `}`, oauth.InvalidClientMetadata, "U+061C"},
		{"zero width space", `{"client_name":"Go\u200Bogle",` + base + `}`, oauth.InvalidClientMetadata, "U+200B"},
		{"BOM", `{"client_name":"\uFEFFGoogle",` + base + `}`, oauth.InvalidClientMetadata, "U+FEFF"},
		{"line separator", `{"client_name":"Good\u2028Evil",` + base + `}`, oauth.InvalidClientMetadata, "U+2028"},
		{"tag character", `{"client_name":"Good\uDB40\uDC41",` + base + `}`, oauth.InvalidClientMetadata, "U+E0041"},
		{"noncharacter", `{"client_name":"Good\uFFFF",` + base + `}`, oauth.InvalidClientMetadata, "U+FFFF"},
		{"software_id", `{"client_name":"x","software_id":"a\u202Eb",` + base + `}`, oauth.InvalidClientMetadata, "software_id"},
		{"software_version", `{"client_name":"x","software_version":"1\u0000",` + base + `}`, oauth.InvalidClientMetadata, "software_version"},
		{"contacts", `{"client_name":"x","contacts":["ops@a.test","a\u202E@b.test"],` + base + `}`, oauth.InvalidClientMetadata, "contacts"},
		{"client_uri path", `{"client_name":"x","client_uri":"https://a.test/\u202Egnp",` + base + `}`, oauth.InvalidClientMetadata, "client_uri"},
		{"logo_uri path", `{"client_name":"x","logo_uri":"https://a.test/\u202Egnp",` + base + `}`, oauth.InvalidClientMetadata, "logo_uri"},
		{"tos_uri path", `{"client_name":"x","tos_uri":"https://a.test/\u202E",` + base + `}`, oauth.InvalidClientMetadata, "tos_uri"},
		{"policy_uri path", `{"client_name":"x","policy_uri":"https://a.test/\u202E",` + base + `}`, oauth.InvalidClientMetadata, "policy_uri"},
		{"redirect_uris path", `{"client_name":"x","redirect_uris":["https://a.test/\u202Ebc"]}`, oauth.InvalidRedirectURI, "redirect_uris"},
		{"localized client_name", `{"client_name":"x","client_name#fr":"Bon\u202E",` + base + `}`, oauth.InvalidClientMetadata, `"client_name#fr": contains U+202E`},
		{"extra array", `{"client_name":"x","post_logout_redirect_uris":["https://a.test/\u2066"],` + base + `}`, oauth.InvalidClientMetadata, "post_logout_redirect_uris"},
		{"extra member name", `{"client_name":"x","a\u202Eb":1,` + base + `}`, oauth.InvalidClientMetadata, "the member name contains U+202E"},
		{"scope not RFC 6749", `{"client_name":"x","scope":"mcp:read \u00e9",` + base + `}`, oauth.InvalidClientMetadata, "scope token"},
		{"accents and symbols", `{"client_name":"Café ☕ Ünïcødé",` + base + `}`, "", ""},
		{"Arabic, right to left by itself", `{"client_name":"تطبيق البريد",` + base + `}`, "", ""},
		{"Persian with ZWNJ", `{"client_name":"می\u200Cخواهم",` + base + `}`, "", ""},
		{"emoji with ZWJ", `{"client_name":"👩\u200D💻 Dev",` + base + `}`, "", ""},
		{"CJK", `{"client_name":"メールアプリ","client_name#ja":"メール",` + base + `}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, m := a.register(t, tt.body)
			if tt.code == "" {
				if st != http.StatusCreated {
					t.Fatalf("refused: %d %v", st, m)
				}
				return
			}
			wantError(t, st, m, http.StatusBadRequest, tt.code)
			if d, _ := m["error_description"].(string); !strings.Contains(d, tt.inDesc) {
				t.Fatalf("description %q lacks %q", d, tt.inDesc)
			}
		})
	}
}

// TestRegistrationTrailingBytes checks #17.12: the registration body is
// one JSON object and nothing else (white space aside).
func TestRegistrationTrailingBytes(t *testing.T) {
	a := newAS(t, unlimitedRegistration, nil)
	const obj = `{"client_name":"x","redirect_uris":["https://a.test/cb"]}`
	for _, tt := range []struct {
		name, body string
		ok         bool
	}{
		{"object alone", obj, true},
		{"white space after", obj + " \r\n\t", true},
		{"a second object", obj + `{"client_name":"y"}`, false},
		{"garbage", obj + "garbage", false},
		{"a comma", obj + ",", false},
		{"a NUL", obj + "\x00", false},
		{"an array", `[` + obj + `]`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, m := a.register(t, tt.body)
			if tt.ok {
				if st != http.StatusCreated {
					t.Fatalf("refused: %d %v", st, m)
				}
				return
			}
			wantError(t, st, m, http.StatusBadRequest, oauth.InvalidClientMetadata)
		})
	}
}

// TestCIMDDisplayStrings checks #17.12 for Client ID Metadata Documents:
// a document whose strings would disguise the consent page is refused.
func TestCIMDDisplayStrings(t *testing.T) {
	ca := newCA(t)
	var base string
	names := map[string]string{
		"/rlo.json":   "Good\u202Egpj.exe",
		"/nul.json":   "Good\x00Evil",
		"/fsi.json":   "\u2068Good",
		"/plain.json": "Plain App",
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := names[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(map[string]any{"client_id": base + r.URL.Path, "client_name": name,
			"redirect_uris": []string{loopbackRedirect}, "token_endpoint_auth_method": "none"})
		_, _ = w.Write(b)
	})
	ts := ca.tlsServer(t, h, "client.test")
	ts.StartTLS()
	t.Cleanup(ts.Close)
	base = "https://client.test:" + ts.URL[strings.LastIndex(ts.URL, ":")+1:]
	a := cimdAS(t, ca, true, "127.0.0.1", nil)
	for _, p := range []string{"/rlo.json", "/nul.json", "/fsi.json"} {
		t.Run(p, func(t *testing.T) {
			resp := a.authorize(t, authParams(base+p, loopbackRedirect, verifier))
			wantPageError(t, resp, http.StatusBadRequest, oauth.InvalidRequest)
		})
	}
	t.Run("plain", func(t *testing.T) { a.code(t, base+"/plain.json", loopbackRedirect, verifier) })
}

// TestPagesShowOdditiesVisibly checks #17.12: what reaches a page
// without the registration checks (a client the embedding program
// stored, a user name) is shown with its control and
// text-direction characters escaped, not obeyed.
func TestPagesShowOdditiesVisibly(t *testing.T) {
	a := newAS(t, func(c *authserver.Config) { c.DevUser = "al\u202Eice" }, nil)
	if err := a.store.CreateClient(t.Context(), authserver.Client{Metadata: oauth.ClientMetadata{
		ClientID: "odd", ClientName: "Good\u202Egpj.exe\x00\u2066 C:\\u202E", RedirectURIs: []string{loopbackRedirect},
		TokenEndpointAuthMethod: oauth.AuthMethodNone}}); err != nil {
		t.Fatal(err)
	}
	resp := a.authorize(t, authParams("odd", loopbackRedirect, verifier))
	b, _ := io.ReadAll(resp.Body)
	page := string(b)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, page)
	}
	for _, bad := range []string{"\u202E", "\x00", "\u2066", "\ufffd"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page carries %+q", bad)
		}
	}
	for _, want := range []string{`Good\u202Egpj.exe\u0000\u2066 C:\\u202E</h1>`, `<title>Authorize Good\u202E`, `id="who">al\u202Eice<`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
}

// TestAuthorizeScopeSyntax checks #17.12 at the authorization endpoint:
// with no scope list configured, a requested scope token outside RFC 6749
// §3.3 (which the consent page would show) is refused with invalid_scope.
func TestAuthorizeScopeSyntax(t *testing.T) {
	a := newAS(t, func(c *authserver.Config) { c.Scopes = nil }, nil)
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	for _, scope := range []string{"read \u202Eetirw", "a\x00", "caf\u00e9", `q"uote`} {
		t.Run(fmt.Sprintf("%+q", scope), func(t *testing.T) {
			q := authParams("pub", loopbackRedirect, verifier)
			q.Set("scope", scope)
			got := redirectParams(t, a.authorize(t, q), loopbackRedirect)
			if got.Get("error") != string(oauth.InvalidScope) {
				t.Fatalf("answer %v", got)
			}
		})
	}
	q := authParams("pub", loopbackRedirect, verifier)
	q.Set("scope", "any:thing else")
	if resp := a.authorize(t, q); resp.StatusCode != http.StatusOK {
		t.Fatalf("a valid scope was refused: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}
