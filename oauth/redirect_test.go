package oauth

import (
	"errors"
	"testing"
)

func TestRedirectURIMatches(t *testing.T) {
	tests := []struct {
		registered, presented string
		want                  bool
	}{
		{"https://app.example.com/cb", "https://app.example.com/cb", true},
		{"https://app.example.com/cb?x=1", "https://app.example.com/cb?x=1", true},
		{"http://localhost:3000/cb", "http://localhost:3000/cb", true},
		// Exact matching: no normalization at all.
		{"https://app.example.com/cb", "https://app.example.com/cb/", false},
		{"https://app.example.com/cb/", "https://app.example.com/cb", false},
		{"https://app.example.com/cb", "https://APP.example.com/cb", false},
		{"https://app.example.com/cb", "HTTPS://app.example.com/cb", false},
		{"https://app.example.com/cb", "https://app.example.com/CB", false},
		{"https://app.example.com/cb", "https://app.example.com:443/cb", false},
		{"https://app.example.com/~cb", "https://app.example.com/%7Ecb", false},
		{"https://app.example.com/cb", "https://app.example.com/cb?x=1", false},
		{"https://app.example.com/cb", "https://app.example.com/cb?", false},
		{"https://app.example.com/cb", "https://app.example.com/cb/../cb", false},
		{"https://app.example.com:8443/cb", "https://app.example.com:9443/cb", false},
		// Loopback IP literals: any port.
		{"http://127.0.0.1/cb", "http://127.0.0.1:51234/cb", true},
		{"http://127.0.0.1:8080/cb", "http://127.0.0.1:9090/cb", true},
		{"http://127.0.0.1:8080/cb", "http://127.0.0.1/cb", true},
		{"http://[::1]/cb", "http://[::1]:60000/cb", true},
		{"http://[::1]:1/cb?a=b", "http://[::1]:2/cb?a=b", true},
		{"http://127.0.0.1/cb", "http://127.0.0.1:51234/cb/", false},
		{"http://127.0.0.1/cb", "http://127.0.0.1:51234/CB", false},
		{"http://127.0.0.1/cb", "http://127.0.0.1:51234/cb?x", false},
		{"http://127.0.0.1/cb", "http://[::1]:51234/cb", false},
		{"http://127.0.0.1/cb", "https://127.0.0.1:51234/cb", false},
		{"https://127.0.0.1/cb", "https://127.0.0.1:51234/cb", false},
		{"http://127.0.0.1/cb", "HTTP://127.0.0.1:51234/cb", false},
		{"http://127.0.0.2/cb", "http://127.0.0.2:51234/cb", false},
		{"http://127.0.0.1/cb", "http://u@127.0.0.1:51234/cb", false},
		{"http://[0:0:0:0:0:0:0:1]/cb", "http://[::1]:5/cb", false},
		// localhost: exact only.
		{"http://localhost/cb", "http://localhost:51234/cb", false},
		{"http://localhost:3000/cb", "http://localhost:3001/cb", false},
		// Invalid or fragment-bearing URIs never match.
		{"https://app.example.com/cb#x", "https://app.example.com/cb#x", false},
		{"http://127.0.0.1/cb#x", "http://127.0.0.1:5/cb#x", false},
		{"", "", false},
		{"https://app.example.com/a b", "https://app.example.com/a b", false},
		{"not a uri", "https://app.example.com/cb", false},
	}
	for _, tt := range tests {
		if got := RedirectURIMatches(tt.registered, tt.presented); got != tt.want {
			t.Errorf("RedirectURIMatches(%q, %q) = %v, want %v", tt.registered, tt.presented, got, tt.want)
		}
	}
}

func TestIsLoopbackRedirect(t *testing.T) {
	tests := map[string]bool{
		"http://127.0.0.1/cb":             true,
		"http://127.0.0.1:8080/cb":        true,
		"http://[::1]:8080/cb":            true,
		"http://[0:0:0:0:0:0:0:1]/cb":     true,
		"http://localhost:3000/callback":  true,
		"http://LOCALHOST/cb":             true,
		"HTTP://127.0.0.1/cb":             true,
		"https://127.0.0.1/cb":            false,
		"https://localhost/cb":            false,
		"http://127.0.0.2/cb":             false,
		"http://[::ffff:127.0.0.1]/cb":    false,
		"http://localhost.example.com/cb": false,
		"http://localhost./cb":            false,
		"http://example.com/cb":           false,
		"http://user@127.0.0.1/cb":        false,
		"http://127.0.0.1/cb#f":           false,
		"http:/127.0.0.1/cb":              false,
		"":                                false,
	}
	for uri, want := range tests {
		if got := IsLoopbackRedirect(uri); got != want {
			t.Errorf("IsLoopbackRedirect(%q) = %v, want %v", uri, got, want)
		}
	}
}

func TestValidateRedirectURI(t *testing.T) {
	tests := map[string]bool{
		"https://app.example.com/cb":      true,
		"https://app.example.com/cb?x=1":  true,
		"https://app.example.com":         true,
		"http://127.0.0.1:8080/cb":        true,
		"http://[::1]/cb":                 true,
		"http://localhost:3000/cb":        true,
		"http://app.example.com/cb":       false,
		"https://app.example.com/cb#x":    false,
		"https://app.example.com/cb#":     false,
		"https://user@app.example.com/cb": false,
		"https:///cb":                     false,
		"https:cb":                        false,
		"com.example.app:/oauth2redirect": false,
		"javascript:alert(1)":             false,
		"data:text/html,x":                false,
		"file:///etc/passwd":              false,
		"/cb":                             false,
		"":                                false,
		"https://app.example.com/c b":     false,
		"https://app.example.com/\u00e9":  false,
		"ftp://app.example.com/cb":        false,
		"HTTPS://app.example.com/cb":      true,
	}
	for uri, ok := range tests {
		err := ValidateRedirectURI(uri)
		if (err == nil) != ok {
			t.Errorf("ValidateRedirectURI(%q) = %v, want ok=%v", uri, err, ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidURI) {
			t.Errorf("ValidateRedirectURI(%q) error %v does not wrap ErrInvalidURI", uri, err)
		}
	}
}

func BenchmarkRedirectURIMatches(b *testing.B) {
	for b.Loop() {
		if !RedirectURIMatches("http://127.0.0.1/callback", "http://127.0.0.1:51234/callback") {
			b.Fatal("no match")
		}
	}
}
