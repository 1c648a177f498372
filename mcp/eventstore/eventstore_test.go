package eventstore

import (
	"context"
	"fmt"
	"testing"
)

func appendN(t *testing.T, s Store, session, stream string, from, to int64, size int) {
	t.Helper()
	for seq := from; seq <= to; seq++ {
		data := []byte(fmt.Sprintf("%0*d", size, seq))
		if err := s.Append(context.Background(), session, stream, seq, data); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMemoryBoundedMemory(t *testing.T) {
	// However many events pass, a session keeps at most its byte budget.
	s := &Memory{MaxBytesPerSession: 1000, MaxStreamsPerSession: 8}
	for stream := range 50 {
		appendN(t, s, "a", fmt.Sprint(stream), 1, 40, 10)
	}
	ms := s.session("a", false)
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.bytes.Load() > 1000 {
		t.Fatalf("%d bytes kept, budget 1000", ms.bytes.Load())
	}
	if len(ms.streams) > 8 || len(ms.order) > 8 {
		t.Fatalf("%d streams kept, bound 8", len(ms.streams))
	}
	total := 0
	for _, st := range ms.streams {
		total += st.size()
	}
	if int64(total) != ms.bytes.Load() {
		t.Fatalf("byte count %d, events hold %d", ms.bytes.Load(), total)
	}
}
