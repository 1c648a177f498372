package oauth

import (
	"errors"
	"testing"
)

func TestCanonicalResource(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		// Case of scheme and host.
		{"https://mcp.example.com", "https://mcp.example.com"},
		{"HTTPS://MCP.EXAMPLE.COM", "https://mcp.example.com"},
		{"HtTp://Example.Com/Path", "http://example.com/Path"},
		// Default and explicit ports.
		{"https://example.com:443", "https://example.com"},
		{"http://example.com:80/mcp", "http://example.com/mcp"},
		{"https://example.com:80", "https://example.com:80"},
		{"http://example.com:443", "http://example.com:443"},
		{"https://example.com:8443/mcp", "https://example.com:8443/mcp"},
		{"https://example.com:/mcp", "https://example.com/mcp"},
		{"https://example.com:0443", "https://example.com"},
		{"https://example.com:08443", "https://example.com:8443"},
		{"https://example.com:65535", "https://example.com:65535"},
		// IP literals.
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp"},
		{"http://[::1]:3000", "http://[::1]:3000"},
		{"https://[2001:DB8::1]/", "https://[2001:db8::1]"},
		// Trailing slashes.
		{"https://example.com/", "https://example.com"},
		{"https://example.com/mcp/", "https://example.com/mcp"},
		{"https://example.com/mcp//", "https://example.com/mcp"},
		{"https://example.com//", "https://example.com"},
		{"https://example.com/a//b", "https://example.com/a//b"},
		// Path case and percent-encoding.
		{"https://example.com/MCP", "https://example.com/MCP"},
		{"https://example.com/%7euser", "https://example.com/~user"},
		{"https://example.com/%41%62c", "https://example.com/Abc"},
		{"https://example.com/a%2fb", "https://example.com/a%2Fb"},
		{"https://example.com/a%2Fb", "https://example.com/a%2Fb"},
		{"https://example.com/caf%c3%a9", "https://example.com/caf%C3%A9"},
		{"https://ex%61mple.com/", "https://example.com"},
		{"https://EX%4dMPLE.com", "https://exmmple.com"},
		{"https://Caf%c3%a9.Example", "https://caf%C3%A9.example"},
		// Dot segments.
		{"https://example.com/a/./b", "https://example.com/a/b"},
		{"https://example.com/a/../b", "https://example.com/b"},
		{"https://example.com/../../a", "https://example.com/a"},
		{"https://example.com/a/%2e%2E/b", "https://example.com/b"},
		{"https://example.com/a/..", "https://example.com"},
		{"https://example.com/a/.", "https://example.com/a"},
		{"https://example.com/.well-known/x", "https://example.com/.well-known/x"},
		{"https://example.com/a..b/", "https://example.com/a..b"},
		// Query kept verbatim.
		{"https://example.com/mcp?tenant=A%2f", "https://example.com/mcp?tenant=A%2f"},
		{"https://example.com/?x=1", "https://example.com?x=1"},
		{"https://example.com?x=1", "https://example.com?x=1"},
		{"https://example.com/mcp?", "https://example.com/mcp?"},
		{"https://example.com/mcp/?a=/b/", "https://example.com/mcp?a=/b/"},
		// Sub-delimiters and other allowed characters.
		{"https://example.com/a;b=c/@d:e", "https://example.com/a;b=c/@d:e"},
	}
	for _, tt := range tests {
		got, err := CanonicalResource(tt.in)
		if err != nil {
			t.Errorf("CanonicalResource(%q) error: %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("CanonicalResource(%q) = %q, want %q", tt.in, got, tt.want)
		}
		again, err := CanonicalResource(got)
		if err != nil || again != got {
			t.Errorf("CanonicalResource(%q) = %q, %v; not idempotent", got, again, err)
		}
	}
}

func TestCanonicalResourceErrors(t *testing.T) {
	tests := []string{
		"",
		"example.com",
		"example.com/mcp",
		"/mcp",
		"//example.com/mcp",
		"mcp.example.com:443",
		"ftp://example.com",
		"ws://example.com",
		"urn:example:mcp",
		"https:example.com",
		"https:/example.com",
		"https://",
		"https:///mcp",
		"https://:443/mcp",
		"https://example.com#",
		"https://example.com/#frag",
		"https://example.com/mcp#frag",
		"https://example.com/mcp?x#frag",
		"https://user@example.com",
		"https://user:pass@example.com/mcp",
		"https://@example.com",
		"https://example.com:0",
		"https://example.com:65536",
		"https://example.com:99999999999999999999",
		"https://example.com:44a",
		"https://example.com:443:1",
		"https://exa mple.com",
		"https://example.com/a b",
		"https://example.com/\x00",
		"https://example.com/\n",
		"https://example.com/caf\u00e9",
		"https://bücher.example",
		"https://example.com/%",
		"https://example.com/%4",
		"https://example.com/%zz",
		"https://example.com/a|b",
		"https://example.com/a\\b",
		"https://example.com/{x}",
		"https://example.com/a\"b",
		"https://example.com/a^b",
		"https://example.com/?a<b",
		"https://[::1",
		"https://[::1]x",
		"https://[127.0.0.1]",
		"https://[fe80::1%25en0]",
		"https://[v1.x]",
		"https://exa[mple.com",
		"https://example.com/a[b]",
		"1https://example.com",
		"ht!tp://example.com",
	}
	for _, in := range tests {
		got, err := CanonicalResource(in)
		if err == nil {
			t.Errorf("CanonicalResource(%q) = %q, want error", in, got)
			continue
		}
		if !errors.Is(err, ErrInvalidURI) {
			t.Errorf("CanonicalResource(%q) error %v does not wrap ErrInvalidURI", in, err)
		}
	}
}

func TestSameResource(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"https://example.com/mcp", "https://example.com/mcp", true},
		{"https://example.com/mcp", "HTTPS://EXAMPLE.COM/mcp/", true},
		{"https://example.com:443/mcp", "https://example.com/mcp", true},
		{"https://example.com/", "https://example.com", true},
		{"https://example.com/%7e", "https://example.com/~", true},
		{"https://example.com/mcp", "https://example.com/MCP", false},
		{"https://example.com/mcp", "http://example.com/mcp", false},
		{"https://example.com/mcp", "https://example.com:8443/mcp", false},
		{"https://example.com/mcp", "https://example.com/mcp?x", false},
		{"https://example.com/mcp", "https://example.org/mcp", false},
		{"https://example.com/mcp#a", "https://example.com/mcp#a", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := SameResource(tt.a, tt.b); got != tt.want {
			t.Errorf("SameResource(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := SameResource(tt.b, tt.a); got != tt.want {
			t.Errorf("SameResource(%q, %q) = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestRemoveDotSegments(t *testing.T) {
	// Examples from RFC 3986 §5.2.4 and §5.4.
	tests := []struct{ in, want string }{
		{"/a/b/c/./../../g", "/a/g"},
		{"mid/content=5/../6", "mid/6"},
		{"/b/c/./g", "/b/c/g"},
		{"/b/c/../g", "/b/g"},
		{"/b/c/../../g", "/g"},
		{"/b/c/../../../g", "/g"},
		{"/b/c/g.", "/b/c/g."},
		{"/b/c/.g", "/b/c/.g"},
		{"/b/c/g..", "/b/c/g.."},
		{"/b/c/..g", "/b/c/..g"},
		{"/b/c/./../g", "/b/g"},
		{"/b/c/g/./h", "/b/c/g/h"},
		{"/b/c/g/../h", "/b/c/h"},
		{"/b/c/.", "/b/c/"},
		{"/b/c/..", "/b/"},
		{"/.", "/"},
		{"/..", "/"},
		{".", ""},
		{"..", ""},
		{"../a", "a"},
		{"./a", "a"},
		{"", ""},
		{"/", "/"},
	}
	for _, tt := range tests {
		if got := removeDotSegments(tt.in); got != tt.want {
			t.Errorf("removeDotSegments(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzCanonicalResource(f *testing.F) {
	for _, s := range []string{
		"https://example.com/mcp/", "HTTP://A:80/%7e/../x?q#f", "https://[::1]:0443/a/./b",
		"https://u@h", "https://h/%zz", "http://h:/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := CanonicalResource(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidURI) {
				t.Fatalf("error %v does not wrap ErrInvalidURI", err)
			}
			return
		}
		again, err := CanonicalResource(c)
		if err != nil || again != c {
			t.Fatalf("CanonicalResource(%q) = %q; again = %q, %v", s, c, again, err)
		}
		if !SameResource(s, c) {
			t.Fatalf("SameResource(%q, %q) = false", s, c)
		}
	})
}

func BenchmarkCanonicalResource(b *testing.B) {
	for b.Loop() {
		if _, err := CanonicalResource("HTTPS://MCP.Example.com:443/tenants/%7eabc/./mcp/"); err != nil {
			b.Fatal(err)
		}
	}
}
