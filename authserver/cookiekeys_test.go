package authserver_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/store/memory"
)

// TestCookieKeyStatic checks that Config.CookieKey stays the only key:
// nothing is stored, and a rotation is refused with ErrStaticCookieKey.
// Without it, the first server on a store stores one key.
func TestCookieKeyStatic(t *testing.T) {
	for _, key := range [][]byte{bytes.Repeat([]byte{7}, 32), nil} {
		st := memory.New()
		s, err := authserver.NewServer(t.Context(), authserver.Config{Issuer: "http://127.0.0.1:9000", Store: st, DevUser: "alice", CookieKey: key})
		if err != nil {
			t.Fatal(err)
		}
		keys, _ := st.CookieKeys(t.Context())
		err = s.RotateCookieKey(t.Context())
		if key != nil && (!errors.Is(err, authserver.ErrStaticCookieKey) || len(keys) != 0) {
			t.Fatalf("static key: rotate %v, %d keys stored", err, len(keys))
		}
		if key == nil && (err != nil || len(keys) != 1) {
			t.Fatalf("stored keys: rotate %v, %d keys stored", err, len(keys))
		}
	}
}
