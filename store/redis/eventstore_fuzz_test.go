package redis_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpstack/mcpstack/mcp/eventstore"
	"github.com/mcpstack/mcpstack/store/redis"
)

// FuzzEventStoreIDs: session and stream ids reach the store from request
// headers (Mcp-Session-Id, Last-Event-ID), so they are untrusted: whatever
// they hold (braces that would change the hash tag, colons that would
// mimic another key), a replay returns the events of that session and
// stream only, and an append or a replay fails only as the contract
// allows.
func FuzzEventStoreIDs(f *testing.F) {
	c := newClient(f)
	prefix := freshPrefix(f, c)
	s := redis.NewEventStore(c, prefix, redis.EventStoreOptions{})
	ctx := context.Background()
	for seq := int64(1); seq <= 3; seq++ {
		if err := s.Append(ctx, "victim", "1", seq, []byte("secret")); err != nil {
			f.Fatal(err)
		}
	}
	f.Add("victim}:s:1", "1", int64(0))
	f.Add("victim", "1}", int64(0))
	f.Add("{victim}", "1", int64(0))
	f.Add("victim", "1", int64(-5))
	f.Add("", "", int64(0))
	f.Fuzz(func(t *testing.T, session, stream string, after int64) {
		got, err := s.After(ctx, session, stream, after)
		if err != nil {
			if !errors.Is(err, eventstore.ErrUnavailable) {
				t.Fatalf("After(%q, %q, %d): %v", session, stream, after, err)
			}
			return
		}
		if len(got) > 0 && (session != "victim" || stream != "1") {
			t.Fatalf("After(%q, %q, %d) returned another session's events: %v", session, stream, after, seqs(got))
		}
		if session == "victim" {
			return // appending to it would change what the other inputs see
		}
		if err := s.Append(ctx, session, stream, 1, []byte("x")); err != nil {
			t.Fatalf("Append(%q, %q): %v", session, stream, err)
		}
		if got, err := s.After(ctx, "victim", "1", 0); err != nil || len(got) != 3 {
			t.Fatalf("after appending to %q/%q, the victim's stream is %v, %v", session, stream, seqs(got), err)
		}
		if err := s.DeleteSession(ctx, session); err != nil {
			t.Fatal(err)
		}
	})
}
