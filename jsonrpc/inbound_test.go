package jsonrpc

import (
	"slices"
	"strconv"
	"testing"
)

// TestInboundSetRemembers checks the inbound bookkeeping that both drivers
// share (the ids in flight and the recent ones) against a plain list of the
// last n completed ids, across the switch from a linear search to maps,
// for integer and string ids (1 and "1" differ).
func TestInboundSetRemembers(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int // RememberIDs as passed to finish
		ids  int // requests completed
	}{
		{"none", -1, 40},
		{"small", 4, 40},
		{"linear", linearIDs, 40},
		{"just over linear", linearIDs + 1, 60},
		{"maps", 64, 300},
		{"maps not full", 64, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p inboundSet
			var want []ID // the last n completed ids
			remember := func(id ID) {
				if tc.n < 0 {
					return
				}
				want = append(want, id)
				if len(want) > tc.n {
					want = want[1:]
				}
			}
			idOf := func(i int) ID {
				if i%3 == 0 {
					return StringID(strconv.Itoa(i))
				}
				return Int64ID(int64(i))
			}
			for i := range tc.ids {
				id := idOf(i)
				if p.used(id) {
					t.Fatalf("id %v used before it was", id)
				}
				p.start(id, &inbound{})
				if !p.used(id) {
					t.Fatalf("active id %v not used", id)
				}
				p.finish(id, tc.n)
				remember(id)
				if _, ok := p.lookup(id); ok {
					t.Fatalf("finished id %v still active", id)
				}
				for j := range i + 2 {
					for _, id := range []ID{idOf(j), StringID(strconv.Itoa(j)), Int64ID(int64(j))} {
						if got, w := p.used(id), slices.Contains(want, id); got != w {
							t.Fatalf("after %d requests: used(%v) = %v, want %v", i+1, id, got, w)
						}
					}
				}
			}
		})
	}
}

// TestInboundSetInFlight checks the requests in flight across the switch
// from a list to a map (more than linearIDs at once) and back to empty:
// every one is found until it finishes, none after, and the first
// backing array keeps no stale request once the list has left it.
func TestInboundSetInFlight(t *testing.T) {
	for _, n := range []int{1, 2, linearIDs, linearIDs + 1, 3 * linearIDs} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var s inboundSet
			ins := make([]*inbound, n)
			for i := range n {
				ins[i] = &inbound{}
				s.start(Int64ID(int64(i)), ins[i])
			}
			if n > 1 && s.active1 != ([1]activeRequest{}) {
				t.Errorf("the inline array still holds %v", s.active1[0].id)
			}
			if got := len(s.snapshot()); got != n {
				t.Errorf("snapshot holds %d, want %d", got, n)
			}
			for i := range n {
				if in, ok := s.lookup(Int64ID(int64(i))); !ok || in != ins[i] {
					t.Fatalf("lookup(%d) = %p, %v; want %p", i, in, ok, ins[i])
				}
			}
			for i := range n {
				s.finish(Int64ID(int64(i)), -1)
				if _, ok := s.lookup(Int64ID(int64(i))); ok {
					t.Fatalf("finished %d still in flight", i)
				}
				for j := i + 1; j < n; j++ {
					if _, ok := s.lookup(Int64ID(int64(j))); !ok {
						t.Fatalf("after finishing %d, %d is lost", i, j)
					}
				}
			}
			if got := len(s.snapshot()); got != 0 {
				t.Errorf("%d left in flight", got)
			}
		})
	}
}
