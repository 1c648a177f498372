package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// ErrTooManyInputRounds is returned (wrapped) when a modern server keeps
// answering a request with InputRequiredResult past
// ClientOptions.MaxInputRounds.
var ErrTooManyInputRounds = errors.New("mcp: the server asked for input too many times")

// ErrTooManyInputRequests is returned (wrapped) when a modern server asks
// for more inputs at once than ClientOptions.MaxInputRequests.
var ErrTooManyInputRequests = errors.New("mcp: the server asked for too many inputs at once")

// InputRequestError reports an input request of an InputRequiredResult
// that the client could not answer: a method it does not serve, or a
// handler that failed. The original request fails with it.
type InputRequestError struct {
	// Key is the request's key in inputRequests.
	Key string
	// Method is the request's method.
	Method string
	// Err is what went wrong.
	Err error
}

// Error describes the failure.
func (e *InputRequestError) Error() string {
	return fmt.Sprintf("mcp: input request %q (%s): %v", e.Key, e.Method, e.Err)
}

// Unwrap returns Err.
func (e *InputRequestError) Unwrap() error { return e.Err }

// inputMethods are the requests an InputRequiredResult may carry
// (basic/patterns/mrtr, "Server Requirements").
var inputMethods = []string{MethodElicitationCreate, MethodSamplingCreateMessage, MethodRootsList}

// resultHead is what the client reads of every modern result before
// decoding it: whether it is final, and if not, what the server asks for.
// The input requests stay raw, to reach the handlers through
// ClientOptions.ReceivingMiddleware as a server request would, and the
// state is a pointer, since a present empty requestState must be echoed
// too (InputRequiredResult cannot tell it from an absent one).
type resultHead struct {
	ResultType    ResultType                 `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  *string                    `json:"requestState"`
}

// inputRequestHead is one member of inputRequests, its params raw.
type inputRequestHead struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// sendModern sends a request of a modern session: raw gets the session's
// _meta, and an InputRequiredResult is answered with the client's own
// elicitation, sampling and roots handlers and the request retried, with
// inputResponses and the requestState echoed unchanged, under a new
// JSON-RPC id, at most ClientOptions.MaxInputRounds times.
func (cs *ClientSession) sendModern(ctx context.Context, method string, raw json.RawMessage, meta map[string]json.RawMessage, result any) error {
	body, err := withModernMeta(raw, meta)
	if err != nil {
		return fmt.Errorf("mcp: call %s: %w", method, err)
	}
	ctx = withClientSession(ctx, cs)
	base, headed := ctx, method == MethodToolsCall && cs.modernHTTP()
	if headed {
		ctx = cs.withParamHeaders(base, raw)
	}
	maxRounds := cs.client.opts.MaxInputRounds
	if maxRounds <= 0 {
		maxRounds = DefaultMaxInputRounds
	}
	cs.mu.Lock()
	cache := cs.cache
	cs.mu.Unlock()
	if ctx.Value(noCacheKey{}) != nil {
		cache = nil
	}
	if hit, ok := cache.get(method, raw); ok {
		return decodeResult(method, hit, result)
	}
	first := body
	for round := 0; ; round++ {
		res, err := cs.sendH(ctx, method, body)
		if je, ok := isModernError(err); ok && headed && je.Code == CodeHeaderMismatch {
			// The tool's x-mcp-header annotations may have changed: list
			// the tools again and retry once with the headers they give
			// (basic/transports/streamable-http, "Client Behavior").
			headed = false
			if cs.refreshTools(base) == nil {
				ctx = cs.withParamHeaders(base, raw)
				res, err = cs.sendH(ctx, method, body)
			}
		}
		if err != nil {
			return err
		}
		rr, err := rawResult(method, res)
		if err != nil {
			return err
		}
		var head resultHead
		if len(rr) > 0 && rr[0] == '{' {
			if err := strictjson.Unmarshal(rr, &head); err != nil {
				return fmt.Errorf("mcp: result of %s: %w", method, err)
			}
		}
		if head.ResultType == ResultTypeTask && cs.client.opts.TasksExtension && !taskControlMethod(method) {
			out, err := cs.awaitExtTask(ctx, rr)
			if err != nil {
				return err
			}
			return decodeResult(method, out, result)
		}
		if head.ResultType != ResultTypeInputRequired {
			// A missing resultType is "complete" (changelog, major change 8).
			cache.put(method, raw, rr)
			return decodeResult(method, rr, result)
		}
		if round >= maxRounds {
			return fmt.Errorf("%w: %s after %d rounds", ErrTooManyInputRounds, method, round)
		}
		if len(head.InputRequests) == 0 && head.RequestState == nil {
			return fmt.Errorf("mcp: result of %s: an InputRequiredResult with neither inputRequests nor requestState", method)
		}
		responses, err := cs.answerInputs(ctx, head.InputRequests)
		if err != nil {
			return err
		}
		if body, err = withRetryMembers(first, responses, head.RequestState); err != nil {
			return fmt.Errorf("mcp: call %s: %w", method, err)
		}
	}
}

// taskControlMethod reports whether method is one of the tasks
// extension's own requests, which follow a task and cannot become one: a
// server answering them with a CreateTaskResult would otherwise make the
// client await a task within a task, without end.
func taskControlMethod(method string) bool {
	switch method {
	case MethodTasksGet, MethodTasksUpdate, MethodTasksCancel:
		return true
	}
	return false
}

// refreshTools lists every tool again, which records their x-mcp-header
// annotations anew.
func (cs *ClientSession) refreshTools(ctx context.Context) error {
	for _, err := range cs.Tools(context.WithValue(ctx, noCacheKey{}, true), nil) {
		var tse *ToolSchemaError
		if err != nil && !errors.As(err, &tse) {
			return err
		}
	}
	return nil
}

// rawResult returns the JSON of a sending chain's result.
func rawResult(method string, res any) (json.RawMessage, error) {
	switch r := res.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return r, nil
	case []byte:
		return r, nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("mcp: result of %s: %w", method, err)
	}
	return b, nil
}

// answerInputs runs the client's handlers for each input request, through
// ClientOptions.ReceivingMiddleware as if the server had sent them, and
// returns the inputResponses map. The requests run one after the other,
// in key order, so that a user is asked one thing at a time.
func (cs *ClientSession) answerInputs(ctx context.Context, reqs map[string]json.RawMessage) (InputResponses, error) {
	if max := cmp.Or(cs.client.opts.MaxInputRequests, DefaultMaxInputRequests); len(reqs) > max {
		return nil, fmt.Errorf("%w: %d, more than the %d this client answers", ErrTooManyInputRequests, len(reqs), max)
	}
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(InputResponses, len(reqs))
	for _, k := range keys {
		var r inputRequestHead
		if err := strictjson.Unmarshal(reqs[k], &r); err != nil {
			return nil, &InputRequestError{Key: k, Err: err}
		}
		if !slices.Contains(inputMethods, r.Method) {
			return nil, &InputRequestError{Key: k, Method: r.Method, Err: errors.New("not a method an InputRequiredResult may carry")}
		}
		res, err := cs.recv(ctx, r.Method, r.Params)
		if err != nil {
			return nil, &InputRequestError{Key: k, Method: r.Method, Err: err}
		}
		b, err := json.Marshal(res)
		if err != nil {
			return nil, &InputRequestError{Key: k, Method: r.Method, Err: err}
		}
		out[k] = b
	}
	return out, nil
}

// withRetryMembers returns the params of a retry: the original ones with
// inputResponses and, only when the server sent one, requestState.
func withRetryMembers(params json.RawMessage, responses InputResponses, state *string) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(params, &obj); err != nil {
		return nil, err
	}
	delete(obj, "requestState")
	delete(obj, "inputResponses")
	if len(responses) > 0 {
		b, err := json.Marshal(responses)
		if err != nil {
			return nil, err
		}
		obj["inputResponses"] = b
	}
	if state != nil {
		b, err := json.Marshal(*state)
		if err != nil {
			return nil, err
		}
		obj["requestState"] = b
	}
	return json.Marshal(obj)
}
