package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"testing"
	"time"
)

func TestTokenResponseJSON(t *testing.T) {
	tests := []struct {
		in   string
		want TokenResponse
	}{
		{
			`{"access_token":"2YotnFZFEjr1zCsicMWpAA","token_type":"example","expires_in":3600,"refresh_token":"tGzv3JOkF0XG5Qx2TlKWIA","example_parameter":"example_value"}`,
			TokenResponse{AccessToken: "2YotnFZFEjr1zCsicMWpAA", TokenType: "example", ExpiresIn: 3600, RefreshToken: "tGzv3JOkF0XG5Qx2TlKWIA",
				Extra: map[string]json.RawMessage{"example_parameter": json.RawMessage(`"example_value"`)}},
		},
		{`{"access_token":"a","token_type":"Bearer","expires_in":"120"}`, TokenResponse{AccessToken: "a", TokenType: "Bearer", ExpiresIn: 120}},
		{`{"access_token":"a","token_type":"Bearer","expires_in":null}`, TokenResponse{AccessToken: "a", TokenType: "Bearer"}},
		{`{"access_token":"a","token_type":"Bearer","scope":"x y","id_token":"i","issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}`,
			TokenResponse{AccessToken: "a", TokenType: "Bearer", Scope: "x y", IDToken: "i", IssuedTokenType: "urn:ietf:params:oauth:token-type:access_token"}},
	}
	for _, tt := range tests {
		var got TokenResponse
		if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
			t.Errorf("Unmarshal(%s): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Unmarshal(%s) =\n%#v\nwant\n%#v", tt.in, got, tt.want)
		}
		out, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var back TokenResponse
		if err := json.Unmarshal(out, &back); err != nil || !reflect.DeepEqual(back, got) {
			t.Errorf("round trip through %s = %#v, %v", out, back, err)
		}
	}
	for _, bad := range []string{`{"expires_in":"soon"}`, `{"expires_in":1.5}`, `{"expires_in":true}`, `{"expires_in":"1`, `{"access_token":1}`, `[]`} {
		var got TokenResponse
		if err := json.Unmarshal([]byte(bad), &got); err == nil {
			t.Errorf("Unmarshal(%s) = %#v, want error", bad, got)
		}
	}
	out, _ := json.Marshal(TokenResponse{AccessToken: "a", TokenType: "Bearer"})
	if string(out) != `{"access_token":"a","token_type":"Bearer"}` {
		t.Errorf("Marshal = %s", out)
	}
}

func TestTokenResponseHelpers(t *testing.T) {
	now := time.Date(2025, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		expiresIn int64
		want      time.Time
	}{
		{0, time.Time{}},
		{-5, time.Time{}},
		{1, now.Add(time.Second)},
		{3600, now.Add(time.Hour)},
		{math.MaxInt64, now.Add(time.Duration(math.MaxInt64/int64(time.Second)) * time.Second)},
	}
	for _, tt := range tests {
		if got := (TokenResponse{ExpiresIn: tt.expiresIn}).Expiry(now); !got.Equal(tt.want) {
			t.Errorf("Expiry with expires_in %d = %v, want %v", tt.expiresIn, got, tt.want)
		}
	}
	for tt, want := range map[string]bool{"Bearer": true, "bearer": true, "BEARER": true, "DPoP": false, "": false} {
		if got := (TokenResponse{TokenType: tt}).IsBearer(); got != want {
			t.Errorf("IsBearer(%q) = %v", tt, got)
		}
	}
	if got := (TokenResponse{Scope: " a  b "}).Scopes(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("Scopes = %v", got)
	}
	checkValidation(t, "valid", TokenResponse{AccessToken: "a", TokenType: "Bearer"}.Validate(), "")
	checkValidation(t, "no token", TokenResponse{TokenType: "Bearer"}.Validate(), "access_token")
	checkValidation(t, "no type", TokenResponse{AccessToken: "a"}.Validate(), "token_type")
	checkValidation(t, "negative", TokenResponse{AccessToken: "a", TokenType: "Bearer", ExpiresIn: -1}.Validate(), "expires_in")
}

func TestErrorResponse(t *testing.T) {
	var e ErrorResponse
	if err := json.Unmarshal([]byte(`{"error":"invalid_grant","error_description":"code expired","error_uri":"https://e"}`), &e); err != nil {
		t.Fatal(err)
	}
	if e != (ErrorResponse{Code: InvalidGrant, Description: "code expired", URI: "https://e"}) {
		t.Fatalf("decoded %#v", e)
	}
	if got := e.Error(); got != "oauth: invalid_grant: code expired" {
		t.Errorf("Error() = %q", got)
	}
	if got := (&ErrorResponse{Code: InvalidClient}).Error(); got != "oauth: invalid_client" {
		t.Errorf("Error() = %q", got)
	}
	out, _ := json.Marshal(ErrorResponse{Code: InvalidToken})
	if string(out) != `{"error":"invalid_token"}` {
		t.Errorf("Marshal = %s", out)
	}

	var err error = fmt.Errorf("token exchange: %w", &e)
	if !errors.Is(err, &ErrorResponse{Code: InvalidGrant}) {
		t.Error("errors.Is by code failed")
	}
	if !errors.Is(err, &ErrorResponse{Code: InvalidGrant, Description: "code expired"}) {
		t.Error("errors.Is by code and description failed")
	}
	if errors.Is(err, &ErrorResponse{Code: InvalidGrant, Description: "other"}) {
		t.Error("errors.Is matched a different description")
	}
	if errors.Is(err, &ErrorResponse{Code: InvalidClient}) {
		t.Error("errors.Is matched a different code")
	}
	if errors.Is(err, ErrInvalidMetadata) {
		t.Error("errors.Is matched a sentinel")
	}
	var target *ErrorResponse
	if !errors.As(err, &target) || target.Code != InvalidGrant {
		t.Error("errors.As failed")
	}
	if (&e).Is((*ErrorResponse)(nil)) {
		t.Error("Is(nil *ErrorResponse) = true")
	}
}

func TestErrorCodeHTTPStatus(t *testing.T) {
	tests := map[ErrorCode]int{
		InvalidRequest:          http.StatusBadRequest,
		InvalidClient:           http.StatusUnauthorized,
		InvalidGrant:            http.StatusBadRequest,
		UnauthorizedClient:      http.StatusBadRequest,
		UnsupportedGrantType:    http.StatusBadRequest,
		InvalidScope:            http.StatusBadRequest,
		AccessDenied:            http.StatusForbidden,
		UnsupportedResponseType: http.StatusBadRequest,
		ServerError:             http.StatusInternalServerError,
		TemporarilyUnavailable:  http.StatusServiceUnavailable,
		InvalidToken:            http.StatusUnauthorized,
		InsufficientScope:       http.StatusForbidden,
		InvalidClientMetadata:   http.StatusBadRequest,
		InvalidRedirectURI:      http.StatusBadRequest,
		InvalidTarget:           http.StatusBadRequest,
		"something_new":         http.StatusBadRequest,
	}
	for code, want := range tests {
		if got := code.HTTPStatus(); got != want {
			t.Errorf("%s.HTTPStatus() = %d, want %d", code, got, want)
		}
	}
	// The constants spell the registered codes.
	names := map[ErrorCode]string{
		InvalidRequest: "invalid_request", InvalidClient: "invalid_client", InvalidGrant: "invalid_grant",
		UnauthorizedClient: "unauthorized_client", UnsupportedGrantType: "unsupported_grant_type",
		InvalidScope: "invalid_scope", AccessDenied: "access_denied", UnsupportedResponseType: "unsupported_response_type",
		ServerError: "server_error", TemporarilyUnavailable: "temporarily_unavailable", InvalidToken: "invalid_token",
		InsufficientScope: "insufficient_scope", InvalidClientMetadata: "invalid_client_metadata",
		InvalidRedirectURI: "invalid_redirect_uri", InvalidTarget: "invalid_target",
	}
	if len(names) != 15 {
		t.Fatalf("constants collide: %d distinct", len(names))
	}
	for c, s := range names {
		if string(c) != s {
			t.Errorf("constant %q, want %q", c, s)
		}
	}
}
