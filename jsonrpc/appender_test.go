package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// selfEncoder encodes itself one way with AppendJSON and another with
// MarshalJSON, so that the test can tell which the connection used.
type selfEncoder struct{ err error }

func (s selfEncoder) AppendJSON(b []byte) ([]byte, error) {
	if s.err != nil {
		return b, s.err
	}
	return append(b, `{"via":"AppendJSON"}`...), nil
}

func (selfEncoder) MarshalJSON() ([]byte, error) { return []byte(`{"via":"MarshalJSON"}`), nil }

func TestResultJSONAppender(t *testing.T) {
	for _, tc := range []struct {
		name   string
		result any
		want   string // the result, or "" for an internal error
	}{
		{"appender", selfEncoder{}, `{"via":"AppendJSON"}`},
		{"appender pointer", &selfEncoder{}, `{"via":"AppendJSON"}`},
		{"appender error", selfEncoder{err: errors.New("boom")}, ""},
		{"marshaler only", json.RawMessage(`{"via":"raw"}`), `{"via":"raw"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := NewPipe()
			c := NewConn(a, ConnOptions{Handler: HandlerFunc(func(context.Context, *Request) (any, error) {
				return tc.result, nil
			})})
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := b.Write(ctx, &Request{ID: Int64ID(1), Method: "m"}); err != nil {
				t.Fatal(err)
			}
			m, err := b.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			r, ok := m.(*Response)
			if !ok {
				t.Fatalf("got %T", m)
			}
			if tc.want == "" {
				if r.Error == nil || r.Error.Code != CodeInternalError {
					t.Fatalf("got %+v, want an internal error", r)
				}
				return
			}
			if r.Error != nil || string(r.Result) != tc.want {
				t.Fatalf("result %s (error %v), want %s", r.Result, r.Error, tc.want)
			}
		})
	}
}
