// Package testutil holds small helpers for the tests of packages that may
// not import each other (auth and authserver): request bodies that count
// what a handler reads of them, for the tests that a bound is enforced
// before anything is authenticated (#16.2). It imports nothing of the
// module.
package testutil

import (
	"io"
	"net/http"
	"net/http/httptest"
)

// EndlessForm is an endless form-encoded request body ("a=aaaa…") that
// counts in N the bytes read from it. It is not safe for concurrent use;
// a test reads N after the handler returned.
type EndlessForm struct{ N int64 }

// Read fills p and never ends.
func (c *EndlessForm) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	if c.N == 0 && len(p) > 1 {
		p[1] = '='
	}
	c.N += int64(len(p))
	return len(p), nil
}

// Close does nothing.
func (c *EndlessForm) Close() error { return nil }

// CountingBody is a request body reading R that counts in N the bytes
// read from it. It is not safe for concurrent use.
type CountingBody struct {
	R io.Reader
	N int64
}

// Read reads from R.
func (c *CountingBody) Read(p []byte) (int, error) {
	k, err := c.R.Read(p)
	c.N += int64(k)
	return k, err
}

// Close does nothing.
func (c *CountingBody) Close() error { return nil }

// FormPost returns a POST request to target whose body is body, of
// declared Content-Length (-1: unknown, as when chunked), with the
// Content-Type of a form (application/x-www-form-urlencoded).
func FormPost(target string, body io.ReadCloser, declared int64) *http.Request {
	r := httptest.NewRequest(http.MethodPost, target, nil)
	r.Body, r.ContentLength = body, declared
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r
}
