package mcphttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// A Streamable HTTP endpoint that a browser-based client on another
// origin (an inspector in a web page) may use, behind an authorization
// middleware. The CORS function stands in front of the middleware, so that
// the preflight is answered without a token and the middleware's 401
// challenge is readable from the page; the handler gets the same options,
// so that the origin also passes its DNS-rebinding check.
func ExampleCORS() {
	s := greeter()
	corsOpts := &mcphttp.CORSOptions{AllowedOrigins: []string{"https://inspector.example.com"}}
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s }, &mcphttp.Options{CORS: corsOpts})
	defer h.Close()
	bearer := func(next http.Handler) http.Handler { // stands for a real authorization middleware
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "" {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcphttp.CORS(bearer(h), corsOpts))

	for _, origin := range []string{"https://inspector.example.com", "https://evil.example"} {
		r := httptest.NewRequest("OPTIONS", "https://mcp.example.com/mcp", nil)
		r.Header.Set("Origin", origin)
		r.Header.Set("Access-Control-Request-Method", "POST")
		r.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		fmt.Printf("preflight from %s: %d %q\n", origin, w.Code, w.Header().Get("Access-Control-Allow-Origin"))
	}
	r := httptest.NewRequest("POST", "https://mcp.example.com/mcp", nil)
	r.Header.Set("Origin", "https://inspector.example.com")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("Access-Control-Allow-Origin"))
	fmt.Println("expose:", w.Header().Get("Access-Control-Expose-Headers"))
	// Output:
	// preflight from https://inspector.example.com: 204 "https://inspector.example.com"
	// preflight from https://evil.example: 403 ""
	// 401 https://inspector.example.com
	// expose: Mcp-Session-Id, WWW-Authenticate
}
