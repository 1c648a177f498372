package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/jsonschema"
)

// The tasks extension (io.modelcontextprotocol/tasks) on the modern leg.
// Tasks.Middleware serves it for 2026-07-28 requests, beside the
// 2025-11-25 tasks of legacy sessions, with the same TaskStore:
//
//   - server/discover advertises the extension under
//     capabilities.extensions;
//   - tasks/get, tasks/update and tasks/cancel need the extension in the
//     request's clientCapabilities (else -32021 naming it);
//   - a tools/call of a tool whose execution.taskSupport is optional or
//     required, from a request that declares the extension, runs its
//     handler on a goroutine of its own: when the handler calls BeginTask
//     the server answers the call with a CreateTaskResult (resultType
//     "task") and the handler goes on as the task; if it returns first,
//     its result (or its InputRequiredResult) is the answer, as for any
//     call. A tool that requires a task, called without the extension,
//     gets -32021.
//
// Before BeginTask the handler's asks are multi round-trip rounds; after
// it they park the task in input_required until the client answers with
// tasks/update (the store holds the exchange, so tasks/update may reach
// another replica; the handler waits on the store).

// BeginTask, called by a tool handler, turns the call into a task: the
// server answers the client now with a CreateTaskResult, and the handler
// goes on in the background as the task, its outcome kept for tasks/get,
// its context ended by tasks/cancel or the task's TTL instead of by the
// request. Asks before BeginTask are rounds of the request; asks after it
// wait for tasks/update. It does nothing (and returns nil) where the call
// cannot become a task: a 2025-11-25 session, a request whose client did
// not declare the extension, a tool without task support, a server
// without Tasks.Middleware. The error is the store's refusal to create the
// task (too many tasks); the handler returns it.
func BeginTask(ctx context.Context) error {
	r, _ := ctx.Value(extTaskKey{}).(*extTaskRun)
	if r == nil {
		return nil
	}
	return r.begin(ctx)
}

type extTaskKey struct{}

// extTaskRun is a tools/call of the modern leg that may become a task.
type extTaskRun struct {
	t      *Tasks
	owner  string
	ctx    context.Context    // the handler's context (for watch)
	cancel context.CancelFunc // ends the handler's context
	limits jsonschema.Limits  // of the server's schemas (checkElicitAnswer)

	mu    sync.Mutex
	task  *Task         // set by begin
	err   error         // begin's failure
	begun chan struct{} // closed by begin
}

func (r *extTaskRun) begin(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.task != nil || r.err != nil {
		return r.err
	}
	task, err := r.t.store.Create(ctx, r.owner, nil)
	if err != nil {
		r.err = storeError("", err)
		close(r.begun)
		return r.err
	}
	r.task = task
	if task.TTL != nil { // the handler's context ends with the task's life
		time.AfterFunc(time.Duration(*task.TTL)*time.Millisecond, r.cancel)
	}
	key := taskKey{r.owner, task.TaskID}
	r.t.mu.Lock()
	r.t.running[key] = r.cancel
	r.t.mu.Unlock()
	go r.t.watch(r.ctx, key, r.cancel)
	r.t.log.Info("mcp: task created", "task", task.TaskID, "method", MethodToolsCall)
	close(r.begun)
	return nil
}

// started returns the task once BeginTask made it.
func (r *extTaskRun) started() *Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.task
}

// ask parks the task in input_required with reqs and waits for the
// client's answers through tasks/update.
func (r *extTaskRun) ask(ctx context.Context, task *Task, reqs InputRequests) (InputResults, error) {
	in, ok := r.t.store.(TaskInputStore)
	if !ok {
		return nil, errors.New("mcp: the task store does not implement TaskInputStore: a task cannot ask for input")
	}
	if _, err := in.RequestInput(ctx, r.owner, task.TaskID, reqs); err != nil {
		return nil, fmt.Errorf("mcp: task input: %w", err)
	}
	responses, err := in.AwaitInput(ctx, r.owner, task.TaskID, reqs.Keys())
	if err != nil {
		return nil, fmt.Errorf("mcp: task input: %w", err)
	}
	out := make(InputResults, len(reqs))
	for k, req := range reqs {
		res, err := responses.Decode(k, req.Method())
		if err == nil {
			err = checkElicitAnswer(&req, res, r.limits)
		}
		if err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: inputResponses: %v", err)
		}
		out[k] = res
	}
	return out, nil
}

// extOwner is the owner of the modern leg's tasks: TaskOptions.Owner's
// answer, or else the caller the transport names
// (StreamableHTTPOptions.Identity), or else nobody in particular: a
// modern request has no session to bind tasks to, and the 128-bit random
// task id is then the only key.
func (t *Tasks) extOwner(ctx context.Context) string {
	if t.ownerSet {
		return t.owner(ctx)
	}
	if p := principalFromContext(ctx); p != "" {
		return "principal:" + p
	}
	return ""
}

// declaresTasks reports whether the modern request's client capabilities
// name the extension.
func declaresTasks(mr *modernRequest) bool {
	c := mr.meta.ClientCapabilities
	if c == nil {
		return false
	}
	_, ok := c.Extensions[TasksExtensionID]
	return ok
}

// errTasksNotDeclared is the refusal of what needs the extension from a
// request that did not declare it (SEP-2575 "Missing Required
// Capabilities"; SEP-2663 "Required Capabilities").
func errTasksNotDeclared() error {
	return &MissingClientCapabilityError{Required: ClientCapabilities{Extensions: map[string]json.RawMessage{TasksExtensionID: json.RawMessage("{}")}}}
}

// extension serves a modern request for the middleware.
func (t *Tasks) extension(ctx context.Context, mr *modernRequest, method string, params json.RawMessage, next MethodHandler) (any, error) {
	switch method {
	case MethodServerDiscover:
		res, err := next(ctx, method, params)
		if d, ok := res.(*DiscoverResult); ok && err == nil {
			c := *d
			c.Capabilities.Extensions = maps.Clone(c.Capabilities.Extensions)
			if c.Capabilities.Extensions == nil {
				c.Capabilities.Extensions = make(map[string]json.RawMessage)
			}
			if _, set := c.Capabilities.Extensions[TasksExtensionID]; !set {
				c.Capabilities.Extensions[TasksExtensionID] = json.RawMessage("{}")
			}
			return &c, nil
		}
		return res, err
	case MethodTasksGet, MethodTasksUpdate, MethodTasksCancel:
		if !declaresTasks(mr) {
			return nil, errTasksNotDeclared()
		}
		switch method {
		case MethodTasksGet:
			return t.extGet(ctx, params)
		case MethodTasksUpdate:
			return t.extUpdate(ctx, params)
		}
		return t.extCancel(ctx, params)
	case MethodToolsCall:
		var support TaskSupport
		var ok bool
		if c, isModern := ctx.(*modernContext); isModern && c.name != nil {
			support, ok = toolTaskSupport(ctx, *c.name) // the name Mcp-Name mirrors, decoded once
		} else if name, _, peeked := peekCallHead(params); peeked {
			support, ok = toolTaskSupportBytes(ctx, name)
		} else {
			var head struct {
				Name string `json:"name"`
			}
			if strictjson.Unmarshal(params, &head) != nil {
				return next(ctx, method, params) // the handler reports it
			}
			support, ok = toolTaskSupport(ctx, head.Name)
		}
		if !ok || (support != TaskSupportOptional && support != TaskSupportRequired) {
			return next(ctx, method, params) // a legacy params.task is ignored
		}
		if !declaresTasks(mr) {
			if support == TaskSupportRequired {
				return nil, errTasksNotDeclared()
			}
			return next(ctx, method, params)
		}
		return t.extCall(ctx, method, params, next)
	}
	return next(ctx, method, params)
}

// extOutcome is how a task-capable call's handler ended.
type extOutcome struct {
	res any
	err error
}

// extCall runs a tools/call that may become a task (see BeginTask).
func (t *Tasks) extCall(ctx context.Context, method string, params json.RawMessage, next MethodHandler) (any, error) {
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	run := &extTaskRun{t: t, owner: t.extOwner(ctx), cancel: cancel, begun: make(chan struct{})}
	if ss := ServerSessionFromContext(ctx); ss != nil {
		run.limits = ss.server.opts.SchemaLimits
	}
	run.ctx = hctx
	hctx = context.WithValue(hctx, extTaskKey{}, run)
	done := make(chan extOutcome, 1)
	go func() {
		var out extOutcome
		defer func() {
			if p := recover(); p != nil {
				t.log.Error("mcp: tool handler panicked", "method", method, "panic", p)
				out = extOutcome{err: jsonrpc.ErrInternal}
			}
			if task := run.started(); task != nil {
				t.extFinish(run, task, out)
			}
			done <- out
		}()
		res, err := next(hctx, method, params)
		out = extOutcome{res, err}
	}()
	select {
	case out := <-done:
		cancel()
		if task := run.started(); task != nil {
			// The handler began a task and finished it before this
			// goroutine looked: the answer is still the task, whose
			// outcome tasks/get reports.
			return &ExtensionCreateTaskResult{ExtensionTask: extensionTask(task)}, nil
		}
		return out.res, out.err // no task: the call's own answer
	case <-run.begun:
		if run.err != nil {
			// The handler sees the error from BeginTask and returns.
			out := <-done
			cancel()
			return out.res, out.err
		}
		return &ExtensionCreateTaskResult{ExtensionTask: extensionTask(run.task)}, nil
	case <-ctx.Done():
		// The client went away before the call became a task.
		cancel()
		return nil, ctx.Err()
	}
}

// extFinish stores a task's outcome: a result (a tool's own failure, a
// result with isError, is a completed task) or a JSON-RPC error (failed).
func (t *Tasks) extFinish(run *extTaskRun, task *Task, out extOutcome) {
	key := taskKey{run.owner, task.TaskID}
	defer func() {
		t.mu.Lock()
		if cancel, ok := t.running[key]; ok {
			cancel()
			delete(t.running, key)
		}
		t.mu.Unlock()
	}()
	var o TaskOutcome
	status, message := TaskStatusCompleted, ""
	err := out.err
	if err == nil {
		o.Result, err = marshalTaskResult(out.res)
	}
	if err != nil {
		je := modernError(err)
		if je == jsonrpc.ErrInternal {
			t.log.Error("mcp: task handler failed", "task", key.id, "error", err)
		}
		o = TaskOutcome{Error: je}
		status, message = TaskStatusFailed, je.Message
	}
	if _, err := t.store.Finish(context.Background(), key.owner, key.id, status, message, o); err != nil {
		// Cancelled, failed by the store, or expired meanwhile.
		t.log.Info("mcp: task handler returned after its task ended; outcome dropped", "task", key.id, "error", err)
		return
	}
	t.log.Info("mcp: task finished", "task", key.id, "status", status)
}

// extGet answers tasks/get with a DetailedTask.
func (t *Tasks) extGet(ctx context.Context, params json.RawMessage) (any, error) {
	var p TaskIDParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	owner := t.extOwner(ctx)
	task, err := t.store.Get(ctx, owner, p.TaskID)
	if err != nil {
		return nil, storeError(p.TaskID, err)
	}
	d := &DetailedTask{ExtensionTask: extensionTask(task)}
	switch task.Status {
	case TaskStatusInputRequired:
		if in, ok := t.store.(TaskInputStore); ok {
			if d.InputRequests, err = in.PendingInput(ctx, owner, p.TaskID); err != nil {
				return nil, storeError(p.TaskID, err)
			}
		}
	case TaskStatusCompleted, TaskStatusFailed:
		out, err := t.store.Outcome(ctx, owner, p.TaskID)
		if err != nil {
			return nil, storeError(p.TaskID, err)
		}
		if out != nil && task.Status == TaskStatusCompleted {
			d.Result = out.Result
		} else if out != nil {
			d.Error = out.Error
		}
	}
	return d, nil
}

// extUpdate answers tasks/update: the responses to pending requests are
// kept, the rest ignored; the answer is an empty result.
func (t *Tasks) extUpdate(ctx context.Context, params json.RawMessage) (any, error) {
	var p UpdateTaskRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	owner := t.extOwner(ctx)
	in, ok := t.store.(TaskInputStore)
	if !ok {
		if _, err := t.store.Get(ctx, owner, p.TaskID); err != nil {
			return nil, storeError(p.TaskID, err)
		}
		return &Result{}, nil
	}
	if err := in.ProvideInput(ctx, owner, p.TaskID, p.InputResponses); err != nil {
		return nil, storeError(p.TaskID, err)
	}
	return &Result{}, nil
}

// extCancel answers tasks/cancel with an empty result, also for a task
// already terminal (idempotent); an unknown task gets -32602.
func (t *Tasks) extCancel(ctx context.Context, params json.RawMessage) (any, error) {
	var p TaskIDParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	key := taskKey{t.extOwner(ctx), p.TaskID}
	_, err := t.store.Finish(ctx, key.owner, key.id, TaskStatusCancelled, "cancelled by the client", TaskOutcome{Error: errTaskCancelled})
	if err != nil && !errors.Is(err, ErrTaskTerminal) {
		return nil, storeError(key.id, err)
	}
	t.mu.Lock()
	if cancel, ok := t.running[key]; ok {
		cancel()
		delete(t.running, key)
	}
	t.mu.Unlock()
	return &Result{}, nil
}
