// Package taskstoretest holds the contract tests every taskstore.Store
// runs: the memory store in package taskstore, store/redis.TaskStore on a
// real Redis. A store passes if it keeps the rules of package taskstore's
// doc: owner scoping, a terminal status that never changes, one winner of
// racing finishes, the outcome stored once, the input exchange, Wait and
// AwaitInput waking on changes made through another handle, the bounds.
package taskstoretest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp/taskstore"
)

// Factory returns a store with the given bounds, and a second handle on
// the same tasks (for a shared store, another replica: a store of its
// own on the same backend; for a store of one process, the store again).
// Both are cleaned up by the test.
type Factory func(t *testing.T, opts taskstore.Options) (a, b taskstore.Store)

// Run runs every contract test against the stores newStore makes.
func Run(t *testing.T, newStore Factory) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newStore(t, tc.opts)
			tc.run(t, a, b)
		})
	}
}

type contractCase struct {
	name string
	opts taskstore.Options
	run  func(t *testing.T, a, b taskstore.Store)
}

var cases = []contractCase{
	{"lifecycle", taskstore.Options{DefaultTTL: time.Minute, MaxTTL: time.Hour, PollInterval: 250 * time.Millisecond}, lifecycle},
	{"owner scoping", taskstore.Options{}, ownerScoping},
	{"terminal is final", taskstore.Options{}, terminalIsFinal},
	{"racing finishes", taskstore.Options{}, racingFinishes},
	{"bad status", taskstore.Options{}, badStatus},
	{"wait", taskstore.Options{PollInterval: 100 * time.Millisecond}, wait},
	{"list", taskstore.Options{PageSize: 2}, list},
	{"active bound", taskstore.Options{MaxActivePerOwner: 2}, activeBound},
	{"total bound", taskstore.Options{MaxTasks: 2}, totalBound},
	{"ttl", taskstore.Options{MaxTTL: time.Hour}, ttl},
	{"input", taskstore.Options{PollInterval: 100 * time.Millisecond}, input},
	{"input cancelled", taskstore.Options{PollInterval: 100 * time.Millisecond}, inputCancelled},
}

// must, mustJSON and mustMap fail the test on an error and return the
// value otherwise.
func must(t *testing.T) func(taskstore.Record, error) taskstore.Record {
	return func(v taskstore.Record, err error) taskstore.Record { t.Helper(); check(t, err); return v }
}

func mustJSON(t *testing.T) func(json.RawMessage, error) json.RawMessage {
	return func(v json.RawMessage, err error) json.RawMessage { t.Helper(); check(t, err); return v }
}

func mustMap(t *testing.T) func(map[string]json.RawMessage, error) map[string]json.RawMessage {
	return func(v map[string]json.RawMessage, err error) map[string]json.RawMessage {
		t.Helper()
		check(t, err)
		return v
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func lifecycle(t *testing.T, a, b taskstore.Store) {
	c := ctx(t)
	r := must(t)(a.Create(c, "alice", nil))
	if r.Status != taskstore.Working || r.TTL != time.Minute || r.PollInterval != 250*time.Millisecond || len(r.ID) < 22 || r.Seq == 0 || r.Owner != "alice" {
		t.Fatalf("new task = %+v", r)
	}
	if got := must(t)(b.Get(c, "alice", r.ID)); got.Status != taskstore.Working || got.Seq != r.Seq || !got.Created.Equal(r.Created) {
		t.Fatalf("Get through the other handle = %+v, want %+v", got, r)
	}
	if out, err := b.Outcome(c, "alice", r.ID); out != nil || err != nil {
		t.Fatalf("outcome of a running task = %s, %v", out, err)
	}
	got := must(t)(a.SetStatus(c, "alice", r.ID, taskstore.InputRequired, "need a name"))
	if got.Status != taskstore.InputRequired || got.Message != "need a name" || got.Updated.Before(r.Updated) {
		t.Fatalf("SetStatus = %+v", got)
	}
	got = must(t)(a.Finish(c, "alice", r.ID, taskstore.Completed, "", json.RawMessage(`{"result":{"x":1}}`)))
	if got.Status != taskstore.Completed {
		t.Fatalf("Finish = %+v", got)
	}
	if out := mustJSON(t)(b.Outcome(c, "alice", r.ID)); string(out) != `{"result":{"x":1}}` {
		t.Fatalf("outcome through the other handle = %s", out)
	}
	if got := must(t)(b.Get(c, "alice", r.ID)); got.Status != taskstore.Completed {
		t.Fatalf("status through the other handle = %q", got.Status)
	}
}

func ownerScoping(t *testing.T, a, b taskstore.Store) {
	c := ctx(t)
	r := must(t)(a.Create(c, "alice", nil))
	calls := map[string]func() error{
		"Get":          func() error { _, err := b.Get(c, "bob", r.ID); return err },
		"SetStatus":    func() error { _, err := b.SetStatus(c, "bob", r.ID, taskstore.Working, ""); return err },
		"Finish":       func() error { _, err := b.Finish(c, "bob", r.ID, taskstore.Cancelled, "", nil); return err },
		"Outcome":      func() error { _, err := b.Outcome(c, "bob", r.ID); return err },
		"Wait":         func() error { _, err := b.Wait(c, "bob", r.ID); return err },
		"RequestInput": func() error { _, err := b.RequestInput(c, "bob", r.ID, nil); return err },
		"PendingInput": func() error { _, err := b.PendingInput(c, "bob", r.ID); return err },
		"ProvideInput": func() error { return b.ProvideInput(c, "bob", r.ID, nil) },
		"AwaitInput":   func() error { _, err := b.AwaitInput(c, "bob", r.ID, []string{"k"}); return err },
		"unknown id":   func() error { _, err := b.Get(c, "alice", taskstore.NewID()); return err },
	}
	for name, f := range calls {
		if err := f(); !errors.Is(err, taskstore.ErrNotFound) {
			t.Errorf("%s of another owner's task = %v, want ErrNotFound", name, err)
		}
	}
	if tasks, _, err := b.List(c, "bob", ""); err != nil || len(tasks) != 0 {
		t.Errorf("bob's list = %v, %v", tasks, err)
	}
	if got := must(t)(a.Get(c, "alice", r.ID)); got.Status != taskstore.Working {
		t.Errorf("the task changed: %+v", got)
	}
}

func terminalIsFinal(t *testing.T, a, b taskstore.Store) {
	for _, end := range []taskstore.Status{taskstore.Completed, taskstore.Failed, taskstore.Cancelled} {
		c := ctx(t)
		r := must(t)(a.Create(c, "o", nil))
		must(t)(b.Finish(c, "o", r.ID, end, "first", json.RawMessage(`{"n":1}`)))
		if _, err := a.Finish(c, "o", r.ID, taskstore.Completed, "second", json.RawMessage(`{"n":2}`)); !errors.Is(err, taskstore.ErrTerminal) {
			t.Errorf("%s: a second Finish = %v, want ErrTerminal", end, err)
		}
		for _, st := range []taskstore.Status{taskstore.Working, taskstore.InputRequired} {
			if _, err := a.SetStatus(c, "o", r.ID, st, ""); !errors.Is(err, taskstore.ErrTerminal) {
				t.Errorf("%s: SetStatus(%s) = %v, want ErrTerminal", end, st, err)
			}
		}
		if _, err := a.RequestInput(c, "o", r.ID, map[string]json.RawMessage{"k": json.RawMessage(`{}`)}); !errors.Is(err, taskstore.ErrTerminal) {
			t.Errorf("%s: RequestInput = %v, want ErrTerminal", end, err)
		}
		got := must(t)(a.Get(c, "o", r.ID))
		out := mustJSON(t)(a.Outcome(c, "o", r.ID))
		if got.Status != end || got.Message != "first" || string(out) != `{"n":1}` {
			t.Errorf("%s: after the refused changes: %+v, outcome %s", end, got, out)
		}
	}
}

// racingFinishes: a cancellation through one handle and a completion
// through the other, started together, end in exactly one terminal
// status, whose outcome is the winner's.
func racingFinishes(t *testing.T, a, b taskstore.Store) {
	c := ctx(t)
	for i := range 20 {
		r := must(t)(a.Create(c, "o", nil))
		var wg sync.WaitGroup
		errs := make([]error, 2)
		start := make(chan struct{})
		for j, f := range []func() error{
			func() error {
				_, err := a.Finish(c, "o", r.ID, taskstore.Completed, "", json.RawMessage(`"done"`))
				return err
			},
			func() error {
				_, err := b.Finish(c, "o", r.ID, taskstore.Cancelled, "cancelled", json.RawMessage(`"cancelled"`))
				return err
			},
		} {
			wg.Go(func() { <-start; errs[j] = f() })
		}
		close(start)
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, taskstore.ErrTerminal):
				t.Fatal(err)
			}
		}
		got := must(t)(a.Get(c, "o", r.ID))
		out := mustJSON(t)(b.Outcome(c, "o", r.ID))
		want := map[taskstore.Status]string{taskstore.Completed: `"done"`, taskstore.Cancelled: `"cancelled"`}[got.Status]
		if won != 1 || string(out) != want {
			t.Fatalf("round %d: %d winners, status %s, outcome %s", i, won, got.Status, out)
		}
	}
}

func badStatus(t *testing.T, a, _ taskstore.Store) {
	c := ctx(t)
	r := must(t)(a.Create(c, "o", nil))
	for _, st := range []taskstore.Status{taskstore.Completed, taskstore.Cancelled, "bogus"} {
		if _, err := a.SetStatus(c, "o", r.ID, st, ""); !errors.Is(err, taskstore.ErrBadStatus) {
			t.Errorf("SetStatus(%q) = %v, want ErrBadStatus", st, err)
		}
	}
	for _, st := range []taskstore.Status{taskstore.Working, taskstore.InputRequired, "bogus"} {
		if _, err := a.Finish(c, "o", r.ID, st, "", nil); !errors.Is(err, taskstore.ErrBadStatus) {
			t.Errorf("Finish(%q) = %v, want ErrBadStatus", st, err)
		}
	}
	if got := must(t)(a.Get(c, "o", r.ID)); got.Status != taskstore.Working {
		t.Errorf("status = %s", got.Status)
	}
}

// wait: a Wait through one handle returns once the other finishes the
// task, and a Wait whose context ends returns its error.
func wait(t *testing.T, a, b taskstore.Store) {
	c := ctx(t)
	r := must(t)(a.Create(c, "o", nil))
	short, cancel := context.WithTimeout(c, 50*time.Millisecond)
	defer cancel()
	if _, err := a.Wait(short, "o", r.ID); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait past its context = %v", err)
	}
	got := make(chan taskstore.Record, 1)
	go func() {
		w, err := a.Wait(c, "o", r.ID)
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	must(t)(b.Finish(c, "o", r.ID, taskstore.Cancelled, "stop", nil))
	if w := <-got; w.Status != taskstore.Cancelled {
		t.Fatalf("Wait = %+v", w)
	}
}

func list(t *testing.T, a, b taskstore.Store) {
	c := ctx(t)
	var ids []string
	for range 5 {
		ids = append(ids, must(t)(a.Create(c, "lister", nil)).ID)
	}
	must(t)(a.Create(c, "other", nil))
	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		if page > 5 {
			t.Fatal("too many pages")
		}
		tasks, next, err := b.List(c, "lister", cursor)
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) > 2 {
			t.Fatalf("page of %d tasks, want at most 2", len(tasks))
		}
		for _, r := range tasks {
			seen = append(seen, r.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if fmt.Sprint(seen) != fmt.Sprint(ids) {
		t.Fatalf("listed %v, want %v, oldest first", seen, ids)
	}
	for _, bad := range []string{"!!", "AAAAAAAAAAA", "AAAAAAAAAAAAAAAA", taskstore.Cursor(1 << 60)} {
		if _, _, err := b.List(c, "lister", bad); !errors.Is(err, taskstore.ErrInvalidCursor) {
			t.Errorf("List(%q) = %v, want ErrInvalidCursor", bad, err)
		}
	}
}

func activeBound(t *testing.T, a, b taskstore.Store) {
	c := ctx(t)
	r1 := must(t)(a.Create(c, "o", nil))
	must(t)(b.Create(c, "o", nil))
	if _, err := a.Create(c, "o", nil); !errors.Is(err, taskstore.ErrTooMany) {
		t.Fatalf("a third unfinished task = %v, want ErrTooMany", err)
	}
	must(t)(b.Create(c, "another owner", nil))
	must(t)(b.Finish(c, "o", r1.ID, taskstore.Completed, "", nil))
	must(t)(a.Create(c, "o", nil))
}

func totalBound(t *testing.T, a, b taskstore.Store) {
	c := ctx(t)
	r1 := must(t)(a.Create(c, "o", nil))
	r2 := must(t)(a.Create(c, "o", nil))
	if _, err := b.Create(c, "o", nil); !errors.Is(err, taskstore.ErrTooMany) {
		t.Fatalf("a third task, the others running = %v, want ErrTooMany", err)
	}
	must(t)(a.Finish(c, "o", r1.ID, taskstore.Completed, "", nil))
	must(t)(b.Create(c, "o", nil))
	if _, err := a.Get(c, "o", r1.ID); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("the oldest finished task, evicted: Get = %v", err)
	}
	must(t)(a.Get(c, "o", r2.ID))
}

// ttl: a task is gone once its TTL has passed, finished or not; a TTL
// over MaxTTL is cut to it.
func ttl(t *testing.T, a, b taskstore.Store) {
	c := ctx(t)
	long := 48 * time.Hour
	if r := must(t)(a.Create(c, "o", &long)); r.TTL != time.Hour {
		t.Errorf("TTL %v, want MaxTTL", r.TTL)
	}
	short := 50 * time.Millisecond
	r := must(t)(a.Create(c, "o", &short))
	if r.TTL != short {
		t.Errorf("TTL %v, want %v", r.TTL, short)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := b.Get(c, "o", r.ID)
		if errors.Is(err, taskstore.ErrNotFound) {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("Get past the TTL = %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// input: the runner asks through one handle, the requestor reads and
// answers through the other; the runner's AwaitInput returns the answers
// once each key has one, and the task is working again.
func input(t *testing.T, a, b taskstore.Store) {
	c := ctx(t)
	r := must(t)(a.Create(c, "o", nil))
	reqs := map[string]json.RawMessage{"name": json.RawMessage(`{"method":"elicitation/create","params":{"n":1}}`), "age": json.RawMessage(`{"method":"elicitation/create","params":{"n":2}}`)}
	if got := must(t)(a.RequestInput(c, "o", r.ID, reqs)); got.Status != taskstore.InputRequired {
		t.Fatalf("RequestInput = %+v", got)
	}
	pending := mustMap(t)(b.PendingInput(c, "o", r.ID))
	if len(pending) != 2 || string(pending["name"]) != string(reqs["name"]) {
		t.Fatalf("PendingInput = %v", pending)
	}
	got := make(chan map[string]json.RawMessage, 1)
	go func() {
		out, err := a.AwaitInput(c, "o", r.ID, []string{"name", "age"})
		if err != nil {
			t.Error(err)
		}
		got <- out
	}()
	if err := b.ProvideInput(c, "o", r.ID, map[string]json.RawMessage{"name": json.RawMessage(`{"v":"Ada"}`), "unknown": json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if p := mustMap(t)(b.PendingInput(c, "o", r.ID)); len(p) != 1 || p["age"] == nil {
		t.Fatalf("pending after one answer = %v", p)
	}
	if st := must(t)(b.Get(c, "o", r.ID)).Status; st != taskstore.InputRequired {
		t.Fatalf("status with one request left = %s", st)
	}
	// An answer to a key already answered is ignored.
	if err := b.ProvideInput(c, "o", r.ID, map[string]json.RawMessage{"name": json.RawMessage(`{"v":"Bob"}`), "age": json.RawMessage(`{"v":36}`)}); err != nil {
		t.Fatal(err)
	}
	out := <-got
	if string(out["name"]) != `{"v":"Ada"}` || string(out["age"]) != `{"v":36}` || len(out) != 2 {
		t.Fatalf("AwaitInput = %v", out)
	}
	if p := mustMap(t)(b.PendingInput(c, "o", r.ID)); len(p) != 0 {
		t.Fatalf("pending after every answer = %v", p)
	}
	if st := must(t)(b.Get(c, "o", r.ID)).Status; st != taskstore.Working {
		t.Fatalf("status after every answer = %s", st)
	}
}

// inputCancelled: a runner waiting for input learns of a cancellation
// made through the other handle.
func inputCancelled(t *testing.T, a, b taskstore.Store) {
	c := ctx(t)
	r := must(t)(a.Create(c, "o", nil))
	must(t)(a.RequestInput(c, "o", r.ID, map[string]json.RawMessage{"k": json.RawMessage(`{}`)}))
	errc := make(chan error, 1)
	go func() {
		_, err := a.AwaitInput(c, "o", r.ID, []string{"k"})
		errc <- err
	}()
	must(t)(b.Finish(c, "o", r.ID, taskstore.Cancelled, "", nil))
	if err := <-errc; !errors.Is(err, taskstore.ErrTerminal) {
		t.Fatalf("AwaitInput after a cancellation = %v, want ErrTerminal", err)
	}
	if err := b.ProvideInput(c, "o", r.ID, map[string]json.RawMessage{"k": json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("ProvideInput to a cancelled task = %v, want it ignored", err)
	}
}
