package authserver_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/localca"
)

// testCA is a certificate authority made for one test.
type testCA struct{ *localca.CA }

func newCA(t *testing.T) *testCA {
	t.Helper()
	ca, err := localca.New("mcpstack test CA", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{ca}
}

// serverTLS returns a server config with a leaf for 127.0.0.1, ::1,
// localhost and the given names.
func (ca *testCA) serverTLS(t *testing.T, names ...string) *tls.Config {
	t.Helper()
	cfg, err := ca.ServerConfig(names...)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// tlsServer returns an unstarted httptest server using a leaf of the CA;
// StartTLS keeps the config.
func (ca *testCA) tlsServer(t *testing.T, h http.Handler, names ...string) *httptest.Server {
	ts := httptest.NewUnstartedServer(h)
	ts.TLS = ca.serverTLS(t, names...)
	return ts
}

// client returns an HTTP client trusting the CA and following no redirects.
func (ca *testCA) client() *http.Client {
	return &http.Client{
		Transport:     &http.Transport{TLSClientConfig: ca.ClientConfig()},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// mapResolver resolves names from a map and nothing else: tests never use
// real DNS.
type mapResolver map[string][]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := m[host]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("test resolver: no such host %q", host)
}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// clientTLS returns a client config trusting the CA.
func (ca *testCA) clientTLS() *tls.Config { return ca.ClientConfig() }
