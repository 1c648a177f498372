package auth

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/internal/httpbody"
	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/oauth"
)

// DefaultHTTPTimeout bounds each call to the authorization server (metadata,
// keys, introspection, token endpoint) when no HTTP client is given.
const DefaultHTTPTimeout = 10 * time.Second

// maxDocumentBytes bounds metadata, JWKS and introspection responses.
const maxDocumentBytes = 1 << 20

// errNotFound reports a discovery URL that answered 404 (or another 4xx),
// after which the next URL is tried.
var errNotFound = errors.New("auth: metadata not found")

// secureURL reports whether raw is an https URL, or an http URL on a
// loopback host (for development and tests), without a fragment.
func secureURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Fragment != "" || u.User != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		if strings.EqualFold(h, "localhost") {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
	return false
}

// getJSON fetches a JSON document with GET and decodes it into v.
func getJSON(ctx context.Context, client *http.Client, rawURL string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	return doJSON(client, req, v)
}

// doJSON sends req and decodes a 200 JSON answer into v.
func doJSON(client *http.Client, req *http.Request, v any) error {
	if client == nil {
		client = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// A body cut by the deadline can end in a clean EOF: httpbody.Read
	// refuses it whatever the read returned (#16.6).
	body, err := httpbody.Read(req.Context(), resp, maxDocumentBytes)
	tooLarge := errors.Is(err, httpbody.ErrTooLarge)
	if err != nil && !tooLarge {
		return fmt.Errorf("auth: %s: %w", req.URL, err)
	}
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return fmt.Errorf("%w: %s answered %d", errNotFound, req.URL, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("auth: %s answered %d", req.URL, resp.StatusCode)
	}
	if tooLarge {
		return fmt.Errorf("auth: %s: document over %d bytes", req.URL, maxDocumentBytes)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return fmt.Errorf("auth: %s: content type %q is not JSON", req.URL, ct)
		}
	}
	if err := strictjson.Unmarshal(body, v); err != nil {
		return fmt.Errorf("auth: %s: %w", req.URL, err)
	}
	return nil
}

// discover fetches the metadata of the authorization server issuer from
// the URLs of oauth.AuthorizationServerMetadataURLs, in order, and checks
// that it names issuer exactly.
func discover(ctx context.Context, client *http.Client, issuer string) (oauth.AuthorizationServerMetadata, error) {
	var md oauth.AuthorizationServerMetadata
	urls, err := oauth.AuthorizationServerMetadataURLs(issuer)
	if err != nil {
		return md, fmt.Errorf("auth: issuer: %w", err)
	}
	var errs []error
	for _, u := range urls {
		var m oauth.AuthorizationServerMetadata
		err := getJSON(ctx, client, u, &m)
		if errors.Is(err, errNotFound) {
			errs = append(errs, err)
			continue
		}
		if err != nil {
			return md, err
		}
		if err := m.CheckIssuer(issuer); err != nil {
			return md, fmt.Errorf("auth: metadata at %s: %w", u, err)
		}
		return m, nil
	}
	return md, fmt.Errorf("auth: no metadata for issuer %s: %w", issuer, errors.Join(errs...))
}
