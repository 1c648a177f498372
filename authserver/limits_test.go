package authserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/memory"
)

// clock is a settable Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// serveAs sends a request straight to the handler as if from remote.
func serveAs(h http.Handler, method, target, contentType, body, remote string, hdr http.Header) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.RemoteAddr = remote
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	for k, vs := range hdr {
		r.Header[k] = vs
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

const goodRegistration = `{"client_name":"x","redirect_uris":["https://a.test/cb"]}`

// instantUsers is an Authenticator without bcrypt's cost, so that tests
// can send thousands of logins.
type instantUsers struct{}

func (instantUsers) Authenticate(_ context.Context, u, p string) (string, error) {
	if u == "alice" && p == "right" {
		return "alice", nil
	}
	return "", authserver.ErrBadCredentials
}

// loginForm fetches the login page once and returns its form and the CSRF
// cookie to send with it.
func loginForm(t *testing.T, a *testAS) (url.Values, string) {
	t.Helper()
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	jar, _ := cookiejar.New(nil)
	a.http.Jar = jar
	page, _ := io.ReadAll(a.authorize(t, authParams("pub", loopbackRedirect, verifier)).Body)
	form := url.Values{"action": {"login"}, "username": {"alice"}}
	for _, m := range hiddenRE.FindAllStringSubmatch(string(page), -1) {
		form.Set(m[1], strings.ReplaceAll(m[2], "&#43;", "+"))
	}
	u, _ := url.Parse(a.ts.URL)
	var cookies []string
	for _, c := range jar.Cookies(u) {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	return form, strings.Join(cookies, "; ")
}

// #17.5: once 10,000 addresses have been seen, a new one still registers
// and logs in (the tables evict instead of refusing newcomers).
func TestNewAddressAfterTenThousand(t *testing.T) {
	clk := &clock{t: time.Now()}
	a := newAS(t, func(c *authserver.Config) {
		c.DevUser = ""
		c.Users = instantUsers{}
		c.Now = clk.now
		c.RegistrationRate, c.RegistrationBurst = rate.Every(6*time.Minute), 5
	}, nil)
	form, cookie := loginForm(t, a)
	addr := func(i int) string { return fmt.Sprintf("10.%d.%d.%d:4000", i>>16&255, i>>8&255, i&255) }
	for i := range 10000 {
		// A malformed registration still spends the address's budget.
		if w := serveAs(a, "POST", "/register", "application/json", "{", addr(i), nil); w.Code != http.StatusBadRequest {
			t.Fatalf("registration %d: %d %s", i, w.Code, w.Body)
		}
		form.Set("password", "wrong")
		w := serveAs(a, "POST", "/authorize", "application/x-www-form-urlencoded", form.Encode(), addr(i), http.Header{"Cookie": {cookie}})
		if !strings.Contains(w.Body.String(), "Wrong user name or password") {
			t.Fatalf("login %d: %d %s", i, w.Code, w.Body)
		}
	}
	clk.add(61 * time.Second)
	newcomer := "192.0.2.200:5000"
	if w := serveAs(a, "POST", "/register", "application/json", goodRegistration, newcomer, nil); w.Code != http.StatusCreated {
		t.Fatalf("new address registering after 10,000 others: %d %s", w.Code, w.Body)
	}
	form.Set("password", "right")
	w := serveAs(a, "POST", "/authorize", "application/x-www-form-urlencoded", form.Encode(), newcomer, http.Header{"Cookie": {cookie}})
	if !strings.Contains(w.Body.String(), `id="allow"`) {
		t.Fatalf("new address logging in after 10,000 others: %d %s", w.Code, w.Body)
	}
}

// #17.5: Retry-After tells the truth: a retry after it is served, one a
// second earlier is not.
func TestRetryAfterIsTruthful(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rate  rate.Limit
		burst int
	}{
		{"default 10 per hour", rate.Every(6 * time.Minute), 5},
		{"one per 62 s", rate.Every(62 * time.Second), 1},
		{"5 per second", 5, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{t: time.Now()}
			a := newAS(t, func(c *authserver.Config) {
				c.Now = clk.now
				c.RegistrationRate, c.RegistrationBurst = tc.rate, tc.burst
			}, nil)
			const from = "198.51.100.9:1000"
			for i := range tc.burst {
				if w := serveAs(a, "POST", "/register", "application/json", goodRegistration, from, nil); w.Code != http.StatusCreated {
					t.Fatalf("registration %d: %d", i, w.Code)
				}
			}
			w := serveAs(a, "POST", "/register", "application/json", goodRegistration, from, nil)
			secs, err := strconv.Atoi(w.Header().Get("Retry-After"))
			if w.Code != http.StatusTooManyRequests || err != nil || secs < 1 {
				t.Fatalf("over the burst: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
			}
			if secs > 1 {
				clk.add(time.Duration(secs-1) * time.Second)
				if w := serveAs(a, "POST", "/register", "application/json", goodRegistration, from, nil); w.Code != http.StatusTooManyRequests {
					t.Fatalf("a second before Retry-After %d: %d", secs, w.Code)
				}
				clk.add(time.Second)
			} else {
				clk.add(time.Second)
			}
			if w := serveAs(a, "POST", "/register", "application/json", goodRegistration, from, nil); w.Code != http.StatusCreated {
				t.Fatalf("after Retry-After %d: %d %s (Retry-After now %s)", secs, w.Code, w.Body, w.Header().Get("Retry-After"))
			}
		})
	}
}

// #17.5: an IPv6 client is limited per /64, so a subscriber cannot take a
// fresh budget per address.
func TestIPv6LimitedPerSlash64(t *testing.T) {
	clk := &clock{t: time.Now()}
	a := newAS(t, func(c *authserver.Config) {
		c.Now = clk.now
		c.RegistrationRate, c.RegistrationBurst = rate.Every(time.Hour), 3
	}, nil)
	for i := range 3 {
		from := fmt.Sprintf("[2001:db8:1:2::%x]:1000", i+1)
		if w := serveAs(a, "POST", "/register", "application/json", goodRegistration, from, nil); w.Code != http.StatusCreated {
			t.Fatalf("registration %d: %d", i, w.Code)
		}
	}
	for _, tc := range []struct {
		from string
		want int
	}{
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:1", http.StatusTooManyRequests},
		{"[2001:db8:1:3::1]:1", http.StatusCreated},
		{"192.0.2.1:1", http.StatusCreated},
	} {
		if w := serveAs(a, "POST", "/register", "application/json", goodRegistration, tc.from, nil); w.Code != tc.want {
			t.Errorf("from %s: %d, want %d", tc.from, w.Code, tc.want)
		}
	}
}

// #17.6: behind a trusted proxy each client has its own budget; a peer
// that is not a trusted proxy cannot pick its key with a header.
func TestTrustedProxies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted []string
		header  string
		remote  string
		hdr     func(i int) http.Header
		// wantSeparate: each of the requests is a different client.
		wantSeparate bool
	}{
		{"no trusted proxy: XFF ignored", nil, "", "10.0.0.1:1",
			func(i int) http.Header { return http.Header{"X-Forwarded-For": {fmt.Sprintf("203.0.113.%d", i)}} }, false},
		{"untrusted peer: XFF ignored", []string{"10.9.0.0/16"}, "", "10.0.0.1:1",
			func(i int) http.Header { return http.Header{"X-Forwarded-For": {fmt.Sprintf("203.0.113.%d", i)}} }, false},
		{"trusted proxy: XFF read", []string{"10.0.0.0/8"}, "", "10.0.0.1:1",
			func(i int) http.Header { return http.Header{"X-Forwarded-For": {fmt.Sprintf("203.0.113.%d", i)}} }, true},
		{"trusted proxy: forged left entries do not matter", []string{"10.0.0.0/8"}, "", "10.0.0.1:1",
			func(i int) http.Header {
				return http.Header{"X-Forwarded-For": {fmt.Sprintf("198.18.0.%d, 203.0.113.1", i)}}
			}, false},
		{"trusted proxy: Forwarded read when configured", []string{"10.0.0.0/8"}, "Forwarded", "10.0.0.1:1",
			func(i int) http.Header {
				return http.Header{"Forwarded": {fmt.Sprintf(`for="[2001:db8:%x::1]:99"`, i)}}
			}, true},
		{"trusted proxy: Forwarded ignored when XFF configured", []string{"10.0.0.0/8"}, "", "10.0.0.1:1",
			func(i int) http.Header { return http.Header{"Forwarded": {fmt.Sprintf("for=203.0.113.%d", i)}} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var proxies []netip.Prefix
			for _, p := range tc.trusted {
				proxies = append(proxies, netip.MustParsePrefix(p))
			}
			a := newAS(t, func(c *authserver.Config) {
				c.RegistrationRate, c.RegistrationBurst = rate.Every(time.Hour), 1
				c.TrustedProxies, c.ForwardedHeader = proxies, tc.header
			}, nil)
			created := 0
			for i := 1; i <= 3; i++ {
				if w := serveAs(a, "POST", "/register", "application/json", goodRegistration, tc.remote, tc.hdr(i)); w.Code == http.StatusCreated {
					created++
				}
			}
			if want := map[bool]int{true: 3, false: 1}[tc.wantSeparate]; created != want {
				t.Fatalf("%d of 3 registered, want %d", created, want)
			}
		})
	}
}

func TestBadForwardedHeaderConfig(t *testing.T) {
	_, err := authserver.NewServer(context.Background(), authserver.Config{Issuer: "http://127.0.0.1:1", Store: memory.New(), DevUser: "x", ForwardedHeader: "X-Real-IP"})
	if err == nil {
		t.Fatal("accepted")
	}
}

// #17.7: the authorization endpoint is limited per client address.
func TestAuthorizeRateLimit(t *testing.T) {
	clk := &clock{t: time.Now()}
	a := newAS(t, func(c *authserver.Config) {
		c.Now = clk.now
		c.AuthorizeRate, c.AuthorizeBurst = 1, 5
	}, nil)
	a.addClient(t, "pub", oauth.AuthMethodNone, "", loopbackRedirect)
	target := "/authorize?" + authParams("pub", loopbackRedirect, verifier).Encode()
	for i := range 5 {
		if w := serveAs(a, "GET", target, "", "", "192.0.2.7:1", nil); w.Code == http.StatusTooManyRequests {
			t.Fatalf("request %d limited", i)
		}
	}
	w := serveAs(a, "GET", target, "", "", "192.0.2.7:1", nil)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("6th request: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if w := serveAs(a, "GET", target, "", "", "192.0.2.8:1", nil); w.Code == http.StatusTooManyRequests {
		t.Fatal("another address limited")
	}
	clk.add(time.Second)
	if w := serveAs(a, "GET", target, "", "", "192.0.2.7:1", nil); w.Code == http.StatusTooManyRequests {
		t.Fatal("limited after Retry-After")
	}
}
