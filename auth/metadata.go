package auth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/internal/cors"
	"github.com/mcpstack/mcpstack/oauth"
)

// MetadataMaxAge is how long clients and caches may keep the protected
// resource metadata (its Cache-Control max-age).
const MetadataMaxAge = time.Hour

// ResourceMetadataURL returns the URL of the protected resource metadata
// of the server whose canonical URI is resource: the path-specific
// well-known URL of RFC 9728 §3.1 (the first URL clients try, and the one
// the middleware's challenges name).
func ResourceMetadataURL(resource string) (string, error) {
	urls, err := oauth.ProtectedResourceMetadataURLs(resource)
	if err != nil {
		return "", fmt.Errorf("auth: resource: %w", err)
	}
	return urls[0], nil
}

// MetadataHandler returns a handler that publishes md, the protected
// resource metadata of this server (RFC 9728 §3.2).
//
// md.Resource is put in canonical form; md.BearerMethodsSupported defaults
// to ["header"] and may hold nothing else, since the middleware accepts
// tokens only in the Authorization header. The document must pass
// md.Validate (at least one authorization server, https URLs).
//
// The handler answers GET and HEAD with the JSON document, Cache-Control
// allowing MetadataMaxAge, and Access-Control-Allow-Origin: * so that
// browser clients can read it; OPTIONS with a CORS preflight answer; any
// other method with 405.
func MetadataHandler(md oauth.ProtectedResourceMetadata) (http.Handler, error) {
	res, err := oauth.CanonicalResource(md.Resource)
	if err != nil {
		return nil, fmt.Errorf("auth: metadata resource: %w", err)
	}
	md.Resource = res
	switch {
	case len(md.BearerMethodsSupported) == 0:
		md.BearerMethodsSupported = []string{"header"}
	case !slices.Equal(md.BearerMethodsSupported, []string{"header"}):
		return nil, fmt.Errorf("auth: bearer_methods_supported must be [\"header\"], not %q", md.BearerMethodsSupported)
	}
	if err := md.Validate(); err != nil {
		return nil, fmt.Errorf("auth: metadata: %w", err)
	}
	body, err := json.Marshal(md)
	if err != nil {
		return nil, err
	}
	cache := "public, max-age=" + strconv.Itoa(int(MetadataMaxAge/time.Second))
	// A public document: any origin may read it, with no credentials.
	public, err := cors.New(cors.Config{
		Origins: []string{cors.Any},
		Methods: []string{http.MethodGet, http.MethodHead, http.MethodOptions},
		Headers: []string{"MCP-Protocol-Version", "Accept"},
		MaxAge:  24 * time.Hour,
	})
	if err != nil {
		return nil, err
	}
	return public.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			h.Set("Content-Type", "application/json")
			h.Set("Cache-Control", cache)
			h.Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(http.StatusOK)
			if r.Method == http.MethodGet {
				w.Write(body)
			}
		case http.MethodOptions: // not a preflight, which public answered
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "MCP-Protocol-Version, Accept")
			h.Set("Access-Control-Max-Age", "86400")
			w.WriteHeader(http.StatusNoContent)
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})), nil
}

// RegisterMetadata serves md (see MetadataHandler) on mux at the
// path-specific well-known path of its resource and, when that differs, at
// the root well-known path /.well-known/oauth-protected-resource. Like
// http.ServeMux.Handle, it panics if a path is already registered (for
// example the root, by a second resource on the same host).
func RegisterMetadata(mux *http.ServeMux, md oauth.ProtectedResourceMetadata) error {
	h, err := MetadataHandler(md)
	if err != nil {
		return err
	}
	paths, err := MetadataPaths(md.Resource)
	if err != nil {
		return err
	}
	for _, p := range paths {
		mux.Handle(p, h)
	}
	return nil
}

// MetadataPaths returns the paths at which the metadata of resource is
// served: the path-specific one and, when different, the root one.
func MetadataPaths(resource string) ([]string, error) {
	res, err := oauth.CanonicalResource(resource)
	if err != nil {
		return nil, fmt.Errorf("auth: resource: %w", err)
	}
	urls, err := oauth.ProtectedResourceMetadataURLs(res)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, u := range urls {
		p := u[len(originOf(u)):]
		if i := strings.IndexByte(p, '?'); i >= 0 {
			p = p[:i]
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// originOf returns scheme://authority of an absolute URL.
func originOf(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(u[i+3:], '/')
	if j < 0 {
		return u
	}
	return u[:i+3+j]
}
