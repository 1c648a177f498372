package mcp

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"
)

// ErrTasksNotSupported is returned (wrapped) when a requestor would send a
// task-augmented request that the receiver did not declare in its tasks
// capability, or a tool whose execution.taskSupport forbids tasks.
var ErrTasksNotSupported = errors.New("mcp: the receiver does not accept this request as a task")

// caller sends a request and decodes its result: both sessions are one.
type caller func(ctx context.Context, method string, params, result any) error

func createTask(ctx context.Context, call caller, method string, params any) (*CreateTaskResult, error) {
	var res CreateTaskResult
	if err := call(ctx, method, params, &res); err != nil {
		return nil, err
	}
	if err := res.Validate(); err != nil {
		return nil, fmt.Errorf("mcp: %s: the answer is not a task: %w", method, err)
	}
	return &res, nil
}

func getTask(ctx context.Context, call caller, id string) (*Task, error) {
	var res GetTaskResult
	if err := call(ctx, MethodTasksGet, &GetTaskRequestParams{TaskID: id}, &res); err != nil {
		return nil, err
	}
	return &res.Task, nil
}

func taskResult(ctx context.Context, call caller, id string) (GetTaskPayloadResult, error) {
	var res GetTaskPayloadResult
	if err := call(ctx, MethodTasksResult, &GetTaskPayloadRequestParams{TaskID: id}, &res); err != nil {
		return nil, err
	}
	return res, nil
}

func listTasks(ctx context.Context, call caller, p *PaginatedRequestParams) (*ListTasksResult, error) {
	var res ListTasksResult
	if err := call(ctx, MethodTasksList, orEmptyPage(p), &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func cancelTask(ctx context.Context, call caller, id string) (*Task, error) {
	var res CancelTaskResult
	if err := call(ctx, MethodTasksCancel, &CancelTaskRequestParams{TaskID: id}, &res); err != nil {
		return nil, err
	}
	return &res.Task, nil
}

// waitTask polls tasks/get at the task's poll interval (at least minPoll,
// one second when the receiver suggests none) until the task is terminal
// or needs input.
func waitTask(ctx context.Context, call caller, id string) (*Task, error) {
	const minPoll = 10 * time.Millisecond
	for {
		t, err := getTask(ctx, call, id)
		if err != nil {
			return nil, err
		}
		if t.Status.Terminal() || t.Status == TaskStatusInputRequired {
			return t, nil
		}
		d := time.Second
		if t.PollInterval != nil {
			d = max(time.Duration(*t.PollInterval)*time.Millisecond, minPoll)
		}
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// CallToolAsTask calls a tool as a task: the server answers at once with
// the task, whose result TaskResult waits for. p.Task is set (to no TTL
// preference) if nil. The server must have declared tasks.requests.tools.call;
// a tool listed by ListTools without execution.taskSupport optional or
// required cannot run as a task. Either is refused, before anything is
// sent, with an error wrapping ErrTasksNotSupported.
func (cs *ClientSession) CallToolAsTask(ctx context.Context, p *CallToolRequestParams) (*CreateTaskResult, error) {
	if p == nil {
		return nil, errors.New("mcp: CallToolAsTask needs params")
	}
	caps := cs.InitializeResult().Capabilities.Tasks
	if caps == nil || caps.Requests == nil || caps.Requests.Tools == nil || caps.Requests.Tools.Call == nil {
		return nil, fmt.Errorf("%w: the server did not declare tasks.requests.tools.call", ErrTasksNotSupported)
	}
	cs.mu.Lock()
	_, listed := cs.outputSchemas[p.Name]
	support := cs.taskSupport[p.Name]
	cs.mu.Unlock()
	if listed && support != TaskSupportOptional && support != TaskSupportRequired {
		return nil, fmt.Errorf("%w: tool %q does not support tasks", ErrTasksNotSupported, p.Name)
	}
	q := *p
	if q.Task == nil {
		q.Task = &TaskMetadata{}
	}
	return createTask(ctx, cs.call, MethodToolsCall, &q)
}

// CallToolTask calls a tool as a task and waits for its result with
// tasks/result. The result is checked as CallTool checks it. ctx bounds
// the wait, not the task: cancel the task with CancelTask.
func (cs *ClientSession) CallToolTask(ctx context.Context, p *CallToolRequestParams) (*CallToolResult, error) {
	ct, err := cs.CallToolAsTask(ctx, p)
	if err != nil {
		return nil, err
	}
	payload, err := cs.TaskResult(ctx, ct.Task.TaskID)
	if err != nil {
		return nil, err
	}
	var res CallToolResult
	if err := payload.Decode(&res); err != nil {
		return nil, fmt.Errorf("mcp: task %s: result: %w", ct.Task.TaskID, err)
	}
	return cs.checkToolResult(p.Name, &res)
}

// GetTask asks the server for a task's state (tasks/get).
func (cs *ClientSession) GetTask(ctx context.Context, id string) (*Task, error) {
	return getTask(ctx, cs.call, id)
}

// WaitTask polls the task with tasks/get, at the interval the server
// suggests, until it is terminal or needs input (input_required: then call
// TaskResult, on which the server sends what it needs).
func (cs *ClientSession) WaitTask(ctx context.Context, id string) (*Task, error) {
	return waitTask(ctx, cs.call, id)
}

// TaskResult waits for the task to finish and returns what the original
// request would have returned (tasks/result): decode it, such as into a
// *CallToolResult. A request that failed returns its JSON-RPC error.
func (cs *ClientSession) TaskResult(ctx context.Context, id string) (GetTaskPayloadResult, error) {
	return taskResult(ctx, cs.call, id)
}

// ListTasks lists the client's tasks on the server, one page at a time
// (tasks/list). The server must have declared tasks.list.
func (cs *ClientSession) ListTasks(ctx context.Context, p *PaginatedRequestParams) (*ListTasksResult, error) {
	return listTasks(ctx, cs.call, p)
}

// Tasks iterates over the client's tasks on the server, following
// pagination cursors. An error ends the iteration: it is yielded with a
// nil task.
func (cs *ClientSession) Tasks(ctx context.Context, p *PaginatedRequestParams) iter.Seq2[*Task, error] {
	return paginate(ctx, p, cs.ListTasks, func(r *ListTasksResult) ([]Task, Cursor) { return r.Tasks, r.NextCursor })
}

// CancelTask cancels a task (tasks/cancel) and returns it, in status
// cancelled. Cancelling a finished task is an error (-32602).
func (cs *ClientSession) CancelTask(ctx context.Context, id string) (*Task, error) {
	return cancelTask(ctx, cs.call, id)
}

// Server side: the server is the requestor of sampling and elicitation
// tasks.

// clientTasks returns the task requests the client declared it accepts
// (tasks.requests of initialize's capabilities), or an error where the
// server cannot send the client a task-augmented request: a 2026-07-28
// request has no server-to-client requests (basic/patterns/mrtr), so no
// task of the client's either.
func (ss *ServerSession) clientTasks(ctx context.Context) (*ClientTaskRequests, error) {
	if EraFromContext(ctx) == EraModern {
		return nil, fmt.Errorf("%w: %w", ErrTasksNotSupported, errNoClientRequests)
	}
	return ss.legacyClientTasks(), nil
}

func (ss *ServerSession) legacyClientTasks() *ClientTaskRequests {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities.Tasks == nil {
		return nil
	}
	return p.Capabilities.Tasks.Requests
}

// CreateMessageAsTask asks the client to sample as a task
// (sampling/createMessage with params.task); the client answers at once
// with the task, whose result TaskResult waits for (decode it into a
// *CreateMessageResult). The client must have declared
// tasks.requests.sampling.createMessage, or an error wrapping
// ErrTasksNotSupported is returned before anything is sent.
func (ss *ServerSession) CreateMessageAsTask(ctx context.Context, p *CreateMessageRequestParams) (*CreateTaskResult, error) {
	r, err := ss.clientTasks(ctx)
	if err != nil {
		return nil, err
	}
	if r == nil || r.Sampling == nil || r.Sampling.CreateMessage == nil {
		return nil, fmt.Errorf("%w: the client did not declare tasks.requests.sampling.createMessage", ErrTasksNotSupported)
	}
	q := *p
	if q.Task == nil {
		q.Task = &TaskMetadata{}
	}
	return createTask(ctx, ss.Call, MethodSamplingCreateMessage, &q)
}

// ElicitAsTask asks the client to elicit as a task (elicitation/create
// with params.task). The client must have declared
// tasks.requests.elicitation.create, or an error wrapping
// ErrTasksNotSupported is returned before anything is sent. Decode the
// task's result into an *ElicitResult.
func (ss *ServerSession) ElicitAsTask(ctx context.Context, p ElicitRequestParams) (*CreateTaskResult, error) {
	r, err := ss.clientTasks(ctx)
	if err != nil {
		return nil, err
	}
	if r == nil || r.Elicitation == nil || r.Elicitation.Create == nil {
		return nil, fmt.Errorf("%w: the client did not declare tasks.requests.elicitation.create", ErrTasksNotSupported)
	}
	switch q := p.(type) {
	case *ElicitRequestFormParams:
		c := *q
		if c.Task == nil {
			c.Task = &TaskMetadata{}
		}
		p = &c
	case *ElicitRequestURLParams:
		c := *q
		if c.Task == nil {
			c.Task = &TaskMetadata{}
		}
		p = &c
	default:
		return nil, fmt.Errorf("mcp: ElicitAsTask: unexpected params %T", p)
	}
	return createTask(ctx, ss.Call, MethodElicitationCreate, p)
}

// GetTask asks the client for a task's state (tasks/get).
func (ss *ServerSession) GetTask(ctx context.Context, id string) (*Task, error) {
	return getTask(ctx, ss.Call, id)
}

// WaitTask polls a client task with tasks/get until it is terminal or
// needs input.
func (ss *ServerSession) WaitTask(ctx context.Context, id string) (*Task, error) {
	return waitTask(ctx, ss.Call, id)
}

// TaskResult waits for a client task to finish and returns its result
// (tasks/result), or the original request's JSON-RPC error.
func (ss *ServerSession) TaskResult(ctx context.Context, id string) (GetTaskPayloadResult, error) {
	return taskResult(ctx, ss.Call, id)
}

// ListTasks lists the server's tasks on the client (tasks/list).
func (ss *ServerSession) ListTasks(ctx context.Context, p *PaginatedRequestParams) (*ListTasksResult, error) {
	return listTasks(ctx, ss.Call, p)
}

// CancelTask cancels a client task (tasks/cancel).
func (ss *ServerSession) CancelTask(ctx context.Context, id string) (*Task, error) {
	return cancelTask(ctx, ss.Call, id)
}
