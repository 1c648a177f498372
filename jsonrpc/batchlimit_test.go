package jsonrpc

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func batchOf(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"ping"},`, n), ",") + "]"
}

// TestDecodeBatchLength checks the bound on the messages of a batch: a
// batch longer than the Decoder's bound is refused whole (issue 16 item 9).
func TestDecodeBatchLength(t *testing.T) {
	tests := []struct {
		name  string
		dec   *Decoder
		input string
		want  int // the batch's length, or -1 for refused as too long
	}{
		{"default bound", nil, batchOf(DefaultMaxBatchLength), DefaultMaxBatchLength},
		{"over the default bound", nil, batchOf(DefaultMaxBatchLength + 1), -1},
		{"85,000 entries", nil, batchOf(85000), -1},
		{"own bound", NewDecoder("ping").WithMaxBatchLength(3), batchOf(3), 3},
		{"over own bound", NewDecoder("ping").WithMaxBatchLength(3), batchOf(4), -1},
		{"not objects count too", NewDecoder().WithMaxBatchLength(2), `[1, "x", {}]`, -1},
		{"nested arrays count once", NewDecoder().WithMaxBatchLength(2), `[[1,2,3,4],[5]]`, 2},
		{"zero means the default", NewDecoder().WithMaxBatchLength(0), batchOf(DefaultMaxBatchLength + 1), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := tt.dec.Decode([]byte(tt.input))
			if tt.want < 0 {
				var de *DecodeError
				if !errors.As(err, &de) || de.Err.Code != CodeInvalidRequest || !strings.Contains(de.Err.Message, "batch of more than") {
					t.Fatalf("got %v, %v; want an invalid request naming the bound", m, err)
				}
				return
			}
			b, ok := m.(Batch)
			if err != nil || !ok || len(b) != tt.want {
				t.Fatalf("got %#v, %v; want a batch of %d", m, err, tt.want)
			}
		})
	}
}

// FuzzDecodeBatchLength checks that a Decoder with a bound on batches
// decodes what one without a bound does, except that a batch longer than the bound is
// refused with an invalid request (never a parse error, never a panic).
func FuzzDecodeBatchLength(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), uint8(1))
	}
	f.Add([]byte(batchOf(5)), uint8(4))
	f.Add([]byte(`[1,[2,3],{"a":[4]},"]"]`), uint8(3))
	f.Add([]byte(`[ {} , {} ]`), uint8(2))
	unbounded := NewDecoder().WithMaxBatchLength(1 << 30)
	f.Fuzz(func(t *testing.T, data []byte, n uint8) {
		limit := int(n%8) + 1
		dec := NewDecoder("ping").WithMaxBatchLength(limit)
		m, err := unbounded.Decode(data)
		ml, errl := dec.Decode(data)
		if b, ok := m.(Batch); ok && len(b) > limit {
			var de *DecodeError
			if ml != nil || !errors.As(errl, &de) || de.Err.Code != CodeInvalidRequest || de.ID.IsValid() {
				t.Fatalf("a batch of %d with bound %d: %#v, %v", len(b), limit, ml, errl)
			}
			return
		}
		if fmt.Sprint(err) != fmt.Sprint(errl) || !reflect.DeepEqual(m, ml) {
			t.Fatalf("bounded: %#v, %v; Decode: %#v, %v", ml, errl, m, err)
		}
	})
}
