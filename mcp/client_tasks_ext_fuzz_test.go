package mcp

import (
	"encoding/json"
	"testing"
)

// FuzzExtTaskNotice feeds arbitrary params of a pushed task state (from
// the server, untrusted) to the parser: it never panics, accepts only a
// named task with a known status, and complete never panics on what it
// accepts.
func FuzzExtTaskNotice(f *testing.F) {
	f.Add([]byte(`{"taskId":"t1","status":"completed","ttlMs":60000,"result":{"content":[]}}`))
	f.Add([]byte(`{"taskId":"t1","status":"input_required","inputRequests":{"a":{"method":"roots/list"}}}`))
	f.Add([]byte(`{"taskId":"t1","status":"failed","error":{"code":-32603,"message":"x"}}`))
	f.Add([]byte(`{"taskId":"","status":"working"}`))
	f.Add([]byte(`{"taskId":"t","status":"bogus","pollIntervalMs":-1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parseExtTaskNotice(json.RawMessage(b))
		if err != nil {
			return
		}
		if n.TaskID == "" || n.Status.Validate() != nil {
			t.Fatalf("accepted %q", b)
		}
		_ = n.complete()
	})
}
