package mcp

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeOutcome: a task's outcome comes back from the store (Redis,
// shared by replicas) as JSON; whatever it holds, decodeOutcome returns an
// error or exactly one of an object result and an error, and what it
// accepts survives a round trip through Finish's encoding.
func FuzzDecodeOutcome(f *testing.F) {
	for _, s := range []string{`{"result":{"content":[]}}`, `{"error":{"code":-32603,"message":"x"}}`, `{"result":{},"error":{"code":1,"message":""}}`,
		`{"result":[1]}`, `{}`, `null`, `{"result":null}`, `{"Result":{}}`, `{"error":{"code":"x"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := decodeOutcome(raw)
		if err != nil {
			return
		}
		if (out.Result == nil) == (out.Error == nil) || (out.Result != nil && !isJSONObject(out.Result)) {
			t.Fatalf("decoded %q into %+v", raw, out)
		}
		b, err := json.Marshal(outcomeJSON(*out))
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeOutcome(b)
		if err != nil || (again.Error == nil) != (out.Error == nil) {
			t.Fatalf("round trip of %q: %s, %v", raw, b, err)
		}
	})
}
