// Package eventstoretest is the contract test of eventstore.Store: the
// cases that every store, in memory or shared by replicas (such as the
// one on Redis under store/), must answer alike, so that a handler
// behaves the same whichever it is given. A store's tests call Run with a
// constructor; checks of what a store keeps inside (its byte counts, its
// keys) stay with the store.
package eventstoretest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// Limits are the bounds a case needs of the store under test; zero means
// the store's default. They are those of eventstore.Memory.
type Limits struct {
	MaxEventsPerStream   int
	MaxBytesPerSession   int
	MaxStreamsPerSession int
}

// A Factory returns a new, empty store with the limits given. It may
// skip t (no database to run on) and registers its own cleanup.
type Factory func(t *testing.T, l Limits) eventstore.Store

// Run runs the contract's cases against the stores that newStore makes,
// each case on a store of its own, as subtests of t.
func Run(t *testing.T, newStore Factory) {
	t.Run("Replay", func(t *testing.T) { testReplay(t, newStore) })
	t.Run("Order", func(t *testing.T) { testOrder(t, newStore) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, newStore) })
}

// Seqs returns the Seq of each event, in order.
func Seqs(events []eventstore.Event) []int64 {
	var out []int64
	for _, e := range events {
		out = append(out, e.Seq)
	}
	return out
}

// AppendN appends events from..to of a stream, each holding its seq
// written in size digits, and fails t on the first error.
func AppendN(t testing.TB, s eventstore.Store, session, stream string, from, to int64, size int) {
	t.Helper()
	for seq := from; seq <= to; seq++ {
		data := fmt.Appendf(nil, "%0*d", size, seq)
		if err := s.Append(context.Background(), session, stream, seq, data); err != nil {
			t.Fatal(err)
		}
	}
}

func testReplay(t *testing.T, newStore Factory) {
	type fill = func(t *testing.T, s eventstore.Store)
	five := func(t *testing.T, s eventstore.Store) { AppendN(t, s, "a", "1", 1, 5, 4) }
	oldThenNew := func(t *testing.T, s eventstore.Store) {
		AppendN(t, s, "a", "old", 1, 3, 4) // 12 bytes
		AppendN(t, s, "a", "new", 1, 3, 4) // 24 bytes: old loses 1
	}
	threeStreams := func(t *testing.T, s eventstore.Store) {
		AppendN(t, s, "a", "1", 1, 1, 4)
		AppendN(t, s, "a", "2", 1, 1, 4)
		AppendN(t, s, "a", "3", 1, 1, 4)
	}
	gap := func(t *testing.T, s eventstore.Store) {
		AppendN(t, s, "a", "1", 1, 2, 4)
		AppendN(t, s, "a", "1", 5, 6, 4)
	}
	tests := []struct {
		name    string
		limits  Limits
		fill    fill
		session string
		stream  string
		after   int64
		want    []int64 // nil with wantErr false: no events
		wantErr bool
	}{
		{"all events", Limits{}, five, "a", "1", 0, []int64{1, 2, 3, 4, 5}, false},
		{"events after an id", Limits{}, five, "a", "1", 3, []int64{4, 5}, false},
		{"nothing missed", Limits{}, five, "a", "1", 5, nil, false},
		{"an id never sent", Limits{}, five, "a", "1", 6, nil, true},
		{"a negative id", Limits{}, five, "a", "1", -1, nil, true},
		{"unknown stream", Limits{}, five, "a", "2", 0, nil, true},
		{"unknown session", Limits{}, five, "b", "1", 0, nil, true},
		{"streams are separate", Limits{}, func(t *testing.T, s eventstore.Store) {
			AppendN(t, s, "a", "1", 1, 3, 4)
			AppendN(t, s, "a", "2", 1, 2, 4)
			AppendN(t, s, "b", "1", 1, 9, 4)
		}, "a", "1", 1, []int64{2, 3}, false},
		{"ids with braces and colons stay apart", Limits{}, func(t *testing.T, s eventstore.Store) {
			AppendN(t, s, "a}:s:x", "1", 1, 3, 4)
			AppendN(t, s, "a", "x}:1", 1, 2, 4)
		}, "a}:s:x", "1", 0, []int64{1, 2, 3}, false},
		{"a stream id with spaces", Limits{}, func(t *testing.T, s eventstore.Store) {
			AppendN(t, s, "a", "1 2", 1, 2, 4)
			AppendN(t, s, "a", "1", 1, 1, 4)
		}, "a", "1 2", 0, []int64{1, 2}, false},
		{"per-stream bound: the rest is kept", Limits{MaxEventsPerStream: 3}, func(t *testing.T, s eventstore.Store) { AppendN(t, s, "a", "1", 1, 6, 4) }, "a", "1", 3, []int64{4, 5, 6}, false},
		{"per-stream bound: evicted events are unavailable", Limits{MaxEventsPerStream: 3}, func(t *testing.T, s eventstore.Store) { AppendN(t, s, "a", "1", 1, 6, 4) }, "a", "1", 2, nil, true},
		{"per-session bytes: the oldest stream loses first", Limits{MaxBytesPerSession: 20}, oldThenNew, "a", "old", 0, nil, true},
		{"per-session bytes: the newer stream is whole", Limits{MaxBytesPerSession: 20}, oldThenNew, "a", "new", 0, []int64{1, 2, 3}, false},
		{"per-session bytes: what is left of the old stream", Limits{MaxBytesPerSession: 20}, oldThenNew, "a", "old", 1, []int64{2, 3}, false},
		{"per-session bytes: other sessions unaffected", Limits{MaxBytesPerSession: 20}, func(t *testing.T, s eventstore.Store) {
			AppendN(t, s, "b", "x", 1, 5, 4)
			AppendN(t, s, "a", "x", 1, 4, 4)
			AppendN(t, s, "b", "y", 1, 5, 4)
		}, "a", "x", 0, []int64{1, 2, 3, 4}, false},
		{"streams bound: the oldest stream is forgotten", Limits{MaxStreamsPerSession: 2}, threeStreams, "a", "1", 0, nil, true},
		{"streams bound: the others stay", Limits{MaxStreamsPerSession: 2}, threeStreams, "a", "2", 0, []int64{1}, false},
		{"streams bound: a forgotten stream starts afresh", Limits{MaxStreamsPerSession: 2}, func(t *testing.T, s eventstore.Store) {
			threeStreams(t, s)
			AppendN(t, s, "a", "1", 1, 2, 4)
		}, "a", "1", 0, []int64{1, 2}, false},
		{"a stream emptied by eviction still resumes at its end", Limits{MaxBytesPerSession: 8}, func(t *testing.T, s eventstore.Store) {
			AppendN(t, s, "a", "old", 1, 2, 4)
			AppendN(t, s, "a", "new", 1, 2, 4)
		}, "a", "old", 2, nil, false},
		{"a gap in seq makes the events before it unavailable", Limits{}, gap, "a", "1", 2, nil, true},
		{"after a gap", Limits{}, gap, "a", "1", 4, []int64{5, 6}, false},
		{"a first event after 1", Limits{}, func(t *testing.T, s eventstore.Store) { AppendN(t, s, "a", "1", 7, 8, 4) }, "a", "1", 6, []int64{7, 8}, false},
		{"deleted session", Limits{}, func(t *testing.T, s eventstore.Store) {
			AppendN(t, s, "a", "1", 1, 2, 4)
			AppendN(t, s, "a", "2", 1, 2, 4)
			if err := s.DeleteSession(context.Background(), "a"); err != nil {
				t.Fatal(err)
			}
		}, "a", "2", 0, nil, true},
		{"a session started again after deletion", Limits{}, func(t *testing.T, s eventstore.Store) {
			AppendN(t, s, "a", "1", 1, 2, 4)
			if err := s.DeleteSession(context.Background(), "a"); err != nil {
				t.Fatal(err)
			}
			AppendN(t, s, "a", "1", 1, 1, 4)
		}, "a", "1", 0, []int64{1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, tt.limits)
			tt.fill(t, s)
			got, err := s.After(context.Background(), tt.session, tt.stream, tt.after)
			if tt.wantErr {
				if !errors.Is(err, eventstore.ErrUnavailable) || errors.Is(err, eventstore.ErrStoreUnavailable) {
					t.Fatalf("After: %v %v, want eventstore.ErrUnavailable", Seqs(got), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(Seqs(got)) != fmt.Sprint(tt.want) {
				t.Fatalf("events %v, want %v", Seqs(got), tt.want)
			}
			for _, e := range got {
				if string(e.Data) != fmt.Sprintf("%04d", e.Seq) {
					t.Errorf("event %d holds %q", e.Seq, e.Data)
				}
			}
		})
	}
}

// testOrder: an event at or before the stream's last is refused, and
// leaves the stream as it was.
func testOrder(t *testing.T, newStore Factory) {
	s := newStore(t, Limits{})
	AppendN(t, s, "a", "1", 1, 3, 4)
	for _, seq := range []int64{3, 2} {
		err := s.Append(context.Background(), "a", "1", seq, []byte("xxxx"))
		if err == nil || errors.Is(err, eventstore.ErrStoreUnavailable) {
			t.Errorf("event %d after event 3: %v, want a refusal", seq, err)
		}
	}
	got, err := s.After(context.Background(), "a", "1", 0)
	if err != nil || fmt.Sprint(Seqs(got)) != "[1 2 3]" || string(got[2].Data) != "0003" {
		t.Fatalf("the refused events changed the stream: %v %v", Seqs(got), err)
	}
}

// testConcurrent appends from several goroutines (streams of three
// sessions, one deleted midway) with replays between: each stream keeps
// its last events, whole and in order.
func testConcurrent(t *testing.T, newStore Factory) {
	s := newStore(t, Limits{MaxEventsPerStream: 50})
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			session := fmt.Sprint("s", g%3)
			stream := fmt.Sprint(g)
			for seq := int64(1); seq <= 200; seq++ {
				if err := s.Append(ctx, session, stream, seq, fmt.Appendf(nil, "%d", seq)); err != nil {
					t.Error(err)
					return
				}
				if seq%20 == 0 && session != "s2" {
					if _, err := s.After(ctx, session, stream, seq-10); err != nil {
						t.Error(err)
						return
					}
				}
				if g == 7 && seq == 100 {
					if err := s.DeleteSession(ctx, "s2"); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	for g := range 8 {
		session, stream := fmt.Sprint("s", g%3), fmt.Sprint(g)
		if session == "s2" {
			continue
		}
		got, err := s.After(ctx, session, stream, 150)
		if err != nil || len(got) != 50 {
			t.Fatalf("%s/%s: %d events, %v", session, stream, len(got), err)
		}
		for i, e := range got {
			if e.Seq != int64(151+i) || string(e.Data) != fmt.Sprint(e.Seq) {
				t.Fatalf("%s/%s: event %d is %d holding %q", session, stream, i, e.Seq, e.Data)
			}
		}
	}
}
