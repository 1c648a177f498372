package authclient

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkRoundTripAuthorized prices the transport on the common path: a
// request that carries a token already obtained, to a loopback server.
func BenchmarkRoundTripAuthorized(b *testing.B) {
	as := newFakeAS(b, nil)
	rs := newFakeRS(b, as, nil)
	for _, mode := range []string{"plain", "authclient"} {
		b.Run(mode, func(b *testing.B) {
			c := &http.Client{}
			if mode == "authclient" {
				c = NewTransport(Config{Authorizer: follower()}).Client()
			}
			url := rs.url()
			if mode == "plain" {
				// An unprotected document on the same server, for comparison.
				url = rs.srv.URL + "/.well-known/oauth-protected-resource/mcp"
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.Post(url, "application/json", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
