package mcphttp

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

type wantEvent struct {
	name, id, data string
}

func readAllEvents(t *testing.T, r *sseReader) ([]wantEvent, error) {
	t.Helper()
	var out []wantEvent
	for {
		ev, err := r.next()
		if err != nil {
			return out, err
		}
		out = append(out, wantEvent{ev.name, ev.id, string(ev.data)})
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      []wantEvent
		wantLast  string
		wantRetry time.Duration
	}{
		{"one event", "data: x\n\n", []wantEvent{{"", "", "x"}}, "", 0},
		{"CRLF", "id: 1\r\ndata: a\r\n\r\n", []wantEvent{{"", "1", "a"}}, "1", 0},
		{"CR only", "id: 1\rdata: a\r\rdata: b\r\r", []wantEvent{{"", "1", "a"}, {"", "1", "b"}}, "1", 0},
		{"mixed endings", "data: a\r\ndata: b\rdata: c\n\n", []wantEvent{{"", "", "a\nb\nc"}}, "", 0},
		{"BOM skipped", "\xEF\xBB\xBFdata: x\n\n", []wantEvent{{"", "", "x"}}, "", 0},
		{"comment ignored", ": keep-alive\n\ndata: x\n\n", []wantEvent{{"", "", "x"}}, "", 0},
		{"no space after colon", "data:x\n\n", []wantEvent{{"", "", "x"}}, "", 0},
		{"only one space dropped", "data:  x\n\n", []wantEvent{{"", "", " x"}}, "", 0},
		{"field without colon", "data\n\n", []wantEvent{{"", "", ""}}, "", 0},
		{"empty data: a priming event", "id: 5_0\ndata: \n\n", []wantEvent{{"", "5_0", ""}}, "5_0", 0},
		{"event name", "event: endpoint\ndata: /m?s=1\n\ndata: y\n\n", []wantEvent{{"endpoint", "", "/m?s=1"}, {"", "", "y"}}, "", 0},
		{"id persists across events", "id: 7\ndata: a\n\ndata: b\n\n", []wantEvent{{"", "7", "a"}, {"", "7", "b"}}, "7", 0},
		{"empty id resets", "id: 7\ndata: a\n\nid\ndata: b\n\n", []wantEvent{{"", "7", "a"}, {"", "", "b"}}, "", 0},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []wantEvent{{"", "1", "a"}, {"", "1", "b"}}, "1", 0},
		{"id without data updates the last id", "id: 9\n\n", nil, "9", 0},
		{"cut-off event: no dispatch, no id", "id: 1\ndata: a\n\nid: 2\ndata: b\n", []wantEvent{{"", "1", "a"}}, "1", 0},
		{"retry", "retry: 1500\n\n", nil, "", 1500 * time.Millisecond},
		{"retry not digits ignored", "retry: 15x\n\nretry: -1\n\n", nil, "", 0},
		{"unknown field ignored", "foo: bar\ndata: x\n\n", []wantEvent{{"", "", "x"}}, "", 0},
		{"blank lines between events", "\n\n\ndata: x\n\n\n", []wantEvent{{"", "", "x"}}, "", 0},
		{"event name reset after dispatch", "event: e\ndata: 1\n\ndata: 2\n\n", []wantEvent{{"e", "", "1"}, {"", "", "2"}}, "", 0},
		{"event name without data does not leak", "event: e\n\ndata: 2\n\n", []wantEvent{{"", "", "2"}}, "", 0},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			name := tt.name
			var in io.Reader = strings.NewReader(tt.in)
			if oneByte {
				name += "/one byte at a time"
				in = iotest.OneByteReader(in)
			}
			t.Run(name, func(t *testing.T) {
				r := newSSEReader(in, 0)
				got, err := readAllEvents(t, r)
				if err != io.EOF {
					t.Fatalf("error %v, want io.EOF", err)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("events %q, want %q", got, tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("event %d: %q, want %q", i, got[i], tt.want[i])
					}
				}
				if r.lastID != tt.wantLast {
					t.Errorf("last id %q, want %q", r.lastID, tt.wantLast)
				}
				if r.retry != tt.wantRetry {
					t.Errorf("retry %v, want %v", r.retry, tt.wantRetry)
				}
			})
		}
	}
}

func TestSSEReaderLimit(t *testing.T) {
	big := strings.Repeat("x", 200)
	for _, in := range []string{
		"data: " + big + "\n\n",                            // one long line
		"data: " + big[:40] + "\ndata: " + big[:40] + "\n", // data lines adding up
		"data: " + big,                                     // a long line never ended
	} {
		r := newSSEReader(strings.NewReader(in), 64)
		if _, err := readAllEvents(t, r); !errors.Is(err, errSSETooLarge) {
			t.Errorf("%.20q…: %v, want errSSETooLarge", in, err)
		}
	}
	r := newSSEReader(strings.NewReader("data: "+big[:60]+"\n\n"), 64)
	if got, err := readAllEvents(t, r); err != io.EOF || len(got) != 1 {
		t.Errorf("an event within the limit: %v %v", got, err)
	}
}

func TestAppendSSEEvent(t *testing.T) {
	tests := []struct {
		name, ev, id string
		retry        time.Duration
		data         string
		want         string
	}{
		{"data only", "", "", 0, `{"a":1}`, "data: {\"a\":1}\n\n"},
		{"everything", "message", "3_1", 2 * time.Second, "x", "event: message\nid: 3_1\nretry: 2000\ndata: x\n\n"},
		{"empty data", "", "1_0", 0, "", "id: 1_0\ndata: \n\n"},
		{"line breaks split into data lines", "", "", 0, "a\nb\r\nc\rd", "data: a\ndata: b\ndata: c\ndata: d\n\n"},
		{"trailing newline", "", "", 0, "a\n", "data: a\ndata: \n\n"},
		{"sub-millisecond retry rounds up", "", "", time.Microsecond, "", "retry: 1\ndata: \n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(appendSSEEvent([]byte("prefix:"), tt.ev, tt.id, tt.retry, []byte(tt.data)))
			if got != "prefix:"+tt.want {
				t.Errorf("got %q, want %q", got, "prefix:"+tt.want)
			}
		})
	}
}

// FuzzSSERoundTrip writes an event and reads it back: the data comes back
// with its line breaks normalized to LF, and the name and id as they were.
// Separately, the reader must survive any input within its limit.
func FuzzSSERoundTrip(f *testing.F) {
	f.Add("message", "1_1", []byte(`{"jsonrpc":"2.0","method":"x"}`), []byte("data: x\n\n"))
	f.Add("", "", []byte(""), []byte("id: 1\r\ndata: a\r\r"))
	f.Add("endpoint", "0_0", []byte("a\r\nb\rc\n"), []byte("\xEF\xBB\xBF:c\nretry: 10\nevent\n\n"))
	f.Add("e", "x", []byte("\x00"), []byte("data"))
	f.Fuzz(func(t *testing.T, name, id string, data, raw []byte) {
		// Arbitrary input: no panic, and events within the limit.
		r := newSSEReader(bytes.NewReader(raw), 256)
		for {
			ev, err := r.next()
			if err != nil {
				break
			}
			if len(ev.data) > 256 {
				t.Fatalf("event of %d bytes past a 256-byte limit", len(ev.data))
			}
		}
		// Round trip of a well-formed event.
		if strings.ContainsAny(name, "\r\n") || strings.ContainsAny(id, "\r\n\x00") {
			return
		}
		var b []byte
		b = appendSSEEvent(b, name, id, 0, data)
		b = appendSSEEvent(b, "", "", 0, []byte("next"))
		r = newSSEReader(bytes.NewReader(b), 0)
		ev, err := r.next()
		if err != nil {
			t.Fatalf("reading back %q: %v", b, err)
		}
		norm := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
		if ev.name != name || ev.id != id || string(ev.data) != norm {
			t.Fatalf("wrote %q %q %q, read %q %q %q", name, id, data, ev.name, ev.id, ev.data)
		}
		if ev, err := r.next(); err != nil || string(ev.data) != "next" || ev.id != id {
			t.Fatalf("second event %q %q, %v", ev.data, ev.id, err)
		}
	})
}
