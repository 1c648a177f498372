package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// TestTasksExtensionClient checks the client side of the tasks extension:
// the capability is declared, a task answer is polled with tasks/get,
// its inputRequests answered with tasks/update, and the completed
// result returned from CallTool; a caller who gives up cancels the task.
func TestTasksExtensionClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	updated := false
	f := &eraFakeServer{answer: func(r eraFakeRequest) (int, any) {
		mu.Lock()
		defer mu.Unlock()
		switch r.Method {
		case MethodServerDiscover:
			return 200, modernDiscover
		case MethodToolsCall:
			if !strings.Contains(string(r.Params["_meta"]), TasksExtensionID) {
				return 200, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "sync"}}}
			}
			return 200, map[string]any{"resultType": "task", "taskId": "t1", "status": "working", "ttlMs": 60000, "pollIntervalMs": 10}
		case MethodTasksGet:
			if strings.Contains(string(r.Params["taskId"]), "stuck") {
				return 200, map[string]any{"resultType": "complete", "taskId": "stuck", "status": "working"}
			}
			if !updated {
				return 200, map[string]any{"resultType": "complete", "taskId": "t1", "status": "input_required", "inputRequests": map[string]any{
					"ok": map[string]any{"method": MethodElicitationCreate, "params": map[string]any{"message": "go?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}},
				}}
			}
			return 200, map[string]any{"resultType": "complete", "taskId": "t1", "status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "async"}}}}
		case MethodTasksUpdate:
			updated = strings.Contains(string(r.Params["inputResponses"]), `"accept"`)
			return 200, map[string]any{"resultType": "complete"}
		}
		return 200, map[string]any{"resultType": "complete"}
	}}
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		EraPolicy:      EraPolicyAuto,
		TasksExtension: true,
		ElicitationHandler: func(context.Context, *ClientSession, ElicitRequestParams) (*ElicitResult, error) {
			return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{}}, nil
		},
	})
	cs, err := c.Connect(ctx, f.transport(t))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "slow", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != "async" {
		t.Errorf("result %q", got)
	}
	want := []string{MethodServerDiscover, MethodToolsCall, MethodTasksGet, MethodTasksUpdate, MethodTasksGet}
	if got := f.methods(); !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}

	// A caller who gives up cancels the task.
	stuck := &eraFakeServer{answer: func(r eraFakeRequest) (int, any) {
		if r.Method == MethodToolsCall {
			return 200, map[string]any{"resultType": "task", "taskId": "stuck", "status": "working", "pollIntervalMs": 10}
		}
		return f.answer(r)
	}}
	cs2, err := c.Connect(ctx, stuck.transport(t))
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	cctx, ccancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer ccancel()
	if _, err := cs2.CallTool(cctx, &CallToolRequestParams{Name: "slow"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	if ms := stuck.methods(); ms[len(ms)-1] != MethodTasksCancel {
		t.Errorf("no tasks/cancel after the caller gave up: %v", ms)
	}
}

// TestTasksExtensionPushedStatus checks that task states a modern server
// pushes (the extension's notifications/tasks, or notifications/tasks/status)
// reach the awaiting call, which then needs no tasks/get when the state is
// complete, and reach TaskStatusHandler in the Task shape; a state for
// another task is not taken for the awaited one.
func TestTasksExtensionPushedStatus(t *testing.T) {
	done := `{"taskId":"t1","status":"completed","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:01Z","ttlMs":60000,"result":{"content":[{"type":"text","text":"pushed"}]}}`
	tests := []struct {
		name     string
		pushes   [][2]string // method, params
		want     string
		methods  []string
		seenLast string // what TaskStatusHandler saw last: id/status/ttl
	}{
		{name: "notifications/tasks with the result", pushes: [][2]string{{notificationTasks, done}}, want: "pushed",
			methods: []string{MethodToolsCall}, seenLast: "t1/completed/60000"},
		{name: "notifications/tasks/status on a modern session", pushes: [][2]string{{NotificationTasksStatus, done}}, want: "pushed",
			methods: []string{MethodToolsCall}, seenLast: "t1/completed/60000"},
		{name: "a state without the result means poll now", pushes: [][2]string{{notificationTasks, `{"taskId":"t1","status":"completed"}`}}, want: "polled",
			methods: []string{MethodToolsCall, MethodTasksGet}, seenLast: "t1/completed/-1"},
		{name: "another task's state is not taken", pushes: [][2]string{
			{notificationTasks, `{"taskId":"other","status":"completed","result":{"content":[{"type":"text","text":"wrong"}]}}`},
			{notificationTasks, done}}, want: "pushed",
			methods: []string{MethodToolsCall}, seenLast: "t1/completed/60000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			f := &eraFakeServer{answer: func(r eraFakeRequest) (int, any) {
				switch r.Method {
				case MethodToolsCall:
					// A poll interval the test would time out on.
					return 200, map[string]any{"resultType": "task", "taskId": "t1", "status": "working", "ttlMs": 60000, "pollIntervalMs": 600000}
				case MethodTasksGet:
					return 200, map[string]any{"resultType": "complete", "taskId": "t1", "status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "polled"}}}}
				}
				return 200, map[string]any{"resultType": "complete"}
			}}
			f.after = func(r eraFakeRequest, s jsonrpc.Stream) {
				if r.Method != MethodToolsCall {
					return
				}
				for _, p := range tt.pushes {
					_ = s.Write(ctx, &jsonrpc.Request{Method: p[0], Params: json.RawMessage(p[1])})
				}
			}
			var mu sync.Mutex
			var seen []string
			c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
				EraPolicy:      EraPolicyAuto,
				PriorDiscover:  &DiscoverResult{SupportedVersions: []string{ProtocolVersion20260728}},
				TasksExtension: true,
				TaskStatusHandler: func(_ context.Context, _ *ClientSession, p *TaskStatusNotificationParams) {
					mu.Lock()
					defer mu.Unlock()
					ttl := int64(-1)
					if p.TTL != nil {
						ttl = *p.TTL
					}
					seen = append(seen, fmt.Sprintf("%s/%s/%d", p.TaskID, p.Status, ttl))
				},
			})
			cs, err := c.Connect(ctx, f.transport(t))
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "slow"})
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(t, res); got != tt.want {
				t.Errorf("result %q, want %q", got, tt.want)
			}
			if got := f.methods(); !slices.Equal(got, tt.methods) {
				t.Errorf("requests %v, want %v", got, tt.methods)
			}
			// The handler runs on a goroutine of its own: the last push
			// may reach it after CallTool returned.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				mu.Lock()
				n := len(seen)
				mu.Unlock()
				if n >= len(tt.pushes) || time.Now().After(deadline) {
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != len(tt.pushes) || seen[len(seen)-1] != tt.seenLast {
				t.Errorf("TaskStatusHandler saw %v", seen)
			}
		})
	}
}
