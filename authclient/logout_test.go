package authclient

import (
	"context"
	"errors"
	"testing"
)

func TestLogout(t *testing.T) {
	tests := []struct {
		name        string
		revocation  bool
		login       bool
		wantErr     error
		revocations []string // token_type_hint of each revocation, in order
	}{
		{"revokes refresh then access token", true, true, nil, []string{"refresh_token", "access_token"}},
		{"no revocation endpoint", false, true, ErrNoRevocation, nil},
		{"no token: nothing to do", true, false, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := newFakeAS(t, func(a *fakeAS) { a.Revocation = tt.revocation })
			rs := newFakeRS(t, as, nil)
			store := &MemoryStore{}
			tr := NewTransport(Config{Authorizer: follower(), Store: store})
			c := tr.Client()
			var at string
			if tt.login {
				if st, err := call(t, c, rs.url(), `{}`); err != nil || st != 200 {
					t.Fatalf("call: %d %v", st, err)
				}
				e, _ := store.Load(context.Background(), Key{Resource: rs.url(), Issuer: as.Issuer()})
				if e == nil || e.Token == nil {
					t.Fatal("no token stored after login")
				}
				at = e.Token.AccessToken
			}
			err := tr.Logout(context.Background(), rs.url())
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("Logout: %v, want %v", err, tt.wantErr)
			}
			as.Mu.Lock()
			var hints []string
			for _, f := range as.Revocations {
				hints = append(hints, f.Get("token_type_hint"))
				if f.Get("client_id") == "" {
					t.Errorf("revocation without client authentication: %v", f)
				}
			}
			as.Mu.Unlock()
			if len(hints) != len(tt.revocations) {
				t.Fatalf("revocations %v, want %v", hints, tt.revocations)
			}
			for i := range hints {
				if hints[i] != tt.revocations[i] {
					t.Fatalf("revocations %v, want %v", hints, tt.revocations)
				}
			}
			if !tt.login {
				return
			}
			if _, valid := as.ScopesOf(at); valid == tt.revocation {
				t.Errorf("access token valid at the server after logout: %v (revocation %v)", valid, tt.revocation)
			}
			e, _ := store.Load(context.Background(), Key{Resource: rs.url(), Issuer: as.Issuer()})
			if e == nil || e.Token != nil || e.Client == nil {
				t.Fatalf("store after logout: %+v; want the client kept and the token gone", e)
			}
			// The next call authorizes again, with the kept registration.
			if st, err := call(t, c, rs.url(), `{}`); err != nil || st != 200 {
				t.Fatalf("call after logout: %d %v", st, err)
			}
			if n := len(as.Authorizations); n != 2 {
				t.Errorf("%d authorizations, want 2 (login, then after logout)", n)
			}
			if n := len(as.Registrations); n != 1 {
				t.Errorf("%d registrations, want 1", n)
			}
		})
	}
}
