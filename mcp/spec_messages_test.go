package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// specMessage reads a whole JSON-RPC message of the spec's examples (a
// CallToolRequest, a ProgressNotification, a ListToolsResultResponse, …)
// the way the runtime does: the envelope with jsonrpc.Decode, then the
// params or result into their mcp type, validated. It writes the message
// back with jsonrpc.Encode. It stands for the schema's envelope
// definitions, which have no Go type of their own: the runtime's only
// message model is jsonrpc's.
type specMessage struct {
	method string                             // want this method; "" for a response
	notify bool                               // want a notification
	decode func(json.RawMessage) (any, error) // decodes and validates params or result

	msg   jsonrpc.Message
	value any // the decoded params or result; nil when absent
}

// specRequest is a specMessage for a request of method whose params
// decode into a new P.
func specRequest[P any](method string) *specMessage {
	return &specMessage{method: method, decode: decodeBody[P]}
}

// specNotification is a specMessage for a notification of method whose
// params decode into a new P.
func specNotification[P any](method string) *specMessage {
	return &specMessage{method: method, notify: true, decode: decodeBody[P]}
}

// specResponse is a specMessage for a result response whose result
// decodes into a new R.
func specResponse[R any]() *specMessage {
	return &specMessage{decode: decodeBody[R]}
}

// decodeBody decodes raw into a new P as a session decodes params
// (parseParams: strict JSON, then Validate).
func decodeBody[P any](raw json.RawMessage) (any, error) {
	p := new(P)
	if err := parseParams(raw, p); err != nil {
		return nil, err
	}
	return p, nil
}

func (m *specMessage) UnmarshalJSON(data []byte) error {
	msg, err := jsonrpc.Decode(data)
	if err != nil {
		return err
	}
	var raw json.RawMessage
	switch msg := msg.(type) {
	case *jsonrpc.Request:
		if m.method == "" || msg.Method != m.method || msg.IsNotification() != m.notify {
			return fmt.Errorf("got %s (notification %v), want %q (notification %v)", msg.Method, msg.IsNotification(), m.method, m.notify)
		}
		raw = msg.Params
	case *jsonrpc.Response:
		if m.method != "" || msg.Error != nil {
			return fmt.Errorf("got a response, want %q", m.method)
		}
		raw = msg.Result
	default:
		return fmt.Errorf("got a %T", msg)
	}
	m.msg, m.value = msg, nil
	if raw != nil {
		if m.value, err = m.decode(raw); err != nil {
			return err
		}
	}
	return nil
}

func (m *specMessage) MarshalJSON() ([]byte, error) {
	var raw json.RawMessage
	if m.value != nil {
		b, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	switch msg := m.msg.(type) {
	case *jsonrpc.Request:
		return jsonrpc.Encode(&jsonrpc.Request{ID: msg.ID, Method: msg.Method, Params: raw})
	case *jsonrpc.Response:
		return jsonrpc.Encode(&jsonrpc.Response{ID: msg.ID, Result: raw})
	}
	return nil, fmt.Errorf("no message")
}

// specElicitRequest reads an elicitation/create request, whose params are
// a union, as the client does.
func specElicitRequest() *specMessage {
	return &specMessage{method: MethodElicitationCreate, decode: func(raw json.RawMessage) (any, error) {
		p, err := decodeElicitRequestParams(raw)
		if err != nil {
			return nil, err
		}
		if v, ok := p.(interface{ Validate() error }); ok {
			return p, v.Validate()
		}
		return p, nil
	}}
}

// specURLElicitationError reads a URLElicitationRequiredError response as
// the client does and writes it as the server does.
type specURLElicitationError struct {
	id  jsonrpc.ID
	err URLElicitationRequiredError
}

func (e *specURLElicitationError) UnmarshalJSON(data []byte) error {
	msg, err := jsonrpc.Decode(data)
	if err != nil {
		return err
	}
	r, ok := msg.(*jsonrpc.Response)
	if !ok || r.Error == nil || r.Error.Code != CodeURLElicitationRequired {
		return fmt.Errorf("not a %d error response: %T", CodeURLElicitationRequired, msg)
	}
	var d struct {
		Elicitations *[]ElicitRequestURLParams `json:"elicitations"`
	}
	if err := strictjson.Unmarshal(r.Error.Data, &d); err != nil || d.Elicitations == nil {
		return fmt.Errorf("error data without elicitations (%v)", err)
	}
	e.id = r.ID
	e.err = URLElicitationRequiredError{Message: r.Error.Message, Data: URLElicitationRequiredData{Elicitations: *d.Elicitations}}
	return e.err.Validate()
}

func (e *specURLElicitationError) MarshalJSON() ([]byte, error) {
	return jsonrpc.Encode(&jsonrpc.Response{ID: e.id, Error: e.err.rpcError()})
}
