package authclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/netguard"
	"github.com/mcpstack/mcpstack/oauth"
)

// nameResolver resolves names from a map and nothing else.
type nameResolver map[string]string

func (r nameResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

// TestSSRFGuard: an MCP server on a public address cannot make the client
// fetch from loopback or private addresses through the URLs it hands out
// (here resource_metadata); the guard is off for an MCP server that is
// itself local, and with AllowPrivateAddresses (#16.5).
func TestSSRFGuard(t *testing.T) {
	as := newFakeAS(t, nil)
	local := newFakeRS(t, as, nil) // serves metadata and /mcp on 127.0.0.1
	_, port, _ := net.SplitHostPort(local.srv.Listener.Addr().String())
	prm := oauth.ProtectedResourceMetadataPath("/mcp")
	tests := []struct {
		name      string
		serverURL string // the MCP server as the client names it
		metadata  string // resource_metadata in its challenge
		allow     bool   // Config.AllowPrivateAddresses
		wantErr   bool
	}{
		{"public server, loopback metadata", "http://mcp.test:" + port + "/mcp", "http://127.0.0.1:" + port + prm, false, true},
		{"public server, IPv4-mapped loopback metadata", "http://mcp.test:" + port + "/mcp", "https://[::ffff:127.0.0.1]:" + port + prm, false, true}, // over http, the URL rule refuses it first
		{"public server, name resolving to private", "http://mcp.test:" + port + "/mcp", "https://internal.test:" + port + prm, false, true},
		{"public server, name resolving to metadata service", "http://mcp.test:" + port + "/mcp", "https://metadata.test:" + port + prm, false, true},
		{"public server, opted out", "http://mcp.test:" + port + "/mcp", "http://127.0.0.1:" + port + prm, true, false},
		{"loopback server, loopback metadata", "http://127.0.0.1:" + port + "/mcp", "http://127.0.0.1:" + port + prm, false, false},
		{"intranet server, loopback metadata", "http://intranet.test:" + port + "/mcp", "http://127.0.0.1:" + port + prm, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The MCP server answers at front, whatever its name; its
			// challenge names tt.metadata.
			rs := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
				if _, ok := as.ScopesOf(tok); ok {
					w.WriteHeader(200)
					return
				}
				w.Header().Set("WWW-Authenticate", oauth.BearerChallenge{ResourceMetadata: tt.metadata}.String())
				w.WriteHeader(401)
			})
			front := httptest.NewServer(rs)
			defer front.Close()
			base := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, front.Listener.Addr().String())
			}}
			before := len(local.requests)
			// The metadata names the resource as the server URL the
			// client uses.
			local.mu.Lock()
			local.resource = tt.serverURL
			local.mu.Unlock()
			tr := NewTransport(Config{
				Base:                  base,
				Authorizer:            follower(),
				AllowPrivateAddresses: tt.allow,
				Resolver: nameResolver{
					"mcp.test": "8.8.8.8", "intranet.test": "10.0.0.7",
					"internal.test": "10.1.2.3", "metadata.test": "169.254.169.254",
				},
			})
			st, err := call(t, tr.Client(), tt.serverURL, `{}`)
			local.mu.Lock()
			fetched := len(local.requests) - before
			local.mu.Unlock()
			if tt.wantErr {
				if !errors.Is(err, ErrUnsafeURL) || !errors.Is(err, netguard.ErrForbidden) {
					t.Fatalf("err = %v, want ErrUnsafeURL and netguard.ErrForbidden", err)
				}
				if fetched != 0 {
					t.Fatalf("the internal server got %d requests", fetched)
				}
				return
			}
			if err != nil || st != 200 {
				t.Fatalf("status %d, err %v", st, err)
			}
			if fetched == 0 {
				t.Fatal("the metadata was not fetched")
			}
		})
	}
}
