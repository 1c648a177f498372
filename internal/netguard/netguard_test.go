package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync/atomic"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		addr     string
		ok       bool // under the strictest policy
		loopback bool // allowed with AllowLoopback
	}{
		{"8.8.8.8", true, true},
		{"1.1.1.1", true, true},
		{"2606:4700:4700::1111", true, true},
		{"::ffff:8.8.8.8", true, true},
		{"127.0.0.1", false, true},
		{"127.255.255.254", false, true},
		{"::1", false, true},
		{"::ffff:127.0.0.1", false, true},
		{"10.0.0.1", false, false},
		{"172.16.0.1", false, false},
		{"172.31.255.255", false, false},
		{"192.168.1.1", false, false},
		{"::ffff:192.168.1.1", false, false},
		{"::ffff:10.1.2.3", false, false},
		{"169.254.169.254", false, false},
		{"::ffff:169.254.169.254", false, false},
		{"fd00:ec2::254", false, false},
		{"fc00::1", false, false},
		{"fe80::1", false, false},
		{"fe80::1%eth0", false, false},
		{"fec0::1", false, false},
		{"0.0.0.0", false, false},
		{"0.1.2.3", false, false},
		{"::", false, false},
		{"100.64.0.1", false, false},
		{"100.127.255.255", false, false},
		{"192.0.0.8", false, false},
		{"192.0.2.1", false, false},
		{"192.88.99.1", false, false},
		{"198.18.0.1", false, false},
		{"198.51.100.1", false, false},
		{"203.0.113.1", false, false},
		{"224.0.0.1", false, false},
		{"239.255.255.250", false, false},
		{"240.0.0.1", false, false},
		{"255.255.255.255", false, false},
		{"ff02::1", false, false},
		{"::127.0.0.1", false, false},         // IPv4-compatible
		{"64:ff9b::a00:1", false, false},      // NAT64 of 10.0.0.1
		{"64:ff9b:1::1", false, false},        // local NAT64
		{"2002:a00:1::1", false, false},       // 6to4 of 10.0.0.1
		{"2001:0:4136:e378::1", false, false}, // Teredo
		{"2001:db8::1", false, false},
		{"3fff::1", false, false},
		{"100::1", false, false},
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		if err := Check(a, Policy{}); (err == nil) != tt.ok {
			t.Errorf("Check(%s) = %v, want ok=%v", tt.addr, err, tt.ok)
		} else if err != nil && !errors.Is(err, ErrForbidden) {
			t.Errorf("Check(%s) = %v, not ErrForbidden", tt.addr, err)
		}
		if err := Check(a, Policy{AllowLoopback: true}); (err == nil) != tt.loopback {
			t.Errorf("Check(%s, AllowLoopback) = %v, want ok=%v", tt.addr, err, tt.loopback)
		}
		if err := Check(a, Policy{AllowAll: true}); err != nil {
			t.Errorf("Check(%s, AllowAll) = %v", tt.addr, err)
		}
	}
}

// FuzzCheck: an IPv4 address and its IPv4-mapped IPv6 form are judged
// alike, and a refusal always wraps ErrForbidden.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "10.0.0.1", "8.8.8.8", "169.254.169.254", "100.64.0.1", "0.0.0.0"} {
		a := netip.MustParseAddr(s).As4()
		f.Add(a[0], a[1], a[2], a[3])
	}
	f.Fuzz(func(t *testing.T, a, b, c, d byte) {
		v4 := netip.AddrFrom4([4]byte{a, b, c, d})
		mapped := netip.AddrFrom16(v4.As16())
		e1, e2 := Check(v4, Policy{}), Check(mapped, Policy{})
		if (e1 == nil) != (e2 == nil) {
			t.Fatalf("%s: %v; %s: %v", v4, e1, mapped, e2)
		}
		if e1 != nil && !errors.Is(e1, ErrForbidden) {
			t.Fatalf("%s: %v", v4, e1)
		}
	})
}

// mapResolver resolves names from a map, and counts lookups; a name with
// two answers gives the first, then the second (DNS rebinding).
type mapResolver struct {
	names map[string][]string
	n     atomic.Int32
}

func (r *mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	answers, ok := r.names[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := int(r.n.Add(1)) - 1
	if i >= len(answers) {
		i = len(answers) - 1
	}
	return []netip.Addr{netip.MustParseAddr(answers[i])}, nil
}

// TestDialRefusals: every way of naming an internal address is refused at
// dial time, before anything is sent, with the listener on 127.0.0.1
// receiving nothing.
func TestDialRefusals(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	// A redirector that is itself allowed (AllowLoopback is not set for
	// the redirect target's address, which the resolver maps to
	// 127.0.0.1).
	tests := []struct {
		name  string
		host  string // host in the URL
		names map[string][]string
	}{
		{"loopback literal", "127.0.0.1", nil},
		{"IPv6 loopback", "[::1]", nil},
		{"IPv4-mapped IPv6 loopback", "[::ffff:127.0.0.1]", nil},
		{"IPv4-mapped IPv6 hex", "[::ffff:7f00:1]", nil},
		{"unspecified", "0.0.0.0", nil},
		{"name resolving to loopback", "internal.test", map[string][]string{"internal.test": {"127.0.0.1"}}},
		{"name resolving to metadata", "metadata.test", map[string][]string{"metadata.test": {"169.254.169.254"}}},
		{"decimal spelling via DNS", "2130706433", map[string][]string{"2130706433": {"127.0.0.1"}}},
		{"octal-ish spelling via DNS", "0177.0.0.1", map[string][]string{"0177.0.0.1": {"127.0.0.1"}}},
		{"short spelling via DNS", "127.1", map[string][]string{"127.1": {"127.0.0.1"}}},
		{"mapped answer via DNS", "mapped.test", map[string][]string{"mapped.test": {"::ffff:127.0.0.1"}}},
		{"NAT64 answer via DNS", "nat64.test", map[string][]string{"nat64.test": {"64:ff9b::7f00:1"}}},
		{"DNS rebinding", "rebind.test", map[string][]string{"rebind.test": {"8.8.8.8", "127.0.0.1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &mapResolver{names: tt.names}
			if tt.name == "DNS rebinding" {
				// The name answered a public address before (when a
				// caller may have vetted it); the answer at dial time,
				// the one checked and the one dialled, is internal.
				r.n.Store(1)
			}
			hc := &http.Client{Transport: Transport(nil, &Dialer{Resolver: r})}
			resp, err := hc.Get("http://" + net.JoinHostPort(trimBrackets(tt.host), port) + "/")
			if err == nil {
				resp.Body.Close()
				t.Fatalf("fetched %s", tt.host)
			}
			if !errors.Is(err, ErrForbidden) {
				t.Fatalf("err = %v, want ErrForbidden", err)
			}
		})
	}
	// A redirect from an allowed server to an internal address is refused
	// when its target is dialled.
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+net.JoinHostPort("10.255.255.1", port)+"/", http.StatusFound)
	}))
	defer redirector.Close()
	ru, _ := url.Parse(redirector.URL)
	hc := &http.Client{Transport: Transport(nil, &Dialer{Policy: Policy{AllowLoopback: true}})}
	resp, err := hc.Get("http://" + ru.Host + "/")
	if err == nil {
		resp.Body.Close()
		t.Fatal("followed a redirect to a private address")
	}
	if !errors.Is(err, ErrForbidden) {
		t.Fatalf("redirect: err = %v, want ErrForbidden", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the internal server got %d requests", n)
	}
	// The same server is reached when the policy allows it.
	hc = &http.Client{Transport: Transport(nil, &Dialer{Policy: Policy{AllowLoopback: true}})}
	resp, err = hc.Get(srv.URL)
	if err != nil {
		t.Fatalf("AllowLoopback: %v", err)
	}
	resp.Body.Close()
}

func trimBrackets(h string) string {
	if len(h) > 1 && h[0] == '[' {
		return h[1 : len(h)-1]
	}
	return h
}

// TestControlSeesDialledAddress: the Control hook alone (as mcpstack
// serve's fetch tool uses it with the system resolver) refuses the address
// actually dialled, whatever name led to it.
func TestControlSeesDialledAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	d := net.Dialer{Control: Policy{}.Control}
	for _, host := range []string{"localhost", "127.0.0.1"} {
		c, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort(host, port))
		if err == nil {
			c.Close()
			t.Fatalf("dialled %s", host)
		}
		if !errors.Is(err, ErrForbidden) {
			t.Fatalf("%s: %v, want ErrForbidden", host, err)
		}
	}
}

func TestIsLocalHost(t *testing.T) {
	r := &mapResolver{names: map[string][]string{"intranet.test": {"10.0.0.5"}, "public.test": {"8.8.8.8"}}}
	for host, want := range map[string]bool{
		"localhost": true, "a.localhost": true, "127.0.0.1": true, "[::1]": true, "10.1.1.1": true,
		"intranet.test": true, "public.test": false, "nowhere.test": false, "8.8.8.8": false,
	} {
		if got := IsLocalHost(context.Background(), r, host); got != want {
			t.Errorf("IsLocalHost(%q) = %v, want %v", host, got, want)
		}
	}
}
