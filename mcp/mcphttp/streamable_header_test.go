package mcphttp

import (
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
)

// TestHeaderGetKeys checks that the keys passed to headerGet are canonical,
// which headerGet relies on to agree with http.Header.Get.
func TestHeaderGetKeys(t *testing.T) {
	for _, key := range []string{headerSessionID, headerProtocolVersion, headerLastEventID, "Origin", "Content-Type", "Accept"} {
		if c := textproto.CanonicalMIMEHeaderKey(key); c != key {
			t.Errorf("key %q is not canonical (%q)", key, c)
		}
	}
}

// TestHeaderGet compares headerGet with http.Header.Get.
func TestHeaderGet(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.Header
	}{
		{"absent", http.Header{}},
		{"one", http.Header{headerSessionID: {"abc"}}},
		{"several", http.Header{headerSessionID: {"first", "second"}}},
		{"empty list", http.Header{headerSessionID: {}}},
		{"empty value", http.Header{headerSessionID: {""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := headerGet(tc.h, headerSessionID), tc.h.Get(headerSessionID); got != want {
				t.Errorf("headerGet = %q, want %q", got, want)
			}
		})
	}
}

// TestStreamableActivityDefersExpiry checks that requests keep a session
// alive past its timeout (the idle timer, armed once, waits out the time
// since the last request), and that the session expires once they stop.
func TestStreamableActivityDefersExpiry(t *testing.T) {
	const timeout = 500 * time.Millisecond
	h, ts := serve(t, toolServer(t, nil), &Options{SessionTimeout: timeout})
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	hdr := map[string]string{"Mcp-Session-Id": sid}
	start := time.Now()
	for i := 2; time.Since(start) < 3*timeout; i++ {
		if r := rawDo(t, "POST", ts.URL, hdr, `{"jsonrpc":"2.0","id":`+itoa(i)+`,"method":"ping"}`); r.status != 200 {
			t.Fatalf("ping %d after %v: status %d, want 200", i, time.Since(start), r.status)
		}
		time.Sleep(timeout / 20)
	}
	eventually(t, "the idle session expires", func() bool { return h.session(sid) == nil })
}

// TestAccepts compares accepts with the reference: split on commas, drop
// parameters, trim, lower-case, compare.
func TestAccepts(t *testing.T) {
	ref := func(values []string) (j, e bool) {
		for _, v := range values {
			for _, part := range strings.Split(v, ",") {
				mt, _, _ := strings.Cut(part, ";")
				switch strings.ToLower(strings.TrimSpace(mt)) {
				case "application/json", "application/*":
					j = true
				case "text/event-stream", "text/*":
					e = true
				case "*/*":
					j, e = true, true
				}
			}
		}
		return j, e
	}
	for _, values := range [][]string{
		nil,
		{""},
		{"application/json, text/event-stream"},
		{"application/json,text/event-stream"},
		{"Application/JSON; q=0.9 , TEXT/Event-Stream;q=1"},
		{"application/json", "text/event-stream"},
		{"*/*"},
		{"application/*, text/*"},
		{"text/html, application/xhtml+xml"},
		{"application/json"},
		{"text/event-stream,"},
		{",,;,"},
		{"application/jſon, text/event-ſtream"},       // long s: not an ASCII letter
		{"application/json\u212a, text/event-stream"}, // Kelvin sign
		{"  application/json  ;charset=utf-8,\ttext/event-stream\t"},
		{"application/json-seq, text/event-streams"},
	} {
		gj, ge := accepts(values)
		wj, we := ref(values)
		if gj != wj || ge != we {
			t.Errorf("accepts(%q) = %v, %v; want %v, %v", values, gj, ge, wj, we)
		}
	}
}
