package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestChangeEncodeDecode(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  Change
		wantErr bool
	}{
		{"tools", Change{Origin: "r1", Method: NotificationToolsListChanged}, false},
		{"prompts", Change{Method: NotificationPromptsListChanged}, false},
		{"resources", Change{Method: NotificationResourcesListChanged}, false},
		{"updated", Change{Origin: "r2", Method: NotificationResourcesUpdated, URI: "file:///a.txt"}, false},
		{"updated without URI", Change{Method: NotificationResourcesUpdated}, true},
		{"list change with URI", Change{Method: NotificationToolsListChanged, URI: "file:///a"}, true},
		{"other method", Change{Method: "notifications/message"}, true},
		{"no method", Change{}, true},
		{"too long", Change{Method: NotificationResourcesUpdated, URI: "file:///" + strings.Repeat("a", MaxChangeBytes)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.change.Encode()
			if tc.wantErr {
				if !errors.Is(err, ErrBadChange) {
					t.Fatalf("Encode: %v, want ErrBadChange", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeChange(b)
			if err != nil || got != tc.change {
				t.Fatalf("DecodeChange(%s) = %+v, %v; want %+v", b, got, err, tc.change)
			}
		})
	}
}

func TestDecodeChangeRefuses(t *testing.T) {
	for _, msg := range []string{
		``,
		`null`,
		`[]`,
		`{"method":"notifications/tools/list_changed","extra":1}`,
		`{"method":"notifications/tools/list_changed"} {}`,
		`{"method":"notifications/resources/updated"}`,
		`{"method":"notifications/resources/updated","uri":""}`,
		`{"method":"ping"}`,
		`{"method":"notifications/tools/list_changed","uri":"x"}`,
		`{"method":"notifications/resources/updated","uri":"` + strings.Repeat("a", MaxChangeBytes) + `"}`,
	} {
		if c, err := DecodeChange([]byte(msg)); !errors.Is(err, ErrBadChange) {
			t.Errorf("DecodeChange(%.60q) = %+v, %v; want ErrBadChange", msg, c, err)
		}
	}
}

// FuzzDecodeChange: whatever is on the bus, DecodeChange returns a valid
// change or ErrBadChange, and a decoded change encodes to a message that
// decodes to itself.
func FuzzDecodeChange(f *testing.F) {
	f.Add([]byte(`{"origin":"a","method":"notifications/resources/updated","uri":"file:///x"}`))
	f.Add([]byte(`{"method":"notifications/tools/list_changed"}`))
	f.Add([]byte(`{"method":"notifications/tools/list_changed","uri":null}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		c, err := DecodeChange(msg)
		if err != nil {
			if !errors.Is(err, ErrBadChange) {
				t.Fatalf("error %v does not wrap ErrBadChange", err)
			}
			return
		}
		b, err := c.Encode()
		if err != nil {
			t.Fatalf("a decoded change does not encode: %+v: %v", c, err)
		}
		if again, err := DecodeChange(b); err != nil || again != c {
			t.Fatalf("round trip %+v -> %s -> %+v, %v", c, b, again, err)
		}
	})
}

// busRecorder collects what a subscription delivers.
type busRecorder struct {
	mu   sync.Mutex
	msgs []string // "" stands for the loss signal
	more chan struct{}
}

func newBusRecorder() *busRecorder { return &busRecorder{more: make(chan struct{}, 1)} }

func (r *busRecorder) deliver(m []byte) {
	r.mu.Lock()
	if m == nil {
		r.msgs = append(r.msgs, "")
	} else {
		r.msgs = append(r.msgs, string(m))
	}
	r.mu.Unlock()
	select {
	case r.more <- struct{}{}:
	default:
	}
}

// wait returns the messages once there are n, or fails after a generous
// bound.
func (r *busRecorder) wait(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		got := append([]string(nil), r.msgs...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-r.more:
		case <-deadline:
			t.Fatalf("got %q, waiting for %d messages", got, n)
		}
	}
}

// TestMemoryBus: every subscription, the publisher's included, gets every
// message once and in order; stop ends delivery; a subscription that falls
// behind loses messages, is told so with deliver(nil) after the ones it
// got, and is never given one twice.
func TestMemoryBus(t *testing.T) {
	ctx := context.Background()
	t.Run("fan-out", func(t *testing.T) {
		var b MemoryBus
		var recs []*busRecorder
		var stops []func()
		for range 3 {
			r := newBusRecorder()
			stop, err := b.Subscribe(ctx, r.deliver)
			if err != nil {
				t.Fatal(err)
			}
			recs, stops = append(recs, r), append(stops, stop)
		}
		for _, m := range []string{"a", "b", "c"} {
			if err := b.Publish(ctx, []byte(m)); err != nil {
				t.Fatal(err)
			}
		}
		for i, r := range recs {
			if got := strings.Join(r.wait(t, 3), ","); got != "a,b,c" {
				t.Errorf("subscription %d got %s", i, got)
			}
		}
		stops[0]()
		stops[0]() // twice is fine
		if err := b.Publish(ctx, []byte("d")); err != nil {
			t.Fatal(err)
		}
		recs[1].wait(t, 4)
		if got := strings.Join(recs[0].wait(t, 3), ","); got != "a,b,c" {
			t.Errorf("a stopped subscription got %s", got)
		}
		stops[1]()
		stops[2]()
	})
	t.Run("slow subscriber", func(t *testing.T) {
		b := MemoryBus{Queue: 2}
		release := make(chan struct{})
		r := newBusRecorder()
		stop, err := b.Subscribe(ctx, func(m []byte) {
			if string(m) == "0" {
				<-release
			}
			r.deliver(m)
		})
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		if err := b.Publish(ctx, []byte("0")); err != nil {
			t.Fatal(err)
		}
		// Wait until "0" is being delivered, so that the queue is empty.
		for {
			b.mu.Lock()
			var queued int
			for s := range b.subs {
				queued = len(s.ch)
			}
			b.mu.Unlock()
			if queued == 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		for _, m := range []string{"1", "2", "3", "4"} {
			b.Publish(ctx, []byte(m))
		}
		close(release)
		got := r.wait(t, 4)
		if strings.Join(got, ",") != "0,1,2," {
			t.Fatalf("got %q, want 0, 1, 2 then the loss signal", got)
		}
		b.Publish(ctx, []byte("5"))
		if got := r.wait(t, 5); got[4] != "5" {
			t.Fatalf("after the loss: %q", got)
		}
	})
	t.Run("ended context", func(t *testing.T) {
		var b MemoryBus
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := b.Subscribe(cctx, func([]byte) {}); !errors.Is(err, context.Canceled) {
			t.Errorf("Subscribe: %v", err)
		}
		if err := b.Publish(cctx, []byte("x")); !errors.Is(err, context.Canceled) {
			t.Errorf("Publish: %v", err)
		}
	})
}

// counts counts the notifications a client got, by kind.
type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counts) add(k string) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[k]++
	c.mu.Unlock()
}

func (c *counts) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

func countingClient(c *counts) *Client {
	return testClient(&ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, _ *ClientSession, p *ResourceUpdatedNotificationParams) {
			c.add("updated " + p.URI)
		},
		ToolListChangedHandler: func(context.Context, *ClientSession) { c.add("tools") },
	})
}

// TestShareChanges: two servers (replicas) share a bus. A resource update
// made at one reaches the subscribers of both, once each, and no one
// else; a list change published on the bus reaches every session; a loss
// on the bus makes each replica tell its subscribers and sessions that
// everything changed; after stop, nothing crosses.
func TestShareChanges(t *testing.T) {
	ctx := context.Background()
	var bus MemoryBus
	newReplica := func() *Server {
		s := subscribeServer(ServerOptions{})
		if err := s.AddTool(&Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
			return &CallToolResult{}, nil
		}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := newReplica(), newReplica()
	stopA, err := a.ShareChanges(ctx, &bus)
	if err != nil {
		t.Fatal(err)
	}
	stopB, err := b.ShareChanges(ctx, &bus)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ShareChanges(ctx, &bus); !errors.Is(err, ErrAlreadyShared) {
		t.Errorf("sharing twice: %v", err)
	}
	var atA, atB, other counts
	_, csA := connectPair(t, a, countingClient(&atA))
	_, csB := connectPair(t, b, countingClient(&atB))
	_, csO := connectPair(t, b, countingClient(&other))
	for _, cs := range []*ClientSession{csA, csB} {
		if err := cs.Subscribe(ctx, &SubscribeRequestParams{URI: "x://r"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := csO.Subscribe(ctx, &SubscribeRequestParams{URI: "x://other"}); err != nil {
		t.Fatal(err)
	}

	if err := a.ResourceUpdated(ctx, "x://r"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the update at both replicas", func() bool { return atA.get("updated x://r") == 1 && atB.get("updated x://r") == 1 })

	msg, _ := Change{Method: NotificationToolsListChanged}.Encode()
	if err := bus.Publish(ctx, msg); err != nil {
		t.Fatal(err)
	}
	eventually(t, "tools list_changed everywhere", func() bool {
		return atA.get("tools") == 1 && atB.get("tools") == 1 && other.get("tools") == 1
	})

	// A loss at the bus: b's subscription is told so.
	bus.mu.Lock()
	for s := range bus.subs {
		s.lost <- struct{}{}
		break
	}
	bus.mu.Unlock()
	eventually(t, "everything changed at one replica", func() bool {
		return atA.get("tools")+atB.get("tools") == 3 && (atA.get("updated x://r") == 2 || atB.get("updated x://r") == 2)
	})

	stopA()
	stopB()
	if err := b.ResourceUpdated(ctx, "x://r"); err != nil {
		t.Fatal(err)
	}
	if err := a.ResourceUpdated(ctx, "x://r"); err != nil {
		t.Fatal(err)
	}
	// Settle: whatever was in flight has arrived.
	for _, cs := range []*ClientSession{csA, csB, csO} {
		if err := cs.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The session subscribed to x://other only: it never hears of x://r,
	// and of x://other once at most (when the loss was b's, b updates
	// every URI with subscribers, as ShareChanges says).
	if n, m := other.get("updated x://r"), other.get("updated x://other"); n != 0 || m > 1 {
		t.Errorf("a session that did not subscribe to x://r got %d updates of it, and %d of x://other", n, m)
	}
	// a: 1 (first), 1 (the loss, if it was a's), 1 (its own, after stop);
	// b likewise: 5 in all, and no more once settled.
	eventually(t, "5 updates in all", func() bool { return atA.get("updated x://r")+atB.get("updated x://r") == 5 })
	for _, cs := range []*ClientSession{csA, csB} {
		if err := cs.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if total := atA.get("updated x://r") + atB.get("updated x://r"); total != 5 {
		t.Errorf("updates: a %d, b %d; want 5 in all", atA.get("updated x://r"), atB.get("updated x://r"))
	}
}
