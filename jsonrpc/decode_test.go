package jsonrpc

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeValid(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   Message
		encode string // re-encoding; empty means same as in
	}{
		{"request int id", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, &Request{ID: Int64ID(1), Method: "ping"}, ""},
		{"request string id", `{"jsonrpc":"2.0","id":"1","method":"ping"}`, &Request{ID: StringID("1"), Method: "ping"}, ""},
		{"request negative id", `{"jsonrpc":"2.0","id":-7,"method":"x"}`, &Request{ID: Int64ID(-7), Method: "x"}, ""},
		{"request empty string id", `{"jsonrpc":"2.0","id":"","method":"x"}`, &Request{ID: StringID(""), Method: "x"}, ""},
		{"request with params", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`, &Request{ID: Int64ID(2), Method: "tools/call", Params: []byte(`{"name":"echo"}`)}, ""},
		{"member order and spaces", ` { "method" : "a\/b" , "params": {} ,"id":"x\u0041", "jsonrpc":"2.0" } `, &Request{ID: StringID("xA"), Method: "a/b", Params: []byte(`{}`)}, `{"jsonrpc":"2.0","id":"xA","method":"a/b","params":{}}`},
		{"unknown member ignored", `{"jsonrpc":"2.0","method":"n","extra":[1,2]}`, &Request{Method: "n"}, `{"jsonrpc":"2.0","method":"n"}`},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, &Request{Method: "notifications/initialized"}, ""},
		{"result", `{"jsonrpc":"2.0","id":3,"result":{}}`, &Response{ID: Int64ID(3), Result: []byte(`{}`)}, ""},
		{"error", `{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"Method not found"}}`, &Response{ID: StringID("a"), Error: &Error{Code: -32601, Message: "Method not found"}}, ""},
		{"error with data", `{"jsonrpc":"2.0","id":4,"error":{"code":-32002,"message":"nope","data":{"uri":"x"}}}`, &Response{ID: Int64ID(4), Error: &Error{Code: -32002, Message: "nope", Data: []byte(`{"uri":"x"}`)}}, ""},
		{"error without id", `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`, &Response{Error: &Error{Code: -32700, Message: "Parse error"}}, ""},
		{"error with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, &Response{Error: &Error{Code: -32700, Message: "Parse error"}}, `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`},
		{"big int id", `{"jsonrpc":"2.0","id":9223372036854775807,"method":"x"}`, &Request{ID: Int64ID(9223372036854775807), Method: "x"}, ""},
		{"unicode method", `{"jsonrpc":"2.0","id":1,"method":"\u00e9t\u00e9 \ud83d\ude00"}`, &Request{ID: Int64ID(1), Method: "été 😀"}, `{"jsonrpc":"2.0","id":1,"method":"été 😀"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode([]byte(tt.in))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !equalMessage(m, tt.want) {
				t.Fatalf("Decode = %#v, want %#v", m, tt.want)
			}
			b, err := Encode(m)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.encode
			if want == "" {
				want = tt.in
			}
			if string(b) != want {
				t.Fatalf("Encode = %s, want %s", b, want)
			}
		})
	}
}

func equalMessage(a, b Message) bool {
	switch a := a.(type) {
	case *Request:
		b, ok := b.(*Request)
		return ok && a.ID == b.ID && a.Method == b.Method && string(a.Params) == string(b.Params)
	case *Response:
		b, ok := b.(*Response)
		if !ok || a.ID != b.ID || string(a.Result) != string(b.Result) || (a.Error == nil) != (b.Error == nil) {
			return false
		}
		return a.Error == nil || (a.Error.Code == b.Error.Code && a.Error.Message == b.Error.Message && string(a.Error.Data) == string(b.Error.Data))
	}
	return false
}

func TestDecodeInvalid(t *testing.T) {
	none := ID{}
	tests := []struct {
		name string
		in   string
		code int64
		id   ID
	}{
		{"empty", ``, CodeParseError, none},
		{"spaces", `   `, CodeParseError, none},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"ping"`, CodeParseError, none},
		{"garbage", `not json`, CodeParseError, none},
		{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, CodeParseError, none},
		{"two messages", `{"jsonrpc":"2.0","method":"a"}{"jsonrpc":"2.0","method":"b"}`, CodeParseError, none},
		{"bad escape", `{"jsonrpc":"2.0","id":1,"method":"p\x"}`, CodeParseError, none},
		{"control char in string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\x01\"}", CodeParseError, none},
		{"leading zero", `{"jsonrpc":"2.0","id":01,"method":"p"}`, CodeParseError, none},
		{"single quotes", `{'jsonrpc':'2.0'}`, CodeParseError, none},
		{"not an object: number", `42`, CodeInvalidRequest, none},
		{"not an object: string", `"ping"`, CodeInvalidRequest, none},
		{"not an object: null", `null`, CodeInvalidRequest, none},
		{"empty object", `{}`, CodeInvalidRequest, none},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, none},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, CodeInvalidRequest, none},
		{"integral float id", `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, CodeInvalidRequest, none},
		{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, CodeInvalidRequest, none},
		{"huge id", `{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping"}`, CodeInvalidRequest, none},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, none},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, CodeInvalidRequest, none},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, CodeInvalidRequest, none},
		{"missing jsonrpc", `{"id":1,"method":"ping"}`, CodeInvalidRequest, Int64ID(1)},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest, Int64ID(1)},
		{"jsonrpc number", `{"jsonrpc":2.0,"id":"s","method":"ping"}`, CodeInvalidRequest, StringID("s")},
		{"jsonrpc case", `{"JSONRPC":"2.0","id":1,"method":"ping"}`, CodeInvalidRequest, Int64ID(1)},
		{"method number", `{"jsonrpc":"2.0","id":1,"method":1}`, CodeInvalidRequest, Int64ID(1)},
		{"method null", `{"jsonrpc":"2.0","id":1,"method":null}`, CodeInvalidRequest, Int64ID(1)},
		{"method case", `{"jsonrpc":"2.0","id":1,"Method":"ping"}`, CodeInvalidRequest, Int64ID(1)},
		{"params array", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}`, CodeInvalidRequest, Int64ID(1)},
		{"params string", `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, CodeInvalidRequest, Int64ID(1)},
		{"params null", `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, CodeInvalidRequest, Int64ID(1)},
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, CodeInvalidRequest, Int64ID(1)},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}`, CodeInvalidRequest, none},
		{"request with result", `{"jsonrpc":"2.0","id":1,"method":"a","result":{}}`, CodeInvalidRequest, Int64ID(1)},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, CodeInvalidRequest, Int64ID(1)},
		{"result without id", `{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest, none},
		{"error not object", `{"jsonrpc":"2.0","id":1,"error":"x"}`, CodeInvalidRequest, Int64ID(1)},
		{"error code float", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`, CodeInvalidRequest, Int64ID(1)},
		{"error code string", `{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"x"}}`, CodeInvalidRequest, Int64ID(1)},
		{"error without message", `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, CodeInvalidRequest, Int64ID(1)},
		{"empty batch", `[]`, CodeInvalidRequest, none},
		{"invalid batch", `[{"jsonrpc":"2.0","method":"a"},`, CodeParseError, none},
		{"deep nesting", `{"jsonrpc":"2.0","method":"a","params":{"x":` + strings.Repeat("[", maxDepth+5) + strings.Repeat("]", maxDepth+5) + `}}`, CodeParseError, none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode([]byte(tt.in))
			if err == nil {
				t.Fatalf("Decode = %#v, want error %d", m, tt.code)
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			if de.Err.Code != tt.code {
				t.Errorf("code = %d (%s), want %d", de.Err.Code, de.Err.Message, tt.code)
			}
			if de.ID != tt.id {
				t.Errorf("id = %v, want %v", de.ID, tt.id)
			}
			b, err := Encode(de)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.id.IsValid() && strings.Contains(string(b), `"id"`) {
				t.Errorf("error response %s carries an id", b)
			}
		})
	}
}

func TestDecodeBatch(t *testing.T) {
	m, err := Decode([]byte(`[{"jsonrpc":"2.0","id":1,"method":"a"}, 5, {"jsonrpc":"2.0","method":"n"},{"jsonrpc":"1.0","id":"x","method":"b"}]`))
	if err != nil {
		t.Fatal(err)
	}
	b, ok := m.(Batch)
	if !ok || len(b) != 4 {
		t.Fatalf("got %#v", m)
	}
	if r, ok := b[0].(*Request); !ok || r.ID != Int64ID(1) {
		t.Errorf("b[0] = %#v", b[0])
	}
	if d, ok := b[1].(*DecodeError); !ok || d.Err.Code != CodeInvalidRequest {
		t.Errorf("b[1] = %#v", b[1])
	}
	if r, ok := b[2].(*Request); !ok || !r.IsNotification() {
		t.Errorf("b[2] = %#v", b[2])
	}
	if d, ok := b[3].(*DecodeError); !ok || d.ID != StringID("x") {
		t.Errorf("b[3] = %#v", b[3])
	}
}

func TestIDKinds(t *testing.T) {
	if StringID("1") == Int64ID(1) {
		t.Fatal(`"1" and 1 must differ`)
	}
	for _, in := range []string{`"1"`, `1`, `-0`, `""`, `"\u00e9"`} {
		var id ID
		if err := id.UnmarshalJSON([]byte(in)); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out, _ := id.MarshalJSON()
		want := in
		switch in {
		case `-0`:
			want = `0`
		case `"\u00e9"`:
			want = `"é"`
		}
		if string(out) != want {
			t.Errorf("%s round-trips to %s", in, out)
		}
	}
	for _, in := range []string{`null`, `1.5`, `true`, `{}`, `[]`, `1e2`, ``} {
		var id ID
		if err := id.UnmarshalJSON([]byte(in)); !errors.Is(err, ErrInvalidID) {
			t.Errorf("%q: err = %v, want ErrInvalidID", in, err)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	tests := map[string]string{
		"plain":       `"plain"`,
		"q\"b\\":      `"q\"b\\"`,
		"a\nb\r\tc":   `"a\nb\r\tc"`,
		"\x00\x1f":    `"\u0000\u001f"`,
		"é😀":          `"é😀"`,
		"bad\xffutf8": "\"bad\uFFFDutf8\"",
		"<html>&":     `"<html>&"`,
	}
	for in, want := range tests {
		if got := string(appendJSONString(nil, in)); got != want {
			t.Errorf("appendJSONString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestEncodeCompactsRaw(t *testing.T) {
	b, err := Encode(&Response{ID: Int64ID(1), Result: []byte("{\n  \"a\": 1\n}")})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"jsonrpc":"2.0","id":1,"result":{"a":1}}` {
		t.Fatalf("got %s", b)
	}
	if _, err := Encode(&Response{ID: Int64ID(1), Result: []byte(`{"a":`)}); err == nil {
		t.Fatal("invalid raw result was encoded")
	}
}
