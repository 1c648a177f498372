package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/mcpstack/mcpstack/internal/httpbody"
	"github.com/mcpstack/mcpstack/internal/netguard"
)

// fetcher fetches URLs for the fetch tool: http and https only, bounded
// in size and time, no cookies, at most five redirects, each of them http
// or https. Unless allowPrivate is set, it refuses to connect to loopback,
// private, link-local and other non-public addresses (the check is made on
// the address actually dialled, so DNS rebinding cannot get around it).
type fetcher struct {
	maxBytes     int64
	timeout      time.Duration
	allowPrivate bool
	client       *http.Client
}

// errFetch marks a refusal by the fetcher.
var errFetch = errors.New("fetch refused")

func newFetcher(maxBytes int64, timeout time.Duration, allowPrivate bool) *fetcher {
	f := &fetcher{maxBytes: maxBytes, timeout: timeout, allowPrivate: allowPrivate}
	dialer := &net.Dialer{Timeout: timeout, Control: f.checkDial}
	f.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dialer.DialContext,
			TLSHandshakeTimeout:    timeout,
			ResponseHeaderTimeout:  timeout,
			MaxResponseHeaderBytes: 64 << 10,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return fmt.Errorf("%w: more than 5 redirects", errFetch)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("%w: redirect to a %q URL", errFetch, req.URL.Scheme)
			}
			return nil
		},
	}
	return f
}

// checkDial refuses non-public addresses unless they are allowed: the
// module's one guard (internal/netguard), on the address actually dialled.
func (f *fetcher) checkDial(network, address string, c syscall.RawConn) error {
	if err := (netguard.Policy{AllowAll: f.allowPrivate}).Control(network, address, c); err != nil {
		return fmt.Errorf("%w: %w (serve --fetch-private allows it)", errFetch, err)
	}
	return nil
}

// fetchResult is what fetch got.
type fetchResult struct {
	URL         string
	Status      int
	ContentType string
	Body        []byte
	Truncated   bool
}

func (f *fetcher) fetch(ctx context.Context, rawURL string) (*fetchResult, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errFetch, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: only http and https URLs, not %q", errFetch, u.Scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: URLs with credentials", errFetch)
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "mcpstack-fetch/"+version)
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	// A body cut by the deadline can end in a clean EOF: httpbody.Read
	// refuses it whatever the read returned (#16.6). A body over the limit
	// is shown truncated, and said so.
	body, err := httpbody.Read(ctx, resp, f.maxBytes)
	truncated := errors.Is(err, httpbody.ErrTooLarge)
	if err != nil && !truncated {
		return nil, fmt.Errorf("%w: %w", errFetch, err)
	}
	return &fetchResult{URL: resp.Request.URL.String(), Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: body, Truncated: truncated}, nil
}
