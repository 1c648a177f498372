package jsonrpc

import (
	"encoding/json"
	"fmt"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// DecodeError describes input that is not a valid JSON-RPC message. Err is
// the error object to send back; ID is the offending request's id when it
// could be read, and the zero ID otherwise.
//
// A *DecodeError is also a Message: a Batch holds one in place of each
// element that could not be decoded.
type DecodeError struct {
	Err *Error
	ID  ID
}

func (e *DecodeError) Error() string { return e.Err.Error() }

// Unwrap returns the error object, so that errors.Is(err, ErrParse) and
// the like match.
func (e *DecodeError) Unwrap() error { return e.Err }

func (*DecodeError) isMessage() {}

// Response returns the error response that answers the malformed input.
func (e *DecodeError) Response() *Response { return &Response{ID: e.ID, Error: e.Err} }

func parseError(detail string) *DecodeError {
	return &DecodeError{Err: &Error{Code: CodeParseError, Message: "Parse error: " + detail}}
}

func invalidRequest(id ID, format string, args ...any) *DecodeError {
	return &DecodeError{ID: id, Err: &Error{Code: CodeInvalidRequest, Message: "Invalid Request: " + fmt.Sprintf(format, args...)}}
}

// member is the raw span of one member of a message object.
type member struct {
	raw     []byte
	escaped bool // for strings: the literal holds escapes
	present bool
}

// Decode reads one JSON-RPC message from data, strictly:
//
//   - input that is not JSON is a parse error (-32700, no id);
//   - "jsonrpc" must be exactly "2.0", "method" a string, "params" (when
//     present) an object, an id a string or an integer; anything else is an
//     invalid request (-32600), which carries the id if it could be read;
//   - a member given twice is an invalid request;
//   - a JSON array is returned as a Batch, its elements decoded one by one.
//
// Member names are matched exactly (case-sensitively); unknown members are
// ignored. Decode returns a *DecodeError for bad input. The Params and Result
// of the returned message alias data: copy data first if it will be reused.
func Decode(data []byte) (Message, error) {
	return (*Decoder)(nil).Decode(data)
}

// DefaultMaxBatchLength bounds the messages of a batch (a JSON array of
// messages) that Decode accepts, unless a Decoder says otherwise. A longer
// batch is refused whole with an invalid-request error, before any of its
// messages is decoded: each message of a batch costs the receiver a
// decoded message, a handler and a response held until the batch is
// answered, while the whole array costs the sender a few bytes per entry.
// JSON-RPC 2.0 sets no bound; MCP used batches only in its 2025-03-26
// revision, whose clients send a few messages at a time.
const DefaultMaxBatchLength = 100

// A Decoder decodes messages as Decode does, and gives a request or
// notification whose method is one of its names that name's string,
// rather than a new copy of the method: a transport that decodes many
// messages saves an allocation a message. The zero Decoder, and a nil
// one, reuse no names. A Decoder is safe for concurrent use.
type Decoder struct {
	names    map[string]string // never changed after NewDecoder
	maxBatch int               // see WithMaxBatchLength; zero means DefaultMaxBatchLength
}

// WithMaxBatchLength returns a Decoder like d (with the same names) that
// accepts batches of at most n messages; n <= 0 means
// DefaultMaxBatchLength. d is not changed.
func (d *Decoder) WithMaxBatchLength(n int) *Decoder {
	nd := &Decoder{maxBatch: n}
	if d != nil {
		nd.names = d.names
	}
	return nd
}

func (d *Decoder) maxBatchLength() int {
	if d == nil || d.maxBatch <= 0 {
		return DefaultMaxBatchLength
	}
	return d.maxBatch
}

// NewDecoder returns a Decoder that reuses the given method names.
func NewDecoder(names ...string) *Decoder {
	d := &Decoder{names: make(map[string]string, len(names))}
	for _, n := range names {
		d.names[n] = n
	}
	return d
}

// Decode reads one JSON-RPC message from data; see the package function
// Decode.
func (d *Decoder) Decode(data []byte) (Message, error) {
	i := skipSpace(data, 0)
	if i == len(data) {
		return nil, parseError("empty message")
	}
	switch data[i] {
	case '{':
		m, end, err := d.decodeObject(data, i)
		if err != nil {
			return nil, err
		}
		if skipSpace(data, end) != len(data) {
			return nil, parseError("data after the message")
		}
		if de, ok := m.(*DecodeError); ok {
			return nil, de
		}
		return m, nil
	case '[':
		return d.decodeBatch(data, i)
	}
	if err := validate(data); err != nil {
		return nil, parseError(err.Error())
	}
	return nil, invalidRequest(ID{}, "a message must be a JSON object")
}

func (d *Decoder) decodeBatch(data []byte, i int) (Message, error) {
	if err := validate(data[i:]); err != nil {
		return nil, parseError(err.Error())
	}
	var batch Batch
	i = skipSpace(data, i+1)
	if data[i] == ']' {
		return nil, invalidRequest(ID{}, "empty batch")
	}
	limit := d.maxBatchLength()
	n := countElements(data, i, limit+1)
	if n > limit {
		return nil, invalidRequest(ID{}, "a batch of more than %d messages", limit)
	}
	batch = make(Batch, 0, n)
	for {
		i = skipSpace(data, i)
		if data[i] == '{' {
			m, end, err := d.decodeObject(data, i)
			if err != nil { // cannot happen: the array is valid JSON
				return nil, err
			}
			batch = append(batch, m)
			i = end
		} else {
			end, _ := skipValue(data, i, 1)
			batch = append(batch, invalidRequest(ID{}, "a message must be a JSON object"))
			i = end
		}
		i = skipSpace(data, i)
		if data[i] == ']' {
			return batch, nil
		}
		i++ // ','
	}
}

// countElements counts the elements of the valid JSON array whose first
// element starts at data[i], up to max: it stops there, so that a long
// array costs no more than max elements to refuse.
func countElements(data []byte, i, max int) int {
	n := 0
	for n < max {
		i = skipSpace(data, i)
		end, _ := skipValue(data, i, 1)
		n++
		i = skipSpace(data, end)
		if data[i] == ']' {
			break
		}
		i++ // ','
	}
	return n
}

// decodeObject decodes the object at data[i]. A syntax error is returned as
// err; a well-formed object that is not a valid message is returned as a
// *DecodeError message, so that batches can hold it.
func (d *Decoder) decodeObject(data []byte, i int) (Message, int, error) {
	var version, id, method, params, result, errm member
	var dup string
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		i++
		goto done
	}
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != '"' {
			return nil, i, parseError("invalid JSON")
		}
		kstart := i
		kend, kesc, err := scanString(data, i)
		if err != nil {
			return nil, kend, parseError("invalid JSON")
		}
		i = skipSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return nil, i, parseError("invalid JSON")
		}
		vstart := skipSpace(data, i+1)
		vend, err := skipValue(data, vstart, 1)
		if err != nil {
			return nil, vend, parseError(err.Error())
		}
		var m *member
		key := data[kstart+1 : kend-1]
		if kesc {
			key = []byte(unquote(data[kstart:kend], kesc))
		}
		switch string(key) {
		case "jsonrpc":
			m = &version
		case "id":
			m = &id
		case "method":
			m = &method
		case "params":
			m = &params
		case "result":
			m = &result
		case "error":
			m = &errm
		}
		if m != nil {
			if m.present && dup == "" {
				dup = string(key)
			}
			m.present = true
			m.raw = data[vstart:vend:vend] // an append to Params or Result must not write over data
			if m.raw[0] == '"' {
				_, m.escaped, _ = scanString(m.raw, 0)
			}
		}
		i = skipSpace(data, vend)
		if i >= len(data) {
			return nil, i, parseError("invalid JSON")
		}
		if data[i] == '}' {
			i++
			break
		}
		if data[i] != ',' {
			return nil, i, parseError("invalid JSON")
		}
		i++
	}
done:
	return d.classify(version, id, method, params, result, errm, dup), i, nil
}

func (d *Decoder) classify(version, idm, method, params, result, errm member, dup string) Message {
	var id ID
	var idErr error
	if idm.present {
		id, idErr = parseID(idm.raw)
	}
	// readID is the id to echo in an error: the zero ID if it is unreadable.
	readID := id
	if dup == "id" {
		readID = ID{}
	}
	if idErr != nil && !(idm.present && string(idm.raw) == "null" && !method.present && errm.present) {
		return invalidRequest(ID{}, "the id must be a string or an integer")
	}
	if dup != "" {
		return invalidRequest(readID, "member %q appears more than once", dup)
	}
	if !version.present {
		return invalidRequest(readID, `missing "jsonrpc" member`)
	}
	if version.raw[0] != '"' || unquote(version.raw, version.escaped) != Version {
		return invalidRequest(readID, `"jsonrpc" must be "2.0"`)
	}
	if method.present {
		if method.raw[0] != '"' {
			return invalidRequest(readID, `"method" must be a string`)
		}
		if result.present || errm.present {
			return invalidRequest(readID, `a request has no "result" or "error"`)
		}
		if params.present && params.raw[0] != '{' {
			return invalidRequest(readID, `"params" must be an object`)
		}
		req := &Request{ID: id, Method: d.method(method)}
		if params.present {
			req.Params = params.raw
		}
		return req
	}
	switch {
	case result.present && errm.present:
		return invalidRequest(readID, `a response has "result" or "error", not both`)
	case result.present:
		if !id.IsValid() {
			return invalidRequest(ID{}, "a result response needs an id")
		}
		if params.present {
			return invalidRequest(readID, `a response has no "params"`)
		}
		return &Response{ID: id, Result: result.raw}
	case errm.present:
		if errm.raw[0] != '{' {
			return invalidRequest(readID, `"error" must be an object`)
		}
		var e struct {
			Code    json.RawMessage `json:"code"`
			Message *string         `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := strictjson.Unmarshal(errm.raw, &e); err != nil || e.Code == nil || e.Message == nil {
			return invalidRequest(readID, `"error" needs an integer "code" and a string "message"`)
		}
		code, err := parseID(e.Code)
		if err != nil || code.IsString() {
			return invalidRequest(readID, `"error.code" must be an integer`)
		}
		return &Response{ID: id, Error: &Error{Code: code.num, Message: *e.Message, Data: e.Data}}
	}
	return invalidRequest(readID, `a message needs "method", "result" or "error"`)
}

// method returns the string of the validated method literal m: one of d's
// names when it is one, else a copy.
func (d *Decoder) method(m member) string {
	if d != nil && !m.escaped {
		if s, ok := d.names[string(m.raw[1:len(m.raw)-1])]; ok {
			return s
		}
	}
	return unquote(m.raw, m.escaped)
}
