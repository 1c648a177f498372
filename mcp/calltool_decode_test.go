package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecodeCallToolParams: the tools/call fast path (decodeCallToolParams)
// decodes exactly what parseParams, the strict decoder of every other
// method, decodes, and fails where it fails: same name, same arguments,
// same meta. The middleware's peek is compared with parseParams in
// auth.FuzzPeekAgreesWithDispatch, so the three agree (issue #16 item 1).
// The modern decoding (decodeModernCallToolParams) is compared with it on
// the same input (checkModernDecodeAgrees).
func FuzzDecodeCallToolParams(f *testing.F) {
	big := `"` + strings.Repeat("x", 1100) + `"`
	for _, s := range []string{
		`{"name":"a","arguments":{"x":1}}`,
		`{"name":"a","NAME":"b","arguments":{}}`,
		`{"NAME":"b","name":"a","arguments":{"p":` + big + `}}`,
		`{"name":"a","name":"b","arguments":{"p":` + big + `}}`,
		`{"name":"a","arguments":{},"arguments":{}}`,
		`{"name":"a","Arguments":{"x":1},"arguments":{"y":2}}`,
		`{"name":null,"Name":"b","arguments":{"p":` + big + `}}`,
		`{"n\u0061me":"a","arguments":{}}`,
		`{"name":"a","arguments":{},"_meta":{"progressToken":1},"task":{"ttl":5}}`,
		`{"name":"a","arguments":{"p":` + big + `},"_meta":"x"}`,
		`{"arguments":{"p":1}}`, `{"name":"","arguments":{}}`, `{"name":"a","arguments":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkModernDecodeAgrees(t, raw)
		var fast, slow CallToolRequestParams
		ferr := decodeCallToolParams(bytes.Clone(raw), &fast)
		serr := parseParams(bytes.Clone(raw), &slow)
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("%q: fast path %v, parseParams %v", raw, ferr, serr)
		}
		if ferr != nil {
			return
		}
		if fast.Name != slow.Name || !reflect.DeepEqual(fast.Meta, slow.Meta) || !reflect.DeepEqual(fast.Task, slow.Task) {
			t.Fatalf("%q: fast %+v, parseParams %+v", raw, fast, slow)
		}
		var fa, sa any
		if len(fast.Arguments) > 0 || len(slow.Arguments) > 0 {
			if json.Unmarshal(fast.Arguments, &fa) != nil || json.Unmarshal(slow.Arguments, &sa) != nil || !reflect.DeepEqual(fa, sa) {
				t.Fatalf("%q: arguments %s and %s", raw, fast.Arguments, slow.Arguments)
			}
		}
	})
}
