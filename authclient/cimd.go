package authclient

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/mcpstack/mcpstack/oauth"
)

// timeNow is time.Now; signing a client assertion outside a Transport uses it.
func timeNow() time.Time { return time.Now() }

// MetadataDocumentHandler returns an http.Handler that serves md as this
// client's Client ID Metadata Document. md must be a valid document: its
// client_id an https URL with a path, equal to the URL the document is
// served at, with client_name and redirect_uris, and no shared-secret
// authentication method (see [oauth.ValidateClientIDMetadataDocument]). The
// handler answers GET and HEAD at the client_id's path only, as
// application/json with a cache lifetime of maxAge (zero means one hour).
func MetadataDocumentHandler(md oauth.ClientMetadata, maxAge time.Duration) (http.Handler, error) {
	if err := oauth.ValidateClientIDMetadataDocument(md.ClientID, md); err != nil {
		return nil, err
	}
	u, err := url.Parse(md.ClientID)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(md)
	if err != nil {
		return nil, err
	}
	if maxAge <= 0 {
		maxAge = time.Hour
	}
	cache := "public, max-age=" + strconv.Itoa(int(maxAge/time.Second))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.EscapedPath() != u.EscapedPath() {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", cache)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.Method == http.MethodGet {
			w.Write(body)
		}
	}), nil
}
