package jsonrpc

import (
	"context"
	"encoding/json"
	"fmt"
)

// Version is the value of the "jsonrpc" member of every message.
const Version = "2.0"

// Message is one JSON-RPC message: a *Request (a request or a notification),
// a *Response, or a Batch of them.
type Message interface {
	isMessage()
}

// Request is a request or, when ID is the zero ID, a notification.
type Request struct {
	// ID is the request id. The zero ID marks a notification.
	ID ID
	// Method is the name of the method to invoke.
	Method string
	// Params holds the raw JSON object of the parameters, or nil when the
	// message carried none.
	Params json.RawMessage

	// values, if set, supplies values (never cancellation) to the
	// handler's context; it is not part of the message on the wire.
	values context.Context
}

// WithValues returns a shallow copy of r whose handler context will carry
// the values of ctx, in addition to the connection's own. A transport uses
// it to hand facts about how the message arrived (an HTTP request's headers
// or its verified caller) to the handler. Only values pass: ctx's deadline
// and cancellation do not, so a request outlives, say, the HTTP exchange
// that delivered it. The values are never encoded.
func (r *Request) WithValues(ctx context.Context) *Request {
	r2 := *r
	r2.values = ctx
	return &r2
}

// Values returns the context whose values r carries, or nil if none.
func (r *Request) Values() context.Context { return r.values }

// IsNotification reports whether r is a notification (it has no id).
func (r *Request) IsNotification() bool { return !r.ID.IsValid() }

// Response is the answer to a request: exactly one of Result and Error is
// set, except in a response that a Conn writes whose handler's result is
// a JSONAppender: Result is then nil, and the result is encoded by Encode
// and AppendMessage, straight into the message's buffer (a Stream must
// encode the messages it writes with them). ID is the zero ID only for an
// error response to a request whose id could not be read.
type Response struct {
	ID     ID
	Result json.RawMessage
	Error  *Error

	// deferred, if set (and Result and Error are not), is the result
	// of a Conn's handler still to be encoded: Encode and AppendMessage
	// encode it straight into the message (see JSONAppender). It is set
	// only by a Conn, and never changed by encoding.
	deferred *deferredResult
}

// Batch is a JSON array of messages. MCP forbids batches from 2025-06-18 on;
// a Conn answers them with -32600 unless batches are enabled.
type Batch []Message

func (*Request) isMessage()  {}
func (*Response) isMessage() {}
func (Batch) isMessage()     {}

// The error codes that JSON-RPC 2.0 defines.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// CodeOverloaded is the implementation-defined error code (JSON-RPC 2.0
// reserves -32000 to -32099 for those; -32000 to -32019 are left to
// implementations) of a request refused because its connection has too
// many requests waiting already (see ConnOptions.MaxQueued): the request
// was not handled, and may be sent again later.
const CodeOverloaded = -32010

// Error is a JSON-RPC error object. It implements error, so a handler can
// return one to choose the code and message that its caller receives.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc: %s (code %d)", e.Message, e.Code)
}

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, jsonrpc.ErrMethodNotFound) matches any -32601 error.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// NewError returns an error object with the given code and message.
func NewError(code int64, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Errorf returns an error object whose message is formatted from format.
func Errorf(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithData returns a copy of e carrying data, encoded as JSON. If data cannot
// be encoded, the copy carries none.
func (e *Error) WithData(data any) *Error {
	c := *e
	if raw, err := json.Marshal(data); err == nil {
		c.Data = raw
	}
	return &c
}

// Sentinel errors, one per standard code, for use with errors.Is. Do not
// send them with extra detail: use NewError or Errorf for that.
var (
	ErrParse          = NewError(CodeParseError, "Parse error")
	ErrInvalidRequest = NewError(CodeInvalidRequest, "Invalid Request")
	ErrMethodNotFound = NewError(CodeMethodNotFound, "Method not found")
	ErrInvalidParams  = NewError(CodeInvalidParams, "Invalid params")
	ErrInternal       = NewError(CodeInternalError, "Internal error")
)

// A JSONAppender is a value that appends its own JSON encoding to a byte
// slice, faster than encoding/json would encode it. A handler's result
// that implements JSONAppender is encoded by calling AppendJSON instead of
// json.Marshal, so its output must be what json.Marshal would produce for
// it (or at least one valid, compact JSON value: the encoder checks it
// anyway, and answers -32603 in its place if it is not). AppendJSON must
// not modify or retain b beyond appending to it. It is called when the
// response is encoded, by the stream's Write, after the handler returned:
// the handler must not change the value it returned.
type JSONAppender interface {
	AppendJSON(b []byte) ([]byte, error)
}
