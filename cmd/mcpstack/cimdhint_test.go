package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/authserver"
)

// TestLoopbackCIMDRefusalNamesTheFlag fetches a Client ID Metadata
// Document on a loopback address with the fetcher mcpstack authserver uses
// and logs the refusal as the authorization server does: the log line
// names --allow-loopback-cimd; other refusals get no such hint.
func TestLoopbackCIMDRefusalNamesTheFlag(t *testing.T) {
	_, loopErr := authserver.NewCIMDFetcher().Fetch(context.Background(), "https://127.0.0.1:1/client.json")
	if loopErr == nil {
		t.Fatal("a loopback client metadata document was fetched")
	}
	for _, tc := range []struct {
		name string
		err  error
		hint bool
	}{
		{"loopback", fmt.Errorf("refused: %w", loopErr), true},
		{"other", authserver.ErrUntrustedDomain, false},
	} {
		var b bytes.Buffer
		log := slog.New(loopbackCIMDHint{slog.NewTextHandler(&b, nil)}).With("component", "authserver")
		log.Warn("client metadata document refused", "client_id", "https://127.0.0.1:1/client.json", "err", tc.err)
		if got := strings.Contains(b.String(), "--allow-loopback-cimd"); got != tc.hint {
			t.Errorf("%s: hint %v, want %v:\n%s", tc.name, got, tc.hint, b.String())
		}
	}
}
