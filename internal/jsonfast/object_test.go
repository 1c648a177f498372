package jsonfast

import (
	"strings"
	"testing"
)

func TestScanObject(t *testing.T) {
	tests := []struct {
		in   string
		keys string // the keys seen, joined by ","
		end  int    // -1: not ok
	}{
		{`{}`, "", 2},
		{` { } `, "", 4},
		{`{"a":1}`, "a", 7},
		{`{"a":1,"b":[2,3]} x`, "a,b", 17},
		{`{"a" : "x" , "b":{"c":1}}`, "a,b", 25},
		{`[]`, "", -1},
		{`{"a":1,}`, "a", -1},
		{`{"a":1 "b":2}`, "a", -1},
		{`{"a\n":1}`, "", -1}, // an escaped key
		{`{"a"1}`, "", -1},
		{`{a:1}`, "", -1},
		{`{"a":1`, "a", -1},
		{`{"a":`, "a", -1},
	}
	for _, tt := range tests {
		var keys []string
		end, ok := ScanObject([]byte(tt.in), 0, func(key []byte, v int) (int, bool) {
			keys = append(keys, string(key))
			return SkipValue([]byte(tt.in), v, 1, 100)
		})
		if got := strings.Join(keys, ","); got != tt.keys {
			t.Errorf("%q: keys %q, want %q", tt.in, got, tt.keys)
		}
		if ok != (tt.end >= 0) || (ok && end != tt.end) {
			t.Errorf("%q: (%d, %v), want end %d", tt.in, end, ok, tt.end)
		}
	}
	// A member that stops the walk stops it.
	if _, ok := ScanObject([]byte(`{"a":1,"b":2}`), 0, func([]byte, int) (int, bool) { return 0, false }); ok {
		t.Error("a stopped walk reported ok")
	}
}
