package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// The client side of the tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663; docs/extensions/tasks-overview), which revision 2026-07-28
// moved out of the core protocol: a client that declares the extension in
// each request's capabilities may get, for any supported request, a flat
// CreateTaskResult (resultType "task", taskId, status, ttlMs,
// pollIntervalMs) instead of the result; it polls tasks/get until the task
// is terminal, answers inputRequests with tasks/update, and may send
// tasks/cancel.

// notificationTasks is the extension's status notification: the server
// pushes a task's full state, on a subscriptions/listen stream
// (tasks-overview "Notifications"), so that the client need not poll. A
// modern session reads notifications/tasks/status (the 2025-11-25 name)
// in the same shape.
const notificationTasks = "notifications/tasks"

// DefaultTaskPollInterval is how often a modern session polls a task
// whose CreateTaskResult suggests no pollIntervalMs
// (ClientOptions.TaskPollInterval).
const DefaultTaskPollInterval = time.Second

// Bounds on a server's pollIntervalMs: a server cannot make the client
// poll in a busy loop, nor park it for hours.
const (
	minTaskPoll = 50 * time.Millisecond
	maxTaskPoll = time.Minute
)

// ErrTaskCancelled is returned (wrapped) when a task the client awaited
// ended in status cancelled.
var ErrTaskCancelled = errors.New("mcp: the task was cancelled")

// extTaskState is what tasks/get answers (and the first part of a
// CreateTaskResult): the task's state and, once terminal, its outcome.
type extTaskState struct {
	ResultType     ResultType                 `json:"resultType"`
	TaskID         string                     `json:"taskId"`
	Status         TaskStatus                 `json:"status"`
	StatusMessage  string                     `json:"statusMessage"`
	PollIntervalMs *int64                     `json:"pollIntervalMs"`
	Result         json.RawMessage            `json:"result"`
	Error          *jsonrpc.Error             `json:"error"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
}

// pollInterval is the wait before the next tasks/get.
func (cs *ClientSession) pollInterval(st *extTaskState) time.Duration {
	d := cs.client.opts.TaskPollInterval
	if d <= 0 {
		d = DefaultTaskPollInterval
	}
	if st.PollIntervalMs != nil && *st.PollIntervalMs > 0 {
		d = time.Duration(*st.PollIntervalMs) * time.Millisecond
	}
	return min(max(d, minTaskPoll), maxTaskPoll)
}

// awaitExtTask follows the task a CreateTaskResult (raw) names to its end
// and returns what the original request would have returned: the
// completed task's result, or its error. When ctx ends first, the task is
// cancelled with tasks/cancel (bounded by ClientOptions.CancelTimeout).
func (cs *ClientSession) awaitExtTask(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var st extTaskState
	if err := strictjson.Unmarshal(raw, &st); err != nil || st.TaskID == "" {
		return nil, fmt.Errorf("mcp: a task result without a taskId: %v", err)
	}
	id := st.TaskID
	pushed, unwatch := cs.watchExtTask(id)
	defer unwatch()
	maxRounds := cmp.Or(cs.client.opts.MaxInputRounds, DefaultMaxInputRounds)
	rounds := 0
	for {
		if err := st.Status.Validate(); err != nil {
			// A status this client does not know would be polled for
			// ever: the server is not speaking the extension it declared.
			cs.cancelExtTask(id)
			return nil, fmt.Errorf("mcp: task %s: %w", clip.String(id), err)
		}
		switch st.Status {
		case TaskStatusCompleted:
			if len(st.Result) == 0 {
				return nil, fmt.Errorf("mcp: task %s completed without a result", id)
			}
			return st.Result, nil
		case TaskStatusFailed:
			if st.Error != nil {
				return nil, st.Error
			}
			return nil, fmt.Errorf("mcp: task %s failed: %s", id, st.StatusMessage)
		case TaskStatusCancelled:
			return nil, fmt.Errorf("%w: %s %s", ErrTaskCancelled, id, st.StatusMessage)
		case TaskStatusInputRequired:
			if len(st.InputRequests) > 0 {
				// The same bound as the retries of an InputRequiredResult:
				// a server asking again and again keeps the user answering.
				if rounds++; rounds > maxRounds {
					cs.cancelExtTask(id)
					return nil, fmt.Errorf("%w: task %s after %d rounds", ErrTooManyInputRounds, clip.String(id), maxRounds)
				}
				responses, err := cs.answerInputs(ctx, st.InputRequests)
				if err != nil {
					cs.cancelExtTask(id)
					return nil, err
				}
				if err := cs.call(ctx, MethodTasksUpdate, map[string]any{"taskId": id, "inputResponses": responses}, nil); err != nil {
					return nil, fmt.Errorf("mcp: %s: %w", MethodTasksUpdate, err)
				}
				break // poll at once: the answers may have let it go on
			}
			fallthrough
		default:
			t := time.NewTimer(cs.pollInterval(&st))
			select {
			case <-ctx.Done():
				t.Stop()
				cs.cancelExtTask(id)
				return nil, ctx.Err()
			case n := <-pushed:
				t.Stop()
				if n.complete() {
					if n.PollIntervalMs == nil {
						n.PollIntervalMs = st.PollIntervalMs
					}
					st = n
					continue // the pushed state saves the tasks/get
				}
			case <-t.C:
			}
		}
		var next extTaskState
		if err := cs.call(ctx, MethodTasksGet, map[string]string{"taskId": id}, &next); err != nil {
			if ctx.Err() != nil {
				cs.cancelExtTask(id)
			}
			return nil, fmt.Errorf("mcp: %s %s: %w", MethodTasksGet, id, err)
		}
		select { // a state pushed before this answer is not newer than it
		case <-pushed:
		default:
		}
		if next.PollIntervalMs == nil {
			next.PollIntervalMs = st.PollIntervalMs
		}
		st = next
	}
}

// cancelExtTask tells the server the client no longer waits for task id.
func (cs *ClientSession) cancelExtTask(id string) {
	d := cs.client.opts.CancelTimeout
	if d <= 0 {
		d = DefaultCancelTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := cs.call(ctx, MethodTasksCancel, map[string]string{"taskId": id}, nil); err != nil {
		cs.client.log.Debug("mcp: tasks/cancel", "task", id, "error", err)
	}
}

// complete reports whether st carries what its status calls for (the
// result of a completed task, the error of a failed one, the requests of
// an input_required one), so that a pushed state can stand in for
// tasks/get. A notification that leaves them out only says "poll now".
func (st *extTaskState) complete() bool {
	switch st.Status {
	case TaskStatusCompleted:
		return len(st.Result) > 0
	case TaskStatusFailed:
		return st.Error != nil
	case TaskStatusInputRequired:
		return len(st.InputRequests) > 0
	}
	return st.Status.Validate() == nil
}

// maxEarlyTaskStates bounds the pushed task states a session keeps for
// tasks nobody awaits yet: on one stream the state can arrive right after
// the CreateTaskResult, before the caller has read it and started to wait.
const maxEarlyTaskStates = 16

// watchExtTask registers the caller as the awaiter of task id: states the
// server pushes for it arrive on the returned channel (the latest one
// wins) until unwatch is called; a state pushed just before is delivered
// at once.
func (cs *ClientSession) watchExtTask(id string) (<-chan extTaskState, func()) {
	ch := make(chan extTaskState, 1)
	cs.mu.Lock()
	if cs.taskWatch == nil {
		cs.taskWatch = make(map[string]chan extTaskState)
	}
	prev, had := cs.taskWatch[id]
	cs.taskWatch[id] = ch
	if i := slices.IndexFunc(cs.taskEarly, func(st extTaskState) bool { return st.TaskID == id }); i >= 0 {
		ch <- cs.taskEarly[i]
		cs.taskEarly = slices.Delete(cs.taskEarly, i, i+1)
	}
	cs.mu.Unlock()
	return ch, func() {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		if cs.taskWatch[id] == ch {
			if had {
				cs.taskWatch[id] = prev // the same task awaited twice
			} else {
				delete(cs.taskWatch, id)
			}
		}
	}
}

// extTaskNotice is a task state a server pushes (notifications/tasks): the
// extension's task, flat, with the members tasks/get would add.
type extTaskNotice struct {
	extTaskState
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTLMs         *int64 `json:"ttlMs"`
	Meta          Meta   `json:"_meta"`
}

// extTaskNotified handles a pushed task state of a modern session: the
// awaitExtTask waiting on the task takes it instead of its next tasks/get,
// and ClientOptions.TaskStatusHandler sees it as a Task (ttlMs and
// pollIntervalMs under their 2025-11-25 names). It runs on the read loop
// and does not block.
func (cs *ClientSession) extTaskNotified(ctx context.Context, params json.RawMessage) {
	n, err := parseExtTaskNotice(params)
	if err != nil {
		cs.client.log.Debug("mcp: malformed task notification ignored", "error", err)
		return
	}
	cs.mu.Lock()
	ch := cs.taskWatch[n.TaskID]
	if ch == nil && cs.client.opts.TasksExtension {
		cs.keepEarlyTaskState(n.extTaskState)
	}
	cs.mu.Unlock()
	if ch != nil {
		select { // the latest state wins over one not yet taken
		case <-ch:
		default:
		}
		select {
		case ch <- n.extTaskState:
		default:
		}
	}
	if h := cs.client.opts.TaskStatusHandler; h != nil {
		h(ctx, cs, &TaskStatusNotificationParams{Meta: n.Meta, Task: Task{
			TaskID: n.TaskID, Status: n.Status, StatusMessage: n.StatusMessage,
			CreatedAt: n.CreatedAt, LastUpdatedAt: n.LastUpdatedAt, TTL: n.TTLMs, PollInterval: n.PollIntervalMs,
		}})
	}
}

// keepEarlyTaskState keeps st for an awaiter still to come, replacing an
// older state of the same task and dropping the oldest past
// maxEarlyTaskStates. cs.mu is held.
func (cs *ClientSession) keepEarlyTaskState(st extTaskState) {
	cs.taskEarly = slices.DeleteFunc(cs.taskEarly, func(e extTaskState) bool { return e.TaskID == st.TaskID })
	if len(cs.taskEarly) >= maxEarlyTaskStates {
		cs.taskEarly = slices.Delete(cs.taskEarly, 0, 1)
	}
	cs.taskEarly = append(cs.taskEarly, st)
}

// parseExtTaskNotice decodes a pushed task state, which must name the
// task and a known status.
func parseExtTaskNotice(params json.RawMessage) (extTaskNotice, error) {
	var n extTaskNotice
	if err := strictjson.Unmarshal(params, &n); err != nil {
		return n, err
	}
	if n.TaskID == "" {
		return n, errors.New("mcp: a task notification without a taskId")
	}
	return n, n.Status.Validate()
}
