package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ID is a JSON-RPC request id: a string or an integer, never null.
//
// An ID keeps the JSON kind it was read with, so that the string "1" and the
// integer 1 are different ids and each is echoed exactly as it arrived. The
// zero ID is invalid; it stands for "no id" (as in an error response whose
// request id could not be read).
type ID struct {
	str  string
	num  int64
	kind idKind
}

type idKind uint8

const (
	idNone idKind = iota
	idString
	idInt
)

// StringID returns the string id s.
func StringID(s string) ID { return ID{str: s, kind: idString} }

// Int64ID returns the integer id n.
func Int64ID(n int64) ID { return ID{num: n, kind: idInt} }

// IsValid reports whether id holds a string or an integer.
func (id ID) IsValid() bool { return id.kind != idNone }

// IsString reports whether id is a string id.
func (id ID) IsString() bool { return id.kind == idString }

// String returns the id's text, without the quotes of a string id; an
// integer id prints in decimal. The result is for logs: the string "1" and the
// integer 1 both print as 1.
func (id ID) String() string {
	switch id.kind {
	case idString:
		return id.str
	case idInt:
		return strconv.FormatInt(id.num, 10)
	}
	return "<none>"
}

// Raw returns the id's value: a string, an int64, or nil for the zero ID.
func (id ID) Raw() any {
	switch id.kind {
	case idString:
		return id.str
	case idInt:
		return id.num
	}
	return nil
}

// ErrInvalidID is returned (wrapped) when a JSON value cannot be an id:
// null, a fraction, a boolean, an object or an array.
var ErrInvalidID = errors.New("jsonrpc: id must be a string or an integer")

// MarshalJSON encodes a string id as a JSON string and an integer id as a
// JSON number. The zero ID encodes as null; codecs leave it out instead.
func (id ID) MarshalJSON() ([]byte, error) {
	return id.AppendJSON(nil), nil
}

// AppendJSON appends the JSON encoding of id to b.
func (id ID) AppendJSON(b []byte) []byte {
	switch id.kind {
	case idString:
		return appendJSONString(b, id.str)
	case idInt:
		return strconv.AppendInt(b, id.num, 10)
	}
	return append(b, "null"...)
}

// UnmarshalJSON accepts a JSON string or a JSON integer; anything else,
// null included, is an error wrapping ErrInvalidID.
func (id *ID) UnmarshalJSON(data []byte) error {
	v, err := parseID(data)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

func parseID(data []byte) (ID, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return ID{}, ErrInvalidID
	}
	switch c := data[0]; {
	case c == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return ID{}, fmt.Errorf("%w: %v", ErrInvalidID, err)
		}
		return StringID(s), nil
	case c == '-' || (c >= '0' && c <= '9'):
		// An integer: no fraction, no exponent. Large integers outside int64
		// are refused rather than silently rounded.
		for _, d := range data[1:] {
			if d < '0' || d > '9' {
				return ID{}, fmt.Errorf("%w: got %s", ErrInvalidID, truncate(data))
			}
		}
		n, ok := parseInt(data)
		if !ok {
			return ID{}, fmt.Errorf("%w: %s is not an integer in range", ErrInvalidID, truncate(data))
		}
		return Int64ID(n), nil
	}
	return ID{}, fmt.Errorf("%w: got %s", ErrInvalidID, truncate(data))
}

func truncate(b []byte) string {
	if len(b) > 32 {
		return string(b[:32]) + "…"
	}
	return string(b)
}

// parseInt parses a JSON integer (an optional minus, digits, no leading
// zero) that fits in an int64.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}
