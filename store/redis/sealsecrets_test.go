package redis_test

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/seal"
	"github.com/mcpstack/mcpstack/store/redis"
)

// TestSealSecrets: replicas starting at once on a fresh prefix agree on
// one secret; a secret added later comes first (it seals) with the old
// one after it (it still opens); a hand-written entry that is not base64
// is refused, as is a short secret.
func TestSealSecrets(t *testing.T) {
	c := newClient(t)
	prefix := freshPrefix(t, c)
	const n = 8
	got := make([][][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = redis.New(newClient(t), prefix).SealSecrets(t.Context()) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || len(got[i]) != 1 || len(got[i][0]) != redis.SealSecretSize || !bytes.Equal(got[i][0], got[0][0]) {
			t.Fatalf("replica %d: %x %v, want the one secret %x", i, got[i], errs[i], got[0])
		}
	}
	s := redis.New(c, prefix)
	first := got[0][0]
	newer := seal.GenerateSecret()
	if err := s.AddSealSecret(t.Context(), newer); err != nil {
		t.Fatal(err)
	}
	ring, err := s.SealSecrets(t.Context())
	if err != nil || len(ring) != 2 || !bytes.Equal(ring[0], newer) || !bytes.Equal(ring[1], first) {
		t.Fatalf("after rotation: %x %v, want [newer first]", ring, err)
	}
	// A replica started before the rotation opens nothing the new ring
	// seals, and the new ring opens what the old one sealed.
	oldRing, _ := seal.NewRing([][]byte{first}, nil)
	newRing, err := seal.NewRing(ring, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := oldRing.Seal([]byte("x"), 60e9, nil)
	if _, err := newRing.Open(v, nil); err != nil {
		t.Fatalf("the rotated ring does not open the old key's value: %v", err)
	}
	for _, tc := range []struct {
		name   string
		secret []byte
	}{{"empty", nil}, {"short", make([]byte, redis.SealSecretSize-1)}} {
		if err := s.AddSealSecret(t.Context(), tc.secret); !errors.Is(err, redis.ErrBadSealSecret) {
			t.Errorf("%s secret: %v, want ErrBadSealSecret", tc.name, err)
		}
	}
	if err := c.LPush(t.Context(), prefix+"seal-secrets", "not base64!").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SealSecrets(t.Context()); !errors.Is(err, redis.ErrBadSealSecret) {
		t.Fatalf("hand-written entry: %v, want ErrBadSealSecret", err)
	}
}
