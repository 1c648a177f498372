package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/internal/jsonfast"
)

// Encode returns the compact JSON encoding of m, with no trailing newline.
func Encode(m Message) ([]byte, error) {
	return AppendMessage(make([]byte, 0, 128), m)
}

// AppendMessage appends the compact JSON encoding of m to b. Raw params,
// results and error data must be valid JSON; they are compacted if they
// span several lines, so that the output never holds a newline.
func AppendMessage(b []byte, m Message) ([]byte, error) {
	switch m := m.(type) {
	case *Request:
		b = append(b, `{"jsonrpc":"2.0",`...)
		if m.ID.IsValid() {
			b = append(b, `"id":`...)
			b = m.ID.AppendJSON(b)
			b = append(b, ',')
		}
		b = append(b, `"method":`...)
		b = appendJSONString(b, m.Method)
		if m.Params != nil {
			b = append(b, `,"params":`...)
			var err error
			if b, err = appendRaw(b, m.Params); err != nil {
				return b, fmt.Errorf("jsonrpc: params of %s: %w", m.Method, err)
			}
		}
		return append(b, '}'), nil
	case *Response:
		start := len(b)
		b = append(b, `{"jsonrpc":"2.0",`...)
		if m.ID.IsValid() {
			b = append(b, `"id":`...)
			b = m.ID.AppendJSON(b)
			b = append(b, ',')
		}
		if m.Error != nil {
			b = append(b, `"error":{"code":`...)
			b = appendInt(b, m.Error.Code)
			b = append(b, `,"message":`...)
			b = appendJSONString(b, m.Error.Message)
			if m.Error.Data != nil {
				b = append(b, `,"data":`...)
				var err error
				if b, err = appendRaw(b, m.Error.Data); err != nil {
					return b, fmt.Errorf("jsonrpc: error data: %w", err)
				}
			}
			return append(b, "}}"...), nil
		}
		b = append(b, `"result":`...)
		switch {
		case m.Result == nil && m.deferred != nil:
			var err error
			if b, err = m.deferred.appendTo(b, m.ID); err != nil {
				// Answer as a Conn does when a result cannot be
				// encoded: the failure is logged by the Conn's
				// deferredResult, and m is left as it is.
				return AppendMessage(b[:start], &Response{ID: m.ID, Error: ErrInternal})
			}
		case m.Result == nil:
			b = append(b, "{}"...)
		default:
			var err error
			if b, err = appendRaw(b, m.Result); err != nil {
				return b, fmt.Errorf("jsonrpc: result: %w", err)
			}
		}
		return append(b, '}'), nil
	case Batch:
		b = append(b, '[')
		for i, e := range m {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = AppendMessage(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case *DecodeError:
		return AppendMessage(b, m.Response())
	}
	return b, fmt.Errorf("jsonrpc: cannot encode %T", m)
}

func appendInt(b []byte, n int64) []byte {
	return Int64ID(n).AppendJSON(b)
}

// appendRaw appends raw JSON, checking that it is valid and compacting it if
// it holds a newline.
func appendRaw(b []byte, raw json.RawMessage) ([]byte, error) {
	if err := validate(raw); err != nil {
		return b, err
	}
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(b, bytes.TrimSpace(raw)...), nil
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return b, err
	}
	return buf.Bytes(), nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string literal. Invalid UTF-8 is
// replaced by U+FFFD, as encoding/json does. Runs of plain ASCII are
// crossed eight bytes at a time.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for {
		i := jsonfast.IndexSpecialOrHighString(s)
		b = append(b, s[:i]...)
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			s = s[i+1:]
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		s = s[i+size:]
	}
	return append(b, '"')
}
