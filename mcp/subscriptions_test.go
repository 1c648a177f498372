package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

func subscribeServer(opts ServerOptions) *Server {
	opts.Capabilities = &ServerCapabilities{Resources: &ResourcesCapability{Subscribe: true}}
	return NewServer(&Implementation{Name: "subs", Version: "1"}, &opts)
}

// TestSubscriptionBounds checks the bounds on a session's subscriptions:
// their number and the length of their URIs (issue 16 item 10).
func TestSubscriptionBounds(t *testing.T) {
	ctx := context.Background()
	type step struct {
		sub   bool // subscribe, else unsubscribe
		uri   string
		want  string // "" for success, else a part of the -32602 message
		index int    // subscriptions of the session afterwards
	}
	long := func(n int) string { return "x://" + strings.Repeat("a", n-4) }
	tests := []struct {
		name  string
		opts  ServerOptions
		steps []step
	}{
		{"count", ServerOptions{MaxSubscriptions: 2}, []step{
			{true, "x://a", "", 1},
			{true, "x://b", "", 2},
			{true, "x://c", "subscriptions", 2},
			{true, "x://a", "", 2}, // held already: not a new one
			{false, "x://a", "", 1},
			{true, "x://c", "", 2},
		}},
		{"uri length", ServerOptions{MaxSubscriptionURILength: 16}, []step{
			{true, long(16), "", 1},
			{true, long(17), "bytes long", 1},
		}},
		{"default count", ServerOptions{}, append(func() []step {
			var s []step
			for i := range DefaultMaxSubscriptions {
				s = append(s, step{true, fmt.Sprintf("x://%d", i), "", i + 1})
			}
			return s
		}(), step{true, "x://one-more", "subscriptions", DefaultMaxSubscriptions})},
		{"default uri length", ServerOptions{}, []step{
			{true, long(DefaultMaxSubscriptionURILength), "", 1},
			{true, long(DefaultMaxSubscriptionURILength + 1), "bytes long", 1},
			{true, long(4 << 20), "bytes long", 1},
		}},
		{"unbounded", ServerOptions{MaxSubscriptions: -1, MaxSubscriptionURILength: -1}, []step{
			{true, long(DefaultMaxSubscriptionURILength + 1), "", 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := subscribeServer(tt.opts)
			ss, cs := connectPair(t, s, testClient(nil))
			for i, st := range tt.steps {
				var err error
				if st.sub {
					err = cs.Subscribe(ctx, &SubscribeRequestParams{URI: st.uri})
				} else {
					err = cs.Unsubscribe(ctx, &UnsubscribeRequestParams{URI: st.uri})
				}
				var je *jsonrpc.Error
				switch {
				case st.want == "" && err != nil:
					t.Fatalf("step %d: %v", i, err)
				case st.want != "" && (!errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, st.want)):
					t.Fatalf("step %d: got %v, want -32602 saying %q", i, err, st.want)
				}
				s.subMu.Lock()
				n := len(ss.subs)
				s.subMu.Unlock()
				if n != st.index {
					t.Fatalf("step %d: %d subscriptions, want %d", i, n, st.index)
				}
			}
		})
	}
}

// TestSubscriptionIndex checks that subscribers are indexed by URI, so
// that a change visits only them, and that a session's entries go when it
// ends (issue 16 item 10).
func TestSubscriptionIndex(t *testing.T) {
	ctx := context.Background()
	s := subscribeServer(ServerOptions{})
	ssA, a := connectPair(t, s, testClient(nil))
	_, b := connectPair(t, s, testClient(nil))
	for range 3 {
		connectPair(t, s, testClient(nil)) // idle sessions, subscribed to nothing
	}
	mustOK(t, a.Subscribe(ctx, &SubscribeRequestParams{URI: "x://shared"}))
	mustOK(t, b.Subscribe(ctx, &SubscribeRequestParams{URI: "x://shared"}))
	mustOK(t, b.Subscribe(ctx, &SubscribeRequestParams{URI: "x://b"}))
	index := func() map[string]int {
		s.subMu.Lock()
		defer s.subMu.Unlock()
		out := map[string]int{}
		for uri, set := range s.subscribers {
			out[uri] = len(set)
		}
		return out
	}
	if got := index(); fmt.Sprint(got) != fmt.Sprint(map[string]int{"x://b": 1, "x://shared": 2}) {
		t.Fatalf("index %v", got)
	}
	mustOK(t, b.Unsubscribe(ctx, &UnsubscribeRequestParams{URI: "x://b"}))
	mustOK(t, b.Close())
	eventually(t, "b's subscriptions dropped", func() bool { return fmt.Sprint(index()) == fmt.Sprint(map[string]int{"x://shared": 1}) })
	mustOK(t, ssA.Close())
	eventually(t, "a's subscriptions dropped", func() bool { return len(index()) == 0 })
	// A session that ended cannot subscribe again.
	if err := s.subscribe(ssA, "x://late"); err == nil || len(index()) != 0 {
		t.Fatalf("an ended session subscribed: %v, index %v", err, index())
	}
}
