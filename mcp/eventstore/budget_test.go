package eventstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// TestMemoryBudget checks that a Memory with a Budget keeps at most the
// budget's bytes across all sessions, evicting the oldest events of the
// session that keeps the most first, and that a resumption past an evicted
// or refused event fails with ErrUnavailable.
func TestMemoryBudget(t *testing.T) {
	ctx := context.Background()
	ev := func(n int) []byte { return []byte(strings.Repeat("x", n)) }
	type step struct {
		session string
		n       int  // events of 100 bytes, on stream "1", numbered on
		fails   bool // the last append fails with ErrBudgetExhausted
	}
	tests := []struct {
		name   string
		limit  int64
		size   int // of each event
		steps  []step
		kept   map[string]int // session -> events kept (After from 0 succeeds with that many); -1: unavailable
		used   int64
		delete []string
	}{
		{"within the budget", 10000, 100, []step{{"a", 10, false}, {"b", 10, false}}, map[string]int{"a": 10, "b": 10}, 2000, nil},
		{"the largest session loses its oldest first", 1000, 100, []step{{"hog", 9, false}, {"small", 3, false}}, map[string]int{"hog": -1, "small": 3}, 1000, nil},
		{"a session alone evicts its own", 500, 100, []step{{"a", 8, false}}, map[string]int{"a": -1}, 500, nil},
		{"an event larger than the budget is refused", 150, 200, []step{{"a", 1, true}}, map[string]int{"a": -1}, 0, nil},
		{"ending a session gives its bytes back", 1000, 100, []step{{"a", 5, false}, {"b", 5, false}}, map[string]int{"a": -1, "b": 5}, 500, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBudget(tt.limit)
			s := &Memory{Budget: b, MaxBytesPerSession: 1 << 20}
			seqs := map[string]int64{}
			for _, st := range tt.steps {
				var err error
				for range st.n {
					seqs[st.session]++
					err = s.Append(ctx, st.session, "1", seqs[st.session], ev(tt.size))
					if u := b.Used(); u > tt.limit {
						t.Fatalf("%d bytes used, budget %d", u, tt.limit)
					}
				}
				if st.fails != errors.Is(err, ErrBudgetExhausted) {
					t.Fatalf("last append of %s: %v, want failure %v", st.session, err, st.fails)
				}
			}
			for _, id := range tt.delete {
				if err := s.DeleteSession(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
			for id, want := range tt.kept {
				evs, err := s.After(ctx, id, "1", 0)
				switch {
				case want < 0 && !errors.Is(err, ErrUnavailable):
					t.Errorf("session %s resumed from 0: %d events, %v; want ErrUnavailable", id, len(evs), err)
				case want >= 0 && (err != nil || len(evs) != want):
					t.Errorf("session %s resumed from 0: %d events, %v; want %d", id, len(evs), err, want)
				}
			}
			if u := b.Used(); u != tt.used {
				t.Fatalf("%d bytes used, want %d", u, tt.used)
			}
		})
	}
}

// TestMemoryBudgetConcurrent appends to many sessions at once under a
// small budget (run it with -race): the budget holds, nothing deadlocks,
// and once every session ends the budget is whole again.
func TestMemoryBudgetConcurrent(t *testing.T) {
	ctx := context.Background()
	const limit = 10000
	b := NewBudget(limit)
	s := &Memory{Budget: b}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := string(rune('a' + i))
			for seq := int64(1); seq <= 500; seq++ {
				_ = s.Append(ctx, id, "1", seq, make([]byte, 97))
				if u := b.Used(); u > limit {
					t.Errorf("%d bytes used, budget %d", u, limit)
					return
				}
			}
		}()
	}
	wg.Wait()
	for i := range 16 {
		_ = s.DeleteSession(ctx, string(rune('a'+i)))
	}
	if u := b.Used(); u != 0 {
		t.Fatalf("%d bytes still used after every session ended", u)
	}
}

// TestBudget checks the accounting of a Budget and of the nil one.
func TestBudget(t *testing.T) {
	b := NewBudget(100)
	if !b.TryAcquire(60) || b.TryAcquire(41) || !b.TryAcquire(40) || b.Used() != 100 {
		t.Fatalf("used %d", b.Used())
	}
	b.Release(100)
	if b.Used() != 0 || b.Limit() != 100 {
		t.Fatalf("used %d, limit %d", b.Used(), b.Limit())
	}
	var unlimited *Budget = NewBudget(0)
	if unlimited != nil || !unlimited.TryAcquire(1<<40) || unlimited.Used() != 0 || unlimited.Limit() != 0 {
		t.Fatal("the nil budget is not unlimited")
	}
	unlimited.Release(5)
}
