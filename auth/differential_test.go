package auth_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// dispatchTarget decodes one request as the server does (jsonrpc.Decode,
// then the method's params type with strictjson, as mcp's parseParams
// does) and returns the entry auth.ReadTargets must have given it; ok is
// false if the server refuses the request.
func dispatchTarget(req *jsonrpc.Request) (entry string, ok bool) {
	decode := func(p any) bool {
		raw := req.Params
		if len(raw) == 0 {
			raw = json.RawMessage("{}")
		}
		if strictjson.Unmarshal(raw, p) != nil {
			return false
		}
		v, ok := p.(interface{ Validate() error })
		return !ok || v.Validate() == nil
	}
	kind, key := auth.TargetNone, ""
	switch req.Method {
	case mcp.MethodToolsCall:
		var p mcp.CallToolRequestParams
		if !decode(&p) {
			return "", false
		}
		kind, key = auth.TargetTool, p.Name
	case mcp.MethodPromptsGet:
		var p mcp.GetPromptRequestParams
		if !decode(&p) {
			return "", false
		}
		kind, key = auth.TargetPrompt, p.Name
	case mcp.MethodResourcesRead, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe:
		var p struct {
			URI *string `json:"uri"`
		}
		var full mcp.ReadResourceRequestParams
		if !decode(&full) || !decode(&p) || p.URI == nil {
			return "", false
		}
		kind, key = auth.TargetResource, full.URI
	case mcp.MethodCompletionComplete:
		var p mcp.CompleteRequestParams
		if !decode(&p) {
			return "", false
		}
		switch r := p.Ref.(type) {
		case *mcp.PromptReference:
			kind, key = auth.TargetPrompt, r.Name
		case *mcp.ResourceTemplateReference:
			kind, key = auth.TargetResource, r.URI
		default:
			return "", false
		}
	}
	return fmt.Sprintf("%s %d %s", req.Method, kind, key), true
}

// FuzzPeekAgreesWithDispatch: for any body, every request the server would
// decode and act on has the same method and target (tool, prompt or
// resource, by name or URI) in the middleware's reading, so that the scope
// checked is the scope of what runs; and a body the middleware refuses for
// a repeated member is one the server refuses too (issue #16 item 1).
func FuzzPeekAgreesWithDispatch(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","NAME":"fetch"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"fetch","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":null,"Name":"fetch"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"a"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","nAme":"q"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a","Uri":"file:///b"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"URI":"file:///b"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p","NAME":"q"},"argument":{"name":"a","value":""}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"Ref":{"type":"ref/resource","uri":"x"},"ref":{"TYPE":"ref/prompt","type":"ref/resource","uri":"y"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"NAME":"b"}}]`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping","params":{"name":"a"}}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call","method":"ping","params":{"name":"a"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		entries, batch, perr := auth.ReadTargets(body)
		msg, derr := jsonrpc.Decode(body)
		if derr != nil {
			return // the server refuses the whole body
		}
		var msgs []jsonrpc.Message
		if b, ok := msg.(jsonrpc.Batch); ok {
			msgs = b
			if !batch {
				t.Fatalf("%q: a batch to the server, not to the peek", body)
			}
		} else {
			msgs = []jsonrpc.Message{msg}
		}
		if len(entries) != len(msgs) {
			t.Fatalf("%q: the peek read %d messages, the server %d", body, len(entries), len(msgs))
		}
		acted := false
		for i, m := range msgs {
			req, ok := m.(*jsonrpc.Request)
			if !ok {
				continue
			}
			want, ok := dispatchTarget(req)
			if !ok {
				continue
			}
			acted = true
			if perr == nil && entries[i] != want {
				t.Fatalf("%q: message %d: the peek read %q, the server %q", body, i, entries[i], want)
			}
		}
		if perr != nil && !errors.Is(perr, auth.ErrRepeatedMember) {
			t.Fatalf("%q: %v", body, perr)
		}
		if perr != nil && !batch && acted {
			t.Fatalf("%q: the peek refuses a repeat (%v), the server acts on it", body, perr)
		}
	})
}
