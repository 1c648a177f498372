package mcp

import (
	"fmt"
	"testing"
)

func TestPage(t *testing.T) {
	all := []int{0, 1, 2, 3, 4}
	tests := []struct {
		cursor   Cursor
		size     int
		want     string
		wantNext Cursor
		wantErr  bool
	}{
		{"", 0, "[0 1 2 3 4]", "", false},
		{"", 5, "[0 1 2 3 4]", "", false},
		{"", 2, "[0 1]", encodeCursor("k", 2), false},
		{encodeCursor("k", 2), 2, "[2 3]", encodeCursor("k", 4), false},
		{encodeCursor("k", 4), 2, "[4]", "", false},
		{encodeCursor("k", 5), 2, "[]", "", false}, // items removed since
		{encodeCursor("k", 6), 2, "", "", true},
		{encodeCursor("other", 2), 2, "", "", true},
		{encodeCursor("k", 0), 2, "", "", true},
		{"azowMg", 2, "", "", true}, // "k:02": not canonical
		{"azotMQ", 2, "", "", true}, // "k:-1"
		{"not base64!", 2, "", "", true},
	}
	for _, tt := range tests {
		got, next, err := page("k", all, tt.cursor, tt.size)
		if (err != nil) != tt.wantErr {
			t.Errorf("%q/%d: err %v", tt.cursor, tt.size, err)
			continue
		}
		if err != nil {
			expectCode(t, "cursor", err, -32602)
			continue
		}
		if fmt.Sprint(got) != tt.want || next != tt.wantNext {
			t.Errorf("%q/%d: %v %q, want %s %q", tt.cursor, tt.size, got, next, tt.want, tt.wantNext)
		}
	}
}

// FuzzPage checks that no cursor panics, and that every accepted cursor
// selects a page within the list.
func FuzzPage(f *testing.F) {
	f.Add(encodeCursor("k", 3), 2)
	f.Add("", 0)
	f.Add("azotMQ", 1)
	all := make([]int, 10)
	f.Fuzz(func(t *testing.T, c string, size int) {
		got, next, err := page("k", all, Cursor(c), size)
		if err != nil {
			return
		}
		if size > 0 && len(got) > size {
			t.Fatalf("page of %d > %d", len(got), size)
		}
		if next != "" {
			if _, err := decodeCursor("k", next); err != nil {
				t.Fatalf("next cursor %q refused: %v", next, err)
			}
		}
	})
}
