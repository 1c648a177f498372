package oauthhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/oauth"
)

func TestClientAuthApply(t *testing.T) {
	tests := []struct {
		name      string
		auth      ClientAuth
		wantBasic string // the Authorization header
		wantForm  url.Values
		wantErr   bool
	}{
		{name: "none", auth: ClientAuth{ID: "c", Method: oauth.AuthMethodNone}, wantForm: url.Values{"client_id": {"c"}}},
		{name: "basic form-encodes first", auth: ClientAuth{ID: "c:1", Secret: "s&2", Method: oauth.AuthMethodClientSecretBasic}, wantBasic: "Basic YyUzQTE6cyUyNjI=", wantForm: url.Values{}},
		{name: "post", auth: ClientAuth{ID: "c", Secret: "s", Method: oauth.AuthMethodClientSecretPost}, wantForm: url.Values{"client_id": {"c"}, "client_secret": {"s"}}},
		{name: "private_key_jwt", auth: ClientAuth{ID: "c", Method: oauth.AuthMethodPrivateKeyJWT, Assertion: func() (string, error) { return "jwt", nil }},
			wantForm: url.Values{"client_id": {"c"}, "client_assertion_type": {ClientAssertionType}, "client_assertion": {"jwt"}}},
		{name: "private_key_jwt without a key", auth: ClientAuth{ID: "c", Method: oauth.AuthMethodPrivateKeyJWT}, wantErr: true},
		{name: "empty method", auth: ClientAuth{ID: "c"}, wantErr: true},
		{name: "unknown method", auth: ClientAuth{ID: "c", Method: "tls_client_auth"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, "https://as.example/token", nil)
			form := url.Values{}
			err := tc.auth.Apply(req, form)
			if tc.wantErr {
				if !errors.Is(err, ErrAuthMethod) {
					t.Fatalf("err = %v, want ErrAuthMethod", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := req.Header.Get("Authorization"); got != tc.wantBasic {
				t.Errorf("Authorization = %q, want %q", got, tc.wantBasic)
			}
			if form.Encode() != tc.wantForm.Encode() {
				t.Errorf("form = %q, want %q", form.Encode(), tc.wantForm.Encode())
			}
		})
	}
}

// TestRetrieveToken is the table of token endpoint answers.
func TestRetrieveToken(t *testing.T) {
	tests := []struct {
		name    string
		answer  answer
		wantErr error
		oauth   oauth.ErrorCode
	}{
		{name: "bearer", answer: answer{body: `{"access_token":"at","token_type":"Bearer","expires_in":60}`}},
		{name: "DPoP is the caller's business", answer: answer{body: `{"access_token":"at","token_type":"DPoP"}`}},
		{name: "no access_token", answer: answer{body: `{"token_type":"Bearer"}`}, wantErr: oauth.ErrInvalidMetadata},
		{name: "no token_type", answer: answer{body: `{"access_token":"at"}`}, wantErr: oauth.ErrInvalidMetadata},
		{name: "negative expires_in", answer: answer{body: `{"access_token":"at","token_type":"Bearer","expires_in":-1}`}, wantErr: oauth.ErrInvalidMetadata},
		{name: "html", answer: answer{ctype: "text/html", body: `{"access_token":"at","token_type":"Bearer"}`}, wantErr: ErrNotJSON},
		{name: "201", answer: answer{status: 201, body: `{"access_token":"at","token_type":"Bearer"}`}, wantErr: errAny},
		{name: "invalid_grant", answer: answer{status: 400, body: `{"error":"invalid_grant","error_description":"used"}`}, oauth: oauth.InvalidGrant},
		{name: "error with status 200", answer: answer{body: `{"error":"bad_verification_code"}`}, oauth: "bad_verification_code"},
		{name: "invalid_client on 401", answer: answer{status: 401, body: `{"error":"invalid_client"}`}, oauth: oauth.InvalidClient},
		{name: "server error page", answer: answer{status: 502, ctype: "text/html", body: "<h1>bad gateway</h1>"}, wantErr: errAny},
		{name: "307 would resend the secret", answer: answer{status: 307, header: map[string]string{"Location": "https://evil.example/token"}}, wantErr: ErrRedirect},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var got url.Values
			var basicID string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.ParseForm()
				mu.Lock()
				got = r.PostForm
				basicID, _, _ = r.BasicAuth()
				mu.Unlock()
				tc.answer.serve(w)
			}))
			defer srv.Close()
			form := url.Values{"grant_type": {"client_credentials"}}
			tr, _, err := RetrieveToken(context.Background(), srv.Client(), TokenRequest{
				Endpoint: srv.URL + "/token", Form: form,
				Auth: ClientAuth{ID: "c", Secret: "s", Method: oauth.AuthMethodClientSecretBasic},
			})
			mu.Lock()
			defer mu.Unlock()
			if got.Get("grant_type") != "client_credentials" || basicID != "c" {
				t.Fatalf("the server got %v, Basic %q", got, basicID)
			}
			if len(form) != 1 {
				t.Fatalf("the caller's form was changed: %v", form)
			}
			switch {
			case tc.wantErr == nil && tc.oauth == "":
				if err != nil || tr.AccessToken != "at" {
					t.Fatalf("got %+v, %v", tr, err)
				}
				return
			case err == nil:
				t.Fatalf("got %+v, no error", tr)
			case tc.wantErr != nil && tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			var oe *oauth.ErrorResponse
			if (tc.oauth != "") != errors.As(err, &oe) || (oe != nil && oe.Code != tc.oauth) {
				t.Fatalf("err = %v, want OAuth error %q", err, tc.oauth)
			}
		})
	}
}

// TestPostFormNoBody: a nil v drops the answer's body (RFC 7009 §2.2).
func TestPostFormNoBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "revoked")
	}))
	defer srv.Close()
	if _, err := PostForm(context.Background(), srv.Client(), srv.URL, url.Values{"token": {"t"}}, nil, nil); err != nil {
		t.Fatal(err)
	}
}
