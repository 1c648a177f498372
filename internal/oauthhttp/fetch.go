package oauthhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/internal/httpbody"
	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/oauth"
)

// DefaultTimeout bounds each call made with a nil *http.Client.
const DefaultTimeout = 10 * time.Second

// MaxBody bounds every answer read here: metadata, key sets, token,
// introspection and registration answers are a few kilobytes.
const MaxBody = 1 << 20

// Sentinel errors, wrapped with %w by every function of the package.
var (
	// ErrInsecureURL reports a URL [CheckURL] refuses.
	ErrInsecureURL = errors.New("URL is not https (or http on a loopback host)")
	// ErrRedirect is matched by the [*StatusError] of a 3xx answer: redirects
	// are refused, never followed.
	ErrRedirect = errors.New("redirect refused")
	// ErrNotJSON reports a successful answer whose Content-Type is not JSON.
	ErrNotJSON = errors.New("content type is not JSON")
)

// maxErrorBody bounds the part of an error answer kept in a StatusError.
const maxErrorBody = 200

// StatusError reports an answer whose status is not the one expected.
// When its body is an OAuth error response (RFC 6749 §5.2, RFC 7591
// §3.2.2, RFC 7009 §2.2.1), OAuth holds it and the StatusError unwraps to
// it, so that errors.As finds an *oauth.ErrorResponse.
type StatusError struct {
	// URL is the request's URL, with any password redacted.
	URL string
	// StatusCode is the answer's status.
	StatusCode int
	// Body is the start of the answer's body, for the person reading the
	// error.
	Body string
	// OAuth is the OAuth error the body holds, or nil.
	OAuth *oauth.ErrorResponse
}

// Error implements error.
func (e *StatusError) Error() string {
	switch {
	case e.OAuth != nil:
		return fmt.Sprintf("%s: HTTP %d: %v", e.URL, e.StatusCode, e.OAuth)
	case e.StatusCode/100 == 3:
		return fmt.Sprintf("%s: HTTP %d: %v", e.URL, e.StatusCode, ErrRedirect)
	}
	return fmt.Sprintf("%s: HTTP %d: %s", e.URL, e.StatusCode, e.Body)
}

// Is makes a 3xx StatusError match ErrRedirect.
func (e *StatusError) Is(target error) bool { return target == ErrRedirect && e.StatusCode/100 == 3 }

// Unwrap returns the OAuth error of the body, if any.
func (e *StatusError) Unwrap() error {
	if e.OAuth == nil {
		return nil
	}
	return e.OAuth
}

// CheckURL reports, with an error wrapping ErrInsecureURL, a URL an OAuth
// request must not go to: not absolute, without a host, with userinfo or a
// fragment, or neither https nor http on a loopback host. The rule is
// package oauth's (127.0.0.1, [::1] and localhost are loopback), the one
// metadata validation and redirect URIs follow, applied with both
// oauth's RFC 3986 parser and net/url's, which the request will use: a URL
// accepted here is accepted there, and no spelling the two parsers read
// differently gets through.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %q: %v", ErrInsecureURL, raw, err)
	case u.User != nil:
		return fmt.Errorf("%w: %q carries credentials", ErrInsecureURL, raw)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Errorf("%w: %q has a fragment", ErrInsecureURL, raw)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("%w: %q has no host", ErrInsecureURL, raw)
	case u.Scheme != "https" && !(u.Scheme == "http" && oauth.IsLoopbackRedirect(raw)):
		return fmt.Errorf("%w: %q", ErrInsecureURL, raw)
	}
	// The same rule, as package oauth reads URIs.
	if err := oauth.ValidateRedirectURI(raw); err != nil {
		return fmt.Errorf("%w: %w", ErrInsecureURL, err)
	}
	return nil
}

// client returns hc, or a client with DefaultTimeout when hc is nil, in a
// copy that does not follow redirects: the 3xx answer comes back to Do,
// which refuses it. hc itself is not modified.
func client(hc *http.Client) *http.Client {
	var c http.Client
	if hc != nil {
		c = *hc
	} else {
		c.Timeout = DefaultTimeout
	}
	c.CheckRedirect = noRedirect
	return &c
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Do sends req, whose URL [CheckURL] must accept, with hc (nil means a
// client with DefaultTimeout; its redirect policy is not used), and reads
// the answer within MaxBody bytes. An answer with status want (0 means any
// 2xx) is decoded into v, unless v is nil; its Content-Type, when present,
// must be JSON. Any other answer is a *StatusError, which unwraps to the
// *oauth.ErrorResponse its body holds, if any. Do returns the answer's header whenever an
// answer came. It blocks until the answer is read or req's context ends.
func Do(hc *http.Client, req *http.Request, want int, v any) (http.Header, error) {
	return DoLimited(hc, req, want, MaxBody, v)
}

// DoLimited is [Do] with limit in place of MaxBody, for a caller whose
// bound is an option of its own (limit <= 0 means MaxBody).
func DoLimited(hc *http.Client, req *http.Request, want int, limit int64, v any) (http.Header, error) {
	if limit <= 0 {
		limit = MaxBody
	}
	if err := CheckURL(req.URL.String()); err != nil {
		return nil, err
	}
	resp, err := client(hc).Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Redacted(), err)
	}
	defer resp.Body.Close()
	ok := resp.StatusCode == want || (want == 0 && resp.StatusCode/100 == 2)
	// A body cut by the deadline can end in a clean EOF: httpbody.Read
	// refuses it whatever the read returned (#16.6). An error page over
	// the limit still reports its status.
	body, err := httpbody.Read(req.Context(), resp, limit)
	if err != nil && (ok || !errors.Is(err, httpbody.ErrTooLarge)) {
		return resp.Header, fmt.Errorf("%s %s: %w", req.Method, req.URL.Redacted(), err)
	}
	if !ok {
		return resp.Header, statusError(req, resp, body)
	}
	if v == nil {
		return resp.Header, nil
	}
	if err := checkJSONType(resp.Header.Get("Content-Type")); err != nil {
		return resp.Header, fmt.Errorf("%s %s: %w", req.Method, req.URL.Redacted(), err)
	}
	if err := strictjson.Unmarshal(body, v); err != nil {
		return resp.Header, fmt.Errorf("%s %s: %w", req.Method, req.URL.Redacted(), err)
	}
	return resp.Header, nil
}

// statusError describes an unexpected answer, with the OAuth error its
// body carries if any (never for a redirect, whose body nobody asked for).
func statusError(req *http.Request, resp *http.Response, body []byte) error {
	se := &StatusError{URL: req.URL.Redacted(), StatusCode: resp.StatusCode}
	if resp.StatusCode/100 != 3 {
		var e oauth.ErrorResponse
		if strictjson.Unmarshal(body, &e) == nil && e.Code != "" {
			se.OAuth = &e
		}
	}
	if len(body) > maxErrorBody {
		body = body[:maxErrorBody]
	}
	se.Body = string(body)
	return se
}

// checkJSONType accepts an absent Content-Type, application/json and the
// structured +json types (application/jwk-set+json, RFC 7517 §8.5.1), with
// any parameters. A present non-JSON type is refused: an HTML page in
// place of a document is a login page, a captive portal or a
// misconfiguration, not metadata.
func checkJSONType(ct string) error {
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return fmt.Errorf("%w: %q", ErrNotJSON, ct)
	}
	return nil
}

// GetJSON fetches the JSON document at u with GET and decodes it into v,
// under the rules of [Do] with status 200 expected (RFC 8414 §3.2, RFC 7517
// §5, RFC 9728 §3.2).
func GetJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	return getJSON(ctx, hc, u, MaxBody, v)
}

func getJSON(ctx context.Context, hc *http.Client, u string, limit int64, v any) error {
	if err := CheckURL(u); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	_, err = DoLimited(hc, req, http.StatusOK, limit, v)
	return err
}

// PostForm posts form (application/x-www-form-urlencoded) to endpoint
// under the rules of [Do] with status 200 expected, and decodes the answer
// into v (nil: the body is read and dropped, as RFC 7009 §2.2 revocation
// answers are). prepare, if not nil, may add headers and form members
// (client authentication, a DPoP proof) before the form is encoded. It
// returns the answer's header whenever an answer came.
func PostForm(ctx context.Context, hc *http.Client, endpoint string, form url.Values, prepare func(*http.Request, url.Values) error, v any) (http.Header, error) {
	return postForm(ctx, hc, endpoint, form, prepare, MaxBody, v)
}

func postForm(ctx context.Context, hc *http.Client, endpoint string, form url.Values, prepare func(*http.Request, url.Values) error, limit int64, v any) (http.Header, error) {
	if err := CheckURL(endpoint); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, nil)
	if err != nil {
		return nil, err
	}
	if prepare != nil {
		if err := prepare(req, form); err != nil {
			return nil, err
		}
	}
	body := form.Encode()
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	req.Body, _ = req.GetBody()
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	return DoLimited(hc, req, http.StatusOK, limit, v)
}
