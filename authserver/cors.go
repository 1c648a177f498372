package authserver

import (
	"fmt"
	"net/http"
	"time"

	"github.com/mcpstack/mcpstack/internal/cors"
)

// corsMaxAge is how long a browser may keep a preflight answer.
const corsMaxAge = 2 * time.Hour

// corsPolicies are the server's two CORS policies: public for the
// metadata and the JWKS, which any page may read; clients for the
// endpoints a browser-based client posts to (token, registration,
// revocation), nil unless Config.CORSOrigins lists origins.
type corsPolicies struct {
	public  *cors.Policy
	clients *cors.Policy
}

func newCORSPolicies(origins []string) (corsPolicies, error) {
	var p corsPolicies
	var err error
	p.public, err = cors.New(cors.Config{
		Origins: []string{cors.Any},
		Methods: []string{http.MethodGet, http.MethodHead},
		Headers: []string{"Accept", "MCP-Protocol-Version"},
		MaxAge:  corsMaxAge,
	})
	if err != nil {
		return p, err
	}
	if len(origins) == 0 {
		return p, nil
	}
	p.clients, err = cors.New(cors.Config{
		Origins: origins,
		Methods: []string{http.MethodPost},
		Headers: []string{"Content-Type", "Accept", "Authorization"},
		Expose:  []string{"WWW-Authenticate", "Retry-After"},
		MaxAge:  corsMaxAge,
	})
	if err != nil {
		return p, fmt.Errorf("authserver: Config.CORSOrigins: %w", err)
	}
	return p, nil
}

// handlePublic serves a public document at pattern path (GET, and so
// HEAD) and answers its CORS preflight.
func (s *Server) handlePublic(path string, f http.HandlerFunc) {
	s.mux.Handle("GET "+path, s.cors.public.Wrap(f))
	s.mux.Handle("OPTIONS "+path, s.cors.public.Wrap(allowOnly("GET, HEAD, OPTIONS")))
}

// handleClientPost serves a client endpoint at path (POST) and, when
// Config.CORSOrigins lists origins, lets pages on them call it.
func (s *Server) handleClientPost(path string, f http.HandlerFunc) {
	if s.cors.clients == nil {
		s.mux.Handle("POST "+path, f)
		return
	}
	s.mux.Handle("POST "+path, s.cors.clients.Wrap(f))
	s.mux.Handle("OPTIONS "+path, s.cors.clients.Wrap(allowOnly("POST, OPTIONS")))
}

// allowOnly answers an OPTIONS request that is no preflight: 204 with
// Allow.
func allowOnly(methods string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", methods)
		w.WriteHeader(http.StatusNoContent)
	})
}
