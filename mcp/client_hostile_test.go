package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestClientAgainstHostileServer is the table of modern servers that try
// to keep the client busy for ever or make it hold without bound: each
// call must end, soon, with an error that matches what went wrong and
// reads as one short line, having run the client's handlers no more than
// its bounds allow.
func TestClientAgainstHostileServer(t *testing.T) {
	elicit := map[string]any{"method": MethodElicitationCreate, "params": map[string]any{"message": "m", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}}
	many := map[string]any{}
	for i := range 1000 {
		many[fmt.Sprintf("q%d", i)] = elicit
	}
	versions := make([]string, 100000)
	for i := range versions {
		versions[i] = fmt.Sprintf("1999-01-%05d", i)
	}
	task := func(status string, extra map[string]any) map[string]any {
		m := map[string]any{"resultType": "task", "taskId": "t1", "status": status, "pollIntervalMs": 1}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name     string
		discover map[string]any
		answer   func(method string) any
		policy   EraPolicy
		connect  bool  // the failure is Connect's
		want     error // nil: any error
		wantText string
		maxAsks  int64 // the elicitation handler runs at most this often
		cancels  bool  // the client cancels the task
	}{
		{
			name: "input_required for ever",
			answer: func(string) any {
				return map[string]any{"resultType": "input_required", "inputRequests": map[string]any{"q": elicit}, "requestState": "s"}
			},
			want: ErrTooManyInputRounds, maxAsks: DefaultMaxInputRounds,
		},
		{
			name: "a thousand questions at once",
			answer: func(string) any {
				return map[string]any{"resultType": "input_required", "inputRequests": many}
			},
			want: ErrTooManyInputRequests, maxAsks: 0,
		},
		{
			name: "a task asking for ever",
			answer: func(method string) any {
				if method == MethodTasksUpdate || method == MethodTasksCancel {
					return map[string]any{"resultType": "complete"}
				}
				return task("input_required", map[string]any{"inputRequests": map[string]any{"q": elicit}})
			},
			want: ErrTooManyInputRounds, maxAsks: DefaultMaxInputRounds, cancels: true,
		},
		{
			name: "a task asking a thousand questions",
			answer: func(method string) any {
				if method == MethodTasksCancel {
					return map[string]any{"resultType": "complete"}
				}
				return task("input_required", map[string]any{"inputRequests": many})
			},
			want: ErrTooManyInputRequests, maxAsks: 0, cancels: true,
		},
		{
			name: "a task in a status nobody knows",
			answer: func(method string) any {
				if method == MethodTasksCancel {
					return map[string]any{"resultType": "complete"}
				}
				return task("sleeping", nil)
			},
			wantText: `unknown status "sleeping"`, cancels: true,
		},
		{
			name:     "a discover result with a hundred thousand versions",
			discover: map[string]any{"resultType": "complete", "supportedVersions": versions, "capabilities": map[string]any{}},
			policy:   EraPolicyModern, connect: true,
			want: ErrNoCommonVersion, wantText: "and 99992 more",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The cases that end by themselves end at once; the timeout
			// is what an unbounded client would run into.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var asks, cancels atomic.Int64
			f := &eraFakeServer{answer: func(r eraFakeRequest) (int, any) {
				switch r.Method {
				case MethodServerDiscover:
					if tt.discover != nil {
						return 200, tt.discover
					}
					return 200, modernDiscover
				case MethodTasksCancel:
					cancels.Add(1)
				}
				return 200, tt.answer(r.Method)
			}}
			c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
				EraPolicy: cmpOr(tt.policy, EraPolicyAuto), TasksExtension: true, TaskPollInterval: time.Millisecond,
				ElicitationHandler: func(context.Context, *ClientSession, ElicitRequestParams) (*ElicitResult, error) {
					asks.Add(1)
					return &ElicitResult{Action: ElicitActionDecline}, nil
				},
			})
			cs, err := c.Connect(ctx, f.transport(t))
			if err == nil {
				defer cs.Close()
				if tt.connect {
					t.Fatal("Connect succeeded")
				}
				_, err = cs.CallTool(ctx, &CallToolRequestParams{Name: "x", Arguments: json.RawMessage(`{}`)})
			}
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("error %.300v, want %v", err, tt.want)
			}
			if msg := err.Error(); len(msg) > 512 || strings.Contains(msg, "\n") || !strings.Contains(msg, tt.wantText) {
				t.Errorf("error (%d bytes) %.300s, want one short line with %q", len(msg), msg, tt.wantText)
			}
			if n := asks.Load(); n > tt.maxAsks {
				t.Errorf("the elicitation handler ran %d times, at most %d", n, tt.maxAsks)
			}
			if tt.cancels && cancels.Load() == 0 && !slices.Contains(f.methods(), MethodTasksCancel) {
				t.Errorf("the task was not cancelled: %v", f.methods())
			}
		})
	}
}

func cmpOr(p, def EraPolicy) EraPolicy {
	if p != EraPolicyDefault {
		return p
	}
	return def
}

// TestResultCacheCountsKeys checks that the result cache's byte bound
// counts the params each result is kept under: a flood of resources/read
// of distinct long URIs, each with a small result, once made the cache
// hold its entry bound times the URI length, far past its byte bound.
func TestResultCacheCountsKeys(t *testing.T) {
	tests := []struct {
		name         string
		keyLen       int
		entries, max int
	}{
		{"long keys", 64 << 10, 256, 1 << 20},
		{"short keys", 16, 256, 1 << 20},
		{"keys over a quarter of the bound", 300 << 10, 256, 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newResultCache(tt.entries, tt.max)
			res := json.RawMessage(`{"resultType":"complete","ttlMs":60000,"cacheScope":"private","contents":[]}`)
			for i := range 2 * tt.entries {
				params := json.RawMessage(fmt.Sprintf(`{"uri":"file:///%d/%s"}`, i, strings.Repeat("u", tt.keyLen)))
				c.put(MethodResourcesRead, params, res)
				held := 0
				for k, e := range c.entries {
					held += len(k.method) + len(k.params) + len(e.raw)
				}
				if held > tt.max || held != c.bytes {
					t.Fatalf("after %d puts the cache holds %d bytes (counted %d), bound %d", i+1, held, c.bytes, tt.max)
				}
			}
		})
	}
}
