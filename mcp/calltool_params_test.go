package mcp

import (
	"reflect"
	"strings"
	"testing"
)

// checkDecodeCallToolParams compares decodeCallToolParams with parseParams,
// the path it shortcuts.
func checkDecodeCallToolParams(t *testing.T, raw []byte) {
	t.Helper()
	var want, got CallToolRequestParams
	wantErr := parseParams(raw, &want)
	err := decodeCallToolParams(raw, &got)
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("decodeCallToolParams(%.200q) error %v, parseParams error %v", raw, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeCallToolParams(%.200q) = %+v, want %+v", raw, got, want)
	}
}

func callToolParamsCases() []string {
	big := `{"text":"` + strings.Repeat("abcdefgh", 200) + `"}`
	return []string{
		``, `{}`, `null`, `[]`, `{"name":"echo"}`, `{"name":"echo","arguments":{"a":1}}`,
		`{"name":"e\u0063ho","arguments":{}}`, `{"arguments":{},"name":"x","name":"y"}`, `{"name":"x","Name":"y","arguments":{}}`,
		`{"name":null,"arguments":{}}`, "{\"name\":\"bad \xff\",\"arguments\":{}}", `{"arguments":{}}`, `{"name":"","arguments":{}}`,
		`{"name":"x","arguments":{},"_meta":{"progressToken":"t"}}`, `{"name":1,"arguments":{}}`, ` {"name" : "x" , "arguments" : { "a" : [ 1 ] } } `,
		`{"name":"echo","arguments":` + big + `}`,
		`{"arguments":` + big + `,"name":"echo"}`,
		`{"arguments":` + big + `}`,
		` { "name" : "echo" , "arguments" : ` + big + ` , "_meta" : {"progressToken":7} } `,
		`{"name":"echo","arguments":` + big + `,"task":{"ttl":1000}}`,
		`{"name":"echo","arguments":` + big + `,"Arguments":{}}`,
		`{"name":"echo","Arguments":` + big + `}`,
		`{"name":"echo","arguments":` + big + `,"arguments":` + big + `}`,
		`{"name":"echo","arguments":` + big + `,"\u0061rguments":{}}`,
		`{"name":"echo","arguments":` + big + `,"nam\u0065":"other"}`,
		`{"name":7,"arguments":` + big + `}`,
		`{"arguments":` + big + `}x`,
		`{"name":"echo","arguments":` + big + `,}`,
		`{"name":"echo","arguments":[` + big + `]}`,
		`{"name":"echo","arguments":"` + strings.Repeat("s", 2000) + `"}`,
		`{"name":"echo","arguments":null}`,
		`{"name":"","arguments":` + big + `}`,
		`{"name":"echo","task":{"ttl":"x"},"arguments":` + big + `}`,
		`{"name":"echo","_meta":{"progressToken":1.5e3},"arguments":` + big + `}`,
		"{\"name\":\"echo\",\"\u212arguments\":{},\"arguments\":" + big + "}",
		`{"name":"echo","arguments":{"x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `,"pad":"` + strings.Repeat("p", 1100) + `"}}`,
		`{"name":"echo","arguments":{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}}`,
	}
}

func TestDecodeCallToolParams(t *testing.T) {
	for _, c := range callToolParamsCases() {
		checkDecodeCallToolParams(t, []byte(c))
	}
}

// FuzzDecodeCallToolParams compares decodeCallToolParams with parseParams
// on the fuzzer's params, and on them with a large "arguments" spliced in
// so that the fast path is taken.
func FuzzDecodeCallToolParams(f *testing.F) {
	for _, c := range callToolParamsCases() {
		if len(c) < 4096 {
			f.Add([]byte(c))
		}
	}
	big := `"arguments":{"text":"` + strings.Repeat("q", 1100) + `"}`
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkDecodeCallToolParams(t, raw)
		if i := strings.IndexByte(string(raw), '{'); i >= 0 {
			small := string(raw[:i+1]) + `"arguments":{"a":1},` + string(raw[i+1:])
			checkDecodeCallToolParams(t, []byte(small))
			spliced := string(raw[:i+1]) + big + "," + string(raw[i+1:])
			checkDecodeCallToolParams(t, []byte(spliced))
			spliced = string(raw[:i+1]) + big + string(raw[i+1:])
			checkDecodeCallToolParams(t, []byte(spliced))
		}
	})
}
