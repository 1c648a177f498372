package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/jsonschema"
	"github.com/mcpstack/mcpstack/seal"
)

// Asking the client for input, in both eras.
//
// A tool, prompt or resource handler asks once, in its own code, with
// ServerSession.Elicit, CreateMessage, ListRoots or Ask. In a 2025-11-25
// session the ask is a request to the client, answered on the spot. In a
// 2026-07-28 request (basic/patterns/mrtr) there are no server-to-client
// requests: the ask returns an error matching ErrInputRequired, which the
// handler returns as it returns any error; the server answers
// InputRequiredResult with what the handler asked, and the client's retry
// runs the handler again from the start, this time with the answer
// waiting: the same ask returns it. A handler therefore runs once per
// round, and must do before its asks only what it can repeat; what it
// wants computed once and kept across rounds it gets from Remember, which
// carries the value, sealed, in the requestState.
//
// The requestState holds the answers of earlier rounds, what the last
// round asked, and the remembered values, sealed with
// ServerOptions.StateSealer and bound to the request (method, tool or
// prompt name or resource URI, a digest of the arguments) so that it is
// good for the retry of that request only, until
// ServerOptions.RequestStateTTL has passed.

// ErrInputRequired is matched (with errors.Is) by the error an ask returns
// in a 2026-07-28 request when the client has not yet answered it: the
// handler returns it (or any error: the server answers
// InputRequiredResult whatever the handler returns once an ask is
// pending).
var ErrInputRequired = errors.New("mcp: input required from the client (the request is answered with InputRequiredResult and retried)")

// DefaultRequestStateTTL is the ServerOptions.RequestStateTTL of a server
// that sets none: how long a requestState stays good. The retry follows
// the user's answer to an elicitation, so it is minutes, not seconds; the
// revision asks for "a short expiry" (basic/patterns/mrtr, server
// requirement 5) to bound replay.
const DefaultRequestStateTTL = 10 * time.Minute

// stateAsk is an input request as a requestState remembers it: its method
// and a digest of its JSON, so that an answer counts only for the request
// it answers.
type stateAsk struct {
	Method string `json:"m"`
	Digest []byte `json:"d"`
}

// stateAnswer is a client's result kept for later rounds.
type stateAnswer struct {
	stateAsk
	Result json.RawMessage `json:"r"`
}

// roundState is the payload of a requestState.
type roundState struct {
	// Round is the number of the round the retry starts: 2 for the
	// first retry.
	Round int `json:"n"`
	// Answers are the results the handler used in the last round.
	Answers map[string]stateAnswer `json:"a,omitempty"`
	// Pending are the requests the last round asked.
	Pending map[string]stateAsk `json:"p,omitempty"`
	// Memo are the values Remember kept.
	Memo map[string]json.RawMessage `json:"m,omitempty"`
}

// inputRound is the ask machinery of one run of a handler in a 2026-07-28
// request that may answer InputRequiredResult. Asks may come from several
// goroutines of the handler.
type inputRound struct {
	active    bool // in use (a modernContext's round is reused by no other)
	target    mrtrTarget
	caps      *ClientCapabilities
	responses InputResponses
	prev      *roundState // the opened requestState; nil without one
	task      *extTaskRun // the call that may become a task; nil if it cannot
	limits    jsonschema.Limits

	mu     sync.Mutex
	asked  InputRequests
	digest map[string][]byte // of asked
	used   map[string]stateAnswer
	memo   map[string]json.RawMessage
	seq    map[string]int // per method, for the keys of single asks
	err    error          // a protocol error met by an ask
}

type inputRoundKey struct{}

// roundFromContext returns the input round of the handler run owning ctx.
func roundFromContext(ctx context.Context) *inputRound {
	if c, ok := ctx.(*modernContext); ok {
		return c.inputRound()
	}
	r, _ := ctx.Value(inputRoundKey{}).(*inputRound)
	return r
}

// inputRound returns the round c holds, if one is active.
func (c *modernContext) inputRound() *inputRound {
	if c.round.active {
		return &c.round
	}
	return nil
}

// RequestRound returns the round of the multi round-trip request whose
// handler owns ctx: 1 for the first request, 2 for the first retry that
// carried a requestState the server had sealed, and so on; 0 outside a
// 2026-07-28 request that may answer InputRequiredResult (in a 2025-11-25
// session every ask is answered on the spot, in one round).
func RequestRound(ctx context.Context) int {
	r := roundFromContext(ctx)
	switch {
	case r == nil:
		return 0
	case r.prev == nil:
		return 1
	}
	return r.prev.Round
}

// InputResults are the client's results for an Ask, by the keys of the
// asked InputRequests: an *ElicitResult, *CreateMessageResult or
// *ListRootsResult each.
type InputResults map[string]ClientResult

// Elicit returns the result under key if it is an elicitation's, else nil.
func (rs InputResults) Elicit(key string) *ElicitResult {
	r, _ := rs[key].(*ElicitResult)
	return r
}

// Sampling returns the result under key if it is a sampling's, else nil.
func (rs InputResults) Sampling(key string) *CreateMessageResult {
	r, _ := rs[key].(*CreateMessageResult)
	return r
}

// Roots returns the result under key if it is a roots/list's, else nil.
func (rs InputResults) Roots(key string) *ListRootsResult {
	r, _ := rs[key].(*ListRootsResult)
	return r
}

// Ask asks the client for all of reqs at once and returns its results, by
// the same keys (unique within the request; choose names that say what is
// asked, such as "user_name"). Every request must be one the client
// declared the capability for (CanAsk); otherwise nothing is asked and the
// error matches ErrCapabilityNotDeclared.
//
// In a 2026-07-28 request the requests not yet answered go, together, into
// one InputRequiredResult: the error matches ErrInputRequired and the
// handler must return it. In a 2025-11-25 session each request is sent to
// the client in turn, in the order of the keys, and Ask returns when all
// are answered or one fails.
func (ss *ServerSession) Ask(ctx context.Context, reqs InputRequests) (InputResults, error) {
	if err := reqs.Validate(); err != nil {
		return nil, fmt.Errorf("mcp: Ask: %w", err)
	}
	if r := roundFromContext(ctx); r != nil {
		return r.askAll(ctx, reqs)
	}
	keys := reqs.Keys()
	for _, k := range keys { // nothing is sent unless all can be
		req := reqs[k]
		if err := ss.checkAsk(ctx, &req); err != nil {
			return nil, fmt.Errorf("mcp: input %q: %w", k, err)
		}
	}
	out := make(InputResults, len(reqs))
	for _, k := range keys {
		req := reqs[k]
		var (
			res ClientResult
			err error
		)
		switch req.Method() {
		case MethodElicitationCreate:
			res, err = ss.Elicit(ctx, req.Elicit)
		case MethodSamplingCreateMessage:
			res, err = ss.CreateMessage(ctx, req.Sampling)
		case MethodRootsList:
			res, err = ss.ListRoots(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("mcp: input %q: %w", k, err)
		}
		out[k] = res
	}
	return out, nil
}

// CanAsk reports whether the client declared the capability req needs:
// the session's in a 2025-11-25 session, the request's own in a 2026-07-28
// request. Handlers that serve both eras read the client's capabilities
// with it (or ClientCapabilitiesFromContext), never with
// InitializeParams, which a 2026-07-28 request does not have.
func (ss *ServerSession) CanAsk(ctx context.Context, req InputRequest) bool {
	caps := ss.askCaps(ctx)
	missing, _, _ := inputCapabilityGap(&caps, &req)
	return missing == nil
}

// askOne is a single ask (ServerSession.Elicit, CreateMessage or
// ListRoots) in an input round: its key is the method's short name and
// the ask's rank among the run's asks of that method, which is the same
// in every round as long as the handler asks in the same order.
func (r *inputRound) askOne(ctx context.Context, req InputRequest) (ClientResult, error) {
	m := req.Method()
	r.mu.Lock()
	if r.seq == nil {
		r.seq = make(map[string]int)
	}
	r.seq[m]++
	key := singleAskPrefix[m] + strconv.Itoa(r.seq[m])
	r.mu.Unlock()
	res, err := r.askAll(ctx, InputRequests{key: req})
	if err != nil {
		return nil, err
	}
	return res[key], nil
}

var singleAskPrefix = map[string]string{
	MethodElicitationCreate:     "elicitation-",
	MethodSamplingCreateMessage: "sampling-",
	MethodRootsList:             "roots-",
}

// askAll answers reqs from the round's answers, or records those it
// cannot answer and returns an error matching ErrInputRequired.
func (r *inputRound) askAll(ctx context.Context, reqs InputRequests) (InputResults, error) {
	type ask struct {
		key    string
		req    InputRequest
		digest []byte
	}
	caps := r.caps
	if caps == nil {
		var none ClientCapabilities
		caps = &none
	}
	asks := make([]ask, 0, len(reqs))
	for _, k := range reqs.Keys() {
		req := reqs[k]
		if missing, code, what := inputCapabilityGap(caps, &req); missing != nil {
			return nil, missingCapability(missing, code, what)
		}
		d, err := inputDigest(&req)
		if err != nil {
			return nil, fmt.Errorf("mcp: input %q: %w", k, err)
		}
		asks = append(asks, ask{k, req, d})
	}
	if r.task != nil {
		if task := r.task.started(); task != nil { // after BeginTask: the task waits for tasks/update
			return r.task.ask(ctx, task, reqs)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(InputResults, len(reqs))
	var pending []string
	for _, a := range asks {
		if d, ok := r.digest[a.key]; ok && string(d) != string(a.digest) {
			return nil, fmt.Errorf("mcp: input key %q asked twice, with different requests", a.key)
		}
		res, err := r.answer(a.key, &a.req, a.digest)
		if err != nil {
			return nil, err
		}
		if res != nil {
			out[a.key] = res
			continue
		}
		if r.asked == nil {
			r.asked = make(InputRequests)
			r.digest = make(map[string][]byte)
		}
		r.asked[a.key] = a.req
		r.digest[a.key] = a.digest
		pending = append(pending, a.key)
	}
	if len(pending) > 0 {
		return nil, fmt.Errorf("%w: %q", ErrInputRequired, pending)
	}
	return out, nil
}

// answer returns the client's result for the request under key, or nil if
// there is none yet. An answer counts only for the request it answers: one
// kept from an earlier round, or one in this retry's inputResponses to
// what the last round asked, must have the request's digest. Without a
// requestState (the client sent none) an answer under the key counts.
// Called with r.mu held.
func (r *inputRound) answer(key string, req *InputRequest, digest []byte) (ClientResult, error) {
	method := req.Method()
	raw, ok := json.RawMessage(nil), false
	if r.prev != nil {
		if a, kept := r.prev.Answers[key]; kept && a.Method == method && string(a.Digest) == string(digest) {
			raw, ok = a.Result, true
		} else if p, asked := r.prev.Pending[key]; asked && p.Method == method && string(p.Digest) == string(digest) {
			raw, ok = r.responses[key]
		}
	} else {
		raw, ok = r.responses[key]
	}
	if !ok {
		return nil, nil
	}
	res, err := InputResponses{key: raw}.Decode(key, method)
	if err == nil {
		err = checkElicitAnswer(req, res, r.limits)
	}
	if err != nil {
		// The basic/patterns/mrtr "Error Handling": data that cannot be
		// parsed is a protocol error.
		e := jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: inputResponses: %v", err)
		if r.err == nil {
			r.err = e
		}
		return nil, e
	}
	if r.used == nil {
		r.used = make(map[string]stateAnswer)
	}
	r.used[key] = stateAnswer{stateAsk{method, digest}, raw}
	return res, nil
}

// inputDigest is the digest of an input request's JSON: 16 bytes of
// SHA-256 tell two requests apart.
func inputDigest(req *InputRequest) ([]byte, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return sum[:16], nil
}

// inputCapabilityGap returns, when caps do not declare what req needs, the
// capabilities it needs, the code a 2025-11-25 refusal has (-32601 for a
// missing capability, -32602 for a missing sub-capability) and what is
// missing; nil when caps suffice.
func inputCapabilityGap(caps *ClientCapabilities, req *InputRequest) (*ClientCapabilities, int64, string) {
	switch req.Method() {
	case MethodRootsList:
		if caps.Roots == nil {
			return &ClientCapabilities{Roots: &RootsCapability{}}, jsonrpc.CodeMethodNotFound, "roots/list needs roots"
		}
	case MethodSamplingCreateMessage:
		p, sc := req.Sampling, caps.Sampling
		switch {
		case sc == nil:
			return &ClientCapabilities{Sampling: &SamplingCapability{}}, jsonrpc.CodeMethodNotFound, "sampling/createMessage needs sampling"
		case (len(p.Tools) > 0 || p.ToolChoice != nil) && sc.Tools == nil:
			return &ClientCapabilities{Sampling: &SamplingCapability{Tools: &Capability{}}}, jsonrpc.CodeInvalidParams, "sampling with tools or toolChoice needs sampling.tools"
		case (p.IncludeContext == IncludeContextThisServer || p.IncludeContext == IncludeContextAllServers) && sc.Context == nil:
			return &ClientCapabilities{Sampling: &SamplingCapability{Context: &Capability{}}}, jsonrpc.CodeInvalidParams, fmt.Sprintf("includeContext %q needs sampling.context", p.IncludeContext)
		}
	case MethodElicitationCreate:
		ec := caps.Elicitation
		_, url := req.Elicit.(*ElicitRequestURLParams)
		switch {
		case ec == nil && url:
			return &ClientCapabilities{Elicitation: &ElicitationCapability{URL: &Capability{}}}, jsonrpc.CodeMethodNotFound, "elicitation/create needs elicitation"
		case ec == nil:
			return &ClientCapabilities{Elicitation: &ElicitationCapability{}}, jsonrpc.CodeMethodNotFound, "elicitation/create needs elicitation"
		case url && ec.URL == nil:
			return &ClientCapabilities{Elicitation: &ElicitationCapability{URL: &Capability{}}}, jsonrpc.CodeInvalidParams, "URL-mode elicitation needs elicitation.url"
		case !url && ec.Form == nil && ec.URL != nil:
			return &ClientCapabilities{Elicitation: &ElicitationCapability{Form: &Capability{}}}, jsonrpc.CodeInvalidParams, "form-mode elicitation needs elicitation.form"
		}
	}
	return nil, 0, ""
}

// missingCapability is the refusal of an ask in a 2026-07-28 request that
// the request's capabilities do not allow: it matches
// ErrCapabilityNotDeclared and holds the MissingRequiredClientCapability
// error (-32021, basic/index "Per-request protocol fields") naming the
// capabilities (a *MissingClientCapabilityError), which the client gets if
// the handler returns it.
func missingCapability(required *ClientCapabilities, _ int64, what string) error {
	return fmt.Errorf("%w (%s): %w", ErrCapabilityNotDeclared, what, &MissingClientCapabilityError{Required: *required})
}

// Remember returns the value compute returns, computing it once per
// request: in a 2026-07-28 request that takes several rounds, the value
// computed in the first round is carried to the next in the sealed
// requestState (encoded as JSON, so T must survive a JSON round trip) and
// returned there without calling compute. key names the value within the
// handler. Outside such a request (a 2025-11-25 session, where the handler
// runs once) it just calls compute. Use it for what must not change
// between rounds: a generated id, a timestamp, a reservation.
func Remember[T any](ctx context.Context, key string, compute func() (T, error)) (T, error) {
	r := roundFromContext(ctx)
	if r == nil {
		return compute()
	}
	var v T
	r.mu.Lock()
	raw, ok := r.memo[key]
	if !ok && r.prev != nil {
		raw, ok = r.prev.Memo[key]
	}
	r.mu.Unlock()
	if ok {
		if err := strictjson.Unmarshal(raw, &v); err != nil {
			return v, fmt.Errorf("mcp: Remember %q: %w", key, err)
		}
	} else {
		var err error
		if v, err = compute(); err != nil {
			return v, err
		}
		if raw, err = json.Marshal(v); err != nil {
			return v, fmt.Errorf("mcp: Remember %q: %w", key, err)
		}
	}
	r.mu.Lock()
	if r.memo == nil {
		r.memo = make(map[string]json.RawMessage)
	}
	r.memo[key] = raw
	r.mu.Unlock()
	return v, nil
}

// mrtrTarget is what a requestState is bound to: the request it is the
// state of.
type mrtrTarget struct {
	method    string
	name      string          // the tool or prompt name, or the resource URI
	arguments json.RawMessage // as sent; digested in canonical form
	principal string          // who sent it, when the transport knows
}

// associated is the sealing's associated data for t: a requestState opens
// only for a request with the same method, name, arguments and principal
// (basic/patterns/mrtr, server requirement 5).
func (t *mrtrTarget) associated() ([]byte, error) {
	var args any
	if present(t.arguments) {
		dec := json.NewDecoder(bytes.NewReader(t.arguments))
		dec.UseNumber() // digits as sent: no rounding through float64
		if err := dec.Decode(&args); err != nil {
			return nil, err
		}
	}
	canon, err := json.Marshal(args) // map keys sorted: the digest ignores member order
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canon)
	ad := make([]byte, 0, 64+len(t.method)+len(t.name)+len(t.principal))
	ad = append(ad, "mcp requestState v1\x00"...)
	ad = append(ad, t.method...)
	ad = append(ad, 0)
	ad = append(ad, t.name...)
	ad = append(ad, 0)
	ad = append(ad, sum[:]...)
	ad = append(ad, t.principal...)
	return ad, nil
}

// errInvalidRequestState is the answer to a requestState that fails
// verification: tampered, sealed by another server, for another request,
// or expired (basic/patterns/mrtr, server requirement 4: reject it).
func errInvalidRequestState(err error) error {
	if errors.Is(err, seal.ErrExpired) {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: requestState has expired; send the request again without it")
	}
	if errors.Is(err, seal.ErrTooLarge) {
		// Refused unread (ServerOptions.StateSealer's MaxSize): say so,
		// rather than call a value nobody looked at tampered.
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: requestState is too long: "+strings.TrimPrefix(err.Error(), seal.ErrTooLarge.Error()+": "))
	}
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: requestState is invalid")
}

// beginRound prepares the input round of a 2026-07-28 request that may
// answer InputRequiredResult (tools/call, prompts/get, resources/read): it
// opens the request's requestState and returns the context to run the
// handler with, which holds the round; endRound then makes the answer.
// On the usual path (the handler's context is the modern leg's own) the
// round lives in that context and costs no allocation.
func (s *Server) beginRound(ctx context.Context, t mrtrTarget, caps *ClientCapabilities, responses InputResponses, state string) (context.Context, *inputRound, error) {
	var r *inputRound
	if c, ok := ctx.(*modernContext); ok && !c.round.active {
		r = &c.round
	} else {
		r = new(inputRound)
		ctx = context.WithValue(ctx, inputRoundKey{}, r)
	}
	r.active, r.target, r.responses, r.caps = true, t, responses, caps
	if r.caps == nil {
		r.caps = &ClientCapabilities{}
	}
	r.task, _ = ctx.Value(extTaskKey{}).(*extTaskRun)
	r.limits = s.opts.SchemaLimits
	if state == "" {
		return ctx, r, nil
	}
	ad, err := r.target.associated()
	if err != nil {
		return nil, nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: arguments: %s", jsonErrorText(err))
	}
	plain, err := s.stateSealer().Open(state, ad)
	if err != nil {
		s.log.Debug("mcp: requestState refused", "method", t.method, "error", err)
		return nil, nil, errInvalidRequestState(err)
	}
	var st roundState
	if err := json.Unmarshal(plain, &st); err != nil || st.Round < 2 {
		// Authentic but unreadable: sealed by a server of another
		// version. The client starts over.
		return nil, nil, errInvalidRequestState(seal.ErrInvalid)
	}
	r.prev = &st
	return ctx, r, nil
}

// endRound answers a request whose handler ran with beginRound's context
// and returned res, err: InputRequiredResult if the handler asked for
// input it does not have (whatever it returned), else what it returned.
func (s *Server) endRound(r *inputRound, res any, err error) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	if len(r.asked) == 0 {
		return res, err
	}
	next := roundState{Round: 2, Answers: r.used, Memo: r.memo, Pending: make(map[string]stateAsk, len(r.asked))}
	if r.prev != nil {
		next.Round = r.prev.Round + 1
	}
	for k, req := range r.asked {
		next.Pending[k] = stateAsk{req.Method(), r.digest[k]}
	}
	ad, aerr := r.target.associated()
	if aerr != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: arguments: %s", jsonErrorText(aerr))
	}
	plain, merr := json.Marshal(&next)
	if merr != nil {
		return nil, fmt.Errorf("mcp: requestState: %w", merr)
	}
	sealed, serr := s.stateSealer().Seal(plain, s.requestStateTTL(), ad)
	if serr != nil {
		s.log.Error("mcp: cannot seal requestState", "method", r.target.method, "name", r.target.name, "error", serr)
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: the request's state is too large to carry")
	}
	return &InputRequiredResult{InputRequests: r.asked, RequestState: sealed}, nil
}

// runRound runs run, a handler, between beginRound and endRound.
func (s *Server) runRound(ctx context.Context, t mrtrTarget, caps *ClientCapabilities, responses InputResponses, state string, run func(context.Context) (any, error)) (any, error) {
	ctx, r, err := s.beginRound(ctx, t, caps, responses, state)
	if err != nil {
		return nil, err
	}
	res, err := run(ctx)
	return s.endRound(r, res, err)
}

// stateSealer returns the ring that seals requestState:
// ServerOptions.StateSealer, or one with a random key made for this
// server.
func (s *Server) stateSealer() *seal.Ring {
	if s.opts.StateSealer != nil {
		return s.opts.StateSealer
	}
	s.sealOnce.Do(func() {
		r, err := seal.NewRing([][]byte{seal.GenerateSecret()}, nil)
		if err != nil {
			panic(err) // a fresh secret of the right size is always accepted
		}
		s.ownSealer = r
	})
	return s.ownSealer
}

// requestStateTTL is ServerOptions.RequestStateTTL with its default.
func (s *Server) requestStateTTL() time.Duration {
	if s.opts.RequestStateTTL > 0 {
		return s.opts.RequestStateTTL
	}
	return DefaultRequestStateTTL
}

type principalKey struct{}

// WithPrincipal returns ctx carrying who sent the request, as the
// transport authenticated it (mcphttp's Options.Identity, for one): the
// server binds what it hands the client to carry to this principal, so
// that another caller cannot use it. A requestState (basic/patterns/mrtr,
// server requirement 5) opens only for the principal it was sealed for;
// the tasks extension's tasks belong to it. Transports call it on the
// context they serve a 2026-07-28 request with.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// principalFromContext returns the principal WithPrincipal set, or "".
func principalFromContext(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// checkElicitAnswer checks the client's answer to a form-mode elicitation
// against the form's requested schema: an accepted form's content must
// match it (with its defaults applied), as the client was asked to make
// it; the content of a declined or cancelled one is dropped. The server
// checks what the client sent rather than trust it, so that a handler can
// rely on the required fields it asked for. Other answers pass.
func checkElicitAnswer(req *InputRequest, res ClientResult, limits jsonschema.Limits) error {
	form, ok := req.Elicit.(*ElicitRequestFormParams)
	er, isElicit := res.(*ElicitResult)
	if !ok || !isElicit {
		return nil
	}
	if er.Action != ElicitActionAccept {
		er.Content = nil
		return nil
	}
	b, err := json.Marshal(form.RequestedSchema)
	if err != nil {
		return err
	}
	schema, err := jsonschema.Compile(b, jsonschema.WithLimits(limits))
	if err != nil {
		return fmt.Errorf("requestedSchema: %w", err)
	}
	if er.Content == nil {
		er.Content = map[string]any{}
	}
	er.Content = jsonschema.ApplyDefaults(schema, er.Content)
	normalizeContent(er.Content)
	if b, err = json.Marshal(er.Content); err != nil {
		return err
	}
	if err := schema.ValidateJSON(b); err != nil {
		return fmt.Errorf("the accepted content does not match the requested schema: %w", err)
	}
	return nil
}
