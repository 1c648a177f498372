package eventstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func seqs(events []Event) []int64 {
	var out []int64
	for _, e := range events {
		out = append(out, e.Seq)
	}
	return out
}

func appendN(t *testing.T, s Store, session, stream string, from, to int64, size int) {
	t.Helper()
	for seq := from; seq <= to; seq++ {
		data := []byte(fmt.Sprintf("%0*d", size, seq))
		if err := s.Append(context.Background(), session, stream, seq, data); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMemory(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		store   *Memory
		fill    func(t *testing.T, s *Memory)
		session string
		stream  string
		after   int64
		want    []int64 // nil with wantErr false: no events
		wantErr bool
	}{
		{"all events", &Memory{}, func(t *testing.T, s *Memory) { appendN(t, s, "a", "1", 1, 5, 4) }, "a", "1", 0, []int64{1, 2, 3, 4, 5}, false},
		{"events after an id", &Memory{}, func(t *testing.T, s *Memory) { appendN(t, s, "a", "1", 1, 5, 4) }, "a", "1", 3, []int64{4, 5}, false},
		{"nothing missed", &Memory{}, func(t *testing.T, s *Memory) { appendN(t, s, "a", "1", 1, 5, 4) }, "a", "1", 5, nil, false},
		{"an id never sent", &Memory{}, func(t *testing.T, s *Memory) { appendN(t, s, "a", "1", 1, 5, 4) }, "a", "1", 6, nil, true},
		{"unknown stream", &Memory{}, func(t *testing.T, s *Memory) { appendN(t, s, "a", "1", 1, 5, 4) }, "a", "2", 0, nil, true},
		{"unknown session", &Memory{}, func(t *testing.T, s *Memory) { appendN(t, s, "a", "1", 1, 5, 4) }, "b", "1", 0, nil, true},
		{"streams are separate", &Memory{}, func(t *testing.T, s *Memory) {
			appendN(t, s, "a", "1", 1, 3, 4)
			appendN(t, s, "a", "2", 1, 2, 4)
			appendN(t, s, "b", "1", 1, 9, 4)
		}, "a", "1", 1, []int64{2, 3}, false},
		{"per-stream bound: the rest is kept", &Memory{MaxEventsPerStream: 3}, func(t *testing.T, s *Memory) { appendN(t, s, "a", "1", 1, 6, 4) }, "a", "1", 3, []int64{4, 5, 6}, false},
		{"per-stream bound: evicted events are unavailable", &Memory{MaxEventsPerStream: 3}, func(t *testing.T, s *Memory) { appendN(t, s, "a", "1", 1, 6, 4) }, "a", "1", 2, nil, true},
		{"per-session bytes: the oldest stream loses first", &Memory{MaxBytesPerSession: 20}, func(t *testing.T, s *Memory) {
			appendN(t, s, "a", "old", 1, 3, 4) // 12 bytes
			appendN(t, s, "a", "new", 1, 3, 4) // 24 bytes: old loses 1
		}, "a", "old", 0, nil, true},
		{"per-session bytes: the newer stream is whole", &Memory{MaxBytesPerSession: 20}, func(t *testing.T, s *Memory) {
			appendN(t, s, "a", "old", 1, 3, 4)
			appendN(t, s, "a", "new", 1, 3, 4)
		}, "a", "new", 0, []int64{1, 2, 3}, false},
		{"per-session bytes: what is left of the old stream", &Memory{MaxBytesPerSession: 20}, func(t *testing.T, s *Memory) {
			appendN(t, s, "a", "old", 1, 3, 4)
			appendN(t, s, "a", "new", 1, 3, 4)
		}, "a", "old", 1, []int64{2, 3}, false},
		{"per-session bytes: other sessions unaffected", &Memory{MaxBytesPerSession: 20}, func(t *testing.T, s *Memory) {
			appendN(t, s, "b", "x", 1, 5, 4)
			appendN(t, s, "a", "x", 1, 4, 4)
			appendN(t, s, "b", "y", 1, 5, 4)
		}, "a", "x", 0, []int64{1, 2, 3, 4}, false},
		{"streams bound: the oldest stream is forgotten", &Memory{MaxStreamsPerSession: 2}, func(t *testing.T, s *Memory) {
			appendN(t, s, "a", "1", 1, 1, 4)
			appendN(t, s, "a", "2", 1, 1, 4)
			appendN(t, s, "a", "3", 1, 1, 4)
		}, "a", "1", 0, nil, true},
		{"streams bound: the others stay", &Memory{MaxStreamsPerSession: 2}, func(t *testing.T, s *Memory) {
			appendN(t, s, "a", "1", 1, 1, 4)
			appendN(t, s, "a", "2", 1, 1, 4)
			appendN(t, s, "a", "3", 1, 1, 4)
		}, "a", "2", 0, []int64{1}, false},
		{"a stream emptied by eviction still resumes at its end", &Memory{MaxBytesPerSession: 8}, func(t *testing.T, s *Memory) {
			appendN(t, s, "a", "old", 1, 2, 4)
			appendN(t, s, "a", "new", 1, 2, 4)
		}, "a", "old", 2, nil, false},
		{"a gap in seq makes the events before it unavailable", &Memory{}, func(t *testing.T, s *Memory) {
			appendN(t, s, "a", "1", 1, 2, 4)
			appendN(t, s, "a", "1", 5, 6, 4)
		}, "a", "1", 2, nil, true},
		{"after a gap", &Memory{}, func(t *testing.T, s *Memory) {
			appendN(t, s, "a", "1", 1, 2, 4)
			appendN(t, s, "a", "1", 5, 6, 4)
		}, "a", "1", 4, []int64{5, 6}, false},
		{"deleted session", &Memory{}, func(t *testing.T, s *Memory) {
			appendN(t, s, "a", "1", 1, 2, 4)
			if err := s.DeleteSession(context.Background(), "a"); err != nil {
				t.Fatal(err)
			}
		}, "a", "1", 0, nil, true},
		{"a session started again after deletion", &Memory{}, func(t *testing.T, s *Memory) {
			appendN(t, s, "a", "1", 1, 2, 4)
			s.DeleteSession(context.Background(), "a")
			appendN(t, s, "a", "1", 1, 1, 4)
		}, "a", "1", 0, []int64{1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fill(t, tt.store)
			got, err := tt.store.After(ctx, tt.session, tt.stream, tt.after)
			if tt.wantErr {
				if !errors.Is(err, ErrUnavailable) {
					t.Fatalf("After: %v %v, want ErrUnavailable", seqs(got), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(seqs(got)) != fmt.Sprint(tt.want) {
				t.Fatalf("events %v, want %v", seqs(got), tt.want)
			}
			for _, e := range got {
				if string(e.Data) != fmt.Sprintf("%04d", e.Seq) {
					t.Errorf("event %d holds %q", e.Seq, e.Data)
				}
			}
		})
	}
}

func TestMemoryOrder(t *testing.T) {
	s := &Memory{}
	appendN(t, s, "a", "1", 1, 3, 1)
	for _, seq := range []int64{3, 2} {
		if err := s.Append(context.Background(), "a", "1", seq, []byte("x")); err == nil {
			t.Errorf("event %d after event 3 accepted", seq)
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
	if ms.bytes > 1000 {
		t.Fatalf("%d bytes kept, budget 1000", ms.bytes)
	}
	if len(ms.streams) > 8 || len(ms.order) > 8 {
		t.Fatalf("%d streams kept, bound 8", len(ms.streams))
	}
	total := 0
	for _, st := range ms.streams {
		total += st.size()
	}
	if total != ms.bytes {
		t.Fatalf("byte count %d, events hold %d", ms.bytes, total)
	}
}

func TestMemoryConcurrent(t *testing.T) {
	s := &Memory{MaxEventsPerStream: 50}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session := fmt.Sprint("s", g%3)
			stream := fmt.Sprint(g)
			for seq := int64(1); seq <= 200; seq++ {
				if err := s.Append(context.Background(), session, stream, seq, []byte("x")); err != nil {
					t.Error(err)
					return
				}
				if seq%20 == 0 && session != "s2" {
					if _, err := s.After(context.Background(), session, stream, seq-10); err != nil {
						t.Error(err)
						return
					}
				}
				if g == 7 && seq == 100 {
					s.DeleteSession(context.Background(), "s2")
				}
			}
		}()
	}
	wg.Wait()
	for g := range 6 {
		session, stream := fmt.Sprint("s", g%3), fmt.Sprint(g)
		if session == "s2" {
			continue
		}
		got, err := s.After(context.Background(), session, stream, 150)
		if err != nil || len(got) != 50 {
			t.Errorf("%s/%s: %d events, %v", session, stream, len(got), err)
		}
	}
}
