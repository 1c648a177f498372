package oauth

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

// RFC 7636 Appendix B.
const (
	rfcVerifier  = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	rfcChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
)

func TestS256ChallengeRFC7636(t *testing.T) {
	if got := S256Challenge(rfcVerifier); got != rfcChallenge {
		t.Fatalf("S256Challenge = %q, want %q", got, rfcChallenge)
	}
}

func TestVerifyS256(t *testing.T) {
	long := strings.Repeat("a", MaxVerifierLen)
	tests := []struct {
		name                string
		verifier, challenge string
		want                bool
	}{
		{"rfc vector", rfcVerifier, rfcChallenge, true},
		{"max length", long, S256Challenge(long), true},
		{"wrong challenge", rfcVerifier, S256Challenge(rfcVerifier + "x"), false},
		{"challenge with padding", rfcVerifier, rfcChallenge + "=", false},
		{"plain method value", rfcVerifier, rfcVerifier, false},
		{"empty challenge", rfcVerifier, "", false},
		{"short verifier", "abc", S256Challenge("abc"), false},
		{"too long verifier", long + "a", S256Challenge(long + "a"), false},
		{"bad character", rfcVerifier[:42] + "+", S256Challenge(rfcVerifier[:42] + "+"), false},
	}
	for _, tt := range tests {
		if got := VerifyS256(tt.verifier, tt.challenge); got != tt.want {
			t.Errorf("%s: VerifyS256 = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestValidVerifier(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{rfcVerifier, true},
		{strings.Repeat("a", 43), true},
		{strings.Repeat("a", 42), false},
		{strings.Repeat("Z", 128), true},
		{strings.Repeat("9", 129), false},
		{strings.Repeat("-._~", 11), true},
		{"", false},
		{strings.Repeat("a", 42) + "=", false},
		{strings.Repeat("a", 42) + "/", false},
		{strings.Repeat("a", 42) + " ", false},
		{strings.Repeat("a", 42) + "é", false},
	}
	for _, tt := range tests {
		if got := ValidVerifier(tt.v); got != tt.want {
			t.Errorf("ValidVerifier(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestNewVerifierAndState(t *testing.T) {
	for name, gen := range map[string]func() (string, error){"NewVerifier": NewVerifier, "NewState": NewState} {
		seen := make(map[string]bool)
		for range 100 {
			v, err := gen()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(v) != 43 || !ValidVerifier(v) {
				t.Fatalf("%s returned %q (len %d), not a 43-character unreserved string", name, v, len(v))
			}
			if seen[v] {
				t.Fatalf("%s repeated %q", name, v)
			}
			seen[v] = true
		}
	}
	v, _ := NewVerifier()
	if !VerifyS256(v, S256Challenge(v)) {
		t.Fatal("fresh verifier does not verify against its own challenge")
	}
}

func TestRandomStringReaderError(t *testing.T) {
	boom := errors.New("boom")
	if _, err := randomString(iotest.ErrReader(boom), 32); !errors.Is(err, boom) {
		t.Fatalf("randomString error = %v, want %v", err, boom)
	}
	if _, err := randomString(strings.NewReader("short"), 32); err == nil {
		t.Fatal("randomString with a short reader: want error")
	}
	got, err := randomString(strings.NewReader(strings.Repeat("\x00", 32)), 32)
	if err != nil || got != strings.Repeat("A", 43) {
		t.Fatalf("randomString(zeros) = %q, %v", got, err)
	}
}

func BenchmarkS256Challenge(b *testing.B) {
	for b.Loop() {
		S256Challenge(rfcVerifier)
	}
}

func BenchmarkVerifyS256(b *testing.B) {
	for b.Loop() {
		if !VerifyS256(rfcVerifier, rfcChallenge) {
			b.Fatal("mismatch")
		}
	}
}
