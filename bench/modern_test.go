package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestModernRows checks that the 2026-07-28 rows are served in that
// revision and the others in 2025-11-25: a modern answer carries
// resultType and the serverInfo _meta, a legacy one neither, through the
// load client and through the direct handler calls alike. A modern
// request sent without its headers is refused by our server (so the rows
// would fail, not silently measure something else).
func TestModernRows(t *testing.T) {
	ctx := context.Background()
	for _, im := range testImpls() {
		if im.bare {
			continue
		}
		t.Run(im.name, func(t *testing.T) {
			tg := start(t, im, 1)
			out, err := tg.cl.call(ctx, tg.sessions[0], tg.body("hello"))
			if err != nil {
				t.Fatal(err)
			}
			checkEra(t, "load client", im.modern, out)
			h, release := im.new()
			defer release()
			sid := ""
			if !im.modern {
				if sid, err = directHandshake(h); err != nil {
					t.Fatal(err)
				}
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, directRequest(sid, tg.body("hello"), im.modern))
			if rec.Code != http.StatusOK {
				t.Fatalf("direct: status %d: %s", rec.Code, rec.Body.Bytes())
			}
			checkEra(t, "direct", im.modern, rec.Body.Bytes())
		})
	}
	// Our server checks the modern headers: the same body without them
	// is not served.
	h, release := newOurs()
	defer release()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, directRequest("", modernCallBody(1, "hello"), false))
	if rec.Code == http.StatusOK {
		t.Errorf("a modern tools/call without MCP-Protocol-Version, Mcp-Method and Mcp-Name was served: %s", rec.Body.Bytes())
	}
}

func checkEra(t *testing.T, how string, modern bool, out []byte) {
	t.Helper()
	got := bytes.Contains(out, []byte(`"resultType":"complete"`)) && bytes.Contains(out, []byte(`"io.modelcontextprotocol/serverInfo"`))
	if got != modern {
		t.Errorf("%s: answer %s; modern shape %v, want %v", how, out, got, modern)
	}
}
