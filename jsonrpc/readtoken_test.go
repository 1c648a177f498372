package jsonrpc

import (
	"testing"
)

// TestReadToken runs the read token through sequences of steps, as the
// read loop and its callers drive it, and checks after each step who
// holds it, who waits, what each caller's channel and the background
// reader's wake channel received, and whether the grace timer is armed.
func TestReadToken(t *testing.T) {
	type step struct {
		op  string // take, wait, leave, pass, passPending, release, handToWaiter, expire, expireServing
		who int    // the caller, for wait and leave
		// want: the result of take, handToWaiter and expire; for pass,
		// where the token went (see passedTo, as an int)
		want any
	}
	type state struct {
		held   bool
		queue  []int // callers waiting, oldest first
		handed []int // callers whose channel holds tokenHandoff (drained)
		woken  bool  // wake received a value (drained)
		armed  bool  // the grace timer runs
	}
	tests := []struct {
		name  string
		steps []step
		want  []state // after each step
	}{
		{
			name:  "a new token is the background reader's",
			steps: []step{{op: "take", want: false}},
			want:  []state{{held: true}},
		},
		{
			name: "free, taken by a caller, passed nowhere",
			steps: []step{
				{op: "release"},
				{op: "take", want: true},
				{op: "take", want: false},
				{op: "pass", want: int(toNobody)},
			},
			want: []state{
				{held: false, armed: true},
				{held: true, armed: true},
				{held: true, armed: true},
				{held: false, armed: true},
			},
		},
		{
			name: "passed to the oldest caller waiting",
			steps: []step{
				{op: "wait", who: 1},
				{op: "wait", who: 2},
				{op: "wait", who: 3},
				{op: "leave", who: 2},
				{op: "pass", want: int(toCaller)},
				{op: "passPending", want: int(toCaller)},
				{op: "pass", want: int(toNobody)},
			},
			want: []state{
				{held: true, queue: []int{1}},
				{held: true, queue: []int{1, 2}},
				{held: true, queue: []int{1, 2, 3}},
				{held: true, queue: []int{1, 3}},
				{held: true, queue: []int{3}, handed: []int{1}},
				{held: true, handed: []int{3}},
				{held: false, armed: true},
			},
		},
		{
			name: "passed to the background reader while calls are pending",
			steps: []step{
				{op: "passPending", want: int(toReader)},
			},
			want: []state{{held: true, woken: true}},
		},
		{
			name: "leaving twice, and the last one out",
			steps: []step{
				{op: "wait", who: 1},
				{op: "leave", who: 1},
				{op: "leave", who: 1},
				{op: "handToWaiter", want: false},
			},
			want: []state{
				{held: true, queue: []int{1}},
				{held: true},
				{held: true},
				{held: true},
			},
		},
		{
			name: "grace: free for a whole period, the reader takes it",
			steps: []step{
				{op: "release"},
				{op: "expire", want: true},
				{op: "take", want: false},
			},
			want: []state{
				{held: false, armed: true},
				{held: true},
				{held: true},
			},
		},
		{
			name: "grace: freed again since the last look, one more period",
			steps: []step{
				{op: "release"},
				{op: "take", want: true},
				{op: "release"},
				{op: "expire", want: false},
				{op: "expire", want: true},
			},
			want: []state{
				{held: false, armed: true},
				{held: true, armed: true},
				{held: false, armed: true},
				{held: false, armed: true},
				{held: true},
			},
		},
		{
			name: "grace: freed again while a handler runs, taken at once",
			steps: []step{
				{op: "release"},
				{op: "take", want: true},
				{op: "release"},
				{op: "expireServing", want: true},
			},
			want: []state{
				{held: false, armed: true},
				{held: true, armed: true},
				{held: false, armed: true},
				{held: true},
			},
		},
		{
			name: "grace: held when the timer fires, disarmed until the next release",
			steps: []step{
				{op: "release"},
				{op: "take", want: true},
				{op: "expire", want: false},
				{op: "pass", want: int(toNobody)},
			},
			want: []state{
				{held: false, armed: true},
				{held: true, armed: true},
				{held: true},
				{held: false, armed: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := newReadToken()
			defer tok.grace.Stop()
			select {
			case <-tok.wake: // the background reader takes it, as NewConn starts it
			default:
				t.Fatal("a new token is not handed to the background reader")
			}
			calls := map[int]*call{}
			callOf := func(n int) *call {
				if calls[n] == nil {
					calls[n] = &call{id: Int64ID(int64(n)), ch: make(chan *Response, 1)}
				}
				return calls[n]
			}
			for i, st := range tt.steps {
				var got any
				switch st.op {
				case "take":
					got = tok.take()
				case "wait":
					tok.wait(callOf(st.who))
				case "leave":
					tok.leave(callOf(st.who))
				case "pass":
					got = int(tok.pass(false))
				case "passPending":
					got = int(tok.pass(true))
				case "release":
					tok.release()
				case "handToWaiter":
					got = tok.handToWaiter()
				case "expire":
					got = tok.expire(false)
				case "expireServing":
					got = tok.expire(true)
				default:
					t.Fatalf("unknown step %q", st.op)
				}
				if st.want != nil && got != st.want {
					t.Fatalf("step %d (%s): got %v, want %v", i, st.op, got, st.want)
				}
				var s state
				s.held, s.armed = tok.held, tok.armed
				for w := tok.head; w != nil; w = w.next {
					s.queue = append(s.queue, int(w.id.num))
				}
				for n := 1; n <= len(calls); n++ {
					select {
					case r := <-callOf(n).ch:
						if r != tokenHandoff {
							t.Fatalf("step %d: caller %d got %v, not the token", i, n, r)
						}
						s.handed = append(s.handed, n)
					default:
					}
				}
				select {
				case <-tok.wake:
					s.woken = true
				default:
				}
				w := tt.want[i]
				if s.held != w.held || s.armed != w.armed || s.woken != w.woken ||
					!equalInts(s.queue, w.queue) || !equalInts(s.handed, w.handed) {
					t.Fatalf("after step %d (%s): %+v, want %+v", i, st.op, s, w)
				}
				for w := tok.head; w != nil; w = w.next {
					if !w.waiting {
						t.Fatalf("step %d: caller %d queued but not marked waiting", i, w.id.num)
					}
				}
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
