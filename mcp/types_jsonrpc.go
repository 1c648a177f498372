package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// Request is a JSON-RPC 2.0 request whose params are a P, usually a
// pointer to one of the *RequestParams types. It encodes with
// "jsonrpc": "2.0" and leaves params out when P encodes as null (a nil
// pointer). Decoding requires "jsonrpc": "2.0", an id and a method; params
// that are absent or null leave Params at its zero value.
//
// The aliases such as CallToolRequest name the instantiations the schema
// defines; JSONRPCRequest takes any params.
type Request[P any] struct {
	// ID is the request id; it must be valid.
	ID RequestID
	// Method is the method name, such as MethodToolsCall.
	Method string
	// Params is the request's params.
	Params P
}

// MarshalJSON encodes r as a JSON-RPC request object.
func (r Request[P]) MarshalJSON() ([]byte, error) {
	if !r.ID.IsValid() {
		return nil, fmt.Errorf("%w: request has no id", ErrInvalidMessage)
	}
	b := append(make([]byte, 0, 128), `{"jsonrpc":"2.0","id":`...)
	b = r.ID.AppendJSON(b)
	return appendMethodParams(b, r.Method, r.Params)
}

// UnmarshalJSON decodes a JSON-RPC request object into r.
func (r *Request[P]) UnmarshalJSON(data []byte) error {
	var w envelope
	if err := w.decode(data); err != nil {
		return err
	}
	if w.ID == nil {
		return fmt.Errorf("%w: request has no id", ErrInvalidMessage)
	}
	if w.Method == nil {
		return fmt.Errorf("%w: request has no method", ErrInvalidMessage)
	}
	var params P
	if present(w.Params) {
		if err := decodeEnvelopeParams(w.Params, &params); err != nil {
			return fmt.Errorf("params: %w", err)
		}
	}
	*r = Request[P]{ID: *w.ID, Method: *w.Method, Params: params}
	return nil
}

// Validate checks that r has an id and a method, that Params suits the
// method, that params the method requires are present, and that Params
// itself is valid.
func (r *Request[P]) Validate() error {
	const typ = "Request"
	if !r.ID.IsValid() {
		return invalid(typ, "id", "is required")
	}
	return validateMethodParams(typ, r.Method, r.Params)
}

func (*Request[P]) isJSONRPCMessage() {}

// Notification is a JSON-RPC 2.0 notification whose params are a P,
// usually a pointer to one of the *NotificationParams types. It encodes
// with "jsonrpc": "2.0" and no id, and leaves params out when P encodes as
// null. Decoding requires "jsonrpc": "2.0" and a method, and refuses an id.
type Notification[P any] struct {
	// Method is the notification name, such as NotificationProgress.
	Method string
	// Params is the notification's params.
	Params P
}

// MarshalJSON encodes n as a JSON-RPC notification object.
func (n Notification[P]) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 128), `{"jsonrpc":"2.0"`...)
	return appendMethodParams(b, n.Method, n.Params)
}

// UnmarshalJSON decodes a JSON-RPC notification object into n.
func (n *Notification[P]) UnmarshalJSON(data []byte) error {
	var w envelope
	if err := w.decode(data); err != nil {
		return err
	}
	if w.ID != nil {
		return fmt.Errorf("%w: notification has an id", ErrInvalidMessage)
	}
	if w.Method == nil {
		return fmt.Errorf("%w: notification has no method", ErrInvalidMessage)
	}
	var params P
	if present(w.Params) {
		if err := decodeEnvelopeParams(w.Params, &params); err != nil {
			return fmt.Errorf("params: %w", err)
		}
	}
	*n = Notification[P]{Method: *w.Method, Params: params}
	return nil
}

// Validate checks that n has a method, that Params suits it, that params
// the method requires are present, and that Params itself is valid.
func (n *Notification[P]) Validate() error {
	return validateMethodParams("Notification", n.Method, n.Params)
}

func (*Notification[P]) isJSONRPCMessage() {}

// Response is a successful JSON-RPC 2.0 response whose result is an R,
// usually a pointer to one of the *Result types. A result that encodes as
// null is sent as {}. Decoding requires "jsonrpc": "2.0", an id and a
// result.
type Response[R any] struct {
	// ID is the id of the request answered.
	ID RequestID
	// Result is the result.
	Result R
}

// MarshalJSON encodes r as a JSON-RPC result response object.
func (r Response[R]) MarshalJSON() ([]byte, error) {
	if !r.ID.IsValid() {
		return nil, fmt.Errorf("%w: response has no id", ErrInvalidMessage)
	}
	res, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	if string(res) == "null" {
		res = []byte("{}")
	}
	b := append(make([]byte, 0, len(res)+48), `{"jsonrpc":"2.0","id":`...)
	b = r.ID.AppendJSON(b)
	b = append(b, `,"result":`...)
	b = append(b, res...)
	return append(b, '}'), nil
}

// UnmarshalJSON decodes a JSON-RPC result response object into r.
func (r *Response[R]) UnmarshalJSON(data []byte) error {
	var w envelope
	if err := w.decode(data); err != nil {
		return err
	}
	if w.ID == nil {
		return fmt.Errorf("%w: response has no id", ErrInvalidMessage)
	}
	if !present(w.Result) {
		return fmt.Errorf("%w: response has no result", ErrInvalidMessage)
	}
	var res R
	if err := strictjson.Unmarshal(w.Result, &res); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	*r = Response[R]{ID: *w.ID, Result: res}
	return nil
}

// Validate checks that r has an id and that Result is valid.
func (r *Response[R]) Validate() error {
	const typ = "Response"
	if !r.ID.IsValid() {
		return invalid(typ, "id", "is required")
	}
	if raw, ok := any(r.Result).(json.RawMessage); ok {
		if !isJSONObject(raw) {
			return invalid(typ, "result", "must be a JSON object")
		}
		return nil
	}
	if isNil(r.Result) {
		return nil
	}
	if v, ok := any(r.Result).(validator); ok {
		return inField(typ, "result", v.Validate())
	}
	return nil
}

func (*Response[R]) isJSONRPCMessage()  {}
func (*Response[R]) isJSONRPCResponse() {}

// ErrorObject is the error member of a JSON-RPC error response (the
// schema's Error definition). It implements error.
type ErrorObject struct {
	// Code is the error code: a JSON-RPC code or one of the MCP codes such
	// as CodeResourceNotFound.
	Code int `json:"code"`
	// Message is a short description, ideally one sentence.
	Message string `json:"message"`
	// Data is optional detail defined by the sender.
	Data json.RawMessage `json:"data,omitempty"`
}

// Error implements the error interface.
func (e *ErrorObject) Error() string {
	return "mcp: error " + strconv.Itoa(e.Code) + ": " + e.Message
}

// ErrorResponse is a JSON-RPC 2.0 error response (the schema's
// JSONRPCErrorResponse). ID is left out of the encoding when it is the
// zero RequestID, which the protocol allows only when the request's id
// could not be read; a null id decodes as the zero RequestID.
type ErrorResponse struct {
	// ID is the id of the request answered, or the zero RequestID.
	ID RequestID
	// Error describes the failure.
	Error ErrorObject
}

// MarshalJSON encodes r as a JSON-RPC error response object.
func (r ErrorResponse) MarshalJSON() ([]byte, error) {
	e, err := json.Marshal(r.Error)
	if err != nil {
		return nil, err
	}
	b := append(make([]byte, 0, len(e)+48), `{"jsonrpc":"2.0"`...)
	if r.ID.IsValid() {
		b = append(b, `,"id":`...)
		b = r.ID.AppendJSON(b)
	}
	b = append(b, `,"error":`...)
	b = append(b, e...)
	return append(b, '}'), nil
}

// UnmarshalJSON decodes a JSON-RPC error response object into r.
func (r *ErrorResponse) UnmarshalJSON(data []byte) error {
	var w envelope
	if err := w.decode(data); err != nil {
		return err
	}
	if !present(w.Error) {
		return fmt.Errorf("%w: error response has no error", ErrInvalidMessage)
	}
	var e ErrorObject
	if err := strictjson.Unmarshal(w.Error, &e); err != nil {
		return fmt.Errorf("error: %w", err)
	}
	var id RequestID
	if w.ID != nil {
		id = *w.ID
	}
	*r = ErrorResponse{ID: id, Error: e}
	return nil
}

func (*ErrorResponse) isJSONRPCMessage()  {}
func (*ErrorResponse) isJSONRPCResponse() {}

// The schema's generic JSON-RPC envelopes.
type (
	// JSONRPCRequest is a request with any params (the schema's
	// JSONRPCRequest, and its base Request definition).
	JSONRPCRequest = Request[json.RawMessage]
	// JSONRPCNotification is a notification with any params (the schema's
	// JSONRPCNotification, and its base Notification definition).
	JSONRPCNotification = Notification[json.RawMessage]
	// JSONRPCResultResponse is a result response with any result.
	JSONRPCResultResponse = Response[json.RawMessage]
	// JSONRPCErrorResponse is the schema's name for ErrorResponse.
	JSONRPCErrorResponse = ErrorResponse
	// PaginatedRequest is the schema's base for the list requests.
	PaginatedRequest = Request[*PaginatedRequestParams]
)

// JSONRPCMessage is any JSON-RPC message: a request, a notification, a
// result response or an error response. Every *Request, *Notification,
// *Response and *ErrorResponse is one; DecodeJSONRPCMessage returns a
// *JSONRPCRequest, *JSONRPCNotification, *JSONRPCResultResponse or
// *ErrorResponse.
type JSONRPCMessage interface {
	isJSONRPCMessage()
}

// JSONRPCResponse is a result response or an error response.
type JSONRPCResponse interface {
	JSONRPCMessage
	isJSONRPCResponse()
}

// DecodeJSONRPCMessage decodes one JSON-RPC message, telling its kind by
// its members: a method and an id make a request, a method alone a
// notification, a result a result response and an error an error
// response. Params and results stay raw.
func DecodeJSONRPCMessage(data []byte) (JSONRPCMessage, error) {
	var w envelope
	if err := w.decode(data); err != nil {
		return nil, err
	}
	var m interface {
		JSONRPCMessage
		json.Unmarshaler
	}
	switch {
	case w.Method != nil && w.ID != nil:
		m = new(JSONRPCRequest)
	case w.Method != nil:
		m = new(JSONRPCNotification)
	case present(w.Result) && present(w.Error):
		return nil, fmt.Errorf("%w: response has both result and error", ErrInvalidMessage)
	case present(w.Result):
		m = new(JSONRPCResultResponse)
	case present(w.Error):
		m = new(ErrorResponse)
	default:
		return nil, fmt.Errorf("%w: neither a request, a notification nor a response", ErrInvalidMessage)
	}
	if err := m.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return m, nil
}

// envelope holds the members of any JSON-RPC message.
type envelope struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      *RequestID      `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

func (w *envelope) decode(data []byte) error {
	if err := strictjson.Unmarshal(data, w); err != nil {
		return err
	}
	if w.JSONRPC == nil || *w.JSONRPC != "2.0" {
		return fmt.Errorf(`%w: "jsonrpc" must be "2.0"`, ErrInvalidMessage)
	}
	return nil
}

func appendMethodParams(b []byte, method string, params any) ([]byte, error) {
	m, err := json.Marshal(method)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"method":`...)
	b = append(b, m...)
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	if string(p) != "null" {
		b = append(b, `,"params":`...)
		b = append(b, p...)
	}
	return append(b, '}'), nil
}

// decodeEnvelopeParams decodes raw params into p, choosing the concrete type for
// union-typed params.
func decodeEnvelopeParams[P any](raw json.RawMessage, p *P) error {
	if ep, ok := any(p).(*ElicitRequestParams); ok {
		v, err := decodeElicitRequestParams(raw)
		if err != nil {
			return err
		}
		*ep = v
		return nil
	}
	return strictjson.Unmarshal(raw, p)
}

func validateMethodParams(typ, method string, params any) error {
	if method == "" {
		return invalid(typ, "method", "is required")
	}
	if !paramsFitMethod(params, method) {
		return invalid(typ, "method", fmt.Sprintf("%q does not take %T params", method, params))
	}
	if raw, ok := params.(json.RawMessage); ok {
		if raw == nil {
			if paramsRequired(method) {
				return invalid(typ, "params", "is required for "+method)
			}
			return nil
		}
		if !isJSONObject(raw) {
			return invalid(typ, "params", "must be a JSON object")
		}
		return nil
	}
	if isNil(params) {
		if paramsRequired(method) {
			return invalid(typ, "params", "is required for "+method)
		}
		return nil
	}
	if v, ok := params.(validator); ok {
		return inField(typ, "params", v.Validate())
	}
	return nil
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		return rv.IsNil()
	}
	return false
}

// URLElicitationRequiredError is the JSON-RPC error response a server sends
// when a request needs the user to complete URL-mode elicitations first:
// code CodeURLElicitationRequired with the elicitations in the error data.
// It implements error.
type URLElicitationRequiredError struct {
	// ID is the id of the request answered, or the zero RequestID.
	ID RequestID
	// Message is the error message.
	Message string
	// Data is the error data, listing the elicitations.
	Data URLElicitationRequiredData
}

// URLElicitationRequiredData is the data member of a
// CodeURLElicitationRequired error.
type URLElicitationRequiredData struct {
	// Elicitations are the URL elicitations to complete; nil encodes as [].
	Elicitations []ElicitRequestURLParams `json:"elicitations"`
}

// MarshalJSON encodes d with Elicitations as [] when nil.
func (d URLElicitationRequiredData) MarshalJSON() ([]byte, error) {
	type wire URLElicitationRequiredData
	w := wire(d)
	if w.Elicitations == nil {
		w.Elicitations = []ElicitRequestURLParams{}
	}
	return json.Marshal(w)
}

// Error implements the error interface.
func (e *URLElicitationRequiredError) Error() string {
	return "mcp: URL elicitation required: " + e.Message
}

// ErrorObject returns the error as the error member of a response.
func (e *URLElicitationRequiredError) ErrorObject() (ErrorObject, error) {
	data, err := json.Marshal(e.Data)
	if err != nil {
		return ErrorObject{}, err
	}
	return ErrorObject{Code: CodeURLElicitationRequired, Message: e.Message, Data: data}, nil
}

// MarshalJSON encodes e as a JSON-RPC error response.
func (e URLElicitationRequiredError) MarshalJSON() ([]byte, error) {
	obj, err := e.ErrorObject()
	if err != nil {
		return nil, err
	}
	return json.Marshal(ErrorResponse{ID: e.ID, Error: obj})
}

// UnmarshalJSON decodes a JSON-RPC error response with code
// CodeURLElicitationRequired and elicitations in its data.
func (e *URLElicitationRequiredError) UnmarshalJSON(data []byte) error {
	var r ErrorResponse
	if err := strictjson.Unmarshal(data, &r); err != nil {
		return err
	}
	if r.Error.Code != CodeURLElicitationRequired {
		return fmt.Errorf("%w: error code %d is not %d", ErrInvalidMessage, r.Error.Code, CodeURLElicitationRequired)
	}
	var d struct {
		Elicitations *[]ElicitRequestURLParams `json:"elicitations"`
	}
	if len(bytes.TrimSpace(r.Error.Data)) > 0 {
		if err := strictjson.Unmarshal(r.Error.Data, &d); err != nil {
			return fmt.Errorf("error.data: %w", err)
		}
	}
	if d.Elicitations == nil {
		return fmt.Errorf("%w: error data has no elicitations", ErrInvalidMessage)
	}
	*e = URLElicitationRequiredError{ID: r.ID, Message: r.Error.Message, Data: URLElicitationRequiredData{Elicitations: *d.Elicitations}}
	return nil
}

// Validate checks each elicitation.
func (e *URLElicitationRequiredError) Validate() error {
	for i := range e.Data.Elicitations {
		if err := e.Data.Elicitations[i].Validate(); err != nil {
			return inField("URLElicitationRequiredError", indexed("error.data.elicitations", i), err)
		}
	}
	return nil
}

func (*URLElicitationRequiredError) isJSONRPCMessage()  {}
func (*URLElicitationRequiredError) isJSONRPCResponse() {}
