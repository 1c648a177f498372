package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestAnswerID checks that an answer's id is found as each server writes
// it (before or after "jsonrpc", with or without a result), and that a
// line without a numeric id gives -1.
func TestAnswerID(t *testing.T) {
	for _, tc := range []struct {
		line string
		want int64
	}{
		{`{"jsonrpc":"2.0","id":42,"result":{}}`, 42},
		{`{"id":7,"jsonrpc":"2.0","result":{"content":[]}}`, 7},
		{`{"jsonrpc":"2.0","id":"init","result":{}}`, -1},
		{`{"jsonrpc":"2.0","method":"notifications/message"}`, -1},
		{string(callLine(nil, 123456789)), 123456789},
	} {
		if got := answerID([]byte(tc.line)); got != tc.want {
			t.Errorf("answerID(%s) = %d, want %d", tc.line, got, tc.want)
		}
	}
}

// TestLineEcho checks the bare stdio server: every line back as it came,
// the last one even without its newline.
func TestLineEcho(t *testing.T) {
	in := "a\n\n" + strings.Repeat("x", 100<<10) + "\nlast"
	var out bytes.Buffer
	if err := lineEcho(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != in {
		t.Errorf("echoed %d bytes, want the %d read", out.Len(), len(in))
	}
}
