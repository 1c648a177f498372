package seal

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

func secret(b byte) []byte { return bytes.Repeat([]byte{b}, MinSecretSize) }

// clock is a settable Options.Now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newRing(t *testing.T, c *clock, secrets ...[]byte) *Ring {
	t.Helper()
	r, err := NewRing(secrets, &Options{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSealOpen(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := newRing(t, c, secret(1))
	for _, payload := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("state"), 1000)} {
		s, err := r.Seal(payload, time.Minute, []byte("ad"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Open(s, []byte("ad"))
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("Open = %q, %v; want %q", got, err, payload)
		}
	}
	a, _ := r.Seal([]byte("same"), time.Minute, nil)
	b, _ := r.Seal([]byte("same"), time.Minute, nil)
	if a == b {
		t.Error("two seals of the same payload are equal: the nonce is not random")
	}
}

// TestOpenRefuses lists what Open must refuse, with the error it must
// give.
func TestOpenRefuses(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := newRing(t, c, secret(1))
	other := newRing(t, c, secret(2))
	good, err := r.Seal([]byte(`{"k":"v"}`), time.Minute, []byte("tools/call\x00echo"))
	if err != nil {
		t.Fatal(err)
	}
	foreign, _ := other.Seal([]byte(`{"k":"v"}`), time.Minute, []byte("tools/call\x00echo"))
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	flip := func(i int) string {
		b := bytes.Clone(raw)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	cases := []struct {
		name   string
		sealed string
		ad     string
		want   error
	}{
		{"empty", "", "tools/call\x00echo", ErrInvalid},
		{"not base64", "!!!!", "tools/call\x00echo", ErrInvalid},
		{"padded", good + "=", "tools/call\x00echo", ErrInvalid},
		{"suffix", good + "-TAMPERED", "tools/call\x00echo", ErrInvalid},
		{"truncated", good[:len(good)-4], "tools/call\x00echo", ErrInvalid},
		{"version", flip(0), "tools/call\x00echo", ErrInvalid},
		{"key id", flip(2), "tools/call\x00echo", ErrInvalid},
		{"nonce", flip(headerSize + 3), "tools/call\x00echo", ErrInvalid},
		{"ciphertext", flip(headerSize + nonceSize + 2), "tools/call\x00echo", ErrInvalid},
		{"tag", flip(len(raw) - 1), "tools/call\x00echo", ErrInvalid},
		{"other ad", good, "tools/call\x00other", ErrInvalid},
		{"no ad", good, "", ErrInvalid},
		{"other key", foreign, "tools/call\x00echo", ErrInvalid},
		{"too large", strings.Repeat("A", DefaultMaxSize+1), "", ErrTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Open(tc.sealed, []byte(tc.ad))
			if !errors.Is(err, tc.want) {
				t.Errorf("Open = %q, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestExpiry(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := newRing(t, c, secret(1))
	s, err := r.Seal([]byte("p"), 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(9 * time.Second)
	if _, err := r.Open(s, nil); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	c.t = c.t.Add(time.Second)
	if _, err := r.Open(s, nil); !errors.Is(err, ErrExpired) {
		t.Fatalf("at expiry: %v, want ErrExpired", err)
	}
	if _, err := r.Seal(nil, 0, nil); err == nil {
		t.Error("a zero ttl was accepted")
	}
}

// TestRotation: a ring with a new key first seals with it and still opens
// what the old key sealed; a ring without the old key does not.
func TestRotation(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	old := newRing(t, c, secret(1))
	rotated := newRing(t, c, secret(2), secret(1))
	retired := newRing(t, c, secret(2))
	s1, _ := old.Seal([]byte("old"), time.Minute, nil)
	if p, err := rotated.Open(s1, nil); err != nil || string(p) != "old" {
		t.Fatalf("rotated ring opening the old key's value: %q, %v", p, err)
	}
	s2, _ := rotated.Seal([]byte("new"), time.Minute, nil)
	if _, err := old.Open(s2, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("the rotated ring sealed with the old key: %v", err)
	}
	if _, err := retired.Open(s2, nil); err != nil {
		t.Errorf("the new key does not open its own value: %v", err)
	}
	if _, err := retired.Open(s1, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("a retired key's value opened: %v", err)
	}
}

func TestNewRingRefuses(t *testing.T) {
	cases := []struct {
		name    string
		secrets [][]byte
		opts    *Options
	}{
		{"none", nil, nil},
		{"short", [][]byte{make([]byte, MinSecretSize-1)}, nil},
		{"repeated", [][]byte{secret(1), secret(1)}, nil},
		{"tiny max size", [][]byte{secret(1)}, &Options{MaxSize: 10}},
	}
	for _, tc := range cases {
		if _, err := NewRing(tc.secrets, tc.opts); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if len(GenerateSecret()) != MinSecretSize || bytes.Equal(GenerateSecret(), GenerateSecret()) {
		t.Error("GenerateSecret does not make distinct secrets of MinSecretSize bytes")
	}
}

func TestSizeBound(t *testing.T) {
	r, err := NewRing([][]byte{secret(1)}, &Options{MaxSize: 200})
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Seal(make([]byte, r.MaxPayload()), time.Minute, nil)
	if err != nil {
		t.Fatalf("the largest payload: %v", err)
	}
	if len(s) > r.MaxSize() {
		t.Fatalf("sealed %d bytes; MaxSize is %d", len(s), r.MaxSize())
	}
	if _, err := r.Open(s, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Seal(make([]byte, r.MaxPayload()+1), time.Minute, nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("one byte more: %v", err)
	}
	if _, err := r.Open(s+"AAAA", nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("longer than MaxSize: %v", err)
	}
}

// FuzzOpen feeds Open arbitrary text and associated data: it must never
// panic, never accept anything but what the ring sealed with that data,
// and refuse within its bound.
func FuzzOpen(f *testing.F) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	r, err := NewRing([][]byte{secret(1), secret(2)}, &Options{Now: c.now, MaxSize: 4096})
	if err != nil {
		f.Fatal(err)
	}
	good, _ := r.Seal([]byte("payload"), time.Minute, []byte("ad"))
	f.Add(good, []byte("ad"))
	f.Add(good+"-TAMPERED", []byte("ad"))
	f.Add("", []byte(nil))
	f.Add("AQAAAAA", []byte("ad"))
	f.Fuzz(func(t *testing.T, sealed string, ad []byte) {
		p, err := r.Open(sealed, ad)
		if err == nil {
			// The seeds are sealed anew in each fuzzing process, so what
			// opens is any value sealed of "payload" with "ad".
			if string(ad) != "ad" || string(p) != "payload" {
				t.Fatalf("Open accepted a value it did not seal: %q with ad %q gave %q", sealed, ad, p)
			}
			return
		}
		if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrExpired) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}
