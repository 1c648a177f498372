package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
	"time"
)

var fuzzSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x","data":[1]}}`,
	`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`,
	`{"jsonrpc":"2.0","id":null,"method":"a"}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"a"}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","params":[1]}`,
	`{"jsonrpc":"2.0","id":"\ud800","method":"\u0000"}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}`,
	`[]`, `{`, `"x"`, `1e99`, ``,
}

// FuzzDecode checks that Decode never panics, agrees with encoding/json on
// what is JSON, and that every message it accepts re-encodes to an
// equivalent message.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	names := NewDecoder("tools/call", "ping", "notifications/initialized", "a")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		// A Decoder with names decodes exactly as Decode does.
		if mn, errn := names.Decode(data); fmt.Sprint(err) != fmt.Sprint(errn) || !reflect.DeepEqual(m, mn) {
			t.Fatalf("Decoder: %#v, %v; Decode: %#v, %v", mn, errn, m, err)
		}
		var de *DecodeError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("error %T is not a *DecodeError", err)
		}
		isParseErr := de != nil && de.Err.Code == CodeParseError
		if isParseErr == json.Valid(data) {
			t.Fatalf("Decode parse error = %v, json.Valid = %v for %q", isParseErr, json.Valid(data), data)
		}
		if err != nil {
			// The error response itself must encode and decode.
			b, err := Encode(de)
			if err != nil {
				t.Fatalf("encode error response: %v", err)
			}
			if _, err := Decode(b); err != nil {
				t.Fatalf("error response %s does not decode: %v", b, err)
			}
			return
		}
		b, err := Encode(m)
		if err != nil {
			t.Fatalf("Encode(%#v): %v", m, err)
		}
		if bytes.ContainsAny(b, "\n\r") {
			t.Fatalf("encoding holds a newline: %q", b)
		}
		m2, err := Decode(b)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", b, err)
		}
		b2, err := Encode(m2)
		if err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("unstable encoding: %s then %s (%v)", b, b2, err)
		}
	})
}

// FuzzConn feeds arbitrary lines to a connection's message loop and checks
// that it never panics and still answers a ping afterwards.
func FuzzConn(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s + "\n" + s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = bytes.ReplaceAll(data, []byte(`"id":999999`), nil)
		in := io.MultiReader(bytes.NewReader(data), bytes.NewReader([]byte("\n{\"jsonrpc\":\"2.0\",\"id\":999999,\"method\":\"ping\"}\n")))
		var out syncBuffer
		s := NewLineStream(in, &out, nil, 1<<16)
		handler := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if req.Method == "ping" {
				return struct{}{}, nil
			}
			return nil, ErrMethodNotFound
		})
		c := NewConn(s, ConnOptions{Handler: handler, MaxConcurrency: 4})
		if err := c.Wait(); err != nil {
			t.Fatalf("Wait: %v", err)
		}
		// Every line written back must be a valid message, and the final
		// ping must be answered.
		answered := false
		for _, line := range bytes.Split(out.Bytes(), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			m, err := Decode(line)
			if err != nil {
				t.Fatalf("connection wrote an invalid message %q: %v", line, err)
			}
			if r, ok := m.(*Response); ok && r.ID == Int64ID(999999) && r.Error == nil {
				answered = true
			}
		}
		if !answered {
			t.Fatalf("final ping not answered; output:\n%s", out.Bytes())
		}
	})
}

type syncBuffer struct {
	mu  chan struct{}
	buf bytes.Buffer
}

func (b *syncBuffer) lock() {
	if b.mu == nil {
		b.mu = make(chan struct{}, 1)
	}
	b.mu <- struct{}{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.lock()
	defer func() { <-b.mu }()
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.lock()
	defer func() { <-b.mu }()
	return bytes.Clone(b.buf.Bytes())
}

var _ = time.Second
