package oauth

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseChallenges(t *testing.T) {
	type P = map[string]string
	tests := []struct {
		name    string
		headers []string
		want    []Challenge
	}{
		{"no headers", nil, nil},
		{"empty header", []string{""}, nil},
		{"only separators", []string{" , ,\t"}, nil},
		{"scheme only", []string{"Bearer"}, []Challenge{{Scheme: "Bearer"}}},
		{"scheme with trailing space", []string{"Bearer  "}, []Challenge{{Scheme: "Bearer"}}},
		{"token param", []string{"Bearer realm=example"}, []Challenge{{Scheme: "Bearer", Params: P{"realm": "example"}}}},
		{"quoted param", []string{`Bearer realm="example"`}, []Challenge{{Scheme: "Bearer", Params: P{"realm": "example"}}}},
		{"empty quoted value", []string{`Bearer realm=""`}, []Challenge{{Scheme: "Bearer", Params: P{"realm": ""}}}},
		{
			"mcp 401",
			[]string{`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read files:write"`},
			[]Challenge{{Scheme: "Bearer", Params: P{
				"resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource",
				"scope":             "files:read files:write",
			}}},
		},
		{
			"rfc 6750 example",
			[]string{`Bearer realm="example", error="invalid_token", error_description="The access token expired"`},
			[]Challenge{{Scheme: "Bearer", Params: P{"realm": "example", "error": "invalid_token", "error_description": "The access token expired"}}},
		},
		{"case-insensitive names", []string{`bEARER REALM="x", Error=invalid_token`}, []Challenge{{Scheme: "bEARER", Params: P{"realm": "x", "error": "invalid_token"}}}},
		{"white space around =", []string{"Bearer realm = \"x\" ,\terror\t=\tinvalid_token"}, []Challenge{{Scheme: "Bearer", Params: P{"realm": "x", "error": "invalid_token"}}}},
		{"no space after comma", []string{`Bearer a="1",b=2`}, []Challenge{{Scheme: "Bearer", Params: P{"a": "1", "b": "2"}}}},
		{"comma inside quotes", []string{`Bearer scope="a, b", realm="x,y"`}, []Challenge{{Scheme: "Bearer", Params: P{"scope": "a, b", "realm": "x,y"}}}},
		{"escapes", []string{`Bearer d="say \"hi\" \\ \a"`}, []Challenge{{Scheme: "Bearer", Params: P{"d": `say "hi" \ a`}}}},
		{"equals inside quotes", []string{`Bearer d="a=b", e="Basic x"`}, []Challenge{{Scheme: "Bearer", Params: P{"d": "a=b", "e": "Basic x"}}}},
		{"obs-text and tab in quotes", []string{"Bearer d=\"caf\xc3\xa9\there\""}, []Challenge{{Scheme: "Bearer", Params: P{"d": "caf\xc3\xa9\there"}}}},
		{"empty list elements", []string{`, Bearer a=1,, ,b=2 ,`}, []Challenge{{Scheme: "Bearer", Params: P{"a": "1", "b": "2"}}}},
		{
			"two challenges in one header",
			[]string{`Basic realm="simple", Bearer realm="api", error="invalid_token"`},
			[]Challenge{{Scheme: "Basic", Params: P{"realm": "simple"}}, {Scheme: "Bearer", Params: P{"realm": "api", "error": "invalid_token"}}},
		},
		{
			"schemes without params",
			[]string{"Negotiate, Bearer, DPoP algs=\"ES256\""},
			[]Challenge{{Scheme: "Negotiate"}, {Scheme: "Bearer"}, {Scheme: "DPoP", Params: P{"algs": "ES256"}}},
		},
		{
			"rfc 7235 example",
			[]string{`Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`},
			[]Challenge{{Scheme: "Newauth", Params: P{"realm": "apps", "type": "1", "title": `Login to "apps"`}}, {Scheme: "Basic", Params: P{"realm": "simple"}}},
		},
		{
			"several header lines",
			[]string{`Basic realm="a"`, "", `Bearer error="insufficient_scope", scope="x"`},
			[]Challenge{{Scheme: "Basic", Params: P{"realm": "a"}}, {Scheme: "Bearer", Params: P{"error": "insufficient_scope", "scope": "x"}}},
		},
		{"token68", []string{"Negotiate YIIB9wYGKwYBBQUCoIIB7TCCAek="}, []Challenge{{Scheme: "Negotiate", Token68: "YIIB9wYGKwYBBQUCoIIB7TCCAek="}}},
		{"token68 then challenge", []string{"Negotiate abc/+==, Bearer realm=x"}, []Challenge{{Scheme: "Negotiate", Token68: "abc/+=="}, {Scheme: "Bearer", Params: P{"realm": "x"}}}},
		{"token68 trailing =", []string{"Basic abc="}, []Challenge{{Scheme: "Basic", Token68: "abc="}}},
		{"token68 with space before comma", []string{"Basic abc== ,Bearer"}, []Challenge{{Scheme: "Basic", Token68: "abc=="}, {Scheme: "Bearer"}}},
		{"token value with tchars", []string{"X a=!#$%&'*+-.^_`|~09"}, []Challenge{{Scheme: "X", Params: P{"a": "!#$%&'*+-.^_`|~09"}}}},
		{"lone word is token68", []string{"Bearer realm"}, []Challenge{{Scheme: "Bearer", Token68: "realm"}}},
		{"word and = is token68", []string{"Bearer realm= ,"}, []Challenge{{Scheme: "Bearer", Token68: "realm="}}},
		{"param after token68-like start", []string{"Basic abc=def"}, []Challenge{{Scheme: "Basic", Params: P{"abc": "def"}}}},
		{"bare word after comma is a scheme", []string{"Bearer a=1, b c"}, []Challenge{{Scheme: "Bearer", Params: P{"a": "1"}}, {Scheme: "b", Token68: "c"}}},
		{"tab after scheme", []string{"Bearer\trealm=x"}, []Challenge{{Scheme: "Bearer", Params: P{"realm": "x"}}}},
	}
	for _, tt := range tests {
		got, err := ParseChallenges(tt.headers)
		if err != nil {
			t.Errorf("%s: ParseChallenges(%q) error: %v", tt.name, tt.headers, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: ParseChallenges(%q)\n got %#v\nwant %#v", tt.name, tt.headers, got, tt.want)
		}
	}
}

func TestParseChallengesErrors(t *testing.T) {
	tests := []string{
		`=x`,
		`"Bearer"`,
		`Bearer realm= "x`,
		`Bearer realm="x`,
		`Bearer a=1, b =`,
		`Bearer realm="x\`,
		`Bearer realm="x" error="y"`,
		`Bearer realm=x y`,
		`Bearer realm="x"y`,
		`Bearer realm=x, realm=y`,
		`Bearer realm=x, REALM=y`,
		`Bearer=x`,
		`Bearer "x"`,
		`Bearer a=1, =2`,
		"Bearer realm=\"a\x01b\"",
		"Bearer realm=\"a\x7fb\"",
		"Bearer realm=\"a\\\x00b\"",
		"Bearer realm=\"a\nb\"",
		"Bearer realm=\"a\r\n b\"",
		"Bearer realm=a\n",
		`Basic abc def`,
		`Basic abc, realm=x`,
		`Basic abc==x`,
		`Bearer (x)`,
		`Bearer a=(x)`,
		`Bearer a=1 ;`,
		`Bé`,
		"Bearer \x80",
	}
	for _, h := range tests {
		got, err := ParseChallenges([]string{`Basic realm="ok"`, h})
		if err == nil {
			t.Errorf("ParseChallenges(%q) = %#v, want error", h, got)
			continue
		}
		if !errors.Is(err, ErrMalformedChallenge) {
			t.Errorf("ParseChallenges(%q) error %v does not wrap ErrMalformedChallenge", h, err)
		}
		if got != nil {
			t.Errorf("ParseChallenges(%q) returned challenges with an error", h)
		}
	}
}

func TestChallengeParam(t *testing.T) {
	c := Challenge{Scheme: "Bearer", Params: map[string]string{"resource_metadata": "u"}}
	if got := c.Param("Resource_Metadata"); got != "u" {
		t.Errorf("Param = %q, want u", got)
	}
	if got := c.Param("scope"); got != "" {
		t.Errorf("Param(scope) = %q, want empty", got)
	}
	if got := (Challenge{}).Param("x"); got != "" {
		t.Errorf("Param on empty challenge = %q", got)
	}
}

func TestParseBearerChallenge(t *testing.T) {
	tests := []struct {
		name    string
		headers []string
		want    BearerChallenge
		ok      bool
	}{
		{"none", nil, BearerChallenge{}, false},
		{"other scheme", []string{`Basic realm="x"`}, BearerChallenge{}, false},
		{"malformed", []string{`Bearer realm="x`}, BearerChallenge{}, false},
		{"bare", []string{"Bearer"}, BearerChallenge{}, true},
		{
			"all fields",
			[]string{`Basic realm="b"`, `bearer realm="r", resource_metadata="https://a/.well-known/oauth-protected-resource/mcp", scope=" a  b ", error="insufficient_scope", error_description="need b", error_uri="https://a/e", extra=1`},
			BearerChallenge{
				Realm:            "r",
				ResourceMetadata: "https://a/.well-known/oauth-protected-resource/mcp",
				Scope:            []string{"a", "b"},
				Error:            InsufficientScope,
				ErrorDescription: "need b",
				ErrorURI:         "https://a/e",
			},
			true,
		},
		{"first bearer wins", []string{`Bearer error=invalid_token, Bearer error=insufficient_scope`}, BearerChallenge{Error: InvalidToken}, true},
	}
	for _, tt := range tests {
		got, ok := ParseBearerChallenge(tt.headers)
		if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: ParseBearerChallenge = %#v, %v; want %#v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBearerChallengeString(t *testing.T) {
	tests := []struct {
		b    BearerChallenge
		want string
	}{
		{BearerChallenge{}, "Bearer"},
		{
			BearerChallenge{ResourceMetadata: "https://a/.well-known/oauth-protected-resource", Scope: []string{"x", "y"}},
			`Bearer resource_metadata="https://a/.well-known/oauth-protected-resource", scope="x y"`,
		},
		{
			BearerChallenge{ResourceMetadata: "https://a/m", Scope: []string{"files:write"}, Error: InsufficientScope, ErrorDescription: "need write"},
			`Bearer resource_metadata="https://a/m", scope="files:write", error="insufficient_scope", error_description="need write"`,
		},
		{
			BearerChallenge{ErrorURI: "https://e", ErrorDescription: "d", Error: InvalidToken, Scope: []string{"s"}, ResourceMetadata: "m", Realm: "r"},
			`Bearer realm="r", resource_metadata="m", scope="s", error="invalid_token", error_description="d", error_uri="https://e"`,
		},
		{BearerChallenge{ErrorDescription: `a "quoted" \ value`}, `Bearer error_description="a \"quoted\" \\ value"`},
		{BearerChallenge{ErrorDescription: "line\r\nbreak\x00\x7f\tend"}, "Bearer error_description=\"line  break  \tend\""},
		{BearerChallenge{Scope: []string{"", ""}}, "Bearer"},
	}
	for _, tt := range tests {
		if got := tt.b.String(); got != tt.want {
			t.Errorf("String() = %q\n want %q", got, tt.want)
		}
	}
}

func TestBearerChallengeRoundTrip(t *testing.T) {
	cases := []BearerChallenge{
		{},
		{Realm: "r"},
		{ResourceMetadata: "https://a/.well-known/oauth-protected-resource/mcp", Scope: []string{"a", "b:c"}},
		{Error: InvalidToken, ErrorDescription: `expired, "really" \ truly`, ErrorURI: "https://x/y?z=1,2"},
		{Error: InsufficientScope, Scope: []string{"files:read", "files:write"}, ResourceMetadata: "https://a/p", ErrorDescription: "caf\u00e9\tok = fine, Basic realm=x"},
	}
	for _, want := range cases {
		h := want.String()
		got, ok := ParseBearerChallenge([]string{h})
		if !ok {
			t.Errorf("ParseBearerChallenge(%q) failed", h)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip of %q\n got %#v\nwant %#v", h, got, want)
		}
	}
}

func BenchmarkParseChallenges(b *testing.B) {
	h := []string{`Basic realm="simple", Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read files:write", error="insufficient_scope", error_description="The request needs \"files:write\""`}
	b.SetBytes(int64(len(h[0])))
	for b.Loop() {
		if _, err := ParseChallenges(h); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBearerChallengeString(b *testing.B) {
	c := BearerChallenge{ResourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp", Scope: []string{"files:read", "files:write"}, Error: InsufficientScope, ErrorDescription: "needs files:write"}
	for b.Loop() {
		_ = c.String()
	}
}
