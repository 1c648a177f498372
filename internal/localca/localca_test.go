package localca

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestTrustedOnlyByItsClients(t *testing.T) {
	ca, err := New("test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	srvCfg, err := ca.ServerConfig("mcp.test")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	ts.TLS = srvCfg
	ts.StartTLS()
	defer ts.Close()

	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: ca.ClientConfig()}}
	resp, err := trusting.Get(ts.URL)
	if err != nil {
		t.Fatalf("client trusting the CA: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	// The system roots do not know the CA.
	plain := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{}}}
	if _, err := plain.Get(ts.URL); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("client without the CA: err = %v, want a certificate error", err)
	}
	// The leaf names the extra DNS name too.
	cfg := ca.ClientConfig()
	cfg.ServerName = "mcp.test"
	conn, err := tls.Dial("tcp", strings.TrimPrefix(ts.URL, "https://"), cfg)
	if err != nil {
		t.Fatalf("leaf does not name mcp.test: %v", err)
	}
	conn.Close()
	if ca.Name() != "test CA" {
		t.Fatalf("Name() = %q", ca.Name())
	}
}
