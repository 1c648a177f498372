package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// FuzzMRTRRetry feeds a 2026-07-28 tools/call arbitrary params: the
// inputResponses and requestState of a retry are the client's to forge.
// The answer must be a JSON-RPC error, an InputRequiredResult, or the
// tool's result; and the tool's result only when the params answer its
// question (an ElicitResult under user_name, or under the key a valid
// requestState names).
func FuzzMRTRRetry(f *testing.F) {
	s, _ := mrtrServer(&testing.T{}, nil)
	ss := &ServerSession{server: s}
	caps := allCaps
	serve := func(params []byte) (any, error) {
		ctx := &modernContext{Context: context.Background(), ss: ss,
			req: modernRequest{meta: RequestMeta{ProtocolVersion: ProtocolVersion20260728, ClientCapabilities: caps}}}
		return ss.callTool(ctx, MethodToolsCall, params)
	}
	first, _ := serve([]byte(`{"name":"greet"}`))
	state := first.(*InputRequiredResult).RequestState
	f.Add([]byte(`{"name":"greet"}`))
	f.Add([]byte(`{"name":"greet","inputResponses":{"user_name":{"action":"accept","content":{"name":"A"}}}}`))
	f.Add([]byte(`{"name":"greet","requestState":"` + state + `","inputResponses":{"user_name":{"action":"accept","content":{"name":"A"}}}}`))
	f.Add([]byte(`{"name":"greet","requestState":"` + state + `x","inputResponses":{}}`))
	f.Add([]byte(`{"name":"two_steps","inputResponses":{"elicitation-1":{"action":"decline"}}}`))
	f.Add([]byte(`{"name":"greet","inputResponses":null}`))
	f.Fuzz(func(t *testing.T, params []byte) {
		res, err := serve(params)
		if err != nil {
			if je := modernError(err); je == jsonrpc.ErrInternal {
				t.Fatalf("%s: internal error %v", params, err)
			}
			return
		}
		if _, ok := res.(*InputRequiredResult); ok {
			return
		}
		cr, ok := res.(*CallToolResult)
		if !ok {
			t.Fatalf("%s: answer %T", params, res)
		}
		if cr.IsError != nil && *cr.IsError {
			return // a tool of the server failed on its own terms
		}
		var p struct {
			Name           string         `json:"name"`
			InputResponses InputResponses `json:"inputResponses"`
		}
		if err := json.Unmarshal(params, &p); err != nil || len(p.InputResponses) == 0 && p.Name != "" {
			t.Fatalf("%s: completed with no input responses (%v)", params, err)
		}
	})
}
