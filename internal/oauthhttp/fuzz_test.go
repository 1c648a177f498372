package oauthhttp

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/mcpstack/mcpstack/oauth"
)

// FuzzCheckURL: a URL CheckURL accepts as an endpoint is accepted by the
// metadata validation of package oauth too (one https rule, not two that
// disagree), and CheckURL never panics.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://as.example/token", "http://127.0.0.1:8080/t", "http://[::1]/t", "http://localhost/t",
		"http://127.0.0.2/t", "http://[::ffff:127.0.0.1]/t", "https://u@as.example/", "https://as.example/#",
		"https://as.example/a?b=c", "HTTP://LOCALHOST/", "https://[fe80::1%25eth0]/", "https://as.example:99999/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		if CheckURL(u) != nil {
			return
		}
		m := oauth.AuthorizationServerMetadata{
			Issuer:                 "https://as.example",
			AuthorizationEndpoint:  u,
			TokenEndpoint:          "https://as.example/token",
			ResponseTypesSupported: []string{"code"},
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("CheckURL accepts %q, metadata validation refuses it: %v", u, err)
		}
	})
}

// FuzzDo feeds Do answers an authorization server could send (status,
// Content-Type, body), through a transport that never touches the
// network: Do never panics, takes only a 200 with a JSON (or absent)
// Content-Type, and reports any other status as a *StatusError carrying
// it.
func FuzzDo(f *testing.F) {
	f.Add(200, "application/json", []byte(`{"issuer":"https://as.example"}`))
	f.Add(200, "text/html", []byte(`<html>`))
	f.Add(400, "application/json", []byte(`{"error":"invalid_grant"}`))
	f.Add(302, "", []byte(``))
	f.Add(200, "", []byte(`{"issuer":"a","issuer":"b"}`))
	f.Add(503, "application/problem+json", []byte(`{"error":""}`))
	f.Fuzz(func(t *testing.T, status int, ctype string, body []byte) {
		if status < 100 || status > 999 {
			return
		}
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			if ctype != "" {
				h.Set("Content-Type", ctype)
			}
			return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
		})}
		req, _ := http.NewRequest(http.MethodGet, "https://as.example/doc", nil)
		var v oauth.AuthorizationServerMetadata
		_, err := Do(hc, req, http.StatusOK, &v)
		if err == nil {
			if status != http.StatusOK || checkJSONType(ctype) != nil {
				t.Fatalf("took a %d answer of type %q", status, ctype)
			}
			return
		}
		var se *StatusError
		if status != http.StatusOK && (!errors.As(err, &se) || se.StatusCode != status || len(se.Body) > maxErrorBody) {
			t.Fatalf("status %d: err = %v", status, err)
		}
	})
}
