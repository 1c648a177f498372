package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// rawAppender is a JSONAppender that appends fixed bytes, or fails.
type rawAppender struct {
	out string
	err error
}

func (a *rawAppender) AppendJSON(b []byte) ([]byte, error) {
	if a.err != nil {
		return append(b, "garbage"...), a.err
	}
	return append(b, a.out...), nil
}

// wireStream records what is written to it. As an encoding stream it
// encodes each message in Write; otherwise it keeps the message and
// encodes it when asked, as a stream that hands messages on would.
type wireStream struct {
	mu   sync.Mutex
	msgs []Message
	wire [][]byte
}

func (s *wireStream) Read(context.Context) (Message, error) { return nil, errors.New("not readable") }
func (s *wireStream) Close() error                          { return nil }

func (s *wireStream) Write(_ context.Context, m Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, m)
	return nil
}

// encoded returns the encoding of every message written, or the error
// that encoding it gave.
func (s *wireStream) encoded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.msgs {
		b, err := Encode(m)
		if err != nil {
			out = append(out, "Encode: "+err.Error())
			continue
		}
		out = append(out, string(b))
	}
	for _, b := range s.wire {
		out = append(out, string(b))
	}
	return out
}

// encodingWireStream encodes each message in Write.
type encodingWireStream struct{ wireStream }

func (s *encodingWireStream) Write(_ context.Context, m Message) error {
	// Encode into a buffer with something before it, as a transport that
	// frames messages would.
	b, err := AppendMessage([]byte("xx"), m)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wire = append(s.wire, b[2:])
	return nil
}

// TestDeferredResultSameBytes checks that a result whose encoding a Conn
// leaves to the stream's encoder (a JSONAppender, see Response) is written
// exactly as an eager encoding would be: checked, trimmed and compacted
// the same way, and answered with -32603 (and logged) when it cannot be
// encoded; whether the stream encodes in Write or later.
func TestDeferredResultSameBytes(t *testing.T) {
	tests := []struct {
		name   string
		result any
		want   string // the encoding, on both streams
		logged bool   // "cannot encode result" is logged
	}{
		{name: "appender", result: &rawAppender{out: `{"a":[1,"x\n"]}`}, want: `{"jsonrpc":"2.0","id":7,"result":{"a":[1,"x\n"]}}`},
		{name: "spaces", result: &rawAppender{out: " \t{\"a\": 1} "}, want: `{"jsonrpc":"2.0","id":7,"result":{"a": 1}}`},
		{name: "lines", result: &rawAppender{out: "{\n  \"a\": 1,\r\n  \"b\": [true]\n}\n"}, want: `{"jsonrpc":"2.0","id":7,"result":{"a":1,"b":[true]}}`},
		{name: "invalid", result: &rawAppender{out: `{"a":`}, want: `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error"}}`, logged: true},
		{name: "empty", result: &rawAppender{}, want: `{"jsonrpc":"2.0","id":7,"result":{}}`},
		{name: "fails", result: &rawAppender{err: errors.New("boom")}, want: `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error"}}`, logged: true},
		{name: "typed nil", result: (*nullAppender)(nil), want: `{"jsonrpc":"2.0","id":7,"result":null}`},
		{name: "raw", result: json.RawMessage(`{"r":2}`), want: `{"jsonrpc":"2.0","id":7,"result":{"r":2}}`},
		{name: "raw invalid", result: json.RawMessage(`{"r":`), want: `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error"}}`, logged: true},
		{name: "struct", result: struct{ N int }{3}, want: `{"jsonrpc":"2.0","id":7,"result":{"N":3}}`},
		{name: "nil", result: nil, want: `{"jsonrpc":"2.0","id":7,"result":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, encoding := range []bool{false, true} {
				var logs bytes.Buffer
				opts := ConnOptions{
					Logger: slog.New(slog.NewTextHandler(&logs, nil)),
					Handler: HandlerFunc(func(context.Context, *Request) (any, error) {
						return tt.result, nil
					}),
				}
				var got []string
				if encoding {
					s := &encodingWireStream{}
					c := NewPushConn(s, opts)
					c.Deliver(context.Background(), &Request{ID: Int64ID(7), Method: "m"})
					got = s.encoded()
					c.Close()
				} else {
					s := &wireStream{}
					c := NewPushConn(s, opts)
					c.Deliver(context.Background(), &Request{ID: Int64ID(7), Method: "m"})
					got = s.encoded()
					c.Close()
				}
				want, wantLogged := tt.want, tt.logged
				if len(got) != 1 || got[0] != want {
					t.Errorf("encoding stream %v: wrote %q, want %q", encoding, got, want)
				}
				if logged := strings.Contains(logs.String(), "cannot encode result"); logged != wantLogged {
					t.Errorf("encoding stream %v: logged %v, want %v; log:\n%s", encoding, logged, wantLogged, logs.String())
				}
			}
		})
	}
}

// nullAppender encodes as null when nil, as mcp's result types do.
type nullAppender struct{}

func (a *nullAppender) AppendJSON(b []byte) ([]byte, error) {
	if a == nil {
		return append(b, "null"...), nil
	}
	return append(b, "{}"...), nil
}

// TestDeferredResultBatch checks deferred results inside a batch, the
// failing one answered with -32603 and logged.
func TestDeferredResultBatch(t *testing.T) {
	var logs bytes.Buffer
	s := &encodingWireStream{}
	c := NewPushConn(s, ConnOptions{
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Handler: HandlerFunc(func(_ context.Context, r *Request) (any, error) {
			if r.Method == "bad" {
				return &rawAppender{out: "[1,"}, nil
			}
			return &rawAppender{out: "[1,2]"}, nil
		}),
	})
	defer c.Close()
	c.SetBatchEnabled(true)
	c.Deliver(context.Background(), Batch{&Request{ID: Int64ID(1), Method: "bad"}})
	c.Deliver(context.Background(), Batch{&Request{ID: Int64ID(2), Method: "good"}})
	got := s.encoded()
	want := []string{
		`[{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}]`,
		`[{"jsonrpc":"2.0","id":2,"result":[1,2]}]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if n := strings.Count(logs.String(), "cannot encode result"); n != 1 {
		t.Errorf("logged %d encoding failures, want 1; log:\n%s", n, logs.String())
	}
}

// TestLineStreamDefersResults checks that a LineStream writes a deferred
// result (see Response) as the bytes of the eager encoding.
func TestLineStreamDefersResults(t *testing.T) {
	var out bytes.Buffer
	s := NewLineStream(strings.NewReader(""), &out, nil, 0)
	c := NewPushConn(s, ConnOptions{Handler: HandlerFunc(func(_ context.Context, r *Request) (any, error) {
		if r.Method == "bad" {
			return &rawAppender{out: "{"}, nil
		}
		return &rawAppender{out: "{\n\"a\": [1, 2]\n}"}, nil
	})})
	defer c.Close()
	c.Deliver(context.Background(), &Request{ID: Int64ID(1), Method: "good"})
	c.Deliver(context.Background(), &Request{ID: Int64ID(2), Method: "bad"})
	want := `{"jsonrpc":"2.0","id":1,"result":{"a":[1,2]}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}}` + "\n"
	if got := out.String(); got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// TestEncodeLeavesMessage checks that encoding a response whose result a
// Conn deferred never writes into the message: encoded twice, it gives
// the same bytes, the message is unchanged, and a result that fails is
// answered with -32603 (and logged) each time.
func TestEncodeLeavesMessage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		result JSONAppender
		want   string
	}{
		{"ok", &rawAppender{out: `[1]`}, `{"jsonrpc":"2.0","id":3,"result":[1]}`},
		{"fails", &rawAppender{err: errors.New("boom")}, `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error"}}`},
		{"invalid", &rawAppender{out: `[1,`}, `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			s := &wireStream{}
			c := NewPushConn(s, ConnOptions{
				Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
				Handler: HandlerFunc(func(context.Context, *Request) (any, error) { return tc.result, nil }),
			})
			defer c.Close()
			c.Deliver(context.Background(), &Request{ID: Int64ID(3), Method: "m"})
			if len(s.msgs) != 1 {
				t.Fatalf("%d messages written, want 1", len(s.msgs))
			}
			r := s.msgs[0].(*Response)
			before := *r
			for i := range 2 {
				b, err := Encode(r)
				if err != nil || string(b) != tc.want {
					t.Fatalf("encoding %d: %s, %v; want %s", i, b, err, tc.want)
				}
				if !reflect.DeepEqual(*r, before) {
					t.Fatalf("encoding %d changed the message: %+v, was %+v", i, *r, before)
				}
			}
			wantLogs := 0
			if tc.name != "ok" {
				wantLogs = 2
			}
			if n := strings.Count(logs.String(), "cannot encode result"); n != wantLogs {
				t.Errorf("logged %d failures, want %d", n, wantLogs)
			}
		})
	}
}
