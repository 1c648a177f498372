package jsonrpc

import (
	"slices"
	"strconv"
	"testing"
)

// TestPushStateRemembers checks the remembered ids of a push connection
// against a plain list of the last n completed ids, across the switch from
// a linear search to maps, for integer and string ids (1 and "1" differ).
func TestPushStateRemembers(t *testing.T) {
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
			var p pushState
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
				p.active = append(p.active, activeRequest{id: id, in: &inbound{}})
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
