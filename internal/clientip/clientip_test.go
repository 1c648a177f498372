package clientip

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestAddr(t *testing.T) {
	proxies, err := ParsePrefixes([]string{"10.0.0.0/8", "2001:db8:ffff::1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		header  string // Resolver.Header
		trusted bool   // Resolver.Trusted = proxies
		remote  string
		hdrs    map[string][]string
		want    string
	}{
		{"no proxy configured ignores XFF", "", false, "198.51.100.7:5000", map[string][]string{"X-Forwarded-For": {"1.2.3.4"}}, "198.51.100.7"},
		{"untrusted peer ignores XFF", "", true, "198.51.100.7:5000", map[string][]string{"X-Forwarded-For": {"1.2.3.4"}}, "198.51.100.7"},
		{"trusted peer, one hop", "", true, "10.1.1.1:5000", map[string][]string{"X-Forwarded-For": {"203.0.113.9"}}, "203.0.113.9"},
		{"client-forged left entries are skipped", "", true, "10.1.1.1:5000", map[string][]string{"X-Forwarded-For": {"6.6.6.6, 203.0.113.9"}}, "203.0.113.9"},
		{"chain of trusted proxies", "", true, "10.1.1.1:5000", map[string][]string{"X-Forwarded-For": {"6.6.6.6, 203.0.113.9, 10.2.2.2", "10.3.3.3"}}, "203.0.113.9"},
		{"all hops trusted gives the leftmost", "", true, "10.1.1.1:5000", map[string][]string{"X-Forwarded-For": {"10.9.9.9, 10.2.2.2"}}, "10.9.9.9"},
		{"garbage hop stops at the last trusted", "", true, "10.1.1.1:5000", map[string][]string{"X-Forwarded-For": {"203.0.113.9, unknown"}}, "10.1.1.1"},
		{"no header gives the peer", "", true, "10.1.1.1:5000", nil, "10.1.1.1"},
		{"IPv6 peer trusted, mapped client", "", true, "[2001:db8:ffff::1]:443", map[string][]string{"X-Forwarded-For": {"::ffff:203.0.113.9"}}, "203.0.113.9"},
		{"XFF with port", "", true, "10.1.1.1:5000", map[string][]string{"X-Forwarded-For": {"203.0.113.9:1234"}}, "203.0.113.9"},
		{"Forwarded ignored when XFF is the header", "", true, "10.1.1.1:5000", map[string][]string{"Forwarded": {"for=1.2.3.4"}}, "10.1.1.1"},
		{"Forwarded read", Forwarded, true, "10.1.1.1:5000", map[string][]string{"Forwarded": {`for=6.6.6.6, for="[2001:db8::7]:4711";proto=https`}}, "2001:db8::7"},
		{"Forwarded obfuscated", Forwarded, true, "10.1.1.1:5000", map[string][]string{"Forwarded": {`for=_hidden`}}, "10.1.1.1"},
		{"Forwarded by= only", Forwarded, true, "10.1.1.1:5000", map[string][]string{"Forwarded": {`by=10.1.1.1`}}, "10.1.1.1"},
		{"XFF ignored when Forwarded is the header", Forwarded, true, "10.1.1.1:5000", map[string][]string{"X-Forwarded-For": {"1.2.3.4"}}, "10.1.1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			for k, vs := range tc.hdrs {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			res := Resolver{Header: tc.header}
			if tc.trusted {
				res.Trusted = proxies
			}
			if got := res.Addr(r); got != netip.MustParseAddr(tc.want) {
				t.Fatalf("Addr = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"192.0.2.1", "192.0.2.1"},
		{"::ffff:192.0.2.1", "192.0.2.1"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
	} {
		if got := Key(netip.MustParseAddr(tc.in)); got != tc.want {
			t.Errorf("Key(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if Key(netip.Addr{}) != "" {
		t.Error("invalid address has a key")
	}
}

func TestParsePrefix(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"10.0.0.0/8", "10.0.0.0/8", true},
		{"10.1.2.3/8", "10.0.0.0/8", true},
		{"192.0.2.1", "192.0.2.1/32", true},
		{"::1", "::1/128", true},
		{"::ffff:10.0.0.1", "10.0.0.1/32", true},
		{"example.com", "", false},
		{"10.0.0.0/33", "", false},
	} {
		p, err := ParsePrefix(tc.in)
		if (err == nil) != tc.ok || (tc.ok && p.String() != tc.want) {
			t.Errorf("ParsePrefix(%q) = %v, %v", tc.in, p, err)
		}
	}
}

func FuzzAddr(f *testing.F) {
	f.Add("10.0.0.1:1", "1.2.3.4, 10.0.0.2", `for="[::1]:80";by=x, for=unknown`)
	f.Fuzz(func(t *testing.T, remote, xff, fwd string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", xff)
		r.Header.Set("Forwarded", fwd)
		trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
		for _, h := range []string{XForwardedFor, Forwarded} {
			res := Resolver{Trusted: trusted, Header: h}
			a := res.Addr(r)
			peer := parseHost(remote)
			// From an untrusted peer, the headers never matter.
			if !peer.IsValid() || !res.trusted(peer) {
				if a != peer {
					t.Fatalf("untrusted peer %q gave %v", remote, a)
				}
			}
			_ = Key(a)
		}
	})
}
