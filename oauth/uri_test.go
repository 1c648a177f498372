package oauth

import "testing"

func TestSplitURI(t *testing.T) {
	tests := []struct {
		in   string
		want uriParts
	}{
		{"https://a", uriParts{scheme: "https", hasAuthority: true, host: "a"}},
		{"HTTPS://u:p@A.b:8443/x/y?q=1&r#f/?", uriParts{
			scheme: "HTTPS", hasAuthority: true, hasUserinfo: true, host: "A.b", hasPort: true, port: "8443",
			path: "/x/y", hasQuery: true, query: "q=1&r", hasFragment: true, fragment: "f/?",
		}},
		{"http://[::1]:/p", uriParts{scheme: "http", hasAuthority: true, host: "[::1]", hasPort: true, path: "/p"}},
		{"urn:example:a", uriParts{scheme: "urn", path: "example:a"}},
		{"com.example.app:/cb", uriParts{scheme: "com.example.app", path: "/cb"}},
		{"file:///etc", uriParts{scheme: "file", hasAuthority: true, path: "/etc"}},
		{"https://a?#", uriParts{scheme: "https", hasAuthority: true, host: "a", hasQuery: true, hasFragment: true}},
		{"x+y-z.w:", uriParts{scheme: "x+y-z.w"}},
		{"https://a/%2f%C3%a9", uriParts{scheme: "https", hasAuthority: true, host: "a", path: "/%2f%C3%a9"}},
	}
	for _, tt := range tests {
		got, err := splitURI(tt.in)
		if err != nil {
			t.Errorf("splitURI(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("splitURI(%q) =\n%+v\nwant\n%+v", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{
		"", ":x", "1a:b", "a_b:c", "/a:b", "?a:b", "#a:b", "nocolon",
		"https://a/b#c#d", "https://[u]@a/", "https://a/?x[1]", "https://a/#f[1]",
		"https://a/%", "https://a/%g0", "https://a b", "https://a:b", "https://a:1:2",
		"https://[::1", "https://[::1]:x", "https://[::1]a", "https://[zz]", "https://a]b",
		"https://a/\x7f", "https://a/\u00e9", "https://a/`",
	} {
		if got, err := splitURI(bad); err == nil {
			t.Errorf("splitURI(%q) = %+v, want error", bad, got)
		}
	}
}

func TestNormalizePercent(t *testing.T) {
	tests := map[string]string{
		"":             "",
		"abc":          "abc",
		"%41%7a%7E":    "Az~",
		"%2f%2F%c3%a9": "%2F%2F%C3%A9",
		"%2D%2E%5F":    "-._",
		"a%20b":        "a%20b",
	}
	for in, want := range tests {
		if got := normalizePercent(in); got != want {
			t.Errorf("normalizePercent(%q) = %q, want %q", in, got, want)
		}
	}
}
