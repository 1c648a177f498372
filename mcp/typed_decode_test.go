package mcp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Argument types for the fast decoder's differential tests.
type (
	plainArgs struct {
		Text string  `json:"text"`
		N    int8    `json:"n,omitempty"`
		U    uint16  `json:"u"`
		F    float32 `json:"f"`
		D    float64
		B    bool   `json:"b"`
		Skip string `json:"-"`
		//lint:ignore SA5008 "-," names the field "-", which the decoder must match
		Dash string `json:"-,"`
		//lint:ignore U1000 an unexported field, which the decoder must skip
		hidden string
	}
	namedKinds struct {
		R Role `json:"role"`
	}
	stringOpt struct {
		N int `json:"n,string"`
	}
	embedded struct {
		plainArgs
	}
	withTime struct {
		T time.Time `json:"t"`
	}
	withSlice struct {
		S []string `json:"s"`
	}
	oddName struct {
		X string `json:"x y"`
	}
)

func TestNewArgsDecoderEligibility(t *testing.T) {
	for _, tc := range []struct {
		t    reflect.Type
		fast bool
	}{
		{reflect.TypeFor[plainArgs](), true},
		{reflect.TypeFor[largeEchoArgs](), true},
		{reflect.TypeFor[namedKinds](), true},
		{reflect.TypeFor[stringOpt](), false},
		{reflect.TypeFor[embedded](), false},
		{reflect.TypeFor[withTime](), false},
		{reflect.TypeFor[withSlice](), false},
		{reflect.TypeFor[oddName](), false},
		{reflect.TypeFor[*plainArgs](), false},
		{reflect.TypeFor[map[string]any](), false},
		{reflect.TypeFor[CallToolRequestParams](), false},
	} {
		if got := newArgsDecoder(tc.t) != nil; got != tc.fast {
			t.Errorf("newArgsDecoder(%v) != nil is %v, want %v", tc.t, got, tc.fast)
		}
	}
}

// checkArgsDecoder compares the fast decoder with json.Unmarshal: whenever
// it succeeds, json.Unmarshal must succeed with the same value.
func checkArgsDecoder[T any](t *testing.T, data []byte) (fast bool) {
	t.Helper()
	d := newArgsDecoder(reflect.TypeFor[T]())
	var got, want T
	if !d.decode(data, reflect.ValueOf(&got).Elem()) {
		return false
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("fast decoder accepted %.200q, json.Unmarshal: %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fast decoder(%.200q) = %+v, json.Unmarshal = %+v", data, got, want)
	}
	return true
}

var argsCases = []struct {
	in   string
	fast bool
}{
	{`{}`, true},
	{` { "text" : "hi" } `, true},
	{`{"text":"a\"b\u00e9\ud83c\udf89 \ud800 ` + "\xff" + `","n":-128,"u":65535,"f":1.5e3,"D":-2.25e-7,"b":true,"-":"dash"}`, true},
	{`{"text":null,"n":null,"b":false,"other":{"x":[1,{"y":null}]},"more":"x"}`, true},
	{`{"text":"` + strings.Repeat("long text ", 200) + `"}`, true},
	{`{"Text":"folded"}`, false},
	{`{"TEXT":"folded"}`, false},
	{`{"d":1}`, false},
	{`{"text":"a","text":"b"}`, false},
	{`{"te\u0078t":"escaped key"}`, false},
	{`{"n":128}`, false},
	{`{"n":1.0}`, false},
	{`{"u":-1}`, false},
	{`{"f":1e39}`, false},
	{`{"text":1}`, false},
	{`{"b":"true"}`, false},
	{`{"Skip":"x"}`, true},
	{`{"hidden":"x"}`, true},
	{"{\"\u212a\":1}", false},
	{`null`, false},
	{`[]`, false},
	{`{"text":"a"} x`, false},
	{`{"text":"a",}`, false},
	{`{"text":"a"`, false},
	{`{"x":nul}`, false},
	{`{"n":01}`, false},
}

func TestArgsDecoder(t *testing.T) {
	for _, c := range argsCases {
		if got := checkArgsDecoder[plainArgs](t, []byte(c.in)); got != c.fast {
			t.Errorf("fast decoding of %.80q: %v, want %v", c.in, got, c.fast)
		}
	}
}

// FuzzArgsDecoder compares the typed tools' fast argument decoder with
// json.Unmarshal, which it shortcuts.
func FuzzArgsDecoder(f *testing.F) {
	for _, c := range argsCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkArgsDecoder[plainArgs](t, data)
		checkArgsDecoder[namedKinds](t, data)
		checkArgsDecoder[largeEchoArgs](t, data)
	})
}
