package jsonrpc

import (
	"bytes"
	"testing"
	"unsafe"
)

func TestDecoderReusesNames(t *testing.T) {
	const call = "tools/call"
	d := NewDecoder(call, "notifications/initialized")
	for _, tc := range []struct {
		name   string
		in     string
		method string
		reused bool
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, call, true},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "notifications/initialized", true},
		{"other method", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "tools/list", false},
		{"escaped", `{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`, call, false},
		{"prefix", `{"jsonrpc":"2.0","id":1,"method":"tools/cal"}`, "tools/cal", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.in)
			m, err := d.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			req, ok := m.(*Request)
			if !ok {
				t.Fatalf("got %T", m)
			}
			if req.Method != tc.method {
				t.Fatalf("method %q, want %q", req.Method, tc.method)
			}
			for i := range data { // the method must not alias data
				data[i] = 'x'
			}
			if req.Method != tc.method {
				t.Fatalf("method changed with data: %q", req.Method)
			}
			name := d.names[tc.method]
			if got := unsafe.StringData(req.Method) == unsafe.StringData(name); got != tc.reused {
				t.Errorf("reused the decoder's string: %v, want %v", got, tc.reused)
			}
		})
	}
	// A nil Decoder is Decode.
	m, err := (*Decoder)(nil).Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
	if err != nil || m.(*Request).Method != call {
		t.Fatalf("nil Decoder: %v, %v", m, err)
	}
}

// TestParamsCapped checks that appending to a decoded message's Params or
// Result cannot write over the bytes that follow it in the input.
func TestParamsCapped(t *testing.T) {
	for _, in := range []string{
		`{"params":{"a":1},"jsonrpc":"2.0","id":1,"method":"m"}`,
		`{"result":{"a":1},"jsonrpc":"2.0","id":1}`,
	} {
		data := []byte(in)
		m, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		var raw []byte
		switch m := m.(type) {
		case *Request:
			raw = m.Params
		case *Response:
			raw = m.Result
		}
		if cap(raw) != len(raw) {
			t.Errorf("%s: cap %d > len %d", in, cap(raw), len(raw))
		}
		_ = append(raw, "XXXXXXXX"...)
		if !bytes.Equal(data, []byte(in)) {
			t.Errorf("append wrote over the input: %s", data)
		}
	}
}

func BenchmarkDecoder(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	for _, bc := range []struct {
		name string
		d    *Decoder
	}{{"Decode", nil}, {"NewDecoder", NewDecoder("tools/call")}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.d.Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
