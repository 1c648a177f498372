package oauthhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpstack/mcpstack/internal/httpbody"
	"github.com/mcpstack/mcpstack/oauth"
)

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://as.example", true},
		{"https://as.example/tenant?x=1", true},
		{"HTTPS://AS.example/", true},
		{"http://127.0.0.1:8080/token", true},
		{"http://[::1]:8080/token", true},
		{"http://localhost/token", true},
		{"http://LocalHost:1/token", true},
		{"http://as.example/token", false},
		{"http://127.0.0.2/token", false},          // loopback as package oauth defines it
		{"http://[::ffff:127.0.0.1]/token", false}, // an IPv4-mapped spelling is not taken as loopback
		{"http://localhost.evil.example/", false},
		{"https://user:pw@as.example/", false},
		{"https://as.example/#frag", false},
		{"https://as.example/#", false},
		{"https:///path", false},
		{"/relative", false},
		{"ftp://as.example/", false},
		{"javascript:alert(1)", false},
		{"", false},
		{"https://as.example/%zz", false},
	}
	for _, tc := range tests {
		err := CheckURL(tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("CheckURL(%q) = %v, want ok = %v", tc.url, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInsecureURL) {
			t.Errorf("CheckURL(%q) = %v, want ErrInsecureURL", tc.url, err)
		}
	}
}

// answer is one canned HTTP answer.
type answer struct {
	status int
	ctype  string // "-" for none
	body   string
	header map[string]string
}

func (a answer) serve(w http.ResponseWriter) {
	if a.ctype != "-" {
		ct := a.ctype
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
	} else {
		w.Header()["Content-Type"] = nil // no sniffing either
	}
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	if a.status == 0 {
		a.status = 200
	}
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

// TestGetJSON is the table of what an answer must be to be taken.
func TestGetJSON(t *testing.T) {
	big := `{"x":"` + strings.Repeat("a", MaxBody) + `"}`
	tests := []struct {
		name    string
		answer  answer
		want    string // the decoded member x
		wantErr error  // matched with errors.Is; nil means success
		status  int    // for a *StatusError
		oauth   oauth.ErrorCode
	}{
		{name: "json", answer: answer{body: `{"x":"ok"}`}, want: "ok"},
		{name: "json with charset", answer: answer{ctype: "application/json; charset=utf-8", body: `{"x":"ok"}`}, want: "ok"},
		{name: "+json type", answer: answer{ctype: "application/jwk-set+json", body: `{"x":"ok"}`}, want: "ok"},
		{name: "no content type", answer: answer{ctype: "-", body: `{"x":"ok"}`}, want: "ok"},
		{name: "html", answer: answer{ctype: "text/html", body: `{"x":"ok"}`}, wantErr: ErrNotJSON},
		{name: "text/plain", answer: answer{ctype: "text/plain", body: `{"x":"ok"}`}, wantErr: ErrNotJSON},
		{name: "malformed content type", answer: answer{ctype: "application/json;;", body: `{"x":"ok"}`}, wantErr: ErrNotJSON},
		{name: "duplicate member", answer: answer{body: `{"x":"a","x":"b"}`}, wantErr: errAny},
		{name: "case-folded member ignored", answer: answer{body: `{"X":"evil"}`}, want: ""},
		{name: "over the limit", answer: answer{body: big}, wantErr: httpbody.ErrTooLarge},
		{name: "201 is not 200", answer: answer{status: 201, body: `{"x":"ok"}`}, status: 201},
		{name: "404", answer: answer{status: 404, body: "not found"}, status: 404},
		{name: "500", answer: answer{status: 500, body: "boom"}, status: 500},
		{name: "oauth error", answer: answer{status: 400, body: `{"error":"invalid_request"}`}, status: 400, oauth: oauth.InvalidRequest},
		{name: "error page over the limit keeps its status", answer: answer{status: 503, body: big}, status: 503},
		{name: "302", answer: answer{status: 302, header: map[string]string{"Location": "/elsewhere"}}, wantErr: ErrRedirect, status: 302},
		{name: "307", answer: answer{status: 307, header: map[string]string{"Location": "/elsewhere"}}, wantErr: ErrRedirect, status: 307},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var elsewhere atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/elsewhere" {
					elsewhere.Add(1)
					io.WriteString(w, `{"x":"redirected"}`)
					return
				}
				tc.answer.serve(w)
			}))
			defer srv.Close()
			var v struct {
				X string `json:"x"`
			}
			err := GetJSON(context.Background(), srv.Client(), srv.URL+"/doc", &v)
			if elsewhere.Load() != 0 {
				t.Fatal("a redirect was followed")
			}
			switch {
			case tc.wantErr == nil && tc.status == 0:
				if err != nil || v.X != tc.want {
					t.Fatalf("got %q, %v; want %q", v.X, err, tc.want)
				}
				return
			case err == nil:
				t.Fatalf("got %q, no error", v.X)
			case tc.wantErr != nil && tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			var se *StatusError
			if tc.status != 0 && (!errors.As(err, &se) || se.StatusCode != tc.status) {
				t.Fatalf("err = %v, want a StatusError %d", err, tc.status)
			}
			var oe *oauth.ErrorResponse
			if (tc.oauth != "") != errors.As(err, &oe) || (oe != nil && oe.Code != tc.oauth) {
				t.Fatalf("err = %v, want OAuth error %q", err, tc.oauth)
			}
		})
	}
}

// errAny stands for any error in the tables.
var errAny = errors.New("any error")

// TestGetJSONRefusesBeforeSending: a URL the rule refuses is never asked.
func TestGetJSONRefusesBeforeSending(t *testing.T) {
	var asked atomic.Int32
	hc := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		asked.Add(1)
		return nil, errors.New("sent")
	})}
	for _, u := range []string{"http://as.example/doc", "https://u:p@as.example/", "https://as.example/#f"} {
		if err := GetJSON(context.Background(), hc, u, new(any)); !errors.Is(err, ErrInsecureURL) {
			t.Errorf("GetJSON(%q) = %v, want ErrInsecureURL", u, err)
		}
	}
	if asked.Load() != 0 {
		t.Fatalf("%d requests sent", asked.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestDoLeavesClientAlone: the caller's client keeps its redirect policy.
func TestDoLeavesClientAlone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer{body: `{}`}.serve(w)
	}))
	defer srv.Close()
	hc := srv.Client()
	if err := GetJSON(context.Background(), hc, srv.URL, new(any)); err != nil {
		t.Fatal(err)
	}
	if hc.CheckRedirect != nil {
		t.Fatal("the caller's client was modified")
	}
}
