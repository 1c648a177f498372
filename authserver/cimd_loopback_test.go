package authserver

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestCIMDLoopbackRefusalIsMatchable checks that a Client ID Metadata
// Document refused for its loopback address matches ErrLoopbackAddress
// (and ErrForbiddenAddress), that the client is told why, and that other
// refused addresses do not match it.
func TestCIMDLoopbackRefusalIsMatchable(t *testing.T) {
	for _, tc := range []struct {
		url      string
		loopback bool
	}{
		{"https://127.0.0.1:1/client.json", true},
		{"https://[::1]:1/client.json", true},
		{"https://10.0.0.1:1/client.json", false},
	} {
		_, err := NewCIMDFetcher().Fetch(context.Background(), tc.url)
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("%s: %v, want ErrForbiddenAddress", tc.url, err)
		}
		if got := errors.Is(err, ErrLoopbackAddress); got != tc.loopback {
			t.Errorf("%s: errors.Is(ErrLoopbackAddress) = %v, want %v (%v)", tc.url, got, tc.loopback, err)
		}
		if got := strings.Contains(cimdRefusal(err).desc, "loopback"); got != tc.loopback {
			t.Errorf("%s: refusal %q", tc.url, cimdRefusal(err).desc)
		}
	}
}
