package jsonschema

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

var instanceCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e-3`, `-12E+2`, `"x"`, ` {"a" : [1, "b", null, true, {"c": {}}] } `,
	`{"a":1,"a":2}`, `{"a":{"x":1},"a":[2]}`, `"\ud83c\udf89 \ud83c \udf89x \u00e9"`, "\"bad \xff\xc3 utf8\"", "{\"k\xff\":1}",
	`{"text":"` + strings.Repeat("plain text ", 50) + `"}`, `{"n":1e99999}`, `{"n":` + strings.Repeat("1", 1001) + `}`,
	``, ` `, `{`, `{"a"}`, `{"a":}`, `[1,]`, `[1 2]`, `01`, `1.`, `-`, `1e`, `tru`, `nul`, `"abc`, "\"ctl\x01\"", `{} {}`, `1 2`, `{}x`,
	`"\x"`, `"\u12"`, `{"a":1,}`, `[` + strings.Repeat(`[`, 20) + strings.Repeat(`]`, 21),
}

// checkDecodeInstance compares decodeInstance with the library's
// UnmarshalJSON, and ValidateJSON with the library's path.
func checkDecodeInstance(t *testing.T, s *Schema, data []byte) {
	t.Helper()
	want, wantErr := sjs.UnmarshalJSON(bytes.NewReader(data))
	got, badNum, ok := decodeInstance(data, maxDepth)
	if ok {
		if wantErr != nil {
			t.Fatalf("decodeInstance(%q) accepted what the library refuses: %v", data, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeInstance(%q) = %#v, want %#v", data, got, want)
		}
		if _, _, found := badNumber(want); found != badNum {
			t.Fatalf("decodeInstance(%q): badNum %v, want %v", data, badNum, found)
		}
	} else if wantErr == nil && bytes.Count(data, []byte("[")) < 1000 && bytes.Count(data, []byte("{")) < 1000 {
		t.Fatalf("decodeInstance(%q) refused what the library decodes to %#v", data, want)
	}
	if s == nil {
		return
	}
	gotErr := s.ValidateJSON(data)
	var oldErr error
	if wantErr != nil {
		oldErr = wantErr
	} else if _, _, found := badNumber(want); found {
		// Which bad number is reported depends on map order: check the kind.
		if !errors.Is(gotErr, ErrInvalidJSON) {
			t.Fatalf("ValidateJSON(%q) = %v, want an ErrInvalidJSON", data, gotErr)
		}
		return
	} else {
		oldErr = s.validate(want)
	}
	if (gotErr == nil) != (oldErr == nil) || (gotErr != nil && !strings.HasSuffix(gotErr.Error(), oldErr.Error())) {
		t.Fatalf("ValidateJSON(%q) = %v, want %v", data, gotErr, oldErr)
	}
}

func TestDecodeInstance(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{"text":{"type":"string","maxLength":40}},"required":["text"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range instanceCases {
		checkDecodeInstance(t, s, []byte(c))
	}
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	checkDecodeInstance(t, nil, []byte(deep))
}

// FuzzDecodeInstance compares decodeInstance with the library's
// UnmarshalJSON (encoding/json with UseNumber), which it replaces on
// ValidateJSON's path, and ValidateJSON's verdict with the old path's.
func FuzzDecodeInstance(f *testing.F) {
	for _, c := range instanceCases {
		f.Add([]byte(c))
	}
	s, err := Compile([]byte(toolSchema))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDecodeInstance(t, s, data) })
}
