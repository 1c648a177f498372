package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"

	"github.com/mcpstack/mcpstack/internal/jsonfast"
	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// Multi round-trip requests (MRTR), revision 2026-07-28
// (basic/patterns/mrtr): instead of sending the client a request of its
// own, a server answers tools/call, prompts/get or resources/read with an
// InputRequiredResult naming the input it needs; the client gathers it and
// retries the original request, with a new id, carrying InputResponses and
// the RequestState the server gave.

// ResultType says how a client is to read a result (the schema's
// Result.resultType). Revision 2026-07-28 requires it on every result; a
// client treats a missing one as ResultTypeComplete.
type ResultType string

// The result types. ResultTypeTask belongs to the tasks extension
// (io.modelcontextprotocol/tasks): the result is a task the client polls.
const (
	ResultTypeComplete      ResultType = "complete"
	ResultTypeInputRequired ResultType = "input_required"
	ResultTypeTask          ResultType = "task"
)

// InputRequest is one entry of InputRequests: a request the server needs the
// client to fulfil before it retries. Exactly one of Elicit, Sampling and
// Roots is set; ElicitInput, SamplingInput and RootsInput build one. On the
// wire it is {"method": ..., "params": ...}, the schema's ElicitRequest,
// CreateMessageRequest or ListRootsRequest without a JSON-RPC id.
type InputRequest struct {
	// Elicit, if set, is an elicitation/create request: an
	// *ElicitRequestFormParams or an *ElicitRequestURLParams.
	Elicit ElicitRequestParams
	// Sampling, if set, is a sampling/createMessage request.
	Sampling *CreateMessageRequestParams
	// Roots, if set, is a roots/list request; its params hold only _meta.
	Roots *RequestParams
}

// ElicitInput returns the InputRequest for an elicitation/create with p.
func ElicitInput(p ElicitRequestParams) InputRequest { return InputRequest{Elicit: p} }

// SamplingInput returns the InputRequest for a sampling/createMessage with p.
func SamplingInput(p *CreateMessageRequestParams) InputRequest {
	return InputRequest{Sampling: p}
}

// RootsInput returns the InputRequest for a roots/list.
func RootsInput() InputRequest { return InputRequest{Roots: &RequestParams{}} }

// Method returns the method of the request r holds
// (MethodElicitationCreate, MethodSamplingCreateMessage or MethodRootsList),
// or "" if r holds none or more than one.
func (r InputRequest) Method() string {
	n, m := 0, ""
	if r.Elicit != nil && !isNil(r.Elicit) {
		n, m = n+1, MethodElicitationCreate
	}
	if r.Sampling != nil {
		n, m = n+1, MethodSamplingCreateMessage
	}
	if r.Roots != nil {
		n, m = n+1, MethodRootsList
	}
	if n != 1 {
		return ""
	}
	return m
}

// params returns the params r holds, for encoding.
func (r InputRequest) params() any {
	switch r.Method() {
	case MethodElicitationCreate:
		return r.Elicit
	case MethodSamplingCreateMessage:
		return r.Sampling
	case MethodRootsList:
		return r.Roots
	}
	return nil
}

// MarshalJSON encodes r as {"method": ..., "params": ...}. It fails unless
// exactly one request is set.
func (r InputRequest) MarshalJSON() ([]byte, error) {
	m := r.Method()
	if m == "" {
		return nil, invalid("InputRequest", "", "exactly one of Elicit, Sampling and Roots must be set")
	}
	params, err := json.Marshal(r.params())
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}{m, params})
}

// UnmarshalJSON decodes r by its "method" member, refusing a method that is
// not one of the three an InputRequest may hold with an error wrapping
// ErrInvalidType.
func (r *InputRequest) UnmarshalJSON(data []byte) error {
	var w struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	var out InputRequest
	params := w.Params
	if !present(params) {
		params = emptyResult
	}
	switch w.Method {
	case MethodElicitationCreate:
		p, err := decodeElicitRequestParams(params)
		if err != nil {
			return err
		}
		out.Elicit = p
	case MethodSamplingCreateMessage:
		out.Sampling = new(CreateMessageRequestParams)
		if err := strictjson.Unmarshal(params, out.Sampling); err != nil {
			return err
		}
	case MethodRootsList:
		out.Roots = new(RequestParams)
		if err := strictjson.Unmarshal(params, out.Roots); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: an input request's method must be %q, %q or %q, got %q", ErrInvalidType,
			MethodElicitationCreate, MethodSamplingCreateMessage, MethodRootsList, w.Method)
	}
	*r = out
	return nil
}

// Validate checks that exactly one request is set, and the request. A
// URL-mode elicitation needs no elicitation id: revision 2026-07-28 removed
// it (URL mode completes by retry).
func (r *InputRequest) Validate() error {
	const typ = "InputRequest"
	switch r.Method() {
	case MethodElicitationCreate:
		if u, ok := r.Elicit.(*ElicitRequestURLParams); ok {
			return inField(typ, "params", validateURLElicitInput(u))
		}
		if v, ok := r.Elicit.(validator); ok {
			return inField(typ, "params", v.Validate())
		}
		return nil
	case MethodSamplingCreateMessage:
		return inField(typ, "params", r.Sampling.Validate())
	case MethodRootsList:
		return nil
	}
	return invalid(typ, "", "exactly one of Elicit, Sampling and Roots must be set")
}

// validateURLElicitInput checks a URL-mode elicitation of an input request:
// a message and an absolute URL.
func validateURLElicitInput(p *ElicitRequestURLParams) error {
	const typ = "ElicitRequestURLParams"
	if err := checkRequired(typ, "message", p.Message); err != nil {
		return err
	}
	if err := checkRequired(typ, "url", p.URL); err != nil {
		return err
	}
	if u, err := url.Parse(p.URL); err != nil || !u.IsAbs() {
		return invalid(typ, "url", "must be an absolute URL")
	}
	return nil
}

// InputRequests is the schema's InputRequests: the requests a server needs
// the client to fulfil, by server-assigned keys unique within the request.
type InputRequests map[string]InputRequest

// Keys returns the keys of rs in ascending order.
func (rs InputRequests) Keys() []string {
	keys := make([]string, 0, len(rs))
	for k := range rs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Validate checks that no key is empty, and each request.
func (rs InputRequests) Validate() error {
	for _, k := range rs.Keys() {
		if k == "" {
			return invalid("InputRequests", "", "a key is empty")
		}
		r := rs[k]
		if err := r.Validate(); err != nil {
			return inField("InputRequests", strconv.Quote(k), err)
		}
	}
	return nil
}

// ErrNoInputResponse is matched (with errors.Is) by the error
// InputResponses.Decode returns for a key the client did not answer.
var ErrNoInputResponse = errors.New("mcp: no input response for the key")

// InputResponses is the schema's InputResponses: the client's results for
// the requests of an InputRequests, under the same keys. A value is the
// result's JSON, an object; which result type it holds depends on the
// request it answers, so it is decoded with Decode, which is told the
// method. Decoding refuses a null or non-object InputResponses and any
// value that is not an object (basic/patterns/mrtr, "Error Handling": the
// server validates the InputResponses object).
type InputResponses map[string]json.RawMessage

// UnmarshalJSON decodes an object whose members are objects. It refuses
// null: a client that has no responses omits the member.
func (rs *InputResponses) UnmarshalJSON(data []byte) error {
	if !isJSONObjectStart(data) {
		return invalid("InputResponses", "", "must be a JSON object")
	}
	var m map[string]json.RawMessage
	if err := strictjson.Unmarshal(data, &m); err != nil {
		return err
	}
	for k, v := range m {
		if !isJSONObjectStart(v) {
			return invalid("InputResponses", strconv.Quote(k), "must be a JSON object (an ElicitResult, CreateMessageResult or ListRootsResult)")
		}
	}
	*rs = m
	return nil
}

// isJSONObjectStart reports whether raw, already known to be valid JSON or
// about to be checked by a decoder, begins an object.
func isJSONObjectStart(raw []byte) bool {
	i := jsonfast.SkipSpace(raw, 0)
	return i < len(raw) && raw[i] == '{'
}

// Put encodes res, the client's result for the request under key, into rs.
func (rs InputResponses) Put(key string, res ClientResult) error {
	b, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("mcp: input response %q: %w", key, err)
	}
	rs[key] = b
	return nil
}

// Decode decodes and validates the response under key as the result of
// method: an *ElicitResult for MethodElicitationCreate, a
// *CreateMessageResult for MethodSamplingCreateMessage, a *ListRootsResult
// for MethodRootsList. A missing key gets an error matching
// ErrNoInputResponse; a response that does not decode or validate gets a
// *ValidationError or a decoding error.
func (rs InputResponses) Decode(key, method string) (ClientResult, error) {
	raw, ok := rs[key]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrNoInputResponse, key)
	}
	var res interface {
		ClientResult
		validator
	}
	switch method {
	case MethodElicitationCreate:
		res = new(ElicitResult)
	case MethodSamplingCreateMessage:
		res = new(CreateMessageResult)
	case MethodRootsList:
		res = new(ListRootsResult)
	default:
		return nil, fmt.Errorf("%w: no input response type for method %q", ErrInvalidType, method)
	}
	if err := strictjson.Unmarshal(raw, res); err != nil {
		return nil, inField("InputResponses", strconv.Quote(key), errors.New(strictjson.Describe(err)))
	}
	if err := res.Validate(); err != nil {
		return nil, inField("InputResponses", strconv.Quote(key), err)
	}
	return res, nil
}

// InputRequiredResult is the result a server gives tools/call, prompts/get
// or resources/read when it needs input before it can complete
// (basic/patterns/mrtr, "InputRequiredResult"). It encodes with
// "resultType": "input_required". At least one of InputRequests and
// RequestState must be set.
type InputRequiredResult struct {
	// InputRequests are the requests the client must fulfil before it
	// retries.
	InputRequests InputRequests `json:"inputRequests,omitempty"`
	// RequestState, if set, is opaque to the client, which echoes it
	// unchanged in the retry.
	RequestState string `json:"requestState,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes r with "resultType": "input_required".
func (r InputRequiredResult) MarshalJSON() ([]byte, error) {
	type wire InputRequiredResult
	return marshalTagged("resultType", string(ResultTypeInputRequired), wire(r))
}

// UnmarshalJSON decodes r, refusing any resultType but "input_required".
func (r *InputRequiredResult) UnmarshalJSON(data []byte) error {
	type wire InputRequiredResult
	var w struct {
		ResultType string `json:"resultType"`
		wire
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := checkTag("InputRequiredResult", "resultType", string(ResultTypeInputRequired), w.ResultType); err != nil {
		return err
	}
	*r = InputRequiredResult(w.wire)
	return nil
}

// Validate checks that InputRequests or RequestState is set, and each
// input request.
func (r *InputRequiredResult) Validate() error {
	const typ = "InputRequiredResult"
	if len(r.InputRequests) == 0 && r.RequestState == "" {
		return invalid(typ, "", "needs inputRequests or requestState")
	}
	return inField(typ, "inputRequests", r.InputRequests.Validate())
}

func (*InputRequiredResult) isServerResult() {}
