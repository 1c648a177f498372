package mcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// TaskOptions configure Tasks. The zero value is usable.
type TaskOptions struct {
	// Store keeps the tasks; nil means NewMemoryTaskStore(nil).
	Store TaskStore
	// Owner names the identity a task is bound to, from the context of the
	// request that created it (or asks about it): tasks/get, tasks/result,
	// tasks/cancel and tasks/list see only the caller's own tasks, and
	// another owner's task is "not found". Return the authenticated
	// subject when there is one. Nil binds tasks to the session: they are
	// unreachable from any other session, and once the session ends.
	Owner func(ctx context.Context) string
	// Requests are the methods run as tasks when the request asks for it
	// (params.task): the receiver's declaration, tasks.requests. Nil means
	// all three that the protocol allows: tools/call (a server receives
	// it), sampling/createMessage and elicitation/create (a client does).
	// A task-augmented request of any other method is handled normally,
	// its task member ignored.
	Requests []string
	// List answers tasks/list (and declares tasks.list). Without an
	// authenticated Owner, the protocol advises against it.
	List bool
	// Cancel answers tasks/cancel (and declares tasks.cancel).
	Cancel bool
	// Logger receives task events. Nil discards them.
	Logger *slog.Logger
}

// Tasks runs task-augmented requests (experimental in 2025-11-25) for a
// server or a client: install Middleware as receiving middleware and
// SendingMiddleware as sending middleware, on the side that receives the
// task-augmented requests.
//
// A request that asks to run as a task (params.task) and is one of
// TaskOptions.Requests is answered at once with a CreateTaskResult; its
// handler runs in the background, detached from the request's
// cancellation (bounded by the task's TTL, and stopped by tasks/cancel).
// Its outcome, a result or a JSON-RPC error, is what tasks/result returns,
// with the related-task _meta entry. tasks/get reports the task's status;
// a tools/call result with isError set fails the task.
// notifications/tasks/status is sent on each change of status.
//
// While a task's handler waits on a request to the requestor (a server
// tool's sampling or elicitation), the task is input_required; the
// request carries the related-task _meta entry and, over Streamable HTTP,
// travels on the stream of a waiting tasks/result call when there is one.
//
// For tools/call, the tool's execution.taskSupport is enforced: a task for
// a tool without optional or required support, and a plain call to a tool
// that requires a task, are answered with -32601.
//
// The middleware fills the tasks capability into the server's initialize
// result, or the client's initialize request, unless it is set already;
// ServerCapabilities and ClientCapabilities return it for explicit use.
type Tasks struct {
	store    TaskStore
	owner    func(context.Context) string
	ownerSet bool // TaskOptions.Owner was given (see extOwner)
	requests []string
	list     bool
	cancel   bool
	log      *slog.Logger

	mu      sync.Mutex
	running map[taskKey]context.CancelFunc
	waiters map[taskKey][]jsonrpc.ID // tasks/result calls waiting, by request id
	owners  map[any]string           // session → random owner id
}

type taskKey struct{ owner, id string }

// NewTasks returns a task runner.
func NewTasks(opts *TaskOptions) *Tasks {
	t := &Tasks{running: make(map[taskKey]context.CancelFunc), waiters: make(map[taskKey][]jsonrpc.ID), owners: make(map[any]string)}
	var o TaskOptions
	if opts != nil {
		o = *opts
	}
	t.store = o.Store
	if t.store == nil {
		t.store = NewMemoryTaskStore(nil)
	}
	t.owner = o.Owner
	t.ownerSet = o.Owner != nil
	if t.owner == nil {
		t.owner = t.sessionOwner
	}
	t.requests = o.Requests
	if t.requests == nil {
		t.requests = []string{MethodToolsCall, MethodSamplingCreateMessage, MethodElicitationCreate}
	}
	t.list, t.cancel = o.List, o.Cancel
	t.log = o.Logger
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	return t
}

// sessionOwner binds tasks to the session in ctx (MCP 2025-11-25
// basic/utilities/tasks#task-isolation-and-access-control).
//
// A server session with an id (Streamable HTTP) owns its tasks by that
// id: every replica serving the session (mcphttp.Options.Replicas) has a
// ServerSession of its own for it, and a task created through one must be
// found through the others in the shared store; the transport has checked
// already that the caller owns the session, and session ids are random
// and never reused. The owner is a digest of the id, so that the id (a
// bearer of the session) is not written to the task store.
//
// A session without an id (stdio, a client session) owns its tasks
// through a random id forgotten when the session ends, so that a later
// session can never inherit them.
func (t *Tasks) sessionOwner(ctx context.Context) string {
	var key any
	var done <-chan struct{}
	if ss := ServerSessionFromContext(ctx); ss != nil {
		if id := ss.ID(); id != "" {
			sum := sha256.Sum256([]byte(id))
			return "session-id:" + base64.RawURLEncoding.EncodeToString(sum[:])
		}
		key, done = ss, ss.conn.Done()
	} else if cs := ClientSessionFromContext(ctx); cs != nil {
		key, done = cs, cs.conn.Done()
	} else {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.owners[key]; ok {
		return id
	}
	var b [16]byte
	rand.Read(b[:])
	id := "session:" + base64.RawURLEncoding.EncodeToString(b[:])
	t.owners[key] = id
	go func() {
		<-done
		t.mu.Lock()
		delete(t.owners, key)
		t.mu.Unlock()
	}()
	return id
}

// ServerCapabilities returns the tasks capability a server using t
// declares.
func (t *Tasks) ServerCapabilities() *ServerTasksCapability {
	c := &ServerTasksCapability{}
	if t.list {
		c.List = &Capability{}
	}
	if t.cancel {
		c.Cancel = &Capability{}
	}
	if slices.Contains(t.requests, MethodToolsCall) {
		c.Requests = &ServerTaskRequests{Tools: &ToolsTaskRequests{Call: &Capability{}}}
	}
	return c
}

// ClientCapabilities returns the tasks capability a client using t
// declares.
func (t *Tasks) ClientCapabilities() *ClientTasksCapability {
	c := &ClientTasksCapability{}
	if t.list {
		c.List = &Capability{}
	}
	if t.cancel {
		c.Cancel = &Capability{}
	}
	var r ClientTaskRequests
	if slices.Contains(t.requests, MethodSamplingCreateMessage) {
		r.Sampling = &SamplingTaskRequests{CreateMessage: &Capability{}}
	}
	if slices.Contains(t.requests, MethodElicitationCreate) {
		r.Elicitation = &ElicitationTaskRequests{Create: &Capability{}}
	}
	if r != (ClientTaskRequests{}) {
		c.Requests = &r
	}
	return c
}

// taskRun marks the context of a task's handler.
type taskRun struct {
	t       *Tasks
	key     taskKey
	mu      sync.Mutex
	pending int // requests to the requestor in flight
}

type taskRunKey struct{}

// TaskIDFromContext returns the id of the task whose handler owns ctx: the
// handler of a task-augmented request that runs as a task.
func TaskIDFromContext(ctx context.Context) (string, bool) {
	r, ok := ctx.Value(taskRunKey{}).(*taskRun)
	if !ok {
		return "", false
	}
	return r.key.id, true
}

func taskInvalid(format string, args ...any) error {
	return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: "+format, args...)
}

// storeError maps a store failure to the protocol's error.
func storeError(id string, err error) error {
	switch {
	case errors.Is(err, ErrTaskNotFound):
		return taskInvalid("task %q not found", id)
	case errors.Is(err, ErrTaskTerminal):
		return taskInvalid("task %q is already in a terminal status", id)
	case errors.Is(err, ErrInvalidCursor):
		return taskInvalid("invalid cursor")
	case errors.Is(err, ErrTooManyTasks):
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: too many tasks")
	}
	return err
}

// Middleware returns the receiving middleware: it answers the tasks/*
// requests and runs task-augmented requests as tasks (MCP 2025-11-25
// basic/utilities/tasks#creating-tasks).
func (t *Tasks) Middleware() Middleware {
	return func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if mr := modernFromContext(ctx); mr != nil {
				return t.extension(ctx, mr, method, params, next) // tasks_ext.go
			}
			switch method {
			case MethodInitialize:
				res, err := next(ctx, method, params)
				if ir, ok := res.(*InitializeResult); ok && err == nil && ir.Capabilities.Tasks == nil {
					ir.Capabilities.Tasks = t.ServerCapabilities()
				}
				return res, err
			case MethodTasksGet:
				return t.get(ctx, params)
			case MethodTasksResult:
				return t.result(ctx, params)
			case MethodTasksList:
				if t.list {
					return t.listTasks(ctx, params)
				}
			case MethodTasksCancel:
				if t.cancel {
					return t.cancelTask(ctx, params)
				}
			}
			if isNotificationMethod(method) || !slices.Contains(t.requests, method) {
				return next(ctx, method, params)
			}
			if method == MethodToolsCall && plainCall(ctx, params) {
				return next(ctx, method, params) // the common case, without decoding
			}
			var head struct {
				Name string        `json:"name"`
				Task *TaskMetadata `json:"task"`
			}
			if len(params) > 0 {
				if err := strictjson.Unmarshal(params, &head); err != nil {
					return next(ctx, method, params) // the handler reports it
				}
			}
			if head.Task != nil {
				if err := validateTaskMetadata("TaskMetadata", head.Task); err != nil {
					return nil, taskInvalid("%v", err)
				}
			}
			if method == MethodToolsCall {
				if support, ok := toolTaskSupport(ctx, head.Name); ok {
					switch {
					case head.Task != nil && support != TaskSupportOptional && support != TaskSupportRequired:
						return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: tool %q cannot run as a task", head.Name)
					case head.Task == nil && support == TaskSupportRequired:
						return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: tool %q must run as a task (params.task)", head.Name)
					}
				}
			}
			if head.Task == nil {
				return next(ctx, method, params)
			}
			return t.start(ctx, method, params, head.Task, next)
		}
	}
}

// toolTaskSupport returns the execution.taskSupport of the named tool of
// the server whose session ctx carries; a tool that declares none forbids
// tasks (MCP 2025-11-25 basic/utilities/tasks#tool-level-negotiation).
func toolTaskSupport(ctx context.Context, name string) (TaskSupport, bool) {
	ss := ServerSessionFromContext(ctx)
	if ss == nil {
		return "", false
	}
	s := ss.server
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, ok := s.tools[name]
	if !ok {
		return "", false
	}
	if st.tool.Execution == nil || st.tool.Execution.TaskSupport == "" {
		return TaskSupportForbidden, true
	}
	return st.tool.Execution.TaskSupport, true
}

// start creates the task and runs the handler in the background.
func (t *Tasks) start(ctx context.Context, method string, params json.RawMessage, meta *TaskMetadata, next MethodHandler) (any, error) {
	owner := t.owner(ctx)
	task, err := t.store.Create(ctx, owner, meta.TTL)
	if err != nil {
		t.log.Warn("mcp: task refused", "method", method, "error", err)
		return nil, storeError("", err)
	}
	key := taskKey{owner, task.TaskID}
	run := &taskRun{t: t, key: key}
	dctx := context.WithValue(context.WithoutCancel(ctx), taskRunKey{}, run)
	var cancel context.CancelFunc
	if task.TTL != nil {
		dctx, cancel = context.WithTimeout(dctx, time.Duration(*task.TTL)*time.Millisecond)
	} else {
		dctx, cancel = context.WithCancel(dctx)
	}
	t.mu.Lock()
	t.running[key] = cancel
	t.mu.Unlock()
	t.log.Info("mcp: task created", "task", task.TaskID, "method", method)
	notifier := sessionNotifier(ctx)
	go t.watch(dctx, key, cancel)
	go t.run(dctx, run, method, params, next, notifier)
	return &CreateTaskResult{Task: *task}, nil
}

// watch ends the handler of the task key (cancel) once the store says the
// task is over without the handler's doing: a tasks/cancel served by
// another replica sharing the store, the task's expiry, or (in a shared
// store) its runner taken for dead. It returns when ctx, the handler's
// context, ends. A store that fails otherwise (unreachable) is asked
// again after a pause: the handler is not stopped for that.
func (t *Tasks) watch(ctx context.Context, key taskKey, cancel context.CancelFunc) {
	for {
		task, err := t.store.Wait(ctx, key.owner, key.id)
		if ctx.Err() != nil {
			return
		}
		if err == nil || errors.Is(err, ErrTaskNotFound) {
			status := TaskStatus("gone")
			if task != nil {
				status = task.Status
			}
			t.log.Debug("mcp: task ended in the store: its handler's context ends", "task", key.id, "status", status) // also after the handler finished it
			cancel()
			return
		}
		t.log.Warn("mcp: task store", "task", key.id, "error", err)
		pause := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			pause.Stop()
			return
		case <-pause.C:
		}
	}
}

func (t *Tasks) run(ctx context.Context, run *taskRun, method string, params json.RawMessage, next MethodHandler, notify func(*Task)) {
	key := run.key
	defer func() {
		t.mu.Lock()
		if cancel, ok := t.running[key]; ok {
			cancel()
			delete(t.running, key)
		}
		t.mu.Unlock()
	}()
	var out TaskOutcome
	status, message := TaskStatusCompleted, ""
	res, err := func() (res any, err error) {
		defer func() {
			if p := recover(); p != nil {
				t.log.Error("mcp: task handler panicked", "task", key.id, "panic", p)
				err = jsonrpc.ErrInternal
			}
		}()
		return next(ctx, method, params)
	}()
	if err == nil {
		out.Result, err = marshalTaskResult(res)
	}
	if err != nil {
		var je *jsonrpc.Error
		if !errors.As(err, &je) {
			t.log.Error("mcp: task handler failed", "task", key.id, "method", method, "error", err)
			je = jsonrpc.ErrInternal
		}
		out = TaskOutcome{Error: je}
		status, message = TaskStatusFailed, je.Message
	} else if isErrorResult(out.Result) {
		status, message = TaskStatusFailed, "the tool reported an error"
	}
	task, err := t.store.Finish(context.Background(), key.owner, key.id, status, message, out)
	if err != nil {
		// Cancelled, failed by the store, or expired meanwhile: the
		// outcome is dropped.
		t.log.Info("mcp: task handler returned after its task ended; outcome dropped", "task", key.id, "error", err)
		return
	}
	t.log.Info("mcp: task finished", "task", key.id, "status", task.Status)
	notify(task)
}

func marshalTaskResult(res any) (json.RawMessage, error) {
	switch r := res.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case json.RawMessage:
		if !isJSONObject(r) {
			return nil, errors.New("mcp: task result is not a JSON object")
		}
		return r, nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	if !isJSONObject(b) {
		return nil, errors.New("mcp: task result is not a JSON object")
	}
	return b, nil
}

func isErrorResult(raw json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return strictjson.Unmarshal(raw, &r) == nil && r.IsError
}

// sessionNotifier returns a function that tells the session in ctx of a
// task's new status, on no particular request's stream.
func sessionNotifier(ctx context.Context) func(*Task) {
	var notify func(context.Context, string, any) error
	if ss := ServerSessionFromContext(ctx); ss != nil {
		notify = ss.Notify
	} else if cs := ClientSessionFromContext(ctx); cs != nil {
		notify = cs.Notify
	} else {
		return func(*Task) {}
	}
	return func(task *Task) {
		_ = notify(context.Background(), NotificationTasksStatus, &TaskStatusNotificationParams{Task: *task})
	}
}

func (t *Tasks) get(ctx context.Context, params json.RawMessage) (any, error) {
	var p GetTaskRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	task, err := t.store.Get(ctx, t.owner(ctx), p.TaskID)
	if err != nil {
		return nil, storeError(p.TaskID, err)
	}
	return &GetTaskResult{Task: *task}, nil
}

// result waits for the task and returns its outcome (MCP 2025-11-25
// basic/utilities/tasks#result-retrieval: tasks/result blocks until
// the task is terminal, then answers what the request itself would have).
func (t *Tasks) result(ctx context.Context, params json.RawMessage) (any, error) {
	var p GetTaskPayloadRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	key := taskKey{t.owner(ctx), p.TaskID}
	if id, ok := jsonrpc.RequestIDFromContext(ctx); ok {
		t.mu.Lock()
		t.waiters[key] = append(t.waiters[key], id)
		t.mu.Unlock()
		defer func() {
			t.mu.Lock()
			w := slices.DeleteFunc(t.waiters[key], func(x jsonrpc.ID) bool { return x == id })
			if len(w) == 0 {
				delete(t.waiters, key)
			} else {
				t.waiters[key] = w
			}
			t.mu.Unlock()
		}()
	}
	if _, err := t.store.Wait(ctx, key.owner, key.id); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, storeError(key.id, err)
	}
	out, err := t.store.Outcome(ctx, key.owner, key.id)
	if err != nil {
		return nil, storeError(key.id, err)
	}
	if out == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: the task has no outcome")
	}
	if out.Error != nil {
		return nil, out.Error
	}
	return withRelatedTask(out.Result, key.id)
}

// withRelatedTask returns the JSON object raw with the related-task _meta
// entry set to id, keeping the rest of _meta (MCP 2025-11-25
// basic/utilities/tasks#related-task-metadata).
func withRelatedTask(raw json.RawMessage, id string) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if len(raw) > 0 {
		if err := strictjson.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("mcp: related task: %w", err)
		}
		if obj == nil {
			obj = map[string]json.RawMessage{}
		}
	}
	var meta Meta
	if m, ok := obj["_meta"]; ok {
		if err := strictjson.Unmarshal(m, &meta); err != nil {
			return nil, fmt.Errorf("mcp: related task: _meta: %w", err)
		}
	}
	meta.SetRelatedTask(id)
	b, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = b
	return json.Marshal(obj)
}

func (t *Tasks) listTasks(ctx context.Context, params json.RawMessage) (any, error) {
	var p PaginatedRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	tasks, next, err := t.store.List(ctx, t.owner(ctx), p.Cursor)
	if err != nil {
		return nil, storeError("", err)
	}
	return &ListTasksResult{Tasks: tasks, NextCursor: next}, nil
}

// errTaskCancelled is the outcome of a cancelled task: what tasks/result
// answers for it.
var errTaskCancelled = jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: the task was cancelled")

// cancelTask answers tasks/cancel: a task already terminal is refused
// with -32602 (MCP 2025-11-25 basic/utilities/tasks#task-cancellation).
func (t *Tasks) cancelTask(ctx context.Context, params json.RawMessage) (any, error) {
	var p CancelTaskRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	key := taskKey{t.owner(ctx), p.TaskID}
	task, err := t.store.Finish(ctx, key.owner, key.id, TaskStatusCancelled, "cancelled by the requestor", TaskOutcome{Error: errTaskCancelled})
	if err != nil {
		return nil, storeError(key.id, err)
	}
	t.mu.Lock()
	if cancel, ok := t.running[key]; ok {
		cancel()
		delete(t.running, key)
	}
	t.mu.Unlock()
	t.log.Info("mcp: task cancelled", "task", key.id)
	sessionNotifier(ctx)(task)
	return &CancelTaskResult{Task: *task}, nil
}

// SendingMiddleware returns the sending middleware: messages a task's
// handler sends carry the related-task _meta entry (MCP 2025-11-25
// basic/utilities/tasks#associating-task-related-messages), and while it
// waits on a request to the requestor the task is input_required
// (basic/utilities/tasks#input-required-status).
func (t *Tasks) SendingMiddleware() Middleware {
	return func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if method == MethodInitialize {
				return next(ctx, method, t.withClientCapabilities(params))
			}
			run, ok := ctx.Value(taskRunKey{}).(*taskRun)
			if !ok || run.t != t || strings.HasPrefix(method, "tasks/") || method == NotificationTasksStatus {
				return next(ctx, method, params)
			}
			p, err := withRelatedTask(params, run.key.id)
			if err != nil {
				return nil, err
			}
			if isNotificationMethod(method) {
				return next(ctx, method, p)
			}
			notify := sessionNotifier(ctx)
			run.mu.Lock()
			run.pending++
			if run.pending == 1 {
				if task, err := t.store.SetStatus(context.Background(), run.key.owner, run.key.id, TaskStatusInputRequired, ""); err == nil {
					notify(task)
				}
			}
			run.mu.Unlock()
			t.mu.Lock()
			if w := t.waiters[run.key]; len(w) > 0 {
				// Over Streamable HTTP, the request goes on the stream of
				// the requestor's tasks/result call.
				ctx = jsonrpc.WithRequestID(ctx, w[len(w)-1])
			}
			t.mu.Unlock()
			res, err := next(ctx, method, p)
			run.mu.Lock()
			run.pending--
			if run.pending == 0 {
				if task, err := t.store.SetStatus(context.Background(), run.key.owner, run.key.id, TaskStatusWorking, ""); err == nil {
					notify(task)
				}
			}
			run.mu.Unlock()
			return res, err
		}
	}
}

// withClientCapabilities fills the tasks capability into a client's
// initialize params, unless it is there already.
func (t *Tasks) withClientCapabilities(params json.RawMessage) json.RawMessage {
	var p InitializeRequestParams
	if strictjson.Unmarshal(params, &p) != nil || p.Capabilities.Tasks != nil {
		return params
	}
	p.Capabilities.Tasks = t.ClientCapabilities()
	b, err := json.Marshal(&p)
	if err != nil {
		return params
	}
	return b
}
