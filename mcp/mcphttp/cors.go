package mcphttp

import (
	"net/http"
	"slices"
	"time"

	"github.com/mcpstack/mcpstack/internal/cors"
)

// DefaultCORSMaxAge is how long a browser may keep a preflight answer of
// the Streamable HTTP endpoint when CORSOptions.MaxAge is zero (Chromium
// keeps one two hours at most).
const DefaultCORSMaxAge = 2 * time.Hour

// CORSOptions let pages on other origins use a Streamable HTTP endpoint
// from a browser, as a browser-based MCP client (an inspector running in a
// web page) does. Nothing is allowed unless listed.
//
// An admitted origin's preflight (OPTIONS) gets 204 with its origin in
// Access-Control-Allow-Origin (never "*"), the methods GET, POST and
// DELETE, the request headers Content-Type, Accept, Authorization,
// Mcp-Session-Id, MCP-Protocol-Version and Last-Event-ID (and
// AllowedHeaders), and Access-Control-Max-Age; the preflight of any other
// origin gets 403 with no CORS headers. Other responses to an admitted
// origin carry Access-Control-Allow-Origin and expose Mcp-Session-Id and
// WWW-Authenticate, so that the page can read the session id and the
// authorization challenge; every response carries Vary: Origin.
// Access-Control-Allow-Credentials is never sent: the access token travels
// in the Authorization header, which the page sets itself, and cookies
// are not used.
type CORSOptions struct {
	// AllowedOrigins lists the origins admitted, each scheme://host[:port]
	// with an http or https scheme, as browsers send them in the Origin
	// header ("https://inspector.example.com", "http://localhost:6274").
	// The wildcard "*" is not accepted.
	AllowedOrigins []string
	// AllowedHeaders lists request headers a page may send in addition to
	// those above, such as "DPoP".
	AllowedHeaders []string
	// MaxAge is how long a browser may keep a preflight answer. Zero means
	// DefaultCORSMaxAge.
	MaxAge time.Duration
}

// policy compiles o; it panics on an origin that is malformed or "*".
func (o *CORSOptions) policy() *cors.Policy {
	if o == nil || len(o.AllowedOrigins) == 0 {
		return nil
	}
	if slices.Contains(o.AllowedOrigins, cors.Any) {
		panic(`mcphttp: CORSOptions.AllowedOrigins cannot hold "*": list the origins`)
	}
	maxAge := o.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultCORSMaxAge
	}
	p, err := cors.New(cors.Config{
		Origins: o.AllowedOrigins,
		Methods: []string{http.MethodGet, http.MethodPost, http.MethodDelete},
		// The request headers an MCP client sends.
		Headers: append([]string{"Content-Type", "Accept", "Authorization", "Mcp-Session-Id", "MCP-Protocol-Version", "Last-Event-ID"},
			o.AllowedHeaders...),
		Expose: []string{"Mcp-Session-Id", "WWW-Authenticate"},
		MaxAge: maxAge,
	})
	if err != nil {
		panic("mcphttp: CORSOptions: " + err.Error())
	}
	return p
}

// CORS returns next behind the CORS policy of opts (see CORSOptions): it
// answers preflight requests itself and adds the CORS headers to the
// answers of the others, whatever handler writes them. With no origin
// listed it returns next. It panics if an origin is malformed or "*".
//
// A Handler applies Options.CORS itself, which
// is enough when nothing stands in front of it. A handler in front that
// may answer on its own, such as the bearer-token middleware of an
// authorization package, must be wrapped by CORS with the same options:
// otherwise its answers (a 401 and its WWW-Authenticate challenge, or a
// 401 to the preflight, which carries no token) are unreadable from the
// page:
//
//	corsOpts := &mcphttp.CORSOptions{AllowedOrigins: []string{"https://inspector.example.com"}}
//	h := mcphttp.NewHandler(getServer, &mcphttp.Options{CORS: corsOpts})
//	mux.Handle("/mcp", mcphttp.CORS(bearer.Wrap(h), corsOpts))
func CORS(next http.Handler, opts *CORSOptions) http.Handler {
	p := opts.policy()
	if p == nil {
		return next
	}
	return p.Wrap(next)
}

// setCORS makes g admit the origins of o (they pass the Origin check) and
// keeps o's policy for ServeHTTP.
func (g *hostGuard) setCORS(o *CORSOptions) {
	g.cors = o.policy()
}

// corsPolicy is the compiled CORSOptions a hostGuard keeps.
type corsPolicy = cors.Policy
